//! AWS Bedrock Converse ⇄ the hub (OpenAI chat completions), upstream side only: requests from
//! the hub, whole answers and `usage` to the hub, and the ConverseStream events (reframed as SSE
//! by [`crate::relay::adaptor::eventstream`]: the event name is the event type, the data its
//! payload) as pieces.
//!
//! Shapes from the API reference: Converse
//! (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html),
//! ConverseStream (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html),
//! ContentBlock, ToolConfiguration, InferenceConfiguration and TokenUsage
//! (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_TokenUsage.html).

use std::collections::{HashMap, HashSet};

use base64::Engine;
use serde_json::{Map, Value, json};

use super::openai::usage_json;
use super::{ConvertError, Decode, Piece, int, now, parts};
use crate::relay::measure::price::Usage;

/// A Converse `usage` (TokenUsage) as [`Usage`]: cache reads and writes are counted beside
/// `inputTokens`, as Anthropic counts them.
pub fn usage_of(usage: &Value) -> Usage {
    let read = int(&usage["cacheReadInputTokens"]);
    let written = int(&usage["cacheWriteInputTokens"]);
    Usage {
        prompt_tokens: int(&usage["inputTokens"])
            .saturating_add(read)
            .saturating_add(written),
        completion_tokens: int(&usage["outputTokens"]),
        cached_tokens: read,
        cache_write_5m_tokens: written,
        cache_in_prompt: false,
        ..Usage::default()
    }
}

/// Converse `stopReason` → OpenAI `finish_reason`.
pub fn finish_of(reason: &str) -> &'static str {
    match reason {
        "tool_use" => "tool_calls",
        "max_tokens" | "model_context_window_exceeded" => "length",
        "guardrail_intervened" | "content_filtered" => "content_filter",
        _ => "stop",
    }
}

/// The Converse image `format` of a data URL's media type.
fn image_format(media: &str) -> Option<&'static str> {
    match media {
        "image/png" => Some("png"),
        "image/jpeg" | "image/jpg" => Some("jpeg"),
        "image/gif" => Some("gif"),
        "image/webp" => Some("webp"),
        _ => None,
    }
}

/// The document names given so far in one request (Converse names every document; the names
/// are kept distinct so no document shadows another).
#[derive(Debug, Default)]
struct Names(HashSet<String>);

impl Names {
    /// A DocumentBlock `name` for a file called `file` (DocumentBlock: alphanumerics, single
    /// whitespace, hyphens, parentheses and square brackets, 1 to 64 characters): the extension
    /// dropped, any other character a space, runs of spaces one, distinct within the request.
    fn give(&mut self, file: Option<&str>) -> String {
        const MAX: usize = 64;
        let stem = file
            .map(|f| f.rsplit_once('.').map_or(f, |(stem, _)| stem))
            .unwrap_or_default();
        let mut name = String::new();
        for c in stem.chars() {
            let c = if c.is_ascii_alphanumeric() || matches!(c, '-' | '(' | ')' | '[' | ']') {
                c
            } else {
                ' '
            };
            if c == ' ' && (name.is_empty() || name.ends_with(' ')) {
                continue;
            }
            name.push(c);
        }
        let mut name: String = name.trim_end().chars().take(MAX).collect();
        name.truncate(name.trim_end().len());
        if name.is_empty() {
            name.push_str("document");
        }
        let mut unique = name.clone();
        let mut n = 1;
        while self.0.contains(&unique) {
            n += 1;
            let suffix = format!(" ({n})");
            let keep: String = name.chars().take(MAX - suffix.len()).collect();
            unique = format!("{}{suffix}", keep.trim_end());
        }
        self.0.insert(unique.clone());
        unique
    }
}

