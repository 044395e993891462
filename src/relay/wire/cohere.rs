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

use std::collections::HashMap;

use serde_json::{Value, json};

use super::openai::usage_json;
use super::{Decode, Piece, content_text, now};
use crate::relay::measure::price::Usage;

/// A Cohere `usage` object as [`Usage`]: billed units, else the model's token counts.
pub fn usage_of(usage: &Value) -> Usage {
    let count = |field: &str| {
        usage["billed_units"][field]
            .as_f64()
            .or_else(|| usage["tokens"][field].as_f64())
            .map_or(0, whole)
    };
    Usage {
        prompt_tokens: count("input_tokens"),
        completion_tokens: count("output_tokens"),
        cache_in_prompt: true,
        ..Usage::default()
    }
}

/// A token count Cohere writes as a JSON number (its schema says `number`) as an i64.
fn whole(n: f64) -> i64 {
    if (0.0..9.0e18).contains(&n) {
        #[expect(clippy::cast_possible_truncation, reason = "range checked just above")]
        let n = n.round() as i64;
        n
    } else {
        0
    }
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
fn user_part(part: &Value) -> Option<Value> {
    match part["type"].as_str()? {
        "text" => Some(json!({"type": "text", "text": part["text"]})),
        "image_url" => {
            let image = &part["image_url"];
            let url = image["url"].as_str().or_else(|| image.as_str())?;
            let mut block = json!({"type": "image_url", "image_url": {"url": url}});
            if let Some(detail) = image["detail"].as_str() {
                block["image_url"]["detail"] = json!(detail);
            }
            Some(block)
        }
        _ => None,
    }
}

/// A hub request as a Cohere `/v2/chat` request for `model`.
pub fn request_from_hub(hub: &Value, model: &str, stream: bool) -> Value {
    let mut messages = Vec::new();
    for message in hub["messages"].as_array().into_iter().flatten() {
        match message["role"].as_str().unwrap_or("user") {
            "system" | "developer" => {
                messages
                    .push(json!({"role": "system", "content": content_text(&message["content"])}));
            }
            "assistant" => {
                let mut out = json!({"role": "assistant"});
                let text = content_text(&message["content"]);
                if !text.is_empty() {
                    out["content"] = Value::String(text);
                }
                let calls: Vec<Value> = message["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|call| {
                        let args = &call["function"]["arguments"];
                        json!({"id": call["id"], "type": "function", "function": {
                            "name": call["function"]["name"],
                            "arguments": args.as_str().map_or_else(|| args.to_string(), str::to_owned)}})
                    })
                    .collect();
                if !calls.is_empty() {
                    out["tool_calls"] = Value::Array(calls);
                }
                messages.push(out);
            }
            "tool" | "function" => messages.push(json!({"role": "tool",
                "tool_call_id": message["tool_call_id"],
                "content": content_text(&message["content"])})),
            _ => {
                let content = match &message["content"] {
                    Value::Array(parts) => {
                        Value::Array(parts.iter().filter_map(user_part).collect())
                    }
                    other => Value::String(content_text(other)),
                };
                messages.push(json!({"role": "user", "content": content}));
            }
        }
    }
    let mut body = json!({"model": model, "messages": messages});
    if stream {
        body["stream"] = Value::Bool(true);
    }
    let max = hub["max_tokens"]
        .as_i64()
        .or_else(|| hub["max_completion_tokens"].as_i64());
    if let Some(max) = max {
        body["max_tokens"] = json!(max);
    }
    let copy = [
        ("temperature", "temperature"),
        ("top_p", "p"),
        ("seed", "seed"),
        ("frequency_penalty", "frequency_penalty"),
        ("presence_penalty", "presence_penalty"),
    ];
    for (from, to) in copy {
        if let Some(v) = hub.get(from).filter(|v| !v.is_null()) {
            body[to] = v.clone();
        }
    }
    match &hub["stop"] {
        Value::String(s) => body["stop_sequences"] = json!([s]),
        Value::Array(list) if !list.is_empty() => body["stop_sequences"] = json!(list),
        _ => {}
    }
    let mut tools: Vec<Value> = hub["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["type"] == "function" || t.get("type").is_none())
        .map(|t| {
            let f = &t["function"];
            let parameters = if f["parameters"].is_object() {
                f["parameters"].clone()
            } else {
                json!({"type": "object", "properties": {}})
            };
            let mut function = json!({"name": f["name"], "parameters": parameters});
            if let Some(d) = f["description"].as_str().filter(|d| !d.is_empty()) {
                function["description"] = json!(d);
            }
            json!({"type": "function", "function": function})
        })
        .collect();
    // Cohere's tool_choice is REQUIRED or NONE: one named function becomes REQUIRED with only
    // that function offered.
    match &hub["tool_choice"] {
        Value::String(s) if s == "required" => body["tool_choice"] = json!("REQUIRED"),
        Value::String(s) if s == "none" => body["tool_choice"] = json!("NONE"),
        Value::Object(choice) => {
            let name = choice.get("function").map_or(&Value::Null, |f| &f["name"]);
            tools.retain(|t| &t["function"]["name"] == name);
            body["tool_choice"] = json!("REQUIRED");
        }
        _ => {}
    }
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
    }
    match hub["response_format"]["type"].as_str() {
        Some("json_object") => body["response_format"] = json!({"type": "json_object"}),
        Some("json_schema") => {
            let schema = &hub["response_format"]["json_schema"]["schema"];
            body["response_format"] = if schema.is_object() {
                json!({"type": "json_object", "json_schema": schema})
            } else {
                json!({"type": "json_object"})
            };
        }
        _ => {}
    }
    body
}

