//! The hub → Anthropic: a hub request as a Messages request, a hub `chat.completion` as a
//! whole Messages answer. Read through the typed hub views of [`super::read`], written as the
//! blocks of [`super::BlockOut`] (ids, names and texts copied verbatim, as they came).

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use super::usage::UsageOut;
use super::{
    BlockOut, DEFAULT_MAX_TOKENS, ResultOut, SourceOut, TextOut, message_id, stop_reason_of,
    thinking_out,
};
use crate::relay::wire::hub::{self, Part, content_text, int};
use crate::relay::wire::typed::{Shape, Verbatim, view};
use crate::relay::wire::{openai, parts};

/// A Messages request as written.
#[derive(Debug, Serialize)]
struct RequestOut<'a> {
    model: &'a str,
    messages: Vec<MessageOut<'a>>,
    max_tokens: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<Vec<BlockOut<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<&'a Verbatim<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stop_sequences: Option<StopOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Vec<ToolOut<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<ChoiceOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<MetadataOut<'a>>,
}

#[derive(Debug, Serialize)]
struct MessageOut<'a> {
    role: &'static str,
    content: Vec<BlockOut<'a>>,
}

/// `stop_sequences`: the hub's one string as a list, or its list verbatim.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum StopOut<'a> {
    One([&'a str; 1]),
    List(&'a [Verbatim<'a>]),
}

#[derive(Debug, Serialize)]
struct ToolOut<'a> {
    name: Option<&'a Verbatim<'a>>,
    input_schema: SchemaOut<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
}

/// A tool's schema: the hub's object verbatim, else `{"type": "object"}`.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum SchemaOut<'a> {
    Given(&'a Verbatim<'a>),
    Object {
        #[serde(rename = "type")]
        kind: &'static str,
    },
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ChoiceOut<'a> {
    Any,
    #[serde(rename = "none")]
    Nothing,
    Auto,
    Tool {
        name: Option<&'a Verbatim<'a>>,
    },
}

#[derive(Debug, Serialize)]
struct MetadataOut<'a> {
    user_id: &'a str,
}

/// A whole Messages answer as written.
#[derive(Debug, Serialize)]
struct AnswerOut<'a> {
    id: String,
    #[serde(rename = "type")]
    kind: &'static str,
    role: &'static str,
    model: &'a str,
    content: Vec<BlockOut<'a>>,
    stop_reason: &'static str,
    stop_sequence: (),
    usage: UsageOut,
}

/// The thinking blocks of a hub assistant message for an Anthropic answer (`answer`) or
/// request. An answer gets its `thinking_blocks` as they are, else its `reasoning_content` as
/// one thinking block with an empty signature (the field is required; the upstream signed
/// nothing). A request gets only signed blocks: Claude refuses thinking whose signature it
/// cannot check, and leaving it out keeps the turn valid.
fn hub_thinking<'a>(message: &'a hub::Message<'a>, answer: bool) -> Vec<BlockOut<'a>> {
    if let Some(blocks) = message.thinking_blocks.present() {
        return blocks
            .iter()
            .filter_map(|b| thinking_out(b.kind.get(), &b.thinking, &b.signature, &b.data))
            .filter(|b| {
                answer || !matches!(b, BlockOut::Thinking { signature, .. } if signature.is_empty())
            })
            .collect();
    }
    match message.reasoning_content.get() {
        Some(r) if answer && !r.is_empty() => vec![BlockOut::Thinking {
            thinking: r,
            signature: "",
        }],
        _ => Vec::new(),
    }
}

/// An OpenAI `image_url` part as an Anthropic image block.
fn image_block<'a>(part: &'a Part<'a>) -> BlockOut<'a> {
    let url = match &part.image_url {
        Shape::Obj(image) => image.url.get(),
        Shape::Str(url) => Some(&**url),
        _ => None,
    }
    .unwrap_or_default();
    let source = match parts::data_url(url) {
        Some((media_type, data)) => SourceOut::Base64 { media_type, data },
        None => SourceOut::Url { url },
    };
    BlockOut::Image { source }
}

/// A hub `file` part given by its bytes as an Anthropic `document` block: a PDF as a base64
/// source, plain text as a text source (https://docs.anthropic.com/en/docs/build-with-claude/pdf-support,
/// https://docs.anthropic.com/en/docs/build-with-claude/citations for plain-text documents).
/// Other files were refused by `parts::check`.
fn document_block<'a>(part: &'a Part<'a>) -> Option<BlockOut<'a>> {
    let (mime, data) = parts::data_url(part.file_str("file_data")?)?;
    let source = match mime {
        "application/pdf" => SourceOut::Base64 {
            media_type: "application/pdf",
            data,
        },
        "text/plain" => {
            use base64::Engine;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data)
                .ok()?;
            SourceOut::Text {
                media_type: "text/plain",
                data: String::from_utf8_lossy(&bytes).into_owned(),
            }
        }
        _ => return None,
    };
    let title = part.file_str("filename").filter(|n| !n.is_empty());
    Some(BlockOut::Document { source, title })
}

/// A hub tool call as a `tool_use` block (arguments that are not a JSON object: `{}`).
fn tool_use<'a>(call: &'a hub::ToolCall<'a>) -> BlockOut<'a> {
    let args = call.function.arguments_str().unwrap_or("{}");
    let input = serde_json::from_str::<Verbatim>(args)
        .ok()
        .filter(|v| matches!(v, Verbatim::Obj(_)))
        .unwrap_or(Verbatim::Obj(Vec::new()));
    BlockOut::ToolUse {
        id: call.id.value(),
        name: call.function.name.value(),
        input,
    }
}

