//! AWS Bedrock Converse ⇄ the hub (OpenAI chat completions), upstream side only: requests from
//! the hub, whole answers and `usage` to the hub, and the ConverseStream events (reframed as SSE
//! by [`crate::relay::adaptor::eventstream`]: the event name is the event type, the data its
//! payload) as pieces.
//!
//! Shapes from the API reference: Converse
//! (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html),
//! ConverseStream (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html),
//! ContentBlock, ToolConfiguration, InferenceConfiguration and TokenUsage
//! (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_TokenUsage.html).

//!
//! Typed: the hub request and the answer are read through the lenient views of [`read`], the
//! bodies written from the shapes of [`write`]; the stream decoder is in [`stream`].

mod read;
mod stream;
mod write;

use std::collections::HashSet;

use base64::Engine;
use serde_json::Value;

use super::hub::{self, Part, to_value};
use super::openai::usage_json;
use super::typed::{Shape, Sorted, Verbatim, parse, view};
use super::{ConvertError, now, parts};
use crate::relay::measure::price::Usage;
use read::{Answer, UsageIn, usage_of_shape};
pub use stream::Decoder;
use write::{
    BlockOut, Body, Bytes, ChoiceOut, Config, Document, HubAnswer, HubCallOut, HubChoice,
    HubFunctionOut, HubMessageOut, InputSchema, Media, MessageOut, Nothing, ReasoningOut, Schema,
    Stop, ThinkingOut, ToolConfig, ToolOut, ToolResultOut, ToolSpec, ToolUseOut,
};

/// A Converse `usage` (TokenUsage) as [`Usage`]: cache reads and writes are counted beside
/// `inputTokens`, as Anthropic counts them.
pub fn usage_of(usage: &Value) -> Usage {
    view::<UsageIn>(usage).usage()
}

/// Converse `stopReason` → OpenAI `finish_reason`.
pub fn finish_of(reason: &str) -> &'static str {
    match reason {
        "tool_use" => "tool_calls",
        "max_tokens" | "model_context_window_exceeded" => "length",
        "guardrail_intervened" | "content_filtered" => "content_filter",
        _ => "stop",
    }
}

/// The Converse image `format` of a data URL's media type.
fn image_format(media: &str) -> Option<&'static str> {
    match media {
        "image/png" => Some("png"),
        "image/jpeg" | "image/jpg" => Some("jpeg"),
        "image/gif" => Some("gif"),
        "image/webp" => Some("webp"),
        _ => None,
    }
}

/// The document names given so far in one request (Converse names every document; the names
/// are kept distinct so no document shadows another).
#[derive(Debug, Default)]
struct Names(HashSet<String>);

impl Names {
    /// A DocumentBlock `name` for a file called `file` (DocumentBlock: alphanumerics, single
    /// whitespace, hyphens, parentheses and square brackets, 1 to 64 characters): the extension
    /// dropped, any other character a space, runs of spaces one, distinct within the request.
    fn give(&mut self, file: Option<&str>) -> String {
        const MAX: usize = 64;
        let stem = file
            .map(|f| f.rsplit_once('.').map_or(f, |(stem, _)| stem))
            .unwrap_or_default();
        let mut name = String::new();
        for c in stem.chars() {
            let c = if c.is_ascii_alphanumeric() || matches!(c, '-' | '(' | ')' | '[' | ']') {
                c
            } else {
                ' '
            };
            if c == ' ' && (name.is_empty() || name.ends_with(' ')) {
                continue;
            }
            name.push(c);
        }
        let mut name: String = name.trim_end().chars().take(MAX).collect();
        name.truncate(name.trim_end().len());
        if name.is_empty() {
            name.push_str("document");
        }
        let mut unique = name.clone();
        let mut n = 1;
        while self.0.contains(&unique) {
            n += 1;
            let suffix = format!(" ({n})");
            let keep: String = name.chars().take(MAX - suffix.len()).collect();
            unique = format!("{}{suffix}", keep.trim_end());
        }
        self.0.insert(unique.clone());
        unique
    }
}

