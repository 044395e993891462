//! Anthropic Messages ⇄ the hub (OpenAI chat completions): requests, whole answers, usage, and
//! the stream events (`message_start`, `content_block_start` / `_delta` / `_stop`,
//! `message_delta`, `message_stop`, `ping`, `error`).
//!
//! Requests and whole answers are here; the stream events are typed in [`stream`], the usage
//! object in [`usage`] (Anthropic reports `input_tokens` WITHOUT the cache reads and writes;
//! the hub and billing count them inside the prompt).

mod stream;
pub mod usage;

use serde_json::{Value, json};

use self::usage::{UsageIn, UsageOut};
use super::openai::usage_json;
use super::typed::view;
use super::{ConvertError, content_text, hub, now, parts};
use crate::relay::measure::price::Usage;

pub use stream::{Decoder, Encoder};

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

/// Text of a `system` field (a string or text blocks).
fn system_text(system: &Value) -> String {
    match system {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// An Anthropic image block as an OpenAI `image_url` part (an image given by Files API id has
/// no hub form: marked, and refused if the request is converted, see [`parts`]).
fn image_part(block: &Value) -> Option<Value> {
    let source = &block["source"];
    let url = match source["type"].as_str()? {
        "base64" => format!(
            "data:{};base64,{}",
            source["media_type"].as_str().unwrap_or("image/png"),
            source["data"].as_str().unwrap_or_default()
        ),
        "url" => source["url"].as_str()?.to_owned(),
        "file" => {
            return Some(parts::unsupported(format!(
                "an image given by Files API id ({})",
                source["file_id"].as_str().unwrap_or_default()
            )));
        }
        _ => return None,
    };
    Some(json!({"type": "image_url", "image_url": {"url": url}}))
}

/// An Anthropic `document` block (https://docs.anthropic.com/en/docs/build-with-claude/pdf-support,
/// sources in https://docs.anthropic.com/en/api/messages) as hub parts: a base64 PDF becomes
/// OpenAI's `file` part with the bytes as a data URL
/// (https://platform.openai.com/docs/api-reference/chat/create, content part `file`); a PDF by
/// URL a `file` part with a `file_url` (Tollgate's own field: the relay reads the URL through
/// the guarded media fetcher before converting, see `relay::media`); plain text a text part;
/// custom content its text and image blocks. A document by Files API id has no hub form: it is
/// marked and refused if the request is converted (the hub is built for every request, Claude's
/// pass-through included, so this is not the place to refuse it).
fn document_parts(block: &Value) -> Vec<Value> {
    let source = &block["source"];
    let name = block["title"].as_str().filter(|t| !t.is_empty());
    match source["type"].as_str().unwrap_or_default() {
        "base64" => {
            let media = source["media_type"].as_str().unwrap_or("application/pdf");
            let data = source["data"].as_str().unwrap_or_default();
            vec![
                json!({"type": "file", "file": {"filename": name.unwrap_or("document.pdf"),
                "file_data": format!("data:{media};base64,{data}")}}),
            ]
        }
        "url" => {
            let mut file = json!({"file_url": source["url"]});
            if let Some(name) = name {
                file["filename"] = json!(name);
            }
            vec![json!({"type": "file", "file": file})]
        }
        "text" => vec![json!({"type": "text", "text": source["data"]})],
        "content" => match &source["content"] {
            Value::String(text) => vec![json!({"type": "text", "text": text})],
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| match b["type"].as_str() {
                    Some("text") => Some(json!({"type": "text", "text": b["text"]})),
                    Some("image") => image_part(b),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        },
        "file" => vec![parts::unsupported(format!(
            "a document given by Files API id ({})",
            source["file_id"].as_str().unwrap_or_default()
        ))],
        other => vec![parts::unsupported(format!(
            "a document with a {other:?} source"
        ))],
    }
}

/// A `thinking` or `redacted_thinking` block as the hub keeps it in `thinking_blocks` (see
/// [`super`]): the text and signature, or the redacted data; `None` for a block of another
/// type.
pub(crate) fn thinking_block(block: &Value) -> Option<Value> {
    match block["type"].as_str()? {
        "thinking" => Some(json!({"type": "thinking",
            "thinking": block["thinking"].as_str().unwrap_or_default(),
            "signature": block["signature"].as_str().unwrap_or_default()})),
        "redacted_thinking" => Some(json!({"type": "redacted_thinking",
            "data": block["data"].as_str().unwrap_or_default()})),
        _ => None,
    }
}

/// The thinking blocks of a hub assistant message for an Anthropic answer (`answer`) or
/// request. An answer gets its `thinking_blocks` as they are, else its `reasoning_content` as
/// one thinking block with an empty signature (the field is required; the upstream signed
/// nothing). A request gets only signed blocks: Claude refuses thinking whose signature it
/// cannot check, and leaving it out keeps the turn valid.
fn hub_thinking(message: &Value, answer: bool) -> Vec<Value> {
    if let Some(blocks) = message["thinking_blocks"].as_array() {
        return blocks
            .iter()
            .filter_map(thinking_block)
            .filter(|b| answer || b["type"] != "thinking" || b["signature"] != "")
            .collect();
    }
    match message["reasoning_content"].as_str() {
        Some(r) if answer && !r.is_empty() => {
            vec![json!({"type": "thinking", "thinking": r, "signature": ""})]
        }
        _ => Vec::new(),
    }
}

/// A `tool_result`'s content as a hub tool message's: its text, or — when it holds images or
/// documents (a screenshot a tool took) — hub parts, which the upstreams whose tool results
/// take media (Claude, Converse) map and the others refuse by name (see [`parts`]).
fn tool_result_content(content: &Value) -> Value {
    let Value::Array(blocks) = content else {
        return Value::String(content.as_str().unwrap_or_default().to_owned());
    };
    let mut out = Vec::new();
    for block in blocks {
        match block["type"].as_str().unwrap_or_default() {
            "text" => out.push(json!({"type": "text", "text": block["text"]})),
            "image" => out.extend(image_part(block)),
            "document" => out.extend(document_parts(block)),
            _ => {}
        }
    }
    if out.iter().all(|p| p["type"] == "text") {
        Value::String(system_text(content))
    } else {
        Value::Array(out)
    }
}

/// An Anthropic Messages request as a hub request.
pub fn request_to_hub(body: &Value) -> Result<Value, ConvertError> {
    let mut messages = Vec::new();
    let system = system_text(&body["system"]);
    if !system.is_empty() {
        messages.push(json!({"role": "system", "content": system}));
    }
    let Some(input) = body["messages"].as_array() else {
        return Err(ConvertError("messages must be an array".into()));
    };
    for message in input {
        let role = message["role"].as_str().unwrap_or("user");
        let blocks = match &message["content"] {
            Value::String(text) => {
                messages.push(json!({"role": role, "content": text}));
                continue;
            }
            Value::Array(blocks) => blocks,
            _ => {
                return Err(ConvertError(
                    "message content must be a string or an array".into(),
                ));
            }
        };
        let mut parts = Vec::new();
        let mut tool_calls = Vec::new();
        let mut reasoning = String::new();
        let mut thinking = Vec::new();
        for block in blocks {
            match block["type"].as_str().unwrap_or_default() {
                "text" => parts.push(json!({"type": "text", "text": block["text"]})),
                "image" => parts.extend(image_part(block)),
                "document" => parts.extend(document_parts(block)),
                "thinking" => {
                    reasoning.push_str(block["thinking"].as_str().unwrap_or_default());
                    thinking.extend(thinking_block(block));
                }
                "redacted_thinking" => thinking.extend(thinking_block(block)),
                "tool_use" => tool_calls.push(json!({
                    "id": block["id"], "type": "function",
                    "function": {"name": block["name"], "arguments": block["input"].to_string()},
                })),
                "tool_result" => {
                    let content = tool_result_content(&block["content"]);
                    messages.push(json!({"role": "tool", "tool_call_id": block["tool_use_id"], "content": content}));
                }
                _ => {}
            }
        }
        if parts.is_empty() && tool_calls.is_empty() && thinking.is_empty() {
            continue;
        }
        let only_text = parts.iter().all(|p| p["type"] == "text");
        let content = if role == "assistant" || only_text {
            let text = content_text(&Value::Array(parts));
            if text.is_empty() && !tool_calls.is_empty() {
                Value::Null
            } else {
                Value::String(text)
            }
        } else {
            Value::Array(parts)
        };
        let mut out = json!({"role": role, "content": content});
        if !tool_calls.is_empty() {
            out["tool_calls"] = Value::Array(tool_calls);
        }
        if !reasoning.is_empty() {
            out["reasoning_content"] = Value::String(reasoning);
        }
        if !thinking.is_empty() && role == "assistant" {
            out["thinking_blocks"] = Value::Array(thinking);
        }
        messages.push(out);
    }
    let mut hub = json!({"model": body["model"], "messages": messages});
    let copy = [
        ("max_tokens", "max_tokens"),
        ("temperature", "temperature"),
        ("top_p", "top_p"),
        ("stop_sequences", "stop"),
        ("stream", "stream"),
    ];
    for (from, to) in copy {
        if let Some(v) = body.get(from).filter(|v| !v.is_null()) {
            hub[to] = v.clone();
        }
    }
    if let Some(tools) = body["tools"].as_array() {
        let tools: Vec<Value> = tools
            .iter()
            .filter(|t| t.get("input_schema").is_some())
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t["name"], "description": t["description"].as_str().unwrap_or_default(),
                    "parameters": t["input_schema"]}})
            })
            .collect();
        if !tools.is_empty() {
            hub["tools"] = Value::Array(tools);
        }
    }
    if let Some(choice) = body.get("tool_choice").filter(|c| c.is_object()) {
        hub["tool_choice"] = match choice["type"].as_str().unwrap_or_default() {
            "any" => json!("required"),
            "none" => json!("none"),
            "tool" => json!({"type": "function", "function": {"name": choice["name"]}}),
            _ => json!("auto"),
        };
    }
    if let Some(user) = body["metadata"]["user_id"].as_str() {
        hub["user"] = json!(user);
    }
    Ok(hub)
}

