//! Lenient read views for the Converse conversions (every field as [`crate::relay::wire::typed`]
//! reads it: a field of another JSON type reads as absent): a whole Converse answer, a
//! ConverseStream event and TokenUsage (the hub request is read as
//! [`crate::relay::wire::hub::Request`]). Ids and names the converters copy are [`Verbatim`]s,
//! so a value that is not a string is copied as it was; [`Present`] tells a field given as
//! `null` from an absent one.

use serde::Deserialize;

use crate::relay::measure::price::Usage;
use crate::relay::wire::typed::{Int, List, Obj, Present, Shape, Str, Verbatim};

/// A whole Converse answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Answer<'a> {
    /// `{"message": {"content": [...]}}`.
    #[serde(borrow)]
    pub output: Obj<Output<'a>>,
    /// Why it stopped.
    #[serde(borrow)]
    pub stop_reason: Str<'a>,
    /// TokenUsage (present, `null` included, or absent).
    #[serde(borrow)]
    pub usage: Shape<'a, UsageIn>,
}

/// A Converse answer's `output`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Output<'a> {
    /// The assistant's message.
    #[serde(borrow)]
    pub message: Obj<OutputMessage<'a>>,
}

/// The assistant's message of a Converse answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct OutputMessage<'a> {
    /// Its content blocks.
    #[serde(borrow)]
    pub content: List<Block<'a>>,
}

/// A ContentBlock of a Converse answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Block<'a> {
    /// Text.
    #[serde(borrow)]
    pub text: Str<'a>,
    /// A tool call (present, `null` included, or absent).
    #[serde(borrow)]
    pub tool_use: Shape<'a, ToolUse<'a>>,
    /// Reasoning.
    #[serde(borrow)]
    pub reasoning_content: Obj<Reasoning<'a>>,
}

/// A ToolUseBlock.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ToolUse<'a> {
    /// The call's id, verbatim.
    #[serde(borrow)]
    pub tool_use_id: Option<Verbatim<'a>>,
    /// The tool's name, verbatim.
    #[serde(borrow)]
    pub name: Option<Verbatim<'a>>,
    /// Its input, verbatim (`null` included).
    #[serde(borrow)]
    pub input: Present<Verbatim<'a>>,
}

/// A ReasoningContentBlock.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Reasoning<'a> {
    /// Signed reasoning text.
    #[serde(borrow)]
    pub reasoning_text: Obj<ReasoningText<'a>>,
    /// Redacted reasoning (base64).
    #[serde(borrow)]
    pub redacted_content: Str<'a>,
}

/// A ReasoningTextBlock.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ReasoningText<'a> {
    /// The reasoning.
    #[serde(borrow)]
    pub text: Str<'a>,
    /// Its signature.
    #[serde(borrow)]
    pub signature: Str<'a>,
}

/// One ConverseStream event's payload (every event type's fields: the event name says which
/// apply).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Event<'a> {
    /// The content block (a number, read as `as_u64` reads one).
    #[serde(borrow)]
    pub content_block_index: Option<Verbatim<'a>>,
    /// `contentBlockStart`'s start.
    #[serde(borrow)]
    pub start: Obj<Start<'a>>,
    /// `contentBlockDelta`'s delta.
    #[serde(borrow)]
    pub delta: Obj<Delta<'a>>,
    /// `messageStop`'s reason.
    #[serde(borrow)]
    pub stop_reason: Str<'a>,
    /// `metadata`'s usage (present, `null` included, or absent).
    #[serde(borrow)]
    pub usage: Shape<'a, UsageIn>,
    /// An `error` event's error.
    #[serde(borrow)]
    pub error: Obj<ErrorBody<'a>>,
}

impl Event<'_> {
    /// The content block index, 0 when absent or not an unsigned integer.
    pub fn block(&self) -> u64 {
        match &self.content_block_index {
            Some(Verbatim::Num(n)) => n.as_u64().unwrap_or(0),
            _ => 0,
        }
    }
}

/// A `contentBlockStart`'s start.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Start<'a> {
    /// A tool call begins (present, `null` included, or absent).
    #[serde(borrow)]
    pub tool_use: Shape<'a, ToolStart<'a>>,
}

/// A ToolUseBlockStart.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ToolStart<'a> {
    /// The call's id.
    #[serde(borrow)]
    pub tool_use_id: Str<'a>,
    /// The tool's name.
    #[serde(borrow)]
    pub name: Str<'a>,
}

/// A ContentBlockDelta.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Delta<'a> {
    /// Text.
    #[serde(borrow)]
    pub text: Str<'a>,
    /// More tool input.
    #[serde(borrow)]
    pub tool_use: Obj<ToolDelta<'a>>,
    /// Reasoning: text, signature or redacted content.
    #[serde(borrow)]
    pub reasoning_content: Obj<ReasoningDelta<'a>>,
}

/// A ToolUseBlockDelta.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ToolDelta<'a> {
    /// JSON text of the input.
    #[serde(borrow)]
    pub input: Str<'a>,
}

/// A ReasoningContentBlockDelta.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ReasoningDelta<'a> {
    /// Reasoning text.
    #[serde(borrow)]
    pub text: Str<'a>,
    /// The reasoning's signature.
    #[serde(borrow)]
    pub signature: Str<'a>,
    /// Redacted reasoning (base64).
    #[serde(borrow)]
    pub redacted_content: Str<'a>,
}

/// An `error` event's error.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ErrorBody<'a> {
    /// What failed.
    #[serde(borrow)]
    pub message: Str<'a>,
}

/// A Converse TokenUsage.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct UsageIn {
    /// Input tokens not read from or written to the cache.
    pub input_tokens: Int,
    /// Output tokens.
    pub output_tokens: Int,
    /// Input tokens read from the cache.
    pub cache_read_input_tokens: Int,
    /// Input tokens written to the cache.
    pub cache_write_input_tokens: Int,
}

impl UsageIn {
    /// As [`Usage`]: cache reads and writes are counted beside `inputTokens`, as Anthropic
    /// counts them.
    pub fn usage(&self) -> Usage {
        let n = |i: Int| i.0.unwrap_or(0);
        let read = n(self.cache_read_input_tokens);
        let written = n(self.cache_write_input_tokens);
        Usage {
            prompt_tokens: n(self.input_tokens)
                .saturating_add(read)
                .saturating_add(written),
            completion_tokens: n(self.output_tokens),
            cached_tokens: read,
            cache_write_5m_tokens: written,
            cache_in_prompt: false,
            ..Usage::default()
        }
    }
}

/// The usage of a TokenUsage field: `None` when absent, zero when not an object.
pub fn usage_of_shape(usage: &Shape<'_, UsageIn>) -> Option<Usage> {
    match usage {
        Shape::Absent => None,
        Shape::Obj(u) => Some(u.usage()),
        _ => Some(UsageIn::default().usage()),
    }
}
