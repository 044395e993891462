//! The hub → Gemini: a hub request as a `generateContent` request, a hub `chat.completion` as a
//! whole Gemini answer. Read through the hub views of [`super::read`], written from the Gemini
//! shapes below (camelCase; the body returned is a `Value`, so keys are in name order).

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use super::reason_of;
use super::usage::UsageOut;
use crate::relay::wire::hub::{self, content_text};
use crate::relay::wire::openai;
use crate::relay::wire::typed::{Shape, Verbatim, view};

/// A content as written.
#[derive(Debug, Serialize)]
struct ContentOut<'a> {
    role: &'static str,
    parts: Vec<PartOut<'a>>,
}

/// A part as written.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum PartOut<'a> {
    Text(TextOut<'a>),
    InlineData {
        #[serde(rename = "inlineData")]
        inline_data: BlobOut<'a>,
    },
    FileData {
        #[serde(rename = "fileData")]
        file_data: FileOut<'a>,
    },
    FunctionCall(CallOut<'a>),
    FunctionResponse {
        #[serde(rename = "functionResponse")]
        function_response: ResponseOut<'a>,
    },
}

/// A text part: a string, or a hub part's text verbatim (`null` when it had none).
#[derive(Debug, Serialize)]
struct TextOut<'a> {
    text: TextValue<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thought: Option<bool>,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum TextValue<'a> {
    Str(Cow<'a, str>),
    Verbatim(Option<&'a Verbatim<'a>>),
}

impl<'a> PartOut<'a> {
    fn text(text: Cow<'a, str>) -> PartOut<'a> {
        PartOut::Text(TextOut {
            text: TextValue::Str(text),
            thought: None,
        })
    }

    fn inline(mime: &'a str, data: DataOut<'a>) -> PartOut<'a> {
        PartOut::InlineData {
            inline_data: BlobOut {
                mime_type: mime,
                data,
            },
        }
    }
}

#[derive(Debug, Serialize)]
struct BlobOut<'a> {
    #[serde(rename = "mimeType")]
    mime_type: &'a str,
    data: DataOut<'a>,
}

/// Inline data: from a data URL, or a hub audio part's data verbatim.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum DataOut<'a> {
    Str(&'a str),
    Verbatim(Option<&'a Verbatim<'a>>),
}

#[derive(Debug, Serialize)]
struct FileOut<'a> {
    #[serde(rename = "mimeType")]
    mime_type: String,
    #[serde(rename = "fileUri")]
    file_uri: &'a str,
}

/// A `functionCall` part, with its thought signature when it has one (Gemini 3 refuses a
/// function call of the current turn without the signature it gave).
#[derive(Debug, Serialize)]
struct CallOut<'a> {
    #[serde(rename = "functionCall")]
    function_call: FunctionCallOut<'a>,
    #[serde(rename = "thoughtSignature", skip_serializing_if = "Option::is_none")]
    thought_signature: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct FunctionCallOut<'a> {
    name: Option<&'a Verbatim<'a>>,
    args: Verbatim<'a>,
}

#[derive(Debug, Serialize)]
struct ResponseOut<'a> {
    name: &'a str,
    response: ResultOut<'a>,
}

/// A tool result: its text parsed when it is a JSON object, else `{"content": text}`.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum ResultOut<'a> {
    Object(Value),
    Text { content: Cow<'a, str> },
}

/// `text` parsed as JSON (`None` when it is not).
fn parsed(text: &str) -> Option<Verbatim<'_>> {
    serde_json::from_str(text).ok()
}

/// A hub tool call as a `functionCall` part, its arguments parsed (`{}` when they are not JSON,
/// or, with `objects_only`, not an object).
fn call_part<'a>(call: &'a hub::ToolCall<'a>, objects_only: bool) -> PartOut<'a> {
    let args = parsed(call.function.arguments_str().unwrap_or("{}"))
        .filter(|v| !objects_only || matches!(v, Verbatim::Obj(_)))
        .unwrap_or(Verbatim::Obj(Vec::new()));
    PartOut::FunctionCall(CallOut {
        function_call: FunctionCallOut {
            name: call.function.name.value(),
            args,
        },
        thought_signature: call.signature(),
    })
}

/// Appends `parts` as a `role` content, merging into the previous content of the same role.
fn push_parts<'a>(
    contents: &mut Vec<ContentOut<'a>>,
    role: &'static str,
    mut parts: Vec<PartOut<'a>>,
) {
    if parts.is_empty() {
        return;
    }
    if let Some(last) = contents.last_mut()
        && last.role == role
    {
        last.parts.append(&mut parts);
        return;
    }
    contents.push(ContentOut { role, parts });
}

