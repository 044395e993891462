//! Cohere Chat API v2 (`POST /v2/chat`) ⇄ the hub (OpenAI chat completions): requests, whole
//! answers, usage and the typed stream events (`message-start`, `content-start` / `-delta` /
//! `-end`, `tool-plan-delta`, `tool-call-start` / `-delta` / `-end`, `citation-start` / `-end`,
//! `message-end`). Cohere is an upstream only: no client speaks it to Tollgate.
//!
//! Learnt from Cohere's API reference (<https://docs.cohere.com/reference/chat>, the OpenAPI
//! document behind it) and streaming guide (<https://docs.cohere.com/v2/docs/streaming>).
//!
//! Usage: Cohere reports `usage.billed_units` (what it charges: input and output tokens) and
//! `usage.tokens` (what the model saw, its own prompt template included). The record takes the
//! billed units — what the channel's owner pays Cohere — and falls back to `tokens` when an
//! answer carries no billed units.

//!
//! Typed: the hub request and the answer are read through the lenient views of [`read`], the
//! bodies written from the shapes of [`write`]; the stream decoder is in [`stream`].

mod read;
mod stream;
mod write;

use serde_json::Value;

use super::hub::{self, Part, content_text, int, to_value};
use super::now;
use super::openai::usage_json;
use super::typed::{Shape, Verbatim, parse, view};
use crate::relay::measure::price::Usage;
use read::{Answer, UsageIn};
pub use stream::Decoder;
use write::{
    Body, CallFunction, CallOut, Content, FormatOut, HubAnswer, HubChoice, HubMessageOut, ImageOut,
    MessageOut, Nothing, Schema, Stop, ToolFunction, ToolOut, UserBlock,
};

/// A Cohere `usage` object as [`Usage`]: billed units, else the model's token counts.
pub fn usage_of(usage: &Value) -> Usage {
    view::<UsageIn>(usage).usage()
}

/// Cohere `finish_reason` → OpenAI `finish_reason`.
pub fn finish_of(reason: &str) -> &'static str {
    match reason {
        "MAX_TOKENS" => "length",
        "TOOL_CALL" => "tool_calls",
        _ => "stop",
    }
}

/// An OpenAI content part as a Cohere user content block: text and images, the only parts
/// Cohere's chat takes. Files and audio never get here: `parts::check` refuses them by name
/// before the request is converted.
fn user_part<'a>(part: &'a Part<'a>) -> Option<UserBlock<'a>> {
    match part.kind.get()? {
        "text" => Some(UserBlock::Text {
            text: part.text.as_ref(),
        }),
        "image_url" => {
            let (url, detail) = match &part.image_url {
                Shape::Obj(image) => (image.url.get()?, image.detail.get()),
                Shape::Str(url) => (url.as_ref(), None),
                _ => return None,
            };
            Some(UserBlock::ImageUrl {
                image_url: ImageOut { url, detail },
            })
        }
        _ => None,
    }
}

/// A hub request as a Cohere `/v2/chat` request for `model`.
pub fn request_from_hub(hub: &Value, model: &str, stream: bool) -> Value {
    let read: hub::Request = view(hub);
    to_value(&body_of(&read, model, stream))
}