/// A whole Cohere answer as a hub `chat.completion`.
pub fn answer_to_hub(answer: &Value) -> Value {
    let message = &answer["message"];
    let mut text = String::new();
    let mut reasoning = String::new();
    match &message["content"] {
        Value::String(s) => text.push_str(s),
        Value::Array(blocks) => {
            for block in blocks {
                match block["type"].as_str().unwrap_or_default() {
                    "text" => text.push_str(block["text"].as_str().unwrap_or_default()),
                    "thinking" => {
                        reasoning.push_str(block["thinking"].as_str().unwrap_or_default());
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
    // The tool plan is the model's reasoning before its tool calls.
    if let Some(plan) = message["tool_plan"].as_str() {
        reasoning.push_str(plan);
    }
    let tool_calls: Vec<Value> = message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|call| {
            json!({"id": call["id"], "type": "function", "function": {
                "name": call["function"]["name"],
                "arguments": call["function"]["arguments"].as_str().unwrap_or("{}")}})
        })
        .collect();
    let mut out = json!({"role": "assistant",
        "content": if text.is_empty() && !tool_calls.is_empty() { Value::Null } else { Value::String(text) }});
    if !tool_calls.is_empty() {
        out["tool_calls"] = Value::Array(tool_calls);
    }
    if !reasoning.is_empty() {
        out["reasoning_content"] = Value::String(reasoning);
    }
    let finish = finish_of(answer["finish_reason"].as_str().unwrap_or_default());
    let mut hub = json!({
        "id": format!("chatcmpl-{}", answer["id"].as_str().unwrap_or("tollgate")),
        "object": "chat.completion", "created": now(), "model": Value::Null,
        "choices": [{"index": 0, "message": out, "finish_reason": finish}],
    });
    if let Some(usage) = answer.get("usage").filter(|u| u.is_object()) {
        hub["usage"] = usage_json(&usage_of(usage));
    }
    hub
}

/// Decodes Cohere's typed stream events (the type is in the data's `type`, and in the `event:`
/// line when the upstream sends one). `message-end` ends the stream; a `[DONE]` line too.
#[derive(Debug, Default)]
pub struct Decoder {
    /// Cohere's tool call index → the hub's (counted from 0 in order of appearance).
    tools: HashMap<u64, usize>,
    done: bool,
}

impl Decode for Decoder {
    fn event(&mut self, event: &str, data: &str) -> Vec<Piece> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Vec::new();
        }
        let Ok(value) = serde_json::from_str::<Value>(data) else {
            return Vec::new();
        };
        let kind = value["type"].as_str().unwrap_or(event);
        let message = &value["delta"]["message"];
        let mut pieces = Vec::new();
        match kind {
            "message-start" => pieces.push(Piece::Start {
                id: value["id"].as_str().unwrap_or_default().to_owned(),
                model: String::new(),
            }),
            "content-start" | "content-delta" => {
                let content = &message["content"];
                if let Some(t) = content["thinking"].as_str().filter(|t| !t.is_empty()) {
                    pieces.push(Piece::Thinking(t.to_owned()));
                }
                if let Some(t) = content["text"].as_str().filter(|t| !t.is_empty()) {
                    pieces.push(Piece::Text(t.to_owned()));
                }
            }
            "tool-plan-delta" => {
                if let Some(t) = message["tool_plan"].as_str().filter(|t| !t.is_empty()) {
                    pieces.push(Piece::Thinking(t.to_owned()));
                }
            }
            "tool-call-start" => {
                let call = &message["tool_calls"];
                let index = self.tools.len();
                self.tools
                    .insert(value["index"].as_u64().unwrap_or(0), index);
                pieces.push(Piece::ToolStart {
                    index,
                    id: call["id"].as_str().unwrap_or_default().to_owned(),
                    name: call["function"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                });
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
            "tool-call-delta" => {
                let args = message["tool_calls"]["function"]["arguments"].as_str();
                let index = self.tools.get(&value["index"].as_u64().unwrap_or(0));
                if let (Some(args), Some(index)) = (args.filter(|a| !a.is_empty()), index) {
                    pieces.push(Piece::ToolArgs {
                        index: *index,
                        json: args.to_owned(),
                    });
                }
            }
            "message-end" => {
                let delta = &value["delta"];
                if let Some(error) = delta["error"].as_str().filter(|e| !e.is_empty()) {
                    pieces.push(Piece::Error(error.to_owned()));
                }
                if let Some(usage) = delta.get("usage").filter(|u| u.is_object()) {
                    pieces.push(Piece::Usage(usage_of(usage)));
                }
                let reason = delta["finish_reason"].as_str().unwrap_or_default();
                pieces.push(Piece::Stop(finish_of(reason).to_owned()));
                self.done = true;
            }
            _ => {}
        }
        pieces
    }

    fn done(&self) -> bool {
        self.done
    }
}

#[cfg(test)]
mod tests;
