//! Anthropic → the hub: a Messages request as a hub request, a whole answer as a hub
//! `chat.completion`. Read through the typed views of [`super::read`], written from the hub
//! shapes below (ids, names, texts and sampling fields copied verbatim, as they came).

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use super::read::{Answer, Block, Request};
use super::{BlockOut, TextOut, finish_of, thinking_block};
use crate::relay::measure::price::Usage;
use crate::relay::wire::openai::usage_json;
use crate::relay::wire::typed::{Present, Shape, Sorted, Verbatim, parse, view};
use crate::relay::wire::{ConvertError, hub, now};

/// A hub message as written.
#[derive(Debug, Serialize)]
struct MessageOut<'a> {
    role: &'a str,
    /// `null` for an assistant message of tool calls only.
    content: Option<ContentOut<'a>>,
    /// A tool message's call, verbatim (`null` when the result named none).
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<Option<&'a Verbatim<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_calls: Option<Vec<CallOut<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking_blocks: Option<Vec<BlockOut<'a>>>,
}

impl<'a> MessageOut<'a> {
    fn new(role: &'a str, content: Option<ContentOut<'a>>) -> MessageOut<'a> {
        MessageOut {
            role,
            content,
            tool_call_id: None,
            tool_calls: None,
            reasoning_content: None,
            thinking_blocks: None,
        }
    }
}

/// A hub message's content.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum ContentOut<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<PartOut<'a>>),
}

/// A hub content part as written.
#[derive(Debug, Serialize)]
#[serde(tag = "type")]
enum PartOut<'a> {
    #[serde(rename = "text")]
    Text { text: TextOut<'a> },
    #[serde(rename = "image_url")]
    ImageUrl { image_url: UrlOut },
    #[serde(rename = "file")]
    File { file: FileOut<'a> },
    /// A part no hub part can hold ([`crate::relay::wire::parts::UNSUPPORTED`], the name the rename spells).
    #[serde(rename = "x-tollgate-unsupported")]
    Unsupported { detail: String },
}

impl PartOut<'_> {
    fn is_text(&self) -> bool {
        matches!(self, PartOut::Text { .. })
    }

    fn text(&self) -> Option<&str> {
        match self {
            PartOut::Text {
                text: TextOut::Str(s),
            } => Some(s),
            PartOut::Text {
                text: TextOut::Raw(v),
            } => v.and_then(Verbatim::as_str),
            _ => None,
        }
    }
}

#[derive(Debug, Serialize)]
struct UrlOut {
    url: String,
}

/// A hub `file` part's file: by its bytes, or by a URL the relay reads.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum FileOut<'a> {
    Data {
        filename: &'a str,
        file_data: String,
    },
    Url {
        file_url: Option<&'a Verbatim<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        filename: Option<&'a str>,
    },
}

#[derive(Debug, Serialize)]
struct CallOut<'a> {
    id: Option<&'a Verbatim<'a>>,
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionOut<'a>,
}

#[derive(Debug, Serialize)]
struct FunctionOut<'a> {
    name: Option<&'a Verbatim<'a>>,
    arguments: String,
}

/// A hub request as written.
#[derive(Debug, Serialize)]
struct RequestOut<'a> {
    model: Option<&'a Verbatim<'a>>,
    messages: Vec<MessageOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stop: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Vec<ToolOut<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<ChoiceOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user: Option<&'a str>,
}

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
    parameters: &'a Verbatim<'a>,
}

/// A hub `tool_choice`: a mode, or one function.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum ChoiceOut<'a> {
    Mode(&'static str),
    Function {
        #[serde(rename = "type")]
        kind: &'static str,
        function: NameOut<'a>,
    },
}

#[derive(Debug, Serialize)]
struct NameOut<'a> {
    name: Option<&'a Verbatim<'a>>,
}

/// A hub answer as written.
#[derive(Debug, Serialize)]
struct AnswerOut<'a> {
    id: String,
    object: &'static str,
    created: i64,
    model: Option<&'a Verbatim<'a>>,
    choices: [ChoiceAnswerOut<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<Value>,
}

