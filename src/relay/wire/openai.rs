//! OpenAI chat completions, the hub format: usage parsing, the chunk decoder (for OpenAI
//! upstreams behind a converted request) and the chunk encoder (for OpenAI clients of a Claude
//! or Gemini channel), typed in [`stream`]. The request and answer helpers edit the hub's own
//! `Value` (a pass-through: every field the client sent goes on).

mod stream;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::relay::measure::price::Usage;
use crate::relay::measure::usage::OpenAiUsage;
pub use stream::{Decoder, Encoder};

/// A hub request ready for an OpenAI upstream: the upstream model, and when streaming, a usage
/// chunk requested.
pub fn request_for_upstream(hub: &Value, model: &str, stream: bool) -> Value {
    let mut body = object(hub);
    body.insert("model".into(), Value::String(model.to_owned()));
    if stream {
        body.insert("stream".into(), Value::Bool(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
    } else {
        body.remove("stream");
        body.remove("stream_options");
    }
    Value::Object(body)
}

/// A hub request converted from another client format for an OpenAI-compatible upstream:
/// [`request_for_upstream`], without the hub's `thinking_blocks` (Anthropic and Converse
/// signatures, which an OpenAI-compatible model cannot check and a strict API refuses as an
/// unknown field). Gemini's signatures of tool calls stay: `extra_content` is where Gemini's
/// OpenAI-compatible API takes them back.
pub fn request_from_hub(hub: &Value, model: &str, stream: bool) -> Value {
    let mut body = request_for_upstream(hub, model, stream);
    for message in body["messages"].as_array_mut().into_iter().flatten() {
        if let Some(message) = message.as_object_mut() {
            message.remove("thinking_blocks");
        }
    }
    body
}

/// A hub answer for an OpenAI client: the model the client asked for.
pub fn answer_for_client(hub: &Value, model: &str) -> Value {
    let mut answer = object(hub);
    answer.insert("model".into(), Value::String(model.to_owned()));
    Value::Object(answer)
}

/// `value`'s fields (none when it is not an object: a hub is always one, and a value that is
/// not never panics an index assignment).
fn object(value: &Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// An OpenAI `usage` object as [`Usage`] (`prompt_tokens_details.cache_creation_tokens` and
/// `cache_creation_1h_tokens` are Tollgate's extension carrying Anthropic cache writes through
/// the hub). The one OpenAI reader, [`OpenAiUsage`], does the work.
pub fn usage_of(usage: &Value) -> Usage {
    OpenAiUsage::deserialize(usage).map_or_else(|_| Usage::default(), |u| Usage::from(&u))
}

/// An OpenAI `usage` object for [`Usage`].
pub fn usage_json(usage: &Usage) -> Value {
    json!({
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens.saturating_add(usage.completion_tokens),
        "prompt_tokens_details": {
            "cached_tokens": usage.cached_tokens,
            "cache_creation_tokens": usage.cache_write_tokens(),
            "cache_creation_1h_tokens": usage.cache_write_1h_tokens,
        },
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    })
}

#[cfg(test)]
mod tests;
