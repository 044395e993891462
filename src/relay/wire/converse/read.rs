//! Lenient read views for the Converse conversions (every field as [`crate::relay::wire::typed`]
//! reads it: a field of another JSON type reads as absent): the hub request as the hub →
//! Converse converter reads it, a whole Converse answer, a ConverseStream event and TokenUsage.
//! Ids and names the converters copy are [`Verbatim`]s, so a value that is not a string is
//! copied as it was; [`Present`] tells a field given as `null` from an absent one.

use serde::Deserialize;

use crate::relay::measure::price::Usage;
use crate::relay::wire::hub::Part;
use crate::relay::wire::typed::{Int, List, Obj, Present, Shape, Str, Verbatim};

/// A hub request, as the hub → Converse converter reads it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct HubRequest<'a> {
    /// The conversation.
    #[serde(borrow)]
    pub messages: List<HubMessage<'a>>,
    /// `max_completion_tokens` (OpenAI's newer name).
    pub max_completion_tokens: Int,
    /// `max_tokens`.
    pub max_tokens: Int,
    /// Sampling temperature, verbatim.
    #[serde(borrow)]
    pub temperature: Option<Verbatim<'a>>,
    /// Nucleus sampling, verbatim.
    #[serde(borrow)]
    pub top_p: Option<Verbatim<'a>>,
    /// Stop sequences: a string or a list, verbatim.
    #[serde(borrow)]
    pub stop: Option<Verbatim<'a>>,
    /// Tools (`None` when not a list).
    #[serde(borrow)]
    pub tools: List<HubTool<'a>>,
    /// A mode string or `{"type": "function", "function": {"name"}}`.
    #[serde(borrow)]
    pub tool_choice: Shape<'a, HubToolChoice<'a>>,
}

/// A hub message.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct HubMessage<'a> {
    /// `system`, `developer`, `user`, `assistant` or `tool`.
    #[serde(borrow)]
    pub role: Str<'a>,
    /// A string or content parts.
    #[serde(borrow)]
    pub content: Shape<'a, Part<'a>>,
    /// The tool call a `tool` message answers, verbatim.
    #[serde(borrow)]
    pub tool_call_id: Option<Verbatim<'a>>,
    /// An assistant message's tool calls.
    #[serde(borrow)]
    pub tool_calls: List<HubCall<'a>>,
    /// An assistant message's thinking blocks (see [`crate::relay::wire`]).
    #[serde(borrow)]
    pub thinking_blocks: List<Thinking<'a>>,
}

/// A hub thinking block: `{"type": "thinking", "thinking", "signature"}` or
/// `{"type": "redacted_thinking", "data"}`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Thinking<'a> {
    /// `thinking` or `redacted_thinking`.
    #[serde(borrow, rename = "type")]
    pub kind: Str<'a>,
    /// The thinking text.
    #[serde(borrow)]
    pub thinking: Str<'a>,
    /// Its signature.
    #[serde(borrow)]
    pub signature: Str<'a>,
    /// A redacted block's data.
    #[serde(borrow)]
    pub data: Str<'a>,
}

/// A tool call of a hub assistant message.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct HubCall<'a> {
    /// The call's id, verbatim.
    #[serde(borrow)]
    pub id: Option<Verbatim<'a>>,
    /// The function called.
    #[serde(borrow)]
    pub function: Obj<HubFunction<'a>>,
}

/// The function of a hub tool call, tool or `tool_choice`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct HubFunction<'a> {
    /// Its name, verbatim.
    #[serde(borrow)]
    pub name: Option<Verbatim<'a>>,
    /// A call's arguments (JSON text).
    #[serde(borrow)]
    pub arguments: Str<'a>,
    /// A tool's description.
    #[serde(borrow)]
    pub description: Str<'a>,
    /// A tool's JSON schema, verbatim (`null` included).
    #[serde(borrow)]
    pub parameters: Present<Verbatim<'a>>,
}

/// A hub tool.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct HubTool<'a> {
    /// `function` for the tools Converse takes.
    #[serde(borrow, rename = "type")]
    pub kind: Str<'a>,
    /// The function.
    #[serde(borrow)]
    pub function: Obj<HubFunction<'a>>,
}

/// A hub `tool_choice` object.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct HubToolChoice<'a> {
    /// The function named.
    #[serde(borrow)]
    pub function: Obj<HubFunction<'a>>,
}

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