/// A hub `file` part given by its bytes as a Converse `document` block (DocumentBlock, source
/// `bytes`: base64 in JSON). Files Converse cannot take were refused by `parts::check`.
fn document(part: &Value, names: &mut Names) -> Result<Value, ConvertError> {
    let refused = || {
        ConvertError(format!(
            "{} cannot be sent to a Bedrock Converse model: documents must be data: URLs of pdf, csv, doc, docx, xls, xlsx, html, txt or md",
            parts::describe(part)
        ))
    };
    let (mime, data) = parts::file_bytes(part).ok_or_else(refused)?;
    let format = parts::converse_document_format(mime).ok_or_else(refused)?;
    // Checked here so a broken document is the client's 400, not the upstream's.
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|_| refused())?;
    let name = names.give(parts::file_name(part));
    Ok(json!({"document": {"format": format, "name": name, "source": {"bytes": data}}}))
}

/// The content blocks of a hub message `content` (a string or OpenAI parts).
fn blocks(content: &Value, names: &mut Names) -> Result<Vec<Value>, ConvertError> {
    let mut out = Vec::new();
    match content {
        Value::String(text) if !text.is_empty() => out.push(json!({"text": text})),
        Value::Array(parts) => {
            for part in parts {
                match part["type"].as_str().unwrap_or_default() {
                    "text" => {
                        if let Some(text) = part["text"].as_str().filter(|t| !t.is_empty()) {
                            out.push(json!({"text": text}));
                        }
                    }
                    "image_url" => {
                        let url = part["image_url"]["url"]
                            .as_str()
                            .or_else(|| part["image_url"].as_str())
                            .unwrap_or_default();
                        out.push(image(url)?);
                    }
                    "file" => out.push(document(part, names)?),
                    _ => {
                        return Err(ConvertError(format!(
                            "{} cannot be sent to a Bedrock Converse model",
                            parts::describe(part)
                        )));
                    }
                }
            }
        }
        _ => {}
    }
    Ok(out)
}

/// An `image` block from a `data:` URL (Converse takes the bytes, base64 in JSON).
fn image(url: &str) -> Result<Value, ConvertError> {
    let refused = || {
        ConvertError(
            "images for a Bedrock Converse model must be data: URLs of PNG, JPEG, GIF or WebP"
                .into(),
        )
    };
    let rest = url.strip_prefix("data:").ok_or_else(refused)?;
    let (media, data) = rest.split_once(";base64,").ok_or_else(refused)?;
    let format = image_format(media).ok_or_else(refused)?;
    // Checked here so a broken image is the client's 400, not the upstream's.
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|_| refused())?;
    Ok(json!({"image": {"format": format, "source": {"bytes": data}}}))
}

/// The `reasoningContent` blocks of a hub assistant message's `thinking_blocks`
/// (ReasoningContentBlock: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ReasoningContentBlock.html):
/// signed thinking as `reasoningText` with its `signature` — which Converse wants back
/// unmodified in the next turn — and redacted thinking as `redactedContent` (a blob: base64 in
/// JSON, as Anthropic's `data` is). Thinking without a signature (reasoning another upstream
/// wrote, or a client format that cannot carry signatures) is left out: Converse cannot check
/// it, and the turn stays valid without it.
fn reasoning_blocks(message: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for block in message["thinking_blocks"].as_array().into_iter().flatten() {
        match block["type"].as_str().unwrap_or_default() {
            "thinking" => {
                if let Some(signature) = block["signature"].as_str().filter(|s| !s.is_empty()) {
                    out.push(json!({"reasoningContent": {"reasoningText": {
                        "text": block["thinking"].as_str().unwrap_or_default(),
                        "signature": signature}}}));
                }
            }
            "redacted_thinking" => {
                if let Some(data) = block["data"].as_str().filter(|d| !d.is_empty()) {
                    out.push(json!({"reasoningContent": {"redactedContent": data}}));
                }
            }
            _ => {}
        }
    }
    out
}

/// Appends `content` to `messages` as a message of `role`, merged into the last one when it has
/// the same role (Converse wants user and assistant turns to alternate).
fn push(messages: &mut Vec<Value>, role: &str, content: Vec<Value>) {
    if content.is_empty() {
        return;
    }
    if let Some(last) = messages.last_mut()
        && last["role"] == role
        && let Some(existing) = last["content"].as_array_mut()
    {
        existing.extend(content);
        return;
    }
    messages.push(json!({"role": role, "content": content}));
}