#[derive(Debug, Serialize)]
struct ChoiceAnswerOut<'a> {
    index: u32,
    message: MessageOut<'a>,
    finish_reason: &'static str,
}

/// A block's text, if it is a string.
fn block_text<'a>(block: &'a Block<'a>) -> Option<&'a str> {
    block.text.as_ref().and_then(Verbatim::as_str)
}

/// Text of a `system` field or a tool result's content: a string, or its blocks' texts joined
/// by newlines.
fn joined_text<'a, B: AsRef<Block<'a>> + 'a>(value: &'a Shape<'a, B>) -> Cow<'a, str> {
    match value {
        Shape::Str(s) => Cow::Borrowed(s),
        Shape::List(blocks) => Cow::Owned(
            blocks
                .iter()
                .filter_map(|b| block_text(b.as_ref()))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => Cow::Borrowed(""),
    }
}

impl<'a> AsRef<Block<'a>> for Block<'a> {
    fn as_ref(&self) -> &Block<'a> {
        self
    }
}

/// A hub part for a client part no hub part can hold (see [`crate::relay::wire::parts::UNSUPPORTED`]).
fn unsupported<'a>(detail: String) -> PartOut<'a> {
    PartOut::Unsupported { detail }
}

/// An Anthropic image block as an OpenAI `image_url` part (an image given by Files API id has
/// no hub form: marked, and refused if the request is converted, see
/// [`crate::relay::wire::parts`]).
fn image_part<'a>(block: &'a Block<'a>) -> Option<PartOut<'a>> {
    let source = &block.source;
    let url = match source.kind.get()? {
        "base64" => format!(
            "data:{};base64,{}",
            source.media_type.get().unwrap_or("image/png"),
            source.data_str()
        ),
        "url" => source.url.as_ref().and_then(Verbatim::as_str)?.to_owned(),
        "file" => {
            return Some(unsupported(format!(
                "an image given by Files API id ({})",
                source.file_id.or_empty()
            )));
        }
        _ => return None,
    };
    Some(PartOut::ImageUrl {
        image_url: UrlOut { url },
    })
}

/// An Anthropic `document` block (https://docs.anthropic.com/en/docs/build-with-claude/pdf-support,
/// sources in https://docs.anthropic.com/en/api/messages) as hub parts: a base64 PDF becomes
/// OpenAI's `file` part with the bytes as a data URL
/// (https://platform.openai.com/docs/api-reference/chat/create, content part `file`); a PDF by
/// URL a `file` part with a `file_url` (Tollgate's own field: the relay reads the URL through
/// the guarded media fetcher before converting, see `relay::media`); plain text a text part;
/// custom content its text and image blocks. A document by Files API id has no hub form: it is
/// marked and refused if the request is converted (the hub is built for every request, Claude's
/// pass-through included, so this is not the place to refuse it).
fn document_parts<'a>(block: &'a Block<'a>) -> Vec<PartOut<'a>> {
    let source = &block.source;
    let name = block.title.non_empty();
    match source.kind.or_empty() {
        "base64" => {
            let media = source.media_type.get().unwrap_or("application/pdf");
            vec![PartOut::File {
                file: FileOut::Data {
                    filename: name.unwrap_or("document.pdf"),
                    file_data: format!("data:{media};base64,{}", source.data_str()),
                },
            }]
        }
        "url" => vec![PartOut::File {
            file: FileOut::Url {
                file_url: source.url.as_ref(),
                filename: name,
            },
        }],
        "text" => vec![PartOut::Text {
            text: TextOut::Raw(source.data.as_ref()),
        }],
        "content" => match &source.content {
            Shape::Str(text) => vec![PartOut::Text {
                text: TextOut::Str(Cow::Borrowed(text)),
            }],
            Shape::List(blocks) => blocks
                .iter()
                .filter_map(|b| match b.kind.get() {
                    Some("text") => Some(PartOut::Text {
                        text: TextOut::Raw(b.text.as_ref()),
                    }),
                    Some("image") => image_part(b),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        },
        "file" => vec![unsupported(format!(
            "a document given by Files API id ({})",
            source.file_id.or_empty()
        ))],
        other => vec![unsupported(format!("a document with a {other:?} source"))],
    }
}

/// A `tool_result`'s content as a hub tool message's: its text, or — when it holds images or
/// documents (a screenshot a tool took) — hub parts, which the upstreams whose tool results
/// take media (Claude, Converse) map and the others refuse by name (see
/// [`crate::relay::wire::parts`]).
fn tool_result_content<'a>(content: &'a Shape<'a, Box<Block<'a>>>) -> ContentOut<'a> {
    let Shape::List(blocks) = content else {
        return ContentOut::Text(Cow::Borrowed(content.str().unwrap_or_default()));
    };
    let mut out = Vec::new();
    for block in blocks {
        match block.kind.or_empty() {
            "text" => out.push(PartOut::Text {
                text: TextOut::Raw(block.text.as_ref()),
            }),
            "image" => out.extend(image_part(block)),
            "document" => out.extend(document_parts(block)),
            _ => {}
        }
    }
    if out.iter().all(PartOut::is_text) {
        ContentOut::Text(joined_text(content))
    } else {
        ContentOut::Parts(out)
    }
}