/// The Cohere body of a hub request read as `read`.
fn body_of<'a>(read: &'a hub::Request<'a>, model: &'a str, stream: bool) -> Body<'a> {
    let mut messages = Vec::new();
    for message in read.messages.iter() {
        let text = || Content::Text(content_text(&message.content));
        match message.role.get().unwrap_or("user") {
            "system" | "developer" => messages.push(MessageOut::new("system", Some(text()))),
            "assistant" => {
                let content = content_text(&message.content);
                let mut out = MessageOut::new(
                    "assistant",
                    (!content.is_empty()).then_some(Content::Text(content)),
                );
                out.tool_calls = message
                    .tool_calls
                    .iter()
                    .map(|call| CallOut {
                        id: call.id.value(),
                        kind: "function",
                        function: CallFunction {
                            name: call.function.name.value(),
                            arguments: match &call.function.arguments {
                                Some(Verbatim::Str(s)) => s.as_ref().into(),
                                Some(other) => other.to_json().into(),
                                None => "null".into(),
                            },
                        },
                    })
                    .collect();
                messages.push(out);
            }
            "tool" | "function" => {
                let mut out = MessageOut::new("tool", Some(text()));
                out.tool_call_id = Some(message.tool_call_id.value());
                messages.push(out);
            }
            _ => {
                let content = match &message.content {
                    Shape::List(parts) => {
                        Content::Blocks(parts.iter().filter_map(user_part).collect())
                    }
                    _ => text(),
                };
                messages.push(MessageOut::new("user", Some(content)));
            }
        }
    }
    let stop_sequences = match &read.stop {
        Some(Verbatim::Str(s)) => Some(Stop::One([s.as_ref()])),
        Some(Verbatim::List(list)) if !list.is_empty() => Some(Stop::List(list)),
        _ => None,
    };
    let mut tools: Vec<ToolOut> = read
        .tools
        .iter()
        .filter(|t| match &t.kind {
            Shape::Absent => true,
            Shape::Str(kind) => kind == "function",
            _ => false,
        })
        .map(|t| {
            let f = &t.function;
            let parameters = match f.parameters.value() {
                Some(schema @ Verbatim::Obj(_)) => Schema::Given(schema),
                _ => Schema::Empty {
                    kind: "object",
                    properties: Nothing {},
                },
            };
            ToolOut {
                kind: "function",
                function: ToolFunction {
                    name: f.name.value(),
                    parameters,
                    description: f.description.non_empty(),
                },
            }
        })
        .collect();
    // Cohere's tool_choice is REQUIRED or NONE: one named function becomes REQUIRED with only
    // that function offered.
    let tool_choice = match &read.tool_choice {
        Shape::Str(s) if s == "required" => Some("REQUIRED"),
        Shape::Str(s) if s == "none" => Some("NONE"),
        Shape::Obj(choice) => {
            let name = choice.name().unwrap_or(&Verbatim::Null);
            tools.retain(|t| t.function.name.unwrap_or(&Verbatim::Null) == name);
            Some("REQUIRED")
        }
        _ => None,
    };
    let format = &read.response_format;
    let response_format = match format.kind.get() {
        Some("json_object") => Some(FormatOut {
            kind: "json_object",
            json_schema: None,
        }),
        Some("json_schema") => Some(FormatOut {
            kind: "json_object",
            json_schema: format
                .json_schema
                .schema
                .as_ref()
                .filter(|s| matches!(s, Verbatim::Obj(_))),
        }),
        _ => None,
    };
    Body {
        model,
        messages,
        stream: stream.then_some(true),
        max_tokens: int(&read.max_tokens).or(int(&read.max_completion_tokens)),
        temperature: read.temperature.as_ref(),
        p: read.top_p.as_ref(),
        seed: read.seed.as_ref(),
        frequency_penalty: read.frequency_penalty.as_ref(),
        presence_penalty: read.presence_penalty.as_ref(),
        stop_sequences,
        tool_choice,
        tools,
        response_format,
    }
}

/// A whole Cohere answer as a hub `chat.completion`.
pub fn answer_to_hub(answer: &Value) -> Value {
    hub_answer(&view(answer)).0
}

/// A whole Cohere answer read straight from its bytes: the hub `chat.completion` and the usage
/// it reports, as [`answer_to_hub`] and [`usage_of`] give them from the body parsed (`None`
/// when its `usage` is not an object). `None` when the bytes are not JSON or repeat a field
/// read (the caller then parses them as a value).
pub fn answer_from_bytes(bytes: &[u8]) -> Option<(Value, Option<Usage>)> {
    parse::<Answer>(bytes).map(|answer| hub_answer(&answer))
}

/// The hub `chat.completion` of an answer read, and its usage.
fn hub_answer(read: &Answer) -> (Value, Option<Usage>) {
    let message = &read.message;
    let mut text = String::new();
    let mut reasoning = String::new();
    match &message.content {
        Shape::Str(s) => text.push_str(s),
        Shape::List(blocks) => {
            for block in blocks {
                match block.kind.or_empty() {
                    "text" => text.push_str(block.text.or_empty()),
                    "thinking" => reasoning.push_str(block.thinking.or_empty()),
                    _ => {}
                }
            }
        }
        _ => {}
    }
    // The tool plan is the model's reasoning before its tool calls.
    if let Some(plan) = message.tool_plan.get() {
        reasoning.push_str(plan);
    }
    let tool_calls: Vec<CallOut> = message
        .tool_calls
        .iter()
        .map(|call| CallOut {
            id: call.id.as_ref(),
            kind: "function",
            function: CallFunction {
                name: call.function.name.as_ref(),
                arguments: call
                    .function
                    .arguments
                    .as_ref()
                    .and_then(Verbatim::as_str)
                    .unwrap_or("{}")
                    .into(),
            },
        })
        .collect();
    let content = (!text.is_empty() || tool_calls.is_empty()).then_some(text);
    let usage = match &read.usage {
        Shape::Obj(usage) => Some(usage.usage()),
        _ => None,
    };
    let hub = to_value(&HubAnswer {
        id: format!("chatcmpl-{}", read.id.get().unwrap_or("tollgate")),
        object: "chat.completion",
        created: now(),
        model: None,
        choices: [HubChoice {
            index: 0,
            message: HubMessageOut {
                role: "assistant",
                content,
                tool_calls,
                reasoning_content: reasoning,
            },
            finish_reason: finish_of(read.finish_reason.or_empty()),
        }],
        usage: usage.as_ref().map(usage_json),
    });
    (hub, usage)
}

#[cfg(test)]
mod tests;
