//! Gemini `generateContent` ⇄ the hub (OpenAI chat completions): requests, whole answers,
//! `usageMetadata`, and the `streamGenerateContent?alt=sse` chunks (each one a partial
//! `GenerateContentResponse`; the stream has no end marker).
//!
//! Gemini accepts camelCase and snake_case field names; both are read, camelCase is written.
//! Gemini tool calls carry no ids: calls get `call_<n>` ids on the way to the hub, and a hub tool
//! result finds its function name through the id of the call it answers.
//!
//! Requests and whole answers convert in [`to_hub`] and [`from_hub`], from the shapes typed in
//! [`read`] (a whole answer as [`stream`] reads a chunk); the chunks are typed in [`stream`],
//! `usageMetadata` in [`usage`].

mod from_hub;
mod read;
mod stream;
mod to_hub;
pub mod usage;

use serde_json::Value;

use self::usage::UsageOut;
use crate::relay::measure::price::Usage;

pub use from_hub::{answer_from_hub, request_from_hub};
pub use stream::{Decoder, Encoder};
pub use to_hub::{answer_from_bytes, answer_to_hub, request_to_hub};
pub use usage::usage_of;

/// The usage a whole `generateContent` answer reports, with its Google Search call (see
/// [`stream`]).
pub fn answer_usage(answer: &Value) -> Option<Usage> {
    stream::answer_usage(answer)
}

/// A `usageMetadata` object for [`Usage`].
pub fn usage_json_of(usage: &Usage) -> Value {
    super::hub::to_value(&UsageOut::from(usage))
}

/// Gemini `finishReason` → OpenAI `finish_reason`.
pub fn finish_of(reason: &str, has_tool_calls: bool) -> &'static str {
    match reason {
        "MAX_TOKENS" => "length",
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" => "content_filter",
        _ if has_tool_calls => "tool_calls",
        _ => "stop",
    }
}

/// OpenAI `finish_reason` → Gemini `finishReason`.
pub fn reason_of(finish: &str) -> &'static str {
    match finish {
        "length" => "MAX_TOKENS",
        "content_filter" => "SAFETY",
        _ => "STOP",
    }
}

#[cfg(test)]
mod tests;