/// Where a part of the hub request is, to describe it in a refusal: its message and index.
#[derive(Clone, Copy)]
struct At<'v> {
    hub: &'v Value,
    message: usize,
}

impl At<'_> {
    /// The part at `index` of this message's content, described (`parts::describe`).
    fn describe(self, index: usize) -> String {
        parts::describe(&self.hub["messages"][self.message]["content"][index])
    }
}

/// A hub `file` part given by its bytes as a Converse `document` block (DocumentBlock, source
/// `bytes`: base64 in JSON). Files Converse cannot take were refused by `parts::check`.
fn document<'a>(
    part: &'a Part<'a>,
    names: &mut Names,
    at: At<'_>,
    index: usize,
) -> Result<BlockOut<'a>, ConvertError> {
    let refused = || {
        ConvertError(format!(
            "{} cannot be sent to a Bedrock Converse model: documents must be data: URLs of pdf, csv, doc, docx, xls, xlsx, html, txt or md",
            at.describe(index)
        ))
    };
    let file = part.file.as_ref();
    let (mime, data) = file
        .and_then(|f| f.get("file_data"))
        .and_then(Verbatim::as_str)
        .and_then(parts::data_url)
        .ok_or_else(refused)?;
    let format = parts::converse_document_format(mime).ok_or_else(refused)?;
    // Checked here so a broken document is the client's 400, not the upstream's.
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|_| refused())?;
    let file_name = file
        .and_then(|f| f.get("filename"))
        .and_then(Verbatim::as_str)
        .filter(|n| !n.is_empty());
    Ok(BlockOut::Document(Document {
        format,
        name: names.give(file_name),
        source: Bytes { bytes: data },
    }))
}

/// The content blocks of a hub message `content` (a string or OpenAI parts).
fn blocks<'a>(
    content: &'a Shape<'a, Part<'a>>,
    names: &mut Names,
    at: At<'_>,
) -> Result<Vec<BlockOut<'a>>, ConvertError> {
    let mut out = Vec::new();
    match content {
        Shape::Str(text) if !text.is_empty() => out.push(BlockOut::Text(text.as_ref().into())),
        Shape::List(parts) => {
            for (index, part) in parts.iter().enumerate() {
                match part.kind.or_empty() {
                    "text" => {
                        if let Some(text) = part
                            .text
                            .as_ref()
                            .and_then(Verbatim::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            out.push(BlockOut::Text(text.into()));
                        }
                    }
                    "image_url" => {
                        let url = match &part.image_url {
                            Shape::Obj(image) => image.url.get(),
                            Shape::Str(url) => Some(url.as_ref()),
                            _ => None,
                        };
                        out.push(image(url.unwrap_or_default())?);
                    }
                    "file" => out.push(document(part, names, at, index)?),
                    _ => {
                        return Err(ConvertError(format!(
                            "{} cannot be sent to a Bedrock Converse model",
                            at.describe(index)
                        )));
                    }
                }
            }
        }
        _ => {}
    }
    Ok(out)
}

/// An `image` block from a `data:` URL (Converse takes the bytes, base64 in JSON).
fn image(url: &str) -> Result<BlockOut<'_>, ConvertError> {
    let refused = || {
        ConvertError(
            "images for a Bedrock Converse model must be data: URLs of PNG, JPEG, GIF or WebP"
                .into(),
        )
    };
    let rest = url.strip_prefix("data:").ok_or_else(refused)?;
    let (media, data) = rest.split_once(";base64,").ok_or_else(refused)?;
    let format = image_format(media).ok_or_else(refused)?;
    // Checked here so a broken image is the client's 400, not the upstream's.
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|_| refused())?;
    Ok(BlockOut::Image(Media {
        format,
        source: Bytes { bytes: data },
    }))
}