/// A tool use as a hub tool call (its input as JSON text, keys in name order as a `Value`
/// writes them, whether it was read from a `Value` or from the body's bytes).
fn tool_call<'a>(block: &'a Block<'a>) -> CallOut<'a> {
    CallOut {
        id: block.id.as_ref(),
        kind: "function",
        function: FunctionOut {
            name: block.name.as_ref(),
            arguments: block
                .input
                .as_ref()
                .map_or_else(|| "null".to_owned(), |input| Sorted(input).to_json()),
        },
    }
}

/// An Anthropic Messages request as a hub request.
pub fn request_to_hub(body: &Value) -> Result<Value, ConvertError> {
    hub_request(&view(body))
}

/// The hub request of a request read.
fn hub_request(request: &Request) -> Result<Value, ConvertError> {
    let mut messages = Vec::new();
    let system = joined_text(&request.system);
    if !system.is_empty() {
        messages.push(MessageOut::new("system", Some(ContentOut::Text(system))));
    }
    let Some(input) = request.messages.present() else {
        return Err(ConvertError("messages must be an array".into()));
    };
    for message in input {
        let role = message.role.get().unwrap_or("user");
        let blocks = match &message.content {
            Shape::Str(text) => {
                let text = ContentOut::Text(Cow::Borrowed(text));
                messages.push(MessageOut::new(role, Some(text)));
                continue;
            }
            Shape::List(blocks) => blocks,
            _ => {
                return Err(ConvertError(
                    "message content must be a string or an array".into(),
                ));
            }
        };
        let mut parts = Vec::new();
        let mut tool_calls = Vec::new();
        let mut reasoning = String::new();
        let mut thinking = Vec::new();
        for block in blocks {
            match block.kind.or_empty() {
                "text" => parts.push(PartOut::Text {
                    text: TextOut::Raw(block.text.as_ref()),
                }),
                "image" => parts.extend(image_part(block)),
                "document" => parts.extend(document_parts(block)),
                "thinking" => {
                    reasoning.push_str(block.thinking.or_empty());
                    thinking.extend(thinking_block(block));
                }
                "redacted_thinking" => thinking.extend(thinking_block(block)),
                "tool_use" => tool_calls.push(tool_call(block)),
                "tool_result" => {
                    let content = tool_result_content(&block.content);
                    let mut result = MessageOut::new("tool", Some(content));
                    result.tool_call_id = Some(block.tool_use_id.as_ref());
                    messages.push(result);
                }
                _ => {}
            }
        }
        if parts.is_empty() && tool_calls.is_empty() && thinking.is_empty() {
            continue;
        }
        let content = if role == "assistant" || parts.iter().all(PartOut::is_text) {
            let text: String = parts.iter().filter_map(PartOut::text).collect();
            if text.is_empty() && !tool_calls.is_empty() {
                None
            } else {
                Some(ContentOut::Text(Cow::Owned(text)))
            }
        } else {
            Some(ContentOut::Parts(parts))
        };
        let mut out = MessageOut::new(role, content);
        out.tool_calls = (!tool_calls.is_empty()).then_some(tool_calls);
        out.reasoning_content = (!reasoning.is_empty()).then_some(reasoning);
        out.thinking_blocks = (!thinking.is_empty() && role == "assistant").then_some(thinking);
        messages.push(out);
    }
    let tools: Vec<ToolOut> = request
        .tools
        .iter()
        .filter_map(|t| match &t.input_schema {
            Present(Some(schema)) => Some(ToolOut {
                kind: "function",
                function: ToolFunctionOut {
                    name: t.name.as_ref(),
                    description: t.description.or_empty(),
                    parameters: schema,
                },
            }),
            Present(None) => None,
        })
        .collect();
    let tool_choice = match &request.tool_choice {
        Shape::Obj(choice) => Some(match choice.kind.or_empty() {
            "any" => ChoiceOut::Mode("required"),
            "none" => ChoiceOut::Mode("none"),
            "tool" => ChoiceOut::Function {
                kind: "function",
                function: NameOut {
                    name: choice.name.as_ref(),
                },
            },
            _ => ChoiceOut::Mode("auto"),
        }),
        _ => None,
    };
    Ok(hub::to_value(&RequestOut {
        model: request.model.as_ref(),
        messages,
        max_tokens: request.max_tokens.as_ref(),
        temperature: request.temperature.as_ref(),
        top_p: request.top_p.as_ref(),
        stop: request.stop_sequences.as_ref(),
        stream: request.stream.as_ref(),
        tools: (!tools.is_empty()).then_some(tools),
        tool_choice,
        user: request.metadata.user_id.get(),
    }))
}

