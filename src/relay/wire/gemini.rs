//! Gemini `generateContent` ⇄ the hub (OpenAI chat completions): requests, whole answers,
//! `usageMetadata`, and the `streamGenerateContent?alt=sse` chunks (each one a partial
//! `GenerateContentResponse`; the stream has no end marker).
//!
//! Gemini accepts camelCase and snake_case field names; both are read, camelCase is written.
//! Gemini tool calls carry no ids: calls get `call_<n>` ids on the way to the hub, and a hub tool
//! result finds its function name through the id of the call it answers.

mod stream;
pub mod usage;

use std::collections::HashMap;

use serde_json::{Value, json};

use self::usage::UsageOut;
use super::openai::usage_json;
use super::{ConvertError, content_text, either, now};
use crate::relay::measure::price::Usage;

pub use stream::{Decoder, Encoder};
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

/// Text of the `parts` of a content.
fn parts_text(content: &Value) -> String {
    either(content, "parts", "parts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|p| p["thought"] != true)
        .filter_map(|p| p["text"].as_str())
        .collect::<Vec<_>>()
        .join("")
}

/// A part's `thoughtSignature` (https://ai.google.dev/gemini-api/docs/thought-signatures), if
/// any.
fn signature_of(part: &Value) -> Option<&str> {
    either(part, "thoughtSignature", "thought_signature")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// Carries a function call part's `thoughtSignature` onto the hub tool call `call`, where
/// Gemini's OpenAI-compatible API keeps it (`extra_content.google.thought_signature`).
fn sign(call: &mut Value, part: &Value) {
    if let Some(signature) = signature_of(part) {
        call["extra_content"] = json!({"google": {"thought_signature": signature}});
    }
}

/// The Gemini signature a hub tool call carries, if any.
fn hub_signature(call: &Value) -> Option<&str> {
    call["extra_content"]["google"]["thought_signature"]
        .as_str()
        .filter(|s| !s.is_empty())
}

/// A `functionCall` part for a hub tool call, with its thought signature when it has one
/// (Gemini 3 refuses a function call of the current turn without the signature it gave).
fn call_part(call: &Value, args: Value) -> Value {
    let mut part = json!({"functionCall": {"name": call["function"]["name"], "args": args}});
    if let Some(signature) = hub_signature(call) {
        part["thoughtSignature"] = json!(signature);
    }
    part
}

/// An `inlineData` blob (https://ai.google.dev/api/caching#Blob) as a hub part: images as
/// `image_url`, WAV and MP3 audio as `input_audio` (OpenAI's two audio formats), anything else
/// (a PDF, other audio, video) as a `file` part with the bytes as a data URL — each upstream
/// then takes it or refuses it by name, never drops it (see [`super::parts`]).
fn blob_part(mime: &str, data: &str) -> Value {
    let audio = match mime {
        "audio/wav" | "audio/x-wav" | "audio/wave" => Some("wav"),
        "audio/mp3" | "audio/mpeg" => Some("mp3"),
        _ => None,
    };
    if mime.starts_with("image/") {
        json!({"type": "image_url", "image_url": {"url": format!("data:{mime};base64,{data}")}})
    } else if let Some(format) = audio {
        json!({"type": "input_audio", "input_audio": {"data": data, "format": format}})
    } else {
        let mut file = json!({"file_data": format!("data:{mime};base64,{data}")});
        if mime == "application/pdf" {
            file["filename"] = json!("document.pdf");
        }
        json!({"type": "file", "file": file})
    }
}

/// A `fileData` part (https://ai.google.dev/api/caching#FileData) as a hub part: an image (or a
/// URI of no stated type) as an `image_url`, anything else as a `file` part by URL
/// (`file_url`, Tollgate's own field: http(s) URLs are read by the relay's guarded media
/// fetcher before the request is converted; other URIs are refused by name).
fn file_uri_part(uri: &str, mime: Option<&str>) -> Value {
    match mime {
        Some(mime) if !mime.starts_with("image/") => {
            json!({"type": "file", "file": {"file_url": uri, "mime_type": mime}})
        }
        _ => json!({"type": "image_url", "image_url": {"url": uri}}),
    }
}

/// A Gemini request as a hub request (the model comes from the URL, set by the caller).
pub fn request_to_hub(body: &Value) -> Result<Value, ConvertError> {
    let mut messages = Vec::new();
    if let Some(system) = either(body, "systemInstruction", "system_instruction") {
        let text = parts_text(system);
        if !text.is_empty() {
            messages.push(json!({"role": "system", "content": text}));
        }
    }
    let Some(contents) = body["contents"].as_array() else {
        return Err(ConvertError("contents must be an array".into()));
    };
    let mut call_ids: HashMap<String, Vec<String>> = HashMap::new();
    let mut calls = 0usize;
    for content in contents {
        let model = content["role"] == "model";
        let mut parts_out = Vec::new();
        let mut tool_calls = Vec::new();
        for part in content["parts"].as_array().into_iter().flatten() {
            if let Some(text) = part["text"].as_str() {
                if part["thought"] != true {
                    parts_out.push(json!({"type": "text", "text": text}));
                }
            } else if let Some(data) = either(part, "inlineData", "inline_data") {
                let mime = either(data, "mimeType", "mime_type")
                    .and_then(Value::as_str)
                    .unwrap_or("image/png");
                parts_out.push(blob_part(mime, data["data"].as_str().unwrap_or_default()));
            } else if let Some(file) = either(part, "fileData", "file_data") {
                let uri = either(file, "fileUri", "file_uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let mime = either(file, "mimeType", "mime_type").and_then(Value::as_str);
                parts_out.push(file_uri_part(uri, mime));
            } else if let Some(call) = either(part, "functionCall", "function_call") {
                let name = call["name"].as_str().unwrap_or_default().to_owned();
                let id = format!("call_{calls}");
                calls += 1;
                call_ids.entry(name.clone()).or_default().push(id.clone());
                let args = call.get("args").cloned().unwrap_or_else(|| json!({}));
                let mut out = json!({"id": id, "type": "function",
                    "function": {"name": name, "arguments": args.to_string()}});
                sign(&mut out, part);
                tool_calls.push(out);
            } else if let Some(response) = either(part, "functionResponse", "function_response") {
                let name = response["name"].as_str().unwrap_or_default();
                let id = call_ids
                    .get_mut(name)
                    .filter(|ids| !ids.is_empty())
                    .map_or_else(|| format!("call_{name}"), |ids| ids.remove(0));
                messages.push(json!({"role": "tool", "tool_call_id": id,
                    "content": response["response"].to_string()}));
            }
        }
        if parts_out.is_empty() && tool_calls.is_empty() {
            continue;
        }
        let only_text = parts_out.iter().all(|p| p["type"] == "text");
        let content = if model || only_text {
            let text = content_text(&Value::Array(parts_out));
            if text.is_empty() && !tool_calls.is_empty() {
                Value::Null
            } else {
                Value::String(text)
            }
        } else {
            Value::Array(parts_out)
        };
        let mut message =
            json!({"role": if model { "assistant" } else { "user" }, "content": content});
        if !tool_calls.is_empty() {
            message["tool_calls"] = Value::Array(tool_calls);
        }
        messages.push(message);
    }
    let mut hub = json!({"messages": messages});
    if let Some(config) = either(body, "generationConfig", "generation_config") {
        let fields = [
            ("temperature", "temperature", "temperature"),
            ("topP", "top_p", "top_p"),
            ("maxOutputTokens", "max_output_tokens", "max_tokens"),
            ("stopSequences", "stop_sequences", "stop"),
            ("candidateCount", "candidate_count", "n"),
            ("seed", "seed", "seed"),
        ];
        for (camel, snake, to) in fields {
            if let Some(v) = either(config, camel, snake) {
                hub[to] = v.clone();
            }
        }
    }
    let mut tools = Vec::new();
    for tool in body["tools"].as_array().into_iter().flatten() {
        let declarations =
            either(tool, "functionDeclarations", "function_declarations").and_then(Value::as_array);
        for f in declarations.into_iter().flatten() {
            let mut function = json!({"name": f["name"], "description": f["description"].as_str().unwrap_or_default()});
            if let Some(p) = f.get("parameters").filter(|p| p.is_object()) {
                function["parameters"] = p.clone();
            }
            tools.push(json!({"type": "function", "function": function}));
        }
    }
    if !tools.is_empty() {
        hub["tools"] = Value::Array(tools);
    }
    Ok(hub)
}

/// JSON-schema keys Gemini's function declarations refuse.
const UNSUPPORTED_SCHEMA_KEYS: &[&str] = &["$schema", "additionalProperties", "strict"];

fn clean_schema(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            for key in UNSUPPORTED_SCHEMA_KEYS {
                map.remove(*key);
            }
            map.values_mut().for_each(clean_schema);
        }
        Value::Array(items) => items.iter_mut().for_each(clean_schema),
        _ => {}
    }
}

/// Appends `parts` as a `role` content, merging into the previous content of the same role.
fn push_parts(contents: &mut Vec<Value>, role: &str, mut parts: Vec<Value>) {
    if parts.is_empty() {
        return;
    }
    if let Some(last) = contents.last_mut()
        && last["role"] == role
        && let Some(existing) = last["parts"].as_array_mut()
    {
        existing.append(&mut parts);
        return;
    }
    contents.push(json!({"role": role, "parts": parts}));
}

/// A hub request as a Gemini request (the model goes in the URL).
pub fn request_from_hub(hub: &Value) -> Value {
    let mut system = Vec::new();
    let mut contents: Vec<Value> = Vec::new();
    let mut call_names: HashMap<String, String> = HashMap::new();
    for message in hub["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or("user");
        match role {
            "system" | "developer" => {
                let text = content_text(&message["content"]);
                if !text.is_empty() {
                    system.push(json!({"text": text}));
                }
            }
            "tool" => {
                let id = message["tool_call_id"].as_str().unwrap_or_default();
                let name = call_names.get(id).cloned().unwrap_or_else(|| id.to_owned());
                let text = content_text(&message["content"]);
                let response = serde_json::from_str::<Value>(&text)
                    .ok()
                    .filter(Value::is_object)
                    .unwrap_or_else(|| json!({"content": text}));
                let part = json!({"functionResponse": {"name": name, "response": response}});
                push_parts(&mut contents, "user", vec![part]);
            }
            _ => {
                let mut parts = Vec::new();
                match &message["content"] {
                    Value::String(text) if !text.is_empty() => parts.push(json!({"text": text})),
                    Value::Array(items) => {
                        for item in items {
                            match item["type"].as_str().unwrap_or_default() {
                                "text" => parts.push(json!({"text": item["text"]})),
                                "image_url" => {
                                    let url = item["image_url"]["url"].as_str().unwrap_or_default();
                                    if let Some((mime, data)) = url
                                        .strip_prefix("data:")
                                        .and_then(|r| r.split_once(";base64,"))
                                    {
                                        parts.push(
                                            json!({"inlineData": {"mimeType": mime, "data": data}}),
                                        );
                                    } else {
                                        let mime =
                                            mime_guess::from_path(url).first_or_octet_stream();
                                        parts.push(json!({"fileData": {"mimeType": mime.essence_str(), "fileUri": url}}));
                                    }
                                }
                                "input_audio" => {
                                    let audio = &item["input_audio"];
                                    let mime = match audio["format"].as_str() {
                                        Some("mp3") => "audio/mp3",
                                        _ => "audio/wav",
                                    };
                                    parts.push(json!({"inlineData": {"mimeType": mime,
                                        "data": audio["data"]}}));
                                }
                                // A file part's data URL (a PDF) as inline data (files by id
                                // were refused by `parts::check`).
                                "file" => {
                                    let url =
                                        item["file"]["file_data"].as_str().unwrap_or_default();
                                    if let Some((mime, data)) = url
                                        .strip_prefix("data:")
                                        .and_then(|r| r.split_once(";base64,"))
                                    {
                                        parts.push(
                                            json!({"inlineData": {"mimeType": mime, "data": data}}),
                                        );
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                    _ => {}
                }
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    let name = call["function"]["name"].as_str().unwrap_or_default();
                    if let Some(id) = call["id"].as_str() {
                        call_names.insert(id.to_owned(), name.to_owned());
                    }
                    let args: Value = serde_json::from_str(
                        call["function"]["arguments"].as_str().unwrap_or("{}"),
                    )
                    .ok()
                    .filter(Value::is_object)
                    .unwrap_or_else(|| json!({}));
                    parts.push(call_part(call, args));
                }
                let role = if role == "assistant" { "model" } else { "user" };
                push_parts(&mut contents, role, parts);
            }
        }
    }
    let mut body = json!({"contents": contents});
    if !system.is_empty() {
        body["systemInstruction"] = json!({"parts": system});
    }
    let mut config = serde_json::Map::new();
    let fields = [
        ("temperature", "temperature"),
        ("top_p", "topP"),
        ("max_tokens", "maxOutputTokens"),
        ("max_completion_tokens", "maxOutputTokens"),
        ("n", "candidateCount"),
        ("seed", "seed"),
    ];
    for (from, to) in fields {
        if let Some(v) = hub.get(from).filter(|v| !v.is_null()) {
            config.insert(to.to_owned(), v.clone());
        }
    }
    match &hub["stop"] {
        Value::String(s) => {
            config.insert("stopSequences".into(), json!([s]));
        }
        Value::Array(list) if !list.is_empty() => {
            config.insert("stopSequences".into(), json!(list));
        }
        _ => {}
    }
    if !config.is_empty() {
        body["generationConfig"] = Value::Object(config);
    }
    let declarations: Vec<Value> = hub["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let f = &t["function"];
            let mut d = json!({"name": f["name"], "description": f["description"].as_str().unwrap_or_default()});
            if f["parameters"].is_object() {
                let mut params = f["parameters"].clone();
                clean_schema(&mut params);
                d["parameters"] = params;
            }
            d
        })
        .collect();
    if !declarations.is_empty() {
        body["tools"] = json!([{"functionDeclarations": declarations}]);
    }
    body
}

/// A whole Gemini answer as a hub `chat.completion`.
pub fn answer_to_hub(answer: &Value) -> Value {
    let mut choices = Vec::new();
    for (i, candidate) in answer["candidates"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let mut text = String::new();
        let mut reasoning = String::new();
        let mut tool_calls = Vec::new();
        for part in candidate["content"]["parts"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if let Some(t) = part["text"].as_str() {
                if part["thought"] == true {
                    reasoning.push_str(t);
                } else {
                    text.push_str(t);
                }
            } else if let Some(call) = either(part, "functionCall", "function_call") {
                let mut out = json!({"id": format!("call_{}", tool_calls.len()), "type": "function",
                    "function": {"name": call["name"], "arguments": call.get("args").cloned().unwrap_or_else(|| json!({})).to_string()}});
                sign(&mut out, part);
                tool_calls.push(out);
            }
        }
        let finish = finish_of(
            candidate["finishReason"].as_str().unwrap_or("STOP"),
            !tool_calls.is_empty(),
        );
        let mut message = json!({"role": "assistant",
            "content": if text.is_empty() && !tool_calls.is_empty() { Value::Null } else { Value::String(text) }});
        if !tool_calls.is_empty() {
            message["tool_calls"] = Value::Array(tool_calls);
        }
        if !reasoning.is_empty() {
            message["reasoning_content"] = Value::String(reasoning);
        }
        choices.push(json!({"index": i, "message": message, "finish_reason": finish}));
    }
    let mut hub = json!({
        "id": format!("chatcmpl-{}", answer["responseId"].as_str().unwrap_or("tollgate")),
        "object": "chat.completion", "created": now(), "model": answer["modelVersion"],
        "choices": choices,
    });
    if let Some(meta) = answer.get("usageMetadata") {
        hub["usage"] = usage_json(&usage_of(meta));
    }
    hub
}

/// A hub `chat.completion` as a whole Gemini answer naming `model`.
pub fn answer_from_hub(hub: &Value, model: &str) -> Value {
    let candidates: Vec<Value> = hub["choices"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, choice)| {
            let message = &choice["message"];
            let mut parts = Vec::new();
            if let Some(r) = message["reasoning_content"]
                .as_str()
                .filter(|r| !r.is_empty())
            {
                parts.push(json!({"text": r, "thought": true}));
            }
            let text = content_text(&message["content"]);
            if !text.is_empty() {
                parts.push(json!({"text": text}));
            }
            for call in message["tool_calls"].as_array().into_iter().flatten() {
                let args: Value =
                    serde_json::from_str(call["function"]["arguments"].as_str().unwrap_or("{}"))
                        .unwrap_or_else(|_| json!({}));
                parts.push(call_part(call, args));
            }
            if parts.is_empty() {
                parts.push(json!({"text": ""}));
            }
            json!({"content": {"role": "model", "parts": parts},
                "finishReason": reason_of(choice["finish_reason"].as_str().unwrap_or("stop")),
                "index": i})
        })
        .collect();
    let usage = hub
        .get("usage")
        .map(super::openai::usage_of)
        .unwrap_or_default();
    json!({
        "candidates": candidates,
        "usageMetadata": usage_json_of(&usage),
        "modelVersion": model,
        "responseId": hub["id"].as_str().unwrap_or_default().trim_start_matches("chatcmpl-"),
    })
}

#[cfg(test)]
mod tests;
