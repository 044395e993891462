//! Gemini → the hub: a `generateContent` request as a hub request, a whole answer as a hub
//! `chat.completion`. Read through the typed views of [`super::read`] (the answer as the stream
//! reads a chunk), written from the hub shapes below (names, sampling fields and function
//! arguments copied verbatim; the body returned is a `Value`, so keys are in name order).

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;
use tollgate_actors::options::component_prices::Tool;

use super::finish_of;
use super::read::{Blob, Config, Content, FileData, Request, either_value};
use super::stream::{Answer, Part as AnswerPart, args_text, either};
use super::usage::UsageIn;
use crate::relay::measure::price::Usage;
use crate::relay::wire::openai::usage_json;
use crate::relay::wire::typed::{Present, Shape, Sorted, Verbatim, parse, view};
use crate::relay::wire::{ConvertError, hub, now};

/// A hub message as written.
#[derive(Debug, Serialize)]
struct MessageOut<'a> {
    role: &'static str,
    /// `null` for an assistant message of tool calls only.
    content: Option<ContentOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_calls: Option<Vec<CallOut<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<String>,
}

impl<'a> MessageOut<'a> {
    fn new(role: &'static str, content: Option<ContentOut<'a>>) -> MessageOut<'a> {
        MessageOut {
            role,
            content,
            tool_call_id: None,
            tool_calls: None,
            reasoning_content: None,
        }
    }
}

/// A hub message's content.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum ContentOut<'a> {
    Text(String),
    Parts(Vec<PartOut<'a>>),
}

/// A hub content part as written.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum PartOut<'a> {
    Text { text: &'a str },
    ImageUrl { image_url: UrlOut<'a> },
    InputAudio { input_audio: AudioOut<'a> },
    File { file: FileOut<'a> },
}

#[derive(Debug, Serialize)]
struct UrlOut<'a> {
    url: Cow<'a, str>,
}

#[derive(Debug, Serialize)]
struct AudioOut<'a> {
    data: &'a str,
    format: &'static str,
}

/// A hub `file` part's file: by its bytes (a data URL), or by URI.
#[derive(Debug, Serialize)]
struct FileOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    file_data: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    filename: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    file_url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mime_type: Option<&'a str>,
}

/// A hub tool call as written, with Gemini's thought signature where Gemini's
/// OpenAI-compatible API keeps it (`extra_content.google.thought_signature`).
#[derive(Debug, Serialize)]
struct CallOut<'a> {
    id: String,
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionOut<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extra_content: Option<ExtraOut<'a>>,
}

#[derive(Debug, Serialize)]
struct FunctionOut<'a> {
    name: NameOut<'a>,
    arguments: String,
}

/// A function's name: a request's as a string, an answer's verbatim.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum NameOut<'a> {
    Str(&'a str),
    Verbatim(Option<&'a Verbatim<'a>>),
}

#[derive(Debug, Serialize)]
struct ExtraOut<'a> {
    google: GoogleOut<'a>,
}

#[derive(Debug, Serialize)]
struct GoogleOut<'a> {
    thought_signature: &'a str,
}

impl<'a> CallOut<'a> {
    /// Call number `n` of `name` with `args` (`{}` when absent), signed by `signature`.
    fn new(
        n: usize,
        name: NameOut<'a>,
        args: &Present<Verbatim>,
        signature: Option<&'a str>,
    ) -> CallOut<'a> {
        CallOut {
            id: format!("call_{n}"),
            kind: "function",
            function: FunctionOut {
                name,
                arguments: args_text(args),
            },
            extra_content: signature.map(|thought_signature| ExtraOut {
                google: GoogleOut { thought_signature },
            }),
        }
    }
}

/// A hub tool as written.
#[derive(Debug, Serialize)]
struct ToolOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: ToolFunctionOut<'a>,
}

#[derive(Debug, Serialize)]
struct ToolFunctionOut<'a> {
    name: Option<&'a Verbatim<'a>>,
    description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters: Option<&'a Verbatim<'a>>,
}

/// A hub request as written (the model is set by the caller, from the URL).
#[derive(Debug, Serialize)]
struct RequestOut<'a> {
    messages: Vec<MessageOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stop: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    n: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Vec<ToolOut<'a>>>,
}