/// A hub part as a block of a message (`None`: audio and the rest, refused by
/// `parts::check`, and files that are not bytes).
fn part_block<'a>(part: &'a Part<'a>) -> Option<BlockOut<'a>> {
    match part.kind.or_empty() {
        "text" => Some(BlockOut::Text {
            text: TextOut::Raw(part.text.as_ref()),
        }),
        "image_url" => Some(image_block(part)),
        "file" => document_block(part),
        _ => None,
    }
}

/// Appends `blocks` as a `role` message, merging into the previous message of the same role.
fn push_blocks<'a>(
    messages: &mut Vec<MessageOut<'a>>,
    role: &'static str,
    mut blocks: Vec<BlockOut<'a>>,
) {
    if blocks.is_empty() {
        return;
    }
    if let Some(last) = messages.last_mut()
        && last.role == role
    {
        last.content.append(&mut blocks);
        return;
    }
    messages.push(MessageOut {
        role,
        content: blocks,
    });
}

/// A hub request as an Anthropic Messages request for `model`.
pub fn request_from_hub(hub: &Value, model: &str, stream: bool) -> Value {
    let request: hub::Request = view(hub);
    let mut system = Vec::new();
    let mut messages = Vec::new();
    for message in request.messages.iter() {
        let role = message.role.get().unwrap_or("user");
        match role {
            "system" | "developer" => {
                let text = content_text(&message.content);
                if !text.is_empty() {
                    system.push(BlockOut::Text {
                        text: TextOut::Str(text),
                    });
                }
            }
            "tool" => {
                let content = match &message.content {
                    Shape::List(parts) if parts.iter().any(|p| p.kind.get() != Some("text")) => {
                        ResultOut::Blocks(parts.iter().filter_map(part_block).collect())
                    }
                    other => ResultOut::Text(content_text(other)),
                };
                let block = BlockOut::ToolResult {
                    tool_use_id: message.tool_call_id.value(),
                    content,
                };
                push_blocks(&mut messages, "user", vec![block]);
            }
            _ => {
                let role = if role == "assistant" {
                    "assistant"
                } else {
                    "user"
                };
                // Thinking first, as Claude answered it (signed blocks only: see hub_thinking).
                let mut blocks = if role == "assistant" {
                    hub_thinking(message, false)
                } else {
                    Vec::new()
                };
                match &message.content {
                    Shape::Str(text) if !text.is_empty() => blocks.push(BlockOut::Text {
                        text: TextOut::Str(Cow::Borrowed(text)),
                    }),
                    Shape::List(parts) => blocks.extend(parts.iter().filter_map(part_block)),
                    _ => {}
                }
                blocks.extend(message.tool_calls.iter().map(tool_use));
                push_blocks(&mut messages, role, blocks);
            }
        }
    }
    let stop_sequences = match &request.stop {
        Some(Verbatim::Str(s)) => Some(StopOut::One([s.as_ref()])),
        Some(Verbatim::List(list)) if !list.is_empty() => Some(StopOut::List(list)),
        _ => None,
    };
    let tools: Option<Vec<ToolOut>> = request.tools.present().map(|tools| {
        tools
            .iter()
            .map(|t| {
                let f = &t.function;
                ToolOut {
                    name: f.name.value(),
                    input_schema: match f.parameters.value() {
                        Some(schema @ Verbatim::Obj(_)) => SchemaOut::Given(schema),
                        _ => SchemaOut::Object { kind: "object" },
                    },
                    description: f.description.non_empty(),
                }
            })
            .collect()
    });
    let tool_choice = match &request.tool_choice {
        Shape::Str(s) if s == "required" => Some(ChoiceOut::Any),
        Shape::Str(s) if s == "none" => Some(ChoiceOut::Nothing),
        Shape::Str(s) if s == "auto" => Some(ChoiceOut::Auto),
        Shape::Obj(choice) => Some(ChoiceOut::Tool {
            name: choice.name(),
        }),
        _ => None,
    };
    hub::to_value(&RequestOut {
        model,
        messages,
        max_tokens: int(&request.max_tokens)
            .or(int(&request.max_completion_tokens))
            .unwrap_or(DEFAULT_MAX_TOKENS),
        system: (!system.is_empty()).then_some(system),
        temperature: request.temperature.as_ref(),
        top_p: request.top_p.as_ref(),
        stop_sequences,
        stream: stream.then_some(true),
        tools: tools.filter(|t| !t.is_empty()),
        tool_choice,
        metadata: (request.user.as_ref())
            .and_then(Verbatim::as_str)
            .map(|user_id| MetadataOut { user_id }),
    })
}

/// A hub `chat.completion` as a whole Anthropic answer naming `model`.
pub fn answer_from_hub(hub: &Value, model: &str) -> Value {
    let answer: hub::Answer = view(hub);
    let default = hub::Choice::default();
    let choice = answer.choices.iter().next().unwrap_or(&default);
    let message = &choice.message;
    // Signed thinking as the upstream signed it; reasoning from an upstream that signs nothing
    // with the empty signature (the field is required in an answer).
    let mut content = hub_thinking(message, true);
    let text = content_text(&message.content);
    if !text.is_empty() {
        content.push(BlockOut::Text {
            text: TextOut::Str(text),
        });
    }
    content.extend(message.tool_calls.iter().map(tool_use));
    let usage = hub.get("usage").map(openai::usage_of).unwrap_or_default();
    hub::to_value(&AnswerOut {
        id: message_id(answer.id.or_empty()),
        kind: "message",
        role: "assistant",
        model,
        content,
        stop_reason: stop_reason_of(choice.finish_reason.get().unwrap_or("stop")),
        stop_sequence: (),
        usage: UsageOut::from(&usage),
    })
}