/// An OpenAI `image_url` part as an Anthropic image block.
fn image_block(part: &Value) -> Value {
    let url = part["image_url"]["url"]
        .as_str()
        .or_else(|| part["image_url"].as_str())
        .unwrap_or_default();
    if let Some(rest) = url.strip_prefix("data:")
        && let Some((media, data)) = rest.split_once(";base64,")
    {
        return json!({"type": "image", "source": {"type": "base64", "media_type": media, "data": data}});
    }
    json!({"type": "image", "source": {"type": "url", "url": url}})
}

/// A hub `file` part given by its bytes as an Anthropic `document` block: a PDF as a base64
/// source, plain text as a text source (https://docs.anthropic.com/en/docs/build-with-claude/pdf-support,
/// https://docs.anthropic.com/en/docs/build-with-claude/citations for plain-text documents).
/// Other files were refused by `parts::check`.
fn document_block(part: &Value) -> Option<Value> {
    let (mime, data) = parts::file_bytes(part)?;
    let source = match mime {
        "application/pdf" => {
            json!({"type": "base64", "media_type": "application/pdf", "data": data})
        }
        "text/plain" => {
            use base64::Engine;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data)
                .ok()?;
            json!({"type": "text", "media_type": "text/plain",
                "data": String::from_utf8_lossy(&bytes)})
        }
        _ => return None,
    };
    let mut block = json!({"type": "document", "source": source});
    if let Some(name) = parts::file_name(part) {
        block["title"] = json!(name);
    }
    Some(block)
}