/// The text of a content's parts (thoughts left out).
fn parts_text(content: &Content) -> String {
    content
        .parts
        .iter()
        .filter(|p| !matches!(p.thought, Shape::Bool(true)))
        .filter_map(|p| p.text.get())
        .collect()
}

/// A part's thought signature (https://ai.google.dev/gemini-api/docs/thought-signatures), if
/// any.
fn signature<'s, T>(camel: &'s Shape<'_, T>, snake: &'s Shape<'_, T>) -> Option<&'s str> {
    either(camel, snake)
        .and_then(Shape::str)
        .filter(|s| !s.is_empty())
}

/// An `inlineData` blob (https://ai.google.dev/api/caching#Blob) as a hub part: images as
/// `image_url`, WAV and MP3 audio as `input_audio` (OpenAI's two audio formats), anything else
/// (a PDF, other audio, video) as a `file` part with the bytes as a data URL — each upstream
/// then takes it or refuses it by name, never drops it (see [`crate::relay::wire::parts`]).
fn blob_part<'a>(blob: &'a Blob<'a>) -> PartOut<'a> {
    let mime = either(&blob.mime_camel, &blob.mime_snake)
        .and_then(Shape::str)
        .unwrap_or("image/png");
    let data = blob.data.or_empty();
    let format = match mime {
        "audio/wav" | "audio/x-wav" | "audio/wave" => Some("wav"),
        "audio/mp3" | "audio/mpeg" => Some("mp3"),
        _ => None,
    };
    if mime.starts_with("image/") {
        PartOut::ImageUrl {
            image_url: UrlOut {
                url: Cow::Owned(format!("data:{mime};base64,{data}")),
            },
        }
    } else if let Some(format) = format {
        PartOut::InputAudio {
            input_audio: AudioOut { data, format },
        }
    } else {
        PartOut::File {
            file: FileOut {
                file_data: Some(format!("data:{mime};base64,{data}")),
                filename: (mime == "application/pdf").then_some("document.pdf"),
                file_url: None,
                mime_type: None,
            },
        }
    }
}

/// A `fileData` part (https://ai.google.dev/api/caching#FileData) as a hub part: an image (or a
/// URI of no stated type) as an `image_url`, anything else as a `file` part by URL
/// (`file_url`, Tollgate's own field: http(s) URLs are read by the relay's guarded media
/// fetcher before the request is converted; other URIs are refused by name).
fn file_uri_part<'a>(file: &'a FileData<'a>) -> PartOut<'a> {
    let uri = either(&file.uri_camel, &file.uri_snake)
        .and_then(Shape::str)
        .unwrap_or_default();
    match either(&file.mime_camel, &file.mime_snake).and_then(Shape::str) {
        Some(mime) if !mime.starts_with("image/") => PartOut::File {
            file: FileOut {
                file_data: None,
                filename: None,
                file_url: Some(uri),
                mime_type: Some(mime),
            },
        },
        _ => PartOut::ImageUrl {
            image_url: UrlOut {
                url: Cow::Borrowed(uri),
            },
        },
    }
}

/// `T` of a `Shape` field that is given (an object's fields, or defaults for another value).
fn given<'s, T: Default>(shape: Option<&'s Shape<'_, T>>, default: &'s T) -> Option<&'s T> {
    shape.map(|s| match s {
        Shape::Obj(t) => t,
        _ => default,
    })
}

/// A Gemini request as a hub request (the model comes from the URL, set by the caller).
pub fn request_to_hub(body: &Value) -> Result<Value, ConvertError> {
    hub_request(&view(body))
}