/// A `data:` URL's MIME type and base64 data.
fn data_url(url: &str) -> Option<(&str, &str)> {
    url.strip_prefix("data:")?.split_once(";base64,")
}

/// A hub content part as Gemini parts (none for a part Gemini has no form for).
fn part_of<'a>(item: &'a hub::Part<'a>) -> Option<PartOut<'a>> {
    Some(match item.kind.or_empty() {
        "text" => PartOut::Text(TextOut {
            text: TextValue::Verbatim(item.text.as_ref()),
            thought: None,
        }),
        "image_url" => {
            let url = item.image_object_url().unwrap_or_default();
            match data_url(url) {
                Some((mime, data)) => PartOut::inline(mime, DataOut::Str(data)),
                None => PartOut::FileData {
                    file_data: FileOut {
                        mime_type: mime_guess::from_path(url)
                            .first_or_octet_stream()
                            .essence_str()
                            .to_owned(),
                        file_uri: url,
                    },
                },
            }
        }
        "input_audio" => {
            let audio = &item.input_audio;
            let mime = match audio.format.get() {
                Some("mp3") => "audio/mp3",
                _ => "audio/wav",
            };
            PartOut::inline(mime, DataOut::Verbatim(audio.data.as_ref()))
        }
        // A file part's data URL (a PDF) as inline data (files by id were refused by
        // `parts::check`).
        "file" => {
            let (mime, data) = data_url(item.file_str("file_data").unwrap_or_default())?;
            PartOut::inline(mime, DataOut::Str(data))
        }
        _ => return None,
    })
}

/// A Gemini request as written.
#[derive(Debug, Serialize)]
struct RequestOut<'a> {
    contents: Vec<ContentOut<'a>>,
    #[serde(rename = "systemInstruction", skip_serializing_if = "Option::is_none")]
    system_instruction: Option<SystemOut<'a>>,
    #[serde(rename = "generationConfig", skip_serializing_if = "Option::is_none")]
    generation_config: Option<ConfigOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<[ToolOut<'a>; 1]>,
}

#[derive(Debug, Serialize)]
struct SystemOut<'a> {
    parts: Vec<PartOut<'a>>,
}

/// `generationConfig` as written.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct ConfigOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    candidate_count: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stop_sequences: Option<StopOut<'a>>,
}

/// Stop sequences: a hub string as a list of one, a hub list verbatim.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum StopOut<'a> {
    One([&'a str; 1]),
    List(&'a Verbatim<'a>),
}

#[derive(Debug, Serialize)]
struct ToolOut<'a> {
    #[serde(rename = "functionDeclarations")]
    function_declarations: Vec<DeclarationOut<'a>>,
}

#[derive(Debug, Serialize)]
struct DeclarationOut<'a> {
    name: Option<&'a Verbatim<'a>>,
    description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters: Option<Cleaned<'a>>,
}

/// JSON-schema keys Gemini's function declarations refuse.
const UNSUPPORTED_SCHEMA_KEYS: &[&str] = &["$schema", "additionalProperties", "strict"];

/// A JSON schema written without the keys Gemini refuses, at every depth.
#[derive(Debug, Clone, Copy)]
struct Cleaned<'a>(&'a Verbatim<'a>);

impl Serialize for Cleaned<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            Verbatim::Obj(entries) => {
                let kept =
                    || (entries.iter()).filter(|(k, _)| !UNSUPPORTED_SCHEMA_KEYS.contains(&&**k));
                let mut map = s.serialize_map(Some(kept().count()))?;
                for (key, value) in kept() {
                    map.serialize_entry(&**key, &Cleaned(value))?;
                }
                map.end()
            }
            Verbatim::List(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&Cleaned(item))?;
                }
                seq.end()
            }
            other => other.serialize(s),
        }
    }
}

