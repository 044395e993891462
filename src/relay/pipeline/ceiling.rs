//! The one mid-stream ceiling's terminal events: a streamed answer whose metered cost passes its
//! reservation + DebtAllowance ([`crate::relay::pipeline::meter::Meter::capped`]) is ended as if the upstream had
//! stopped at its output limit, in the client's format, and billed once as `partial` /
//! `capped`. A converting stream ends through its encoder (a `length` stop, then the format's
//! closing events); a stream passed through gets these events after the upstream's last one
//! forwarded:
//!
//! - OpenAI chat and completions: a chunk with `finish_reason: "length"`, then `[DONE]`;
//! - Responses: `response.incomplete` with `incomplete_details.reason: "max_output_tokens"`;
//! - Anthropic: `message_delta` with `stop_reason: "max_tokens"`, then `message_stop`;
//! - Gemini: a chunk with `finishReason: "MAX_TOKENS"`.
//!
//! Nothing here runs per event: only once, when the ceiling is reached.

use serde_json::json;

use crate::relay::wire::{Wire, sse};

/// Appends the terminal events of a capped answer passed through in format `wire`;
/// `output_tokens` is what the meter counted (Anthropic's closing usage).
pub fn terminal(wire: Wire, output_tokens: i64, out: &mut Vec<u8>) {
    match wire {
        Wire::OpenAi | Wire::Converse | Wire::Cohere => {
            // `delta` for chat, `text` for legacy completions: each client reads its own.
            sse(
                out,
                "",
                &json!({"id": "chatcmpl-tollgate", "object": "chat.completion.chunk",
                    "created": crate::relay::wire::now(), "model": "",
                    "choices": [{"index": 0, "delta": {}, "text": "", "finish_reason": "length"}]}),
            );
            out.extend_from_slice(b"data: [DONE]\n\n");
        }
        Wire::Responses => sse(
            out,
            "response.incomplete",
            &json!({"type": "response.incomplete", "response": {"object": "response",
                "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
                "output": []}}),
        ),
        Wire::Anthropic => {
            sse(
                out,
                "message_delta",
                &json!({"type": "message_delta",
                    "delta": {"stop_reason": "max_tokens", "stop_sequence": null},
                    "usage": {"output_tokens": output_tokens}}),
            );
            sse(out, "message_stop", &json!({"type": "message_stop"}));
        }
        Wire::Gemini => sse(
            out,
            "",
            &json!({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]},
                "finishReason": "MAX_TOKENS", "index": 0}]}),
        ),
    }
}