/// Appends `blocks` as a `role` message, merging into the previous message of the same role.
fn push_blocks(messages: &mut Vec<Value>, role: &str, mut blocks: Vec<Value>) {
    if blocks.is_empty() {
        return;
    }
    if let Some(last) = messages.last_mut()
        && last["role"] == role
        && let Some(existing) = last["content"].as_array_mut()
    {
        existing.append(&mut blocks);
        return;
    }
    messages.push(json!({"role": role, "content": blocks}));
}

/// A hub request as an Anthropic Messages request for `model`.
pub fn request_from_hub(hub: &Value, model: &str, stream: bool) -> Value {
    let mut system = Vec::new();
    let mut messages: Vec<Value> = Vec::new();
    for message in hub["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or("user");
        match role {
            "system" | "developer" => {
                let text = content_text(&message["content"]);
                if !text.is_empty() {
                    system.push(json!({"type": "text", "text": text}));
                }
            }
            "tool" => {
                let content = match &message["content"] {
                    Value::Array(parts) if parts.iter().any(|p| p["type"] != "text") => {
                        Value::Array(
                            parts
                                .iter()
                                .filter_map(|p| match p["type"].as_str() {
                                    Some("text") => {
                                        Some(json!({"type": "text", "text": p["text"]}))
                                    }
                                    Some("image_url") => Some(image_block(p)),
                                    Some("file") => document_block(p),
                                    _ => None,
                                })
                                .collect(),
                        )
                    }
                    other => Value::String(content_text(other)),
                };
                let block = json!({"type": "tool_result", "tool_use_id": message["tool_call_id"],
                    "content": content});
                push_blocks(&mut messages, "user", vec![block]);
            }
            _ => {
                let role = if role == "assistant" {
                    "assistant"
                } else {
                    "user"
                };
                // Thinking first, as Claude answered it (signed blocks only: see hub_thinking).
                let mut blocks = if role == "assistant" {
                    hub_thinking(message, false)
                } else {
                    Vec::new()
                };
                match &message["content"] {
                    Value::String(text) if !text.is_empty() => {
                        blocks.push(json!({"type": "text", "text": text}));
                    }
                    Value::Array(parts) => {
                        for part in parts {
                            match part["type"].as_str().unwrap_or_default() {
                                "text" => {
                                    blocks.push(json!({"type": "text", "text": part["text"]}));
                                }
                                "image_url" => blocks.push(image_block(part)),
                                "file" => blocks.extend(document_block(part)),
                                // Audio and the rest were refused by `parts::check`.
                                _ => {}
                            }
                        }
                    }
                    _ => {}
                }
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    let args = call["function"]["arguments"].as_str().unwrap_or("{}");
                    let input: Value = serde_json::from_str(args)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({}));
                    blocks.push(json!({"type": "tool_use", "id": call["id"],
                        "name": call["function"]["name"], "input": input}));
                }
                push_blocks(&mut messages, role, blocks);
            }
        }
    }
    let max_tokens = hub["max_tokens"]
        .as_i64()
        .or_else(|| hub["max_completion_tokens"].as_i64())
        .unwrap_or(DEFAULT_MAX_TOKENS);
    let mut body = json!({"model": model, "messages": messages, "max_tokens": max_tokens});
    if !system.is_empty() {
        body["system"] = Value::Array(system);
    }
    for key in ["temperature", "top_p"] {
        if let Some(v) = hub.get(key).filter(|v| !v.is_null()) {
            body[key] = v.clone();
        }
    }
    match &hub["stop"] {
        Value::String(s) => body["stop_sequences"] = json!([s]),
        Value::Array(list) if !list.is_empty() => body["stop_sequences"] = json!(list),
        _ => {}
    }
    if stream {
        body["stream"] = Value::Bool(true);
    }
    if let Some(tools) = hub["tools"].as_array() {
        let tools: Vec<Value> = tools
            .iter()
            .map(|t| &t["function"])
            .map(|f| {
                let mut tool = json!({"name": f["name"],
                    "input_schema": if f["parameters"].is_object() { f["parameters"].clone() } else { json!({"type": "object"}) }});
                if let Some(d) = f["description"].as_str().filter(|d| !d.is_empty()) {
                    tool["description"] = json!(d);
                }
                tool
            })
            .collect();
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools);
        }
    }
    match &hub["tool_choice"] {
        Value::String(s) if s == "required" => body["tool_choice"] = json!({"type": "any"}),
        Value::String(s) if s == "none" => body["tool_choice"] = json!({"type": "none"}),
        Value::String(s) if s == "auto" => body["tool_choice"] = json!({"type": "auto"}),
        Value::Object(o) => {
            body["tool_choice"] = json!({"type": "tool", "name": o.get("function").map_or(&Value::Null, |f| &f["name"])});
        }
        _ => {}
    }
    if let Some(user) = hub["user"].as_str() {
        body["metadata"] = json!({"user_id": user});
    }
    body
}