/// A hub request as a Converse request body (the model is in the URL).
pub fn request_from_hub(hub: &Value) -> Result<Value, ConvertError> {
    let mut system = Vec::new();
    let mut messages: Vec<Value> = Vec::new();
    let mut names = Names::default();
    for message in hub["messages"].as_array().into_iter().flatten() {
        match message["role"].as_str().unwrap_or_default() {
            "system" | "developer" => system.extend(blocks(&message["content"], &mut names)?),
            "assistant" => {
                let mut content = reasoning_blocks(message);
                content.extend(blocks(&message["content"], &mut names)?);
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    let input: Value = serde_json::from_str(
                        call["function"]["arguments"].as_str().unwrap_or("{}"),
                    )
                    .unwrap_or_else(|_| json!({}));
                    content.push(json!({"toolUse": {"toolUseId": call["id"],
                        "name": call["function"]["name"], "input": input}}));
                }
                push(&mut messages, "assistant", content);
            }
            "tool" => {
                // ToolResultContentBlock takes text, images and documents
                // (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolResultContentBlock.html).
                let content = match &message["content"] {
                    Value::Array(_) => blocks(&message["content"], &mut names)?,
                    other => vec![json!({"text": super::content_text(other)})],
                };
                let result = json!({"toolResult": {"toolUseId": message["tool_call_id"],
                    "content": content}});
                push(&mut messages, "user", vec![result]);
            }
            _ => {
                let content = blocks(&message["content"], &mut names)?;
                push(&mut messages, "user", content);
            }
        }
    }
    let mut body = Map::new();
    body.insert("messages".into(), Value::Array(messages));
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }
    let mut config = Map::new();
    let max = [&hub["max_completion_tokens"], &hub["max_tokens"]]
        .into_iter()
        .find_map(Value::as_i64);
    if let Some(max) = max {
        config.insert("maxTokens".into(), json!(max));
    }
    for (from, to) in [("temperature", "temperature"), ("top_p", "topP")] {
        if let Some(v) = hub.get(from).filter(|v| v.is_number()) {
            config.insert(to.into(), v.clone());
        }
    }
    match &hub["stop"] {
        Value::String(s) => {
            config.insert("stopSequences".into(), json!([s]));
        }
        Value::Array(a) if !a.is_empty() => {
            config.insert("stopSequences".into(), Value::Array(a.clone()));
        }
        _ => {}
    }
    if !config.is_empty() {
        body.insert("inferenceConfig".into(), Value::Object(config));
    }
    if let Some(tools) = tool_config(hub) {
        body.insert("toolConfig".into(), tools);
    }
    Ok(Value::Object(body))
}

/// The `toolConfig` of the hub's `tools` and `tool_choice`.
fn tool_config(hub: &Value) -> Option<Value> {
    let tools: Vec<Value> = hub["tools"]
        .as_array()?
        .iter()
        .filter(|t| t["type"] == "function")
        .map(|t| {
            let f = &t["function"];
            let mut spec = json!({"name": f["name"],
                "inputSchema": {"json": f.get("parameters").cloned()
                    .unwrap_or_else(|| json!({"type": "object", "properties": {}}))}});
            if let Some(d) = f["description"].as_str() {
                spec["description"] = json!(d);
            }
            json!({"toolSpec": spec})
        })
        .collect();
    if tools.is_empty() {
        return None;
    }
    let mut config = json!({"tools": tools});
    match &hub["tool_choice"] {
        Value::String(c) if c == "required" => config["toolChoice"] = json!({"any": {}}),
        Value::String(c) if c == "auto" => config["toolChoice"] = json!({"auto": {}}),
        Value::Object(o) => {
            if let Some(name) = o
                .get("function")
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str)
            {
                config["toolChoice"] = json!({"tool": {"name": name}});
            }
        }
        _ => {}
    }
    Some(config)
}