/// A hub request as a Gemini request (the model goes in the URL).
pub fn request_from_hub(hub: &Value) -> Value {
    let request: hub::Request = view(hub);
    let mut system = Vec::new();
    let mut contents: Vec<ContentOut> = Vec::new();
    let mut call_names: HashMap<&str, &str> = HashMap::new();
    for message in request.messages.iter() {
        let role = message.role.get().unwrap_or("user");
        match role {
            "system" | "developer" => {
                let text = content_text(&message.content);
                if !text.is_empty() {
                    system.push(PartOut::text(text));
                }
            }
            "tool" => push_parts(
                &mut contents,
                "user",
                vec![tool_result(message, &call_names)],
            ),
            _ => {
                let mut parts = Vec::new();
                match &message.content {
                    Shape::Str(text) if !text.is_empty() => {
                        parts.push(PartOut::text(Cow::Borrowed(&**text)));
                    }
                    Shape::List(items) => parts.extend(items.iter().filter_map(part_of)),
                    _ => {}
                }
                for call in message.tool_calls.iter() {
                    let name = call.function.name.or_empty();
                    if let Some(id) = call.id.get() {
                        call_names.insert(id, name);
                    }
                    parts.push(call_part(call, true));
                }
                let role = if role == "assistant" { "model" } else { "user" };
                push_parts(&mut contents, role, parts);
            }
        }
    }
    let stop = match &request.stop {
        Some(Verbatim::Str(s)) => Some(StopOut::One([s.as_ref()])),
        Some(list @ Verbatim::List(items)) if !items.is_empty() => Some(StopOut::List(list)),
        _ => None,
    };
    let config = ConfigOut {
        temperature: request.temperature.as_ref(),
        top_p: request.top_p.as_ref(),
        max_output_tokens: (request.max_completion_tokens.as_ref()).or(request.max_tokens.as_ref()),
        candidate_count: request.n.as_ref(),
        seed: request.seed.as_ref(),
        stop_sequences: stop,
    };
    let configured = config.temperature.is_some()
        || config.top_p.is_some()
        || config.max_output_tokens.is_some()
        || config.candidate_count.is_some()
        || config.seed.is_some()
        || config.stop_sequences.is_some();
    let declarations: Vec<DeclarationOut> = (request.tools.iter())
        .map(|t| DeclarationOut {
            name: t.function.name.value(),
            description: t.function.description.or_empty(),
            parameters: (t.function.parameters.value())
                .filter(|p| matches!(p, Verbatim::Obj(_)))
                .map(Cleaned),
        })
        .collect();
    hub::to_value(&RequestOut {
        contents,
        system_instruction: (!system.is_empty()).then_some(SystemOut { parts: system }),
        generation_config: configured.then_some(config),
        tools: (!declarations.is_empty()).then_some([ToolOut {
            function_declarations: declarations,
        }]),
    })
}

/// A hub tool message as a `functionResponse` part: the name of the call it answers (by the
/// call's id; the id itself when no call of that id came before) and its result.
fn tool_result<'a>(
    message: &'a hub::Message<'a>,
    call_names: &HashMap<&str, &'a str>,
) -> PartOut<'a> {
    let id = message.tool_call_id.or_empty();
    let name = call_names.get(id).copied().unwrap_or(id);
    let text = content_text(&message.content);
    let response = match serde_json::from_str::<Value>(&text) {
        Ok(object @ Value::Object(_)) => ResultOut::Object(object),
        _ => ResultOut::Text { content: text },
    };
    PartOut::FunctionResponse {
        function_response: ResponseOut { name, response },
    }
}

/// A candidate as written.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct CandidateOut<'a> {
    content: ContentOut<'a>,
    finish_reason: &'static str,
    index: usize,
}

/// A whole answer as written.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct AnswerOut<'a> {
    candidates: Vec<CandidateOut<'a>>,
    usage_metadata: UsageOut,
    model_version: &'a str,
    response_id: &'a str,
}

/// A hub `chat.completion` as a whole Gemini answer naming `model`.
pub fn answer_from_hub(hub: &Value, model: &str) -> Value {
    let answer: hub::Answer = view(hub);
    let candidates = (answer.choices.iter().enumerate())
        .map(|(i, choice)| {
            let message = &choice.message;
            let mut parts = Vec::new();
            if let Some(r) = message.reasoning_content.non_empty() {
                parts.push(PartOut::Text(TextOut {
                    text: TextValue::Str(Cow::Borrowed(r)),
                    thought: Some(true),
                }));
            }
            let text = content_text(&message.content);
            if !text.is_empty() {
                parts.push(PartOut::text(text));
            }
            parts.extend(message.tool_calls.iter().map(|call| call_part(call, false)));
            if parts.is_empty() {
                parts.push(PartOut::text(Cow::Borrowed("")));
            }
            CandidateOut {
                content: ContentOut {
                    role: "model",
                    parts,
                },
                finish_reason: reason_of(choice.finish_reason.get().unwrap_or("stop")),
                index: i,
            }
        })
        .collect();
    let usage = hub.get("usage").map(openai::usage_of).unwrap_or_default();
    hub::to_value(&AnswerOut {
        candidates,
        usage_metadata: UsageOut::from(&usage),
        model_version: model,
        response_id: answer.id.or_empty().trim_start_matches("chatcmpl-"),
    })
}
