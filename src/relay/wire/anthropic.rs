//! Anthropic Messages ⇄ the hub (OpenAI chat completions): requests, whole answers, usage, and
//! the stream events (`message_start`, `content_block_start` / `_delta` / `_stop`,
//! `message_delta`, `message_stop`, `ping`, `error`).
//!
//! Requests and whole answers convert in [`to_hub`] and [`from_hub`], from the shapes typed in
//! [`read`] to the blocks written here ([`BlockOut`]); the stream events are typed in
//! [`stream`], the usage object in [`usage`] (Anthropic reports `input_tokens` WITHOUT the
//! cache reads and writes; the hub and billing count them inside the prompt).

mod from_hub;
mod read;
mod stream;
mod to_hub;
pub mod usage;

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use self::read::Block;
use self::usage::{UsageIn, UsageOut};
use super::hub;
use super::typed::{Str, Verbatim, view};
use crate::relay::measure::price::Usage;

pub use from_hub::{answer_from_hub, request_from_hub};
pub use stream::{Decoder, Encoder};
pub use to_hub::{answer_from_bytes, answer_to_hub, request_to_hub};

/// max_tokens sent to Anthropic when an OpenAI request sets none (new-api's
/// `claude.default_max_tokens`).
pub const DEFAULT_MAX_TOKENS: i64 = 8192;

/// The `anthropic-version` sent when the client sent none.
pub const DEFAULT_VERSION: &str = "2023-06-01";

/// An Anthropic `usage` object as [`Usage`], normalised (see [`UsageIn::usage`]).
pub fn usage_of(usage: &Value) -> Usage {
    view::<UsageIn>(usage).usage()
}

/// An Anthropic `usage` object for [`Usage`].
pub fn usage_json_of(usage: &Usage) -> Value {
    hub::to_value(&UsageOut::from(usage))
}

/// Anthropic `stop_reason` → OpenAI `finish_reason`.
pub fn finish_of(stop_reason: &str) -> &'static str {
    match stop_reason {
        "max_tokens" => "length",
        "tool_use" => "tool_calls",
        "refusal" => "content_filter",
        _ => "stop",
    }
}

/// OpenAI `finish_reason` → Anthropic `stop_reason`.
pub fn stop_reason_of(finish: &str) -> &'static str {
    match finish {
        "length" => "max_tokens",
        "tool_calls" | "function_call" => "tool_use",
        "content_filter" => "refusal",
        _ => "end_turn",
    }
}

/// An Anthropic content block as the converters write it: in an Anthropic request's or
/// answer's content, and (thinking only) in the hub's `thinking_blocks`.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum BlockOut<'a> {
    /// Thinking text and its signature.
    Thinking {
        /// The text.
        thinking: &'a str,
        /// The signature (empty when the upstream signed nothing).
        signature: &'a str,
    },
    /// Redacted thinking.
    RedactedThinking {
        /// The encrypted data.
        data: &'a str,
    },
    /// Text.
    Text {
        /// The text.
        text: TextOut<'a>,
    },
    /// An image.
    Image {
        /// Its source.
        source: SourceOut<'a>,
    },
    /// A document.
    Document {
        /// Its source.
        source: SourceOut<'a>,
        /// Its title.
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<&'a str>,
    },
    /// A tool call.
    ToolUse {
        /// The call's id, verbatim.
        id: Option<&'a Verbatim<'a>>,
        /// The tool's name, verbatim.
        name: Option<&'a Verbatim<'a>>,
        /// Its input (an object).
        input: Verbatim<'a>,
    },
    /// A tool's result.
    ToolResult {
        /// The call it answers, verbatim.
        tool_use_id: Option<&'a Verbatim<'a>>,
        /// Its content.
        content: ResultOut<'a>,
    },
}

/// A text written as a string, or copied verbatim from a part or block (`null` when it had
/// none).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum TextOut<'a> {
    /// A string.
    Str(Cow<'a, str>),
    /// Verbatim.
    Raw(Option<&'a Verbatim<'a>>),
}

/// An image's or a document's source as written.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum SourceOut<'a> {
    /// Base64 data.
    Base64 {
        /// The MIME type.
        media_type: &'a str,
        /// The data.
        data: &'a str,
    },
    /// A URL.
    Url {
        /// The URL.
        url: &'a str,
    },
    /// Plain text.
    Text {
        /// Always `text/plain`.
        media_type: &'static str,
        /// The text.
        data: String,
    },
}

/// A `tool_result`'s content as written: text, or blocks.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum ResultOut<'a> {
    /// Text.
    Text(Cow<'a, str>),
    /// Blocks.
    Blocks(Vec<BlockOut<'a>>),
}

/// A `thinking` or `redacted_thinking` block as written (the hub keeps them in
/// `thinking_blocks`, see [`super`]): the text and signature, or the redacted data; `None`
/// for a block of another type.
fn thinking_block<'a>(block: &'a Block<'a>) -> Option<BlockOut<'a>> {
    thinking_out(
        block.kind.get(),
        &block.thinking,
        &block.signature,
        &block.data,
    )
}

/// A block of type `kind` as [`thinking_block`] writes it, from its fields.
fn thinking_out<'a>(
    kind: Option<&str>,
    thinking: &'a Str<'a>,
    signature: &'a Str<'a>,
    data: &'a Str<'a>,
) -> Option<BlockOut<'a>> {
    match kind? {
        "thinking" => Some(BlockOut::Thinking {
            thinking: thinking.or_empty(),
            signature: signature.or_empty(),
        }),
        "redacted_thinking" => Some(BlockOut::RedactedThinking {
            data: data.or_empty(),
        }),
        _ => None,
    }
}

/// An Anthropic-looking message id for an upstream id.
fn message_id(upstream: &str) -> String {
    let bare = upstream.trim_start_matches("chatcmpl-");
    if bare.starts_with("msg_") {
        bare.to_owned()
    } else if bare.is_empty() {
        "msg_tollgate".to_owned()
    } else {
        format!("msg_{bare}")
    }
}

#[cfg(test)]
mod tests;