/// A whole Anthropic answer as a hub `chat.completion`.
pub fn answer_to_hub(answer: &Value) -> Value {
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut thinking = Vec::new();
    let mut tool_calls = Vec::new();
    for block in answer["content"].as_array().into_iter().flatten() {
        match block["type"].as_str().unwrap_or_default() {
            "text" => text.push_str(block["text"].as_str().unwrap_or_default()),
            "thinking" => {
                reasoning.push_str(block["thinking"].as_str().unwrap_or_default());
                thinking.extend(thinking_block(block));
            }
            "redacted_thinking" => thinking.extend(thinking_block(block)),
            "tool_use" => tool_calls.push(json!({"id": block["id"], "type": "function",
                "function": {"name": block["name"], "arguments": block["input"].to_string()}})),
            _ => {}
        }
    }
    let mut message = json!({"role": "assistant",
        "content": if text.is_empty() && !tool_calls.is_empty() { Value::Null } else { Value::String(text) }});
    if !tool_calls.is_empty() {
        message["tool_calls"] = Value::Array(tool_calls);
    }
    if !reasoning.is_empty() {
        message["reasoning_content"] = Value::String(reasoning);
    }
    if !thinking.is_empty() {
        message["thinking_blocks"] = Value::Array(thinking);
    }
    let finish = finish_of(answer["stop_reason"].as_str().unwrap_or_default());
    let mut hub = json!({
        "id": format!("chatcmpl-{}", answer["id"].as_str().unwrap_or("tollgate")),
        "object": "chat.completion", "created": now(), "model": answer["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    });
    if let Some(usage) = answer.get("usage") {
        hub["usage"] = usage_json(&usage_of(usage));
    }
    hub
}

/// A hub `chat.completion` as a whole Anthropic answer naming `model`.
pub fn answer_from_hub(hub: &Value, model: &str) -> Value {
    let choice = &hub["choices"][0];
    let message = &choice["message"];
    // Signed thinking as the upstream signed it; reasoning from an upstream that signs nothing
    // with the empty signature (the field is required in an answer).
    let mut content = hub_thinking(message, true);
    let text = content_text(&message["content"]);
    if !text.is_empty() {
        content.push(json!({"type": "text", "text": text}));
    }
    for call in message["tool_calls"].as_array().into_iter().flatten() {
        let input: Value =
            serde_json::from_str(call["function"]["arguments"].as_str().unwrap_or("{}"))
                .ok()
                .filter(Value::is_object)
                .unwrap_or_else(|| json!({}));
        content.push(json!({"type": "tool_use", "id": call["id"], "name": call["function"]["name"], "input": input}));
    }
    let usage = hub
        .get("usage")
        .map(super::openai::usage_of)
        .unwrap_or_default();
    json!({
        "id": message_id(hub["id"].as_str().unwrap_or_default()),
        "type": "message", "role": "assistant", "model": model, "content": content,
        "stop_reason": stop_reason_of(choice["finish_reason"].as_str().unwrap_or("stop")),
        "stop_sequence": null,
        "usage": usage_json_of(&usage),
    })
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