/// The `reasoningContent` blocks of a hub assistant message's `thinking_blocks`
/// (ReasoningContentBlock: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ReasoningContentBlock.html):
/// signed thinking as `reasoningText` with its `signature` — which Converse wants back
/// unmodified in the next turn — and redacted thinking as `redactedContent` (a blob: base64 in
/// JSON, as Anthropic's `data` is). Thinking without a signature (reasoning another upstream
/// wrote, or a client format that cannot carry signatures) is left out: Converse cannot check
/// it, and the turn stays valid without it.
fn reasoning_blocks<'a>(message: &'a hub::Message<'a>) -> Vec<BlockOut<'a>> {
    let mut out = Vec::new();
    for block in message.thinking_blocks.iter() {
        match block.kind.or_empty() {
            "thinking" => {
                if let Some(signature) = block.signature.non_empty() {
                    out.push(BlockOut::ReasoningContent(ReasoningOut::ReasoningText {
                        text: block.thinking.or_empty(),
                        signature,
                    }));
                }
            }
            "redacted_thinking" => {
                if let Some(data) = block.data.non_empty() {
                    out.push(BlockOut::ReasoningContent(ReasoningOut::RedactedContent(
                        data,
                    )));
                }
            }
            _ => {}
        }
    }
    out
}

/// Appends `content` to `messages` as a message of `role`, merged into the last one when it has
/// the same role (Converse wants user and assistant turns to alternate).
fn push<'a>(messages: &mut Vec<MessageOut<'a>>, role: &'static str, content: Vec<BlockOut<'a>>) {
    if content.is_empty() {
        return;
    }
    if let Some(last) = messages.last_mut()
        && last.role == role
    {
        last.content.extend(content);
        return;
    }
    messages.push(MessageOut { role, content });
}

/// A hub request as a Converse request body (the model is in the URL).
pub fn request_from_hub(hub: &Value) -> Result<Value, ConvertError> {
    let read: hub::Request = view(hub);
    Ok(to_value(&body_of(hub, &read)?))
}

/// The Converse body of a hub request read as `read` (`hub`: the request, for refusals).
fn body_of<'a>(hub: &Value, read: &'a hub::Request<'a>) -> Result<Body<'a>, ConvertError> {
    let mut system = Vec::new();
    let mut messages: Vec<MessageOut> = Vec::new();
    let mut names = Names::default();
    for (index, message) in read.messages.iter().enumerate() {
        let at = At {
            hub,
            message: index,
        };
        match message.role.or_empty() {
            "system" | "developer" => system.extend(blocks(&message.content, &mut names, at)?),
            "assistant" => {
                let mut content = reasoning_blocks(message);
                content.extend(blocks(&message.content, &mut names, at)?);
                for call in message.tool_calls.iter() {
                    let input: Value =
                        serde_json::from_str(call.function.arguments_str().unwrap_or("{}"))
                            .unwrap_or_else(|_| Value::Object(serde_json::Map::new()));
                    content.push(BlockOut::ToolUse(ToolUseOut {
                        tool_use_id: call.id.value(),
                        name: call.function.name.value(),
                        input,
                    }));
                }
                push(&mut messages, "assistant", content);
            }
            "tool" => {
                // ToolResultContentBlock takes text, images and documents
                // (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolResultContentBlock.html).
                let content = match &message.content {
                    Shape::List(_) => blocks(&message.content, &mut names, at)?,
                    Shape::Str(text) => vec![BlockOut::Text(text.as_ref().into())],
                    _ => vec![BlockOut::Text("".into())],
                };
                let result = BlockOut::ToolResult(ToolResultOut {
                    tool_use_id: message.tool_call_id.value(),
                    content,
                });
                push(&mut messages, "user", vec![result]);
            }
            _ => {
                let content = blocks(&message.content, &mut names, at)?;
                push(&mut messages, "user", content);
            }
        }
    }
    let number = |v: &'a Option<Verbatim<'a>>| v.as_ref().filter(|v| matches!(v, Verbatim::Num(_)));
    let stop_sequences = match &read.stop {
        Some(Verbatim::Str(s)) => Some(Stop::One([s.as_ref()])),
        Some(Verbatim::List(list)) if !list.is_empty() => Some(Stop::List(list)),
        _ => None,
    };
    Ok(Body {
        messages,
        system,
        inference_config: Config {
            max_tokens: read.max_output(),
            temperature: number(&read.temperature),
            top_p: number(&read.top_p),
            stop_sequences,
        },
        tool_config: tool_config(read),
    })
}