/// A whole Anthropic answer as a hub `chat.completion`.
pub fn answer_to_hub(answer: &Value) -> Value {
    hub_answer(&view(answer)).0
}

/// A whole Anthropic answer read straight from its bytes: the hub `chat.completion` and the
/// usage it reports, as [`answer_to_hub`] and [`super::usage_of`] give them from the body
/// parsed. `None` when the bytes are not JSON or repeat a field read (the caller then parses
/// them as a value).
pub fn answer_from_bytes(bytes: &[u8]) -> Option<(Value, Option<Usage>)> {
    parse::<Answer>(bytes).map(|answer| hub_answer(&answer))
}

/// The hub `chat.completion` of an answer read, and its usage.
fn hub_answer(read: &Answer) -> (Value, Option<Usage>) {
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut thinking = Vec::new();
    let mut tool_calls = Vec::new();
    for block in read.content.iter() {
        match block.kind.or_empty() {
            "text" => text.push_str(block_text(block).unwrap_or_default()),
            "thinking" => {
                reasoning.push_str(block.thinking.or_empty());
                thinking.extend(thinking_block(block));
            }
            "redacted_thinking" => thinking.extend(thinking_block(block)),
            "tool_use" => tool_calls.push(tool_call(block)),
            _ => {}
        }
    }
    let content = if text.is_empty() && !tool_calls.is_empty() {
        None
    } else {
        Some(ContentOut::Text(Cow::Owned(text)))
    };
    let mut message = MessageOut::new("assistant", content);
    message.tool_calls = (!tool_calls.is_empty()).then_some(tool_calls);
    message.reasoning_content = (!reasoning.is_empty()).then_some(reasoning);
    message.thinking_blocks = (!thinking.is_empty()).then_some(thinking);
    let usage = read.usage.0.as_ref().map(|u| u.usage());
    let hub = hub::to_value(&AnswerOut {
        id: format!("chatcmpl-{}", read.id.get().unwrap_or("tollgate")),
        object: "chat.completion",
        created: now(),
        model: read.model.as_ref(),
        choices: [ChoiceAnswerOut {
            index: 0,
            message,
            finish_reason: finish_of(read.stop_reason.or_empty()),
        }],
        usage: usage.as_ref().map(usage_json),
    });
    (hub, usage)
}
