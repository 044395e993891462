//! The `streamGenerateContent?alt=sse` chunks, both ways: each chunk is a partial
//! `GenerateContentResponse` and the stream has no end marker.

use serde_json::{Value, json};

use tollgate_actors::options::component_prices::Tool;

use super::{finish_of, grounded, reason_of, signature_of, usage_json_of, usage_of};
use crate::relay::measure::price::Usage;
use crate::relay::wire::{Decode, Encode, EncodeCtx, Piece, either, sse};

/// Decodes `streamGenerateContent?alt=sse` chunks.
#[derive(Debug, Default)]
pub struct Decoder {
    started: bool,
    calls: usize,
    /// A chunk so far was grounded with Google Search (one call, see [`grounded`]).
    grounded: bool,
}

impl Decode for Decoder {
    fn event(&mut self, _event: &str, data: &str) -> Vec<Piece> {
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
                id: chunk["responseId"].as_str().unwrap_or_default().to_owned(),
                model: chunk["modelVersion"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            });
        }
        let candidate = &chunk["candidates"][0];
        for part in candidate["content"]["parts"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if let Some(t) = part["text"].as_str().filter(|t| !t.is_empty()) {
                pieces.push(if part["thought"] == true {
                    Piece::Thinking(t.to_owned())
                } else {
                    Piece::Text(t.to_owned())
                });
            } else if let Some(call) = either(part, "functionCall", "function_call") {
                let index = self.calls;
                self.calls += 1;
                pieces.push(Piece::ToolStart {
                    index,
                    id: format!("call_{index}"),
                    name: call["name"].as_str().unwrap_or_default().to_owned(),
                });
                let args = call.get("args").cloned().unwrap_or_else(|| json!({}));
                pieces.push(Piece::ToolArgs {
                    index,
                    json: args.to_string(),
                });
                if let Some(signature) = signature_of(part) {
                    pieces.push(Piece::ToolSignature {
                        index,
                        signature: signature.to_owned(),
                    });
                }
            }
        }
        if let Some(reason) = candidate["finishReason"].as_str() {
            pieces.push(Piece::Stop(finish_of(reason, self.calls > 0).to_owned()));
        }
        self.grounded |= grounded(&chunk);
        if let Some(meta) = chunk.get("usageMetadata").filter(|m| m.is_object()) {
            let mut usage = usage_of(meta);
            usage.tool_calls[Tool::GeminiGoogleSearch.index()] = i64::from(self.grounded);
            pieces.push(Piece::Usage(usage));
        }
        pieces
    }

    fn done(&self) -> bool {
        false
    }
}

/// Encodes pieces as `streamGenerateContent?alt=sse` chunks. Tool calls are sent whole (Gemini
/// has no partial function calls), in the final chunk with the finish reason and usage.
pub struct Encoder {
    ctx: EncodeCtx,
    id: String,
    /// Tool calls so far: name, JSON arguments, thought signature (empty: none).
    calls: Vec<(String, String, String)>,
    stop: Option<String>,
    usage: Option<Usage>,
}

impl Encoder {
    /// An encoder for one answer.
    pub fn new(ctx: EncodeCtx) -> Encoder {
        Encoder {
            ctx,
            id: String::new(),
            calls: Vec::new(),
            stop: None,
            usage: None,
        }
    }

    fn chunk(&self, parts: Vec<Value>) -> Value {
        json!({"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}],
            "modelVersion": self.ctx.model, "responseId": self.id})
    }
}

impl Encode for Encoder {
    fn piece(&mut self, piece: &Piece, out: &mut Vec<u8>) {
        match piece {
            Piece::Start { id, .. } => self.id = id.trim_start_matches("chatcmpl-").to_owned(),
            Piece::Text(text) => {
                let chunk = self.chunk(vec![json!({"text": text})]);
                sse(out, "", &chunk);
            }
            Piece::Thinking(text) => {
                let chunk = self.chunk(vec![json!({"text": text, "thought": true})]);
                sse(out, "", &chunk);
            }
            Piece::ToolStart { index, name, .. } => {
                if self.calls.len() <= *index {
                    self.calls
                        .resize(index + 1, (String::new(), String::new(), String::new()));
                }
                if let Some(call) = self.calls.get_mut(*index) {
                    call.0.clone_from(name);
                }
            }
            Piece::ToolArgs { index, json } => {
                if let Some(call) = self.calls.get_mut(*index) {
                    call.1.push_str(json);
                }
            }
            Piece::ToolSignature { index, signature } => {
                if let Some(call) = self.calls.get_mut(*index) {
                    call.2.clone_from(signature);
                }
            }
            // Gemini has no field for Anthropic's or Converse's signatures (a thoughtSignature
            // is Gemini's own): the thinking text reaches the client, the signature cannot.
            Piece::ThinkingSignature(_) | Piece::RedactedThinking(_) => {}
            Piece::Stop(reason) => self.stop = Some(reason.clone()),
            Piece::Usage(usage) => self.usage = Some(*usage),
            Piece::Error(message) => sse(
                out,
                "",
                &json!({"error": {"code": 502, "message": message, "status": "UNAVAILABLE"}}),
            ),
        }
    }

    fn end(&mut self, out: &mut Vec<u8>) {
        let mut parts: Vec<Value> = self
            .calls
            .iter()
            .map(|(name, args, signature)| {
                let args: Value = serde_json::from_str(args).unwrap_or_else(|_| json!({}));
                let mut part = json!({"functionCall": {"name": name, "args": args}});
                if !signature.is_empty() {
                    part["thoughtSignature"] = json!(signature);
                }
                part
            })
            .collect();
        if parts.is_empty() {
            parts.push(json!({"text": ""}));
        }
        let mut chunk = self.chunk(parts);
        chunk["candidates"][0]["finishReason"] =
            json!(reason_of(self.stop.as_deref().unwrap_or("stop")));
        chunk["usageMetadata"] = usage_json_of(&self.usage.unwrap_or_default());
        sse(out, "", &chunk);
    }
}
