//! OpenAI chat completions, the hub format: usage parsing, the chunk decoder (for OpenAI
//! upstreams behind a converted request) and the chunk encoder (for OpenAI clients of a Claude
//! or Gemini channel).

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Decode, Encode, EncodeCtx, Piece, now, sse};
use crate::relay::measure::price::Usage;
use crate::relay::measure::usage::OpenAiUsage;

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

/// Decodes `chat.completion.chunk` events.
#[derive(Debug, Default)]
pub struct Decoder {
    started: bool,
    done: bool,
}

impl Decode for Decoder {
    fn event(&mut self, _event: &str, data: &str) -> Vec<Piece> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Vec::new();
        }
        let Ok(chunk) = serde_json::from_str::<Value>(data) else {
            return Vec::new();
        };
        let mut pieces = Vec::new();
        if let Some(message) = chunk["error"]["message"].as_str() {
            pieces.push(Piece::Error(message.to_owned()));
            return pieces;
        }
        if !self.started {
            self.started = true;
            pieces.push(Piece::Start {
                id: chunk["id"].as_str().unwrap_or_default().to_owned(),
                model: chunk["model"].as_str().unwrap_or_default().to_owned(),
            });
        }
        for choice in chunk["choices"].as_array().into_iter().flatten() {
            if choice["index"].as_u64().unwrap_or(0) != 0 {
                continue;
            }
            let delta = &choice["delta"];
            if let Some(text) = delta["reasoning_content"]
                .as_str()
                .or_else(|| delta["reasoning"].as_str())
                .filter(|t| !t.is_empty())
            {
                pieces.push(Piece::Thinking(text.to_owned()));
            }
            if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                pieces.push(Piece::Text(text.to_owned()));
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                let index = usize::try_from(call["index"].as_u64().unwrap_or(0)).unwrap_or(0);
                let name = call["function"]["name"].as_str();
                if call["id"].is_string() || name.is_some() {
                    pieces.push(Piece::ToolStart {
                        index,
                        id: call["id"].as_str().unwrap_or_default().to_owned(),
                        name: name.unwrap_or_default().to_owned(),
                    });
                }
                if let Some(args) = call["function"]["arguments"]
                    .as_str()
                    .filter(|a| !a.is_empty())
                {
                    pieces.push(Piece::ToolArgs {
                        index,
                        json: args.to_owned(),
                    });
                }
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                pieces.push(Piece::Stop(reason.to_owned()));
            }
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            pieces.push(Piece::Usage(usage_of(usage)));
        }
        pieces
    }

    fn done(&self) -> bool {
        self.done
    }
}

/// Encodes pieces as `chat.completion.chunk` events ending with `data: [DONE]`.
pub struct Encoder {
    ctx: EncodeCtx,
    id: String,
    created: i64,
    started: bool,
    usage: Option<Usage>,
}

impl Encoder {
    /// An encoder for one answer.
    pub fn new(ctx: EncodeCtx) -> Encoder {
        Encoder {
            ctx,
            id: "chatcmpl-tollgate".into(),
            created: now(),
            started: false,
            usage: None,
        }
    }

    fn chunk(&self, delta: Value, finish: Option<&str>) -> Value {
        json!({
            "id": self.id, "object": "chat.completion.chunk", "created": self.created,
            "model": self.ctx.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    }

    fn start(&mut self, out: &mut Vec<u8>) {
        if !self.started {
            self.started = true;
            let chunk = self.chunk(json!({"role": "assistant", "content": ""}), None);
            sse(out, "", &chunk);
        }
    }
}

impl Encode for Encoder {
    fn piece(&mut self, piece: &Piece, out: &mut Vec<u8>) {
        let delta = match piece {
            Piece::Start { id, .. } => {
                if !id.is_empty() {
                    self.id = format!("chatcmpl-{}", id.trim_start_matches("chatcmpl-"));
                }
                self.start(out);
                return;
            }
            Piece::Usage(usage) => {
                self.usage = Some(*usage);
                return;
            }
            Piece::Error(message) => {
                sse(
                    out,
                    "",
                    &json!({"error": {"message": message, "type": "upstream_error"}}),
                );
                return;
            }
            Piece::Text(text) => json!({"content": text}),
            Piece::Thinking(text) => json!({"reasoning_content": text}),
            Piece::ToolStart { index, id, name } => json!({"tool_calls": [{
                "index": index, "id": id, "type": "function",
                "function": {"name": name, "arguments": ""}}]}),
            Piece::ToolArgs { index, json } => json!({"tool_calls": [{
                "index": index, "function": {"arguments": json}}]}),
            // Where Gemini's OpenAI-compatible API puts a tool call's thought signature
            // (https://ai.google.dev/gemini-api/docs/thought-signatures): a client sending the
            // call back with it keeps a Gemini upstream's check satisfied.
            Piece::ToolSignature { index, signature } => json!({"tool_calls": [{
                "index": index, "extra_content": {"google": {"thought_signature": signature}}}]}),
            // Chat completions chunks have no field for Anthropic or Converse signatures: the
            // client's next turn comes back with the reasoning text only, which those
            // upstreams' converters leave out rather than send unsigned.
            Piece::ThinkingSignature(_) | Piece::RedactedThinking(_) => return,
            Piece::Stop(reason) => {
                self.start(out);
                let chunk = self.chunk(json!({}), Some(reason));
                sse(out, "", &chunk);
                return;
            }
        };
        self.start(out);
        let chunk = self.chunk(delta, None);
        sse(out, "", &chunk);
    }

    fn end(&mut self, out: &mut Vec<u8>) {
        self.start(out);
        if self.ctx.include_usage
            && let Some(usage) = &self.usage
        {
            let chunk = json!({
                "id": self.id, "object": "chat.completion.chunk", "created": self.created,
                "model": self.ctx.model, "choices": [], "usage": usage_json(usage),
            });
            sse(out, "", &chunk);
        }
        out.extend_from_slice(b"data: [DONE]\n\n");
    }
}

#[cfg(test)]
mod tests;