/// The hub request of a request read.
fn hub_request<'a>(body: &'a Request<'a>) -> Result<Value, ConvertError> {
    let mut messages = Vec::new();
    if let Some(Shape::Obj(system)) = either(&body.system_camel, &body.system_snake) {
        let text = parts_text(system);
        if !text.is_empty() {
            messages.push(MessageOut::new("system", Some(ContentOut::Text(text))));
        }
    }
    let Some(contents) = body.contents.present() else {
        return Err(ConvertError("contents must be an array".into()));
    };
    let (blob, file) = (Blob::default(), FileData::default());
    let mut call_ids: HashMap<&str, Vec<String>> = HashMap::new();
    let mut calls = 0usize;
    for content in contents {
        let model = content.role.get() == Some("model");
        let mut parts = Vec::new();
        let mut tool_calls = Vec::new();
        for part in content.parts.iter() {
            if let Some(text) = part.text.get() {
                if !matches!(part.thought, Shape::Bool(true)) {
                    parts.push(PartOut::Text { text });
                }
            } else if let Some(data) = given(either(&part.inline_camel, &part.inline_snake), &blob)
            {
                parts.push(blob_part(data));
            } else if let Some(data) = given(either(&part.file_camel, &part.file_snake), &file) {
                parts.push(file_uri_part(data));
            } else if let Some(call) = either(&part.call_camel, &part.call_snake) {
                let (name, args) = match call {
                    Shape::Obj(call) => (call.name.or_empty(), &call.args),
                    _ => ("", &Present(None)),
                };
                let out = CallOut::new(
                    calls,
                    NameOut::Str(name),
                    args,
                    signature(&part.signature_camel, &part.signature_snake),
                );
                calls += 1;
                call_ids.entry(name).or_default().push(out.id.clone());
                tool_calls.push(out);
            } else if let Some(response) = either(&part.response_camel, &part.response_snake) {
                let (name, result) = match response {
                    Shape::Obj(r) => (r.name.or_empty(), &r.response),
                    _ => ("", &Present(None)),
                };
                let id = call_ids
                    .get_mut(name)
                    .filter(|ids| !ids.is_empty())
                    .map_or_else(|| format!("call_{name}"), |ids| ids.remove(0));
                let text = match result {
                    Present(Some(v)) => Sorted(v).to_json(),
                    Present(None) => "null".to_owned(),
                };
                let mut message = MessageOut::new("tool", Some(ContentOut::Text(text)));
                message.tool_call_id = Some(id);
                messages.push(message);
            }
        }
        if parts.is_empty() && tool_calls.is_empty() {
            continue;
        }
        let only_text = parts.iter().all(|p| matches!(p, PartOut::Text { .. }));
        let content = if model || only_text {
            let text: String = (parts.iter())
                .filter_map(|p| match p {
                    PartOut::Text { text } => Some(*text),
                    _ => None,
                })
                .collect();
            if text.is_empty() && !tool_calls.is_empty() {
                None
            } else {
                Some(ContentOut::Text(text))
            }
        } else {
            Some(ContentOut::Parts(parts))
        };
        let mut message = MessageOut::new(if model { "assistant" } else { "user" }, content);
        message.tool_calls = (!tool_calls.is_empty()).then_some(tool_calls);
        messages.push(message);
    }
    let config = match either(&body.config_camel, &body.config_snake) {
        Some(Shape::Obj(config)) => Some(config),
        _ => None,
    };
    let pick = |f: fn(&'a Config<'a>) -> (&'a Present<Verbatim<'a>>, &'a Present<Verbatim<'a>>)| {
        config.and_then(|c| {
            let (a, b) = f(c);
            either_value(a, b)
        })
    };
    let tools: Vec<ToolOut> = (body.tools.iter())
        .filter_map(
            |tool| match either(&tool.declarations_camel, &tool.declarations_snake) {
                Some(Shape::List(declarations)) => Some(declarations),
                _ => None,
            },
        )
        .flatten()
        .map(|f| ToolOut {
            kind: "function",
            function: ToolFunctionOut {
                name: f.name.as_ref(),
                description: f.description.or_empty(),
                parameters: f
                    .parameters
                    .as_ref()
                    .filter(|p| matches!(p, Verbatim::Obj(_))),
            },
        })
        .collect();
    Ok(hub::to_value(&RequestOut {
        messages,
        temperature: pick(|c| (&c.temperature, &c.temperature)),
        top_p: pick(|c| (&c.top_p_camel, &c.top_p_snake)),
        max_tokens: pick(|c| (&c.max_camel, &c.max_snake)),
        stop: pick(|c| (&c.stop_camel, &c.stop_snake)),
        n: pick(|c| (&c.n_camel, &c.n_snake)),
        seed: pick(|c| (&c.seed, &c.seed)),
        tools: (!tools.is_empty()).then_some(tools),
    }))
}