/// A whole Converse answer as a hub `chat.completion`.
pub fn answer_to_hub(answer: &Value) -> Value {
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut thinking = Vec::new();
    let mut tool_calls = Vec::new();
    for block in answer["output"]["message"]["content"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let reasoned = &block["reasoningContent"];
        if let Some(t) = block["text"].as_str() {
            text.push_str(t);
        } else if let Some(call) = block.get("toolUse") {
            tool_calls.push(json!({"id": call["toolUseId"], "type": "function",
                "function": {"name": call["name"],
                    "arguments": call.get("input").cloned().unwrap_or_else(|| json!({})).to_string()}}));
        } else if let Some(r) = reasoned["reasoningText"]["text"].as_str() {
            reasoning.push_str(r);
            thinking.push(json!({"type": "thinking", "thinking": r,
                "signature": reasoned["reasoningText"]["signature"].as_str().unwrap_or_default()}));
        } else if let Some(data) = reasoned["redactedContent"].as_str() {
            thinking.push(json!({"type": "redacted_thinking", "data": data}));
        }
    }
    let finish = finish_of(answer["stopReason"].as_str().unwrap_or("end_turn"));
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
    let mut hub = json!({
        "id": "chatcmpl-bedrock", "object": "chat.completion", "created": now(), "model": "",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    });
    if let Some(usage) = answer.get("usage") {
        hub["usage"] = usage_json(&usage_of(usage));
    }
    hub
}

/// Decodes ConverseStream events.
#[derive(Debug, Default)]
pub struct Decoder {
    /// Content block index → tool call index.
    tools: HashMap<u64, usize>,
    done: bool,
}

impl Decode for Decoder {
    fn event(&mut self, event: &str, data: &str) -> Vec<Piece> {
        let Ok(value) = serde_json::from_str::<Value>(data) else {
            return Vec::new();
        };
        let block = value["contentBlockIndex"].as_u64().unwrap_or(0);
        let mut pieces = Vec::new();
        match event {
            "messageStart" => pieces.push(Piece::Start {
                id: "chatcmpl-bedrock".into(),
                model: String::new(),
            }),
            "contentBlockStart" => {
                if let Some(tool) = value["start"].get("toolUse") {
                    let index = self.tools.len();
                    self.tools.insert(block, index);
                    pieces.push(Piece::ToolStart {
                        index,
                        id: tool["toolUseId"].as_str().unwrap_or_default().to_owned(),
                        name: tool["name"].as_str().unwrap_or_default().to_owned(),
                    });
                }
            }
            "contentBlockDelta" => {
                let delta = &value["delta"];
                if let Some(t) = delta["text"].as_str() {
                    pieces.push(Piece::Text(t.to_owned()));
                } else if let Some(json) = delta["toolUse"]["input"].as_str() {
                    if let Some(index) = self.tools.get(&block) {
                        pieces.push(Piece::ToolArgs {
                            index: *index,
                            json: json.to_owned(),
                        });
                    }
                } else if let Some(r) = delta["reasoningContent"]["text"].as_str() {
                    pieces.push(Piece::Thinking(r.to_owned()));
                } else if let Some(s) = delta["reasoningContent"]["signature"].as_str() {
                    // ReasoningContentBlockDelta: text, signature or redactedContent.
                    pieces.push(Piece::ThinkingSignature(s.to_owned()));
                } else if let Some(data) = delta["reasoningContent"]["redactedContent"].as_str() {
                    pieces.push(Piece::RedactedThinking(data.to_owned()));
                }
            }
            "messageStop" => {
                let reason = value["stopReason"].as_str().unwrap_or("end_turn");
                pieces.push(Piece::Stop(finish_of(reason).to_owned()));
            }
            "metadata" => {
                if let Some(usage) = value.get("usage") {
                    pieces.push(Piece::Usage(usage_of(usage)));
                }
                // The metadata event is the stream's last.
                self.done = true;
            }
            "error" => pieces.push(Piece::Error(
                value["error"]["message"]
                    .as_str()
                    .unwrap_or("the upstream stream failed")
                    .to_owned(),
            )),
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