/// The `toolConfig` of the hub's `tools` and `tool_choice`.
fn tool_config<'a>(read: &'a hub::Request<'a>) -> Option<ToolConfig<'a>> {
    let tools: Vec<ToolOut> = read
        .tools
        .iter()
        .filter(|t| t.kind.str() == Some("function"))
        .map(|t| {
            let f = &t.function;
            let json = match &f.parameters.0 {
                Some(schema) => Schema::Given(schema),
                None => Schema::Empty {
                    kind: "object",
                    properties: Nothing {},
                },
            };
            ToolOut {
                tool_spec: ToolSpec {
                    name: f.name.value(),
                    input_schema: InputSchema { json },
                    description: f.description.get(),
                },
            }
        })
        .collect();
    if tools.is_empty() {
        return None;
    }
    let tool_choice = match &read.tool_choice {
        Shape::Str(c) if c == "required" => Some(ChoiceOut::Any(Nothing {})),
        Shape::Str(c) if c == "auto" => Some(ChoiceOut::Auto(Nothing {})),
        Shape::Obj(choice) => choice
            .name()
            .and_then(Verbatim::as_str)
            .map(|name| ChoiceOut::Tool { name }),
        _ => None,
    };
    Some(ToolConfig { tools, tool_choice })
}

/// A whole Converse answer as a hub `chat.completion`.
pub fn answer_to_hub(answer: &Value) -> Value {
    hub_answer(&view(answer)).0
}

/// A whole Converse answer read straight from its bytes: the hub `chat.completion` and the
/// usage it reports, as [`answer_to_hub`] and [`usage_of`] give them from the body parsed
/// (`None` when the answer has no `usage`). `None` when the bytes are not JSON or repeat a
/// field read (the caller then parses them as a value).
pub fn answer_from_bytes(bytes: &[u8]) -> Option<(Value, Option<Usage>)> {
    parse::<Answer>(bytes).map(|answer| hub_answer(&answer))
}

/// The hub `chat.completion` of an answer read, and its usage. A tool call's input is written
/// in a value's key order ([`Sorted`]), as the answer parsed as a value wrote it.
fn hub_answer(read: &Answer) -> (Value, Option<Usage>) {
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut thinking = Vec::new();
    let mut tool_calls = Vec::new();
    for block in read.output.message.content.iter() {
        let reasoned = &block.reasoning_content;
        if let Some(t) = block.text.get() {
            text.push_str(t);
        } else if !matches!(block.tool_use, Shape::Absent) {
            let call = match &block.tool_use {
                Shape::Obj(call) => Some(call),
                _ => None,
            };
            let arguments = match call.and_then(|c| c.input.0.as_ref()) {
                Some(input) => Sorted(input).to_json(),
                None => "{}".to_owned(),
            };
            tool_calls.push(HubCallOut {
                id: call.and_then(|c| c.tool_use_id.as_ref()),
                kind: "function",
                function: HubFunctionOut {
                    name: call.and_then(|c| c.name.as_ref()),
                    arguments,
                },
            });
        } else if let Some(r) = reasoned.reasoning_text.text.get() {
            reasoning.push_str(r);
            thinking.push(ThinkingOut::Thinking {
                thinking: r,
                signature: reasoned.reasoning_text.signature.or_empty(),
            });
        } else if let Some(data) = reasoned.redacted_content.get() {
            thinking.push(ThinkingOut::RedactedThinking { data });
        }
    }
    let finish = finish_of(read.stop_reason.get().unwrap_or("end_turn"));
    let content = (!text.is_empty() || tool_calls.is_empty()).then_some(text);
    let usage = usage_of_shape(&read.usage);
    let hub = to_value(&HubAnswer {
        id: "chatcmpl-bedrock",
        object: "chat.completion",
        created: now(),
        model: "",
        choices: [HubChoice {
            index: 0,
            message: HubMessageOut {
                role: "assistant",
                content,
                tool_calls,
                reasoning_content: reasoning,
                thinking_blocks: thinking,
            },
            finish_reason: finish,
        }],
        usage: usage.as_ref().map(usage_json),
    });
    (hub, usage)
}

#[cfg(test)]
mod tests;