/// A hub answer as written.
#[derive(Debug, Serialize)]
struct AnswerOut<'a> {
    id: String,
    object: &'static str,
    created: i64,
    model: Option<&'a Verbatim<'a>>,
    choices: Vec<ChoiceOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<Value>,
}

#[derive(Debug, Serialize)]
struct ChoiceOut<'a> {
    index: usize,
    message: MessageOut<'a>,
    finish_reason: &'static str,
}

/// A whole Gemini answer as a hub `chat.completion`.
pub fn answer_to_hub(answer: &Value) -> Value {
    hub_answer(&view(answer)).0
}

/// A whole Gemini answer read straight from its bytes: the hub `chat.completion` and the usage
/// it reports (with its Google Search call), as [`answer_to_hub`] and [`super::answer_usage`]
/// give them from the body parsed. `None` when the bytes are not JSON or repeat a field read.
pub fn answer_from_bytes(bytes: &[u8]) -> Option<(Value, Option<Usage>)> {
    parse::<Answer>(bytes).map(|answer| hub_answer(&answer))
}

/// The hub `chat.completion` of an answer read, and its usage.
fn hub_answer(answer: &Answer) -> (Value, Option<Usage>) {
    let choices = (answer.candidates.iter().enumerate())
        .map(|(i, candidate)| {
            let mut text = String::new();
            let mut reasoning = String::new();
            let mut tool_calls = Vec::new();
            for part in candidate.content.parts.iter() {
                tool_calls.extend(answer_part(
                    part,
                    &mut text,
                    &mut reasoning,
                    tool_calls.len(),
                ));
            }
            let finish = finish_of(
                candidate.finish_reason.get().unwrap_or("STOP"),
                !tool_calls.is_empty(),
            );
            let content = if text.is_empty() && !tool_calls.is_empty() {
                None
            } else {
                Some(ContentOut::Text(text))
            };
            let mut message = MessageOut::new("assistant", content);
            message.tool_calls = (!tool_calls.is_empty()).then_some(tool_calls);
            message.reasoning_content = (!reasoning.is_empty()).then_some(reasoning);
            ChoiceOut {
                index: i,
                message,
                finish_reason: finish,
            }
        })
        .collect();
    let read = match &answer.usage_metadata {
        Shape::Absent => None,
        Shape::Obj(meta) => Some(meta.usage()),
        _ => Some(UsageIn::default().usage()),
    };
    let hub = hub::to_value(&AnswerOut {
        id: format!(
            "chatcmpl-{}",
            answer.response_id.get().unwrap_or("tollgate")
        ),
        object: "chat.completion",
        created: now(),
        model: answer.model_version.as_ref(),
        choices,
        usage: read.as_ref().map(usage_json),
    });
    let usage = read.map(|mut usage| {
        if answer.candidates.iter().any(|c| c.grounded()) {
            usage.tool_calls[Tool::GeminiGoogleSearch.index()] = 1;
        }
        usage
    });
    (hub, usage)
}

/// Adds an answer part's text to `text` or `reasoning`, or returns its function call (call
/// number `n`).
fn answer_part<'a>(
    part: &'a AnswerPart<'a>,
    text: &mut String,
    reasoning: &mut String,
    n: usize,
) -> Option<CallOut<'a>> {
    if let Some(t) = part.text.get() {
        if matches!(part.thought, Shape::Bool(true)) {
            reasoning.push_str(t);
        } else {
            text.push_str(t);
        }
        return None;
    }
    let call = either(&part.call_camel, &part.call_snake)?;
    let (name, args) = match call {
        Shape::Obj(call) => (call.name.as_ref(), &call.args),
        _ => (None, &Present(None)),
    };
    Some(CallOut::new(
        n,
        NameOut::Verbatim(name),
        args,
        signature(&part.signature_camel, &part.signature_snake),
    ))
}
