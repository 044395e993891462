//! OpenAI Responses API (`POST /v1/responses`) ⇄ the hub (OpenAI chat completions), both ways:
//! Responses clients of channels that only chat (OpenAI-compatible types, Claude, Gemini,
//! Cohere), and chat clients of channels set to answer through the Responses API
//! (`setting.upstream_api: "responses"`). Requests, whole answers, usage, and the typed stream
//! events (`response.created`, `response.output_item.added` / `.done`,
//! `response.output_text.delta`, `response.function_call_arguments.delta`,
//! `response.reasoning_summary_text.delta`, `response.completed` with the usage, …).
//!
//! Fields and events follow OpenAI's API reference
//! (<https://platform.openai.com/docs/api-reference/responses>, the `openai-openapi` document
//! behind it). What a chat upstream cannot honour is refused with a 400 naming the field:
//! `previous_response_id` and `conversation` (state kept by OpenAI), stored `prompt`s, built-in
//! tools (web search, file search, computer use, …) and their call items, item references and
//! encrypted reasoning items. A reasoning item without encrypted content is only a summary for
//! display and is left out (chat upstreams never see earlier reasoning). The other way, a chat
//! request asking for `n` > 1 answers or `stop` sequences is refused for a Responses upstream,
//! which has neither.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::{ConvertError, Decode, Encode, EncodeCtx, Piece, content_text, now, sse};
use crate::relay::price::Usage;

fn refuse<T>(field: &str, why: &str) -> Result<T, ConvertError> {
    Err(ConvertError(format!("{field}: {why}")))
}

/// A Responses `usage` object for [`Usage`].
pub fn usage_json_of(usage: &Usage) -> Value {
    json!({
        "input_tokens": usage.prompt_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_tokens},
        "output_tokens": usage.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.prompt_tokens.saturating_add(usage.completion_tokens),
    })
}

/// Text of Responses message content: a string, or the text of its parts.
fn parts_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str().or_else(|| p["refusal"].as_str()))
            .collect(),
        _ => String::new(),
    }
}

/// One content part of a user (or system) input message as a hub part.
fn input_part(field: &str, part: &Value) -> Result<Value, ConvertError> {
    match part["type"].as_str().unwrap_or_default() {
        "input_text" | "output_text" | "text" => Ok(json!({"type": "text", "text": part["text"]})),
        "input_image" => {
            let Some(url) = part["image_url"].as_str() else {
                return refuse(
                    field,
                    "images by file_id are stored by OpenAI; send the image_url",
                );
            };
            let mut image = json!({"url": url});
            if let Some(detail) = part["detail"].as_str() {
                image["detail"] = json!(detail);
            }
            Ok(json!({"type": "image_url", "image_url": image}))
        }
        "input_file" if part["file_data"].is_string() => {
            let mut file = json!({"file_data": part["file_data"]});
            if let Some(name) = part["filename"].as_str() {
                file["filename"] = json!(name);
            }
            Ok(json!({"type": "file", "file": file}))
        }
        // A file by URL: the relay reads it (guarded) before converting, see relay::media.
        "input_file" if part["file_url"].is_string() => {
            let mut file = json!({"file_url": part["file_url"]});
            if let Some(name) = part["filename"].as_str() {
                file["filename"] = json!(name);
            }
            Ok(json!({"type": "file", "file": file}))
        }
        "input_file" => refuse(
            field,
            "files by file_id need a channel with the Responses API; send file_data or file_url",
        ),
        other => refuse(
            field,
            &format!("{other} content cannot be converted for this model's channel"),
        ),
    }
}

/// Appends a tool call to the assistant message the conversation ends with (or a new one).
fn push_call(messages: &mut Vec<Value>, call: Value) {
    if let Some(last) = messages.last_mut()
        && last["role"] == "assistant"
    {
        match last["tool_calls"].as_array_mut() {
            Some(calls) => calls.push(call),
            None => last["tool_calls"] = json!([call]),
        }
        return;
    }
    messages.push(json!({"role": "assistant", "content": null, "tool_calls": [call]}));
}

/// One input item as hub messages.
fn input_item(i: usize, item: &Value, messages: &mut Vec<Value>) -> Result<(), ConvertError> {
    let field = format!("input[{i}]");
    let kind = item["type"]
        .as_str()
        .unwrap_or(if item.get("role").is_some() {
            "message"
        } else {
            ""
        });
    match kind {
        "message" => {
            let role = match item["role"].as_str().unwrap_or("user") {
                "system" | "developer" => "system",
                "assistant" => "assistant",
                _ => "user",
            };
            let content = match &item["content"] {
                Value::String(s) => Value::String(s.clone()),
                Value::Array(parts) if role == "user" => {
                    let parts = parts
                        .iter()
                        .enumerate()
                        .map(|(j, p)| input_part(&format!("{field}.content[{j}]"), p))
                        .collect::<Result<Vec<_>, _>>()?;
                    if parts.iter().all(|p| p["type"] == "text") {
                        Value::String(content_text(&Value::Array(parts)))
                    } else {
                        Value::Array(parts)
                    }
                }
                other => Value::String(parts_text(other)),
            };
            messages.push(json!({"role": role, "content": content}));
        }
        "function_call" => push_call(
            messages,
            json!({"id": item["call_id"], "type": "function",
                "function": {"name": item["name"], "arguments": item["arguments"].as_str().unwrap_or("{}")}}),
        ),
        "function_call_output" => messages.push(json!({"role": "tool",
            "tool_call_id": item["call_id"], "content": parts_text(&item["output"])})),
        "reasoning" if item["encrypted_content"].is_string() => {
            return refuse(
                &field,
                "encrypted reasoning can only go back to OpenAI's Responses API; leave it out for this model",
            );
        }
        // A summary shown to the user; chat upstreams never take earlier reasoning back.
        "reasoning" => {}
        "item_reference" => {
            return refuse(
                &field,
                "item references point at items OpenAI stored; send the items themselves",
            );
        }
        other => {
            return refuse(
                &format!("{field}.type"),
                &format!(
                    "{other:?} items cannot be converted for this model's channel (built-in tools run only on OpenAI's Responses API)"
                ),
            );
        }
    }
    Ok(())
}

/// A Responses request as a hub request; `Err` names the field a chat upstream cannot honour.
pub fn request_to_hub(body: &Value) -> Result<Value, ConvertError> {
    for field in ["previous_response_id", "conversation"] {
        if body.get(field).is_some_and(|v| !v.is_null()) {
            return refuse(
                field,
                "this model's channel keeps no Responses state; send the whole conversation in input",
            );
        }
    }
    if body.get("prompt").is_some_and(|v| !v.is_null()) {
        return refuse(
            "prompt",
            "stored prompts live at OpenAI; send instructions and input instead",
        );
    }
    if body["background"] == true {
        return refuse(
            "background",
            "background responses need a channel with the Responses API",
        );
    }
    let mut messages = Vec::new();
    match &body["instructions"] {
        Value::String(s) if !s.is_empty() => {
            messages.push(json!({"role": "system", "content": s}));
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                input_item(i, item, &mut messages)?;
            }
        }
        _ => {}
    }
    match &body["input"] {
        Value::String(s) => messages.push(json!({"role": "user", "content": s})),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                input_item(i, item, &mut messages)?;
            }
        }
        Value::Null => {}
        _ => return refuse("input", "must be a string or an array of items"),
    }
    let mut hub = json!({"model": body["model"], "messages": messages});
    let copy = [
        ("max_output_tokens", "max_tokens"),
        ("temperature", "temperature"),
        ("top_p", "top_p"),
        ("parallel_tool_calls", "parallel_tool_calls"),
        ("user", "user"),
        ("stream", "stream"),
    ];
    for (from, to) in copy {
        if let Some(v) = body.get(from).filter(|v| !v.is_null()) {
            hub[to] = v.clone();
        }
    }
    if let Some(effort) = body["reasoning"]["effort"].as_str() {
        hub["reasoning_effort"] = json!(effort);
    }
    let mut tools = Vec::new();
    for (i, tool) in body["tools"].as_array().into_iter().flatten().enumerate() {
        match tool["type"].as_str().unwrap_or_default() {
            "function" => {
                let mut function = json!({"name": tool["name"]});
                for key in ["description", "parameters", "strict"] {
                    if let Some(v) = tool.get(key).filter(|v| !v.is_null()) {
                        function[key] = v.clone();
                    }
                }
                tools.push(json!({"type": "function", "function": function}));
            }
            other => {
                return refuse(
                    &format!("tools[{i}].type"),
                    &format!(
                        "{other:?} is a built-in tool only OpenAI's Responses API runs; this model's channel takes function tools"
                    ),
                );
            }
        }
    }
    if !tools.is_empty() {
        hub["tools"] = Value::Array(tools);
    }
    match &body["tool_choice"] {
        Value::Null => {}
        Value::String(s) => hub["tool_choice"] = json!(s),
        Value::Object(choice) if choice.get("type") == Some(&json!("function")) => {
            hub["tool_choice"] =
                json!({"type": "function", "function": {"name": choice.get("name")}});
        }
        _ => {
            return refuse(
                "tool_choice",
                "only auto, none, required or one function can be converted for this model's channel",
            );
        }
    }
    let format = &body["text"]["format"];
    match format["type"].as_str() {
        Some("json_schema") => {
            let mut schema = Map::new();
            for key in ["name", "description", "schema", "strict"] {
                if let Some(v) = format.get(key).filter(|v| !v.is_null()) {
                    schema.insert(key.into(), v.clone());
                }
            }
            hub["response_format"] = json!({"type": "json_schema", "json_schema": schema});
        }
        Some("json_object") => hub["response_format"] = json!({"type": "json_object"}),
        _ => {}
    }
    Ok(hub)
}

/// What a chat request asks for that the Responses API has no field for (checked before it is
/// sent to a Responses upstream).
pub fn check_hub(hub: &Value) -> Result<(), ConvertError> {
    if hub["n"].as_i64().is_some_and(|n| n > 1) {
        return refuse(
            "n",
            "this model's channel answers through the Responses API, which gives one answer per request",
        );
    }
    let stop = match &hub["stop"] {
        Value::String(s) => !s.is_empty(),
        Value::Array(list) => !list.is_empty(),
        _ => false,
    };
    if stop {
        return refuse(
            "stop",
            "this model's channel answers through the Responses API, which has no stop sequences",
        );
    }
    Ok(())
}

/// A hub content part as a Responses input part (`None`: nothing the Responses API takes).
fn output_part(part: &Value) -> Option<Value> {
    match part["type"].as_str()? {
        "text" => Some(json!({"type": "input_text", "text": part["text"]})),
        "image_url" => {
            let image = &part["image_url"];
            let url = image["url"].as_str().or_else(|| image.as_str())?;
            let mut out = json!({"type": "input_image", "image_url": url});
            if let Some(detail) = image["detail"].as_str() {
                out["detail"] = json!(detail);
            }
            Some(out)
        }
        "file" => {
            let mut out = json!({"type": "input_file"});
            for key in ["file_data", "file_id", "file_url", "filename"] {
                if let Some(v) = part["file"].get(key).filter(|v| !v.is_null()) {
                    out[key] = v.clone();
                }
            }
            Some(out)
        }
        _ => None,
    }
}

/// A hub request as a Responses request for `model` (not stored at OpenAI: chat completions
/// are not either).
pub fn request_from_hub(hub: &Value, model: &str, stream: bool) -> Value {
    let mut input = Vec::new();
    for message in hub["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or("user");
        match role {
            "tool" | "function" => input.push(json!({"type": "function_call_output",
                "call_id": message["tool_call_id"], "output": content_text(&message["content"])})),
            "assistant" => {
                let text = content_text(&message["content"]);
                if !text.is_empty() {
                    input.push(json!({"role": "assistant", "content": text}));
                }
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    let args = &call["function"]["arguments"];
                    input.push(json!({"type": "function_call", "call_id": call["id"],
                        "name": call["function"]["name"],
                        "arguments": args.as_str().map_or_else(|| args.to_string(), str::to_owned)}));
                }
            }
            _ => {
                let role = if matches!(role, "system" | "developer") {
                    role
                } else {
                    "user"
                };
                let content = match &message["content"] {
                    Value::Array(parts) => {
                        Value::Array(parts.iter().filter_map(output_part).collect())
                    }
                    other => Value::String(content_text(other)),
                };
                input.push(json!({"role": role, "content": content}));
            }
        }
    }
    let mut body = json!({"model": model, "input": input, "store": false});
    if stream {
        body["stream"] = Value::Bool(true);
    }
    let max = hub["max_completion_tokens"]
        .as_i64()
        .or_else(|| hub["max_tokens"].as_i64());
    if let Some(max) = max {
        body["max_output_tokens"] = json!(max);
    }
    for key in ["temperature", "top_p", "parallel_tool_calls", "user"] {
        if let Some(v) = hub.get(key).filter(|v| !v.is_null()) {
            body[key] = v.clone();
        }
    }
    if let Some(effort) = hub["reasoning_effort"].as_str() {
        body["reasoning"] = json!({"effort": effort});
    }
    let tools: Vec<Value> = hub["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let f = &t["function"];
            let mut tool = json!({"type": "function", "name": f["name"]});
            for key in ["description", "parameters", "strict"] {
                if let Some(v) = f.get(key).filter(|v| !v.is_null()) {
                    tool[key] = v.clone();
                }
            }
            tool
        })
        .collect();
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
    }
    match &hub["tool_choice"] {
        Value::String(s) => body["tool_choice"] = json!(s),
        Value::Object(choice) => {
            let name = choice.get("function").map_or(&Value::Null, |f| &f["name"]);
            body["tool_choice"] = json!({"type": "function", "name": name});
        }
        _ => {}
    }
    let format = &hub["response_format"];
    match format["type"].as_str() {
        Some("json_schema") => {
            let mut out = json!({"type": "json_schema"});
            for key in ["name", "description", "schema", "strict"] {
                if let Some(v) = format["json_schema"].get(key).filter(|v| !v.is_null()) {
                    out[key] = v.clone();
                }
            }
            body["text"] = json!({"format": out});
        }
        Some("json_object") => body["text"] = json!({"format": {"type": "json_object"}}),
        _ => {}
    }
    body
}

/// The hub finish reason of a Responses object (its status, why it is incomplete, its calls).
fn finish_of(response: &Value, called: bool) -> &'static str {
    match response["incomplete_details"]["reason"].as_str() {
        Some("max_output_tokens") => "length",
        Some("content_filter") => "content_filter",
        _ if called => "tool_calls",
        _ => "stop",
    }
}

/// A whole Responses answer as a hub `chat.completion`.
pub fn answer_to_hub(answer: &Value) -> Value {
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut refusal = String::new();
    let mut tool_calls = Vec::new();
    for item in answer["output"].as_array().into_iter().flatten() {
        match item["type"].as_str().unwrap_or_default() {
            "message" => {
                for part in item["content"].as_array().into_iter().flatten() {
                    match part["type"].as_str().unwrap_or_default() {
                        "refusal" => refusal.push_str(part["refusal"].as_str().unwrap_or_default()),
                        _ => text.push_str(part["text"].as_str().unwrap_or_default()),
                    }
                }
            }
            "reasoning" => {
                for list in ["summary", "content"] {
                    for part in item[list].as_array().into_iter().flatten() {
                        reasoning.push_str(part["text"].as_str().unwrap_or_default());
                    }
                }
            }
            "function_call" => tool_calls.push(json!({"id": item["call_id"], "type": "function",
                "function": {"name": item["name"], "arguments": item["arguments"].as_str().unwrap_or("{}")}})),
            _ => {}
        }
    }
    let finish = finish_of(answer, !tool_calls.is_empty());
    let mut message = json!({"role": "assistant",
        "content": if text.is_empty() && !tool_calls.is_empty() { Value::Null } else { Value::String(text) }});
    if !tool_calls.is_empty() {
        message["tool_calls"] = Value::Array(tool_calls);
    }
    if !reasoning.is_empty() {
        message["reasoning_content"] = Value::String(reasoning);
    }
    if !refusal.is_empty() {
        message["refusal"] = Value::String(refusal);
    }
    let mut hub = json!({
        "id": format!("chatcmpl-{}", answer["id"].as_str().unwrap_or("tollgate")),
        "object": "chat.completion", "created": now(), "model": answer["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    });
    if let Some(usage) = answer.get("usage").filter(|u| u.is_object()) {
        hub["usage"] = super::openai::usage_json(&super::openai::usage_of(usage));
    }
    hub
}

/// An id for a Responses object or item: `prefix` and the upstream's id without its own prefix.
fn item_id(prefix: &str, upstream: &str) -> String {
    let bare = upstream
        .trim_start_matches("chatcmpl-")
        .trim_start_matches("resp_")
        .trim_start_matches("msg_");
    if bare.is_empty() {
        format!("{prefix}_tollgate")
    } else {
        format!("{prefix}_{bare}")
    }
}

/// The status and incomplete details of a response that stopped for `finish`.
fn status_of(finish: &str) -> (&'static str, Value) {
    match finish {
        "length" => ("incomplete", json!({"reason": "max_output_tokens"})),
        "content_filter" => ("incomplete", json!({"reason": "content_filter"})),
        _ => ("completed", Value::Null),
    }
}

/// A Responses object around `output`.
fn response_object(
    id: &str,
    created: i64,
    model: &str,
    status: &str,
    incomplete: Value,
    output: Vec<Value>,
    usage: Value,
) -> Value {
    json!({"id": id, "object": "response", "created_at": created, "status": status,
        "error": null, "incomplete_details": incomplete, "instructions": null,
        "max_output_tokens": null, "model": model, "output": output,
        "parallel_tool_calls": true, "previous_response_id": null, "store": false,
        "temperature": null, "top_p": null, "tool_choice": "auto", "tools": [],
        "text": {"format": {"type": "text"}}, "truncation": "disabled",
        "metadata": {}, "usage": usage})
}

/// A hub `chat.completion` as a whole Responses answer naming `model`.
pub fn answer_from_hub(hub: &Value, model: &str) -> Value {
    let choice = &hub["choices"][0];
    let message = &choice["message"];
    let id = hub["id"].as_str().unwrap_or_default();
    let mut output = Vec::new();
    if let Some(r) = message["reasoning_content"]
        .as_str()
        .filter(|r| !r.is_empty())
    {
        output.push(json!({"type": "reasoning", "id": item_id("rs", id),
            "summary": [{"type": "summary_text", "text": r}]}));
    }
    let text = content_text(&message["content"]);
    let calls = message["tool_calls"].as_array();
    let mut content = Vec::new();
    if !text.is_empty() || calls.is_none_or(Vec::is_empty) {
        content.push(json!({"type": "output_text", "text": text, "annotations": []}));
    }
    if let Some(refusal) = message["refusal"].as_str().filter(|r| !r.is_empty()) {
        content.push(json!({"type": "refusal", "refusal": refusal}));
    }
    if !content.is_empty() {
        output.push(
            json!({"type": "message", "id": item_id("msg", id), "status": "completed",
            "role": "assistant", "content": content}),
        );
    }
    for call in calls.into_iter().flatten() {
        let call_id = call["id"].as_str().unwrap_or_default();
        output.push(
            json!({"type": "function_call", "id": item_id("fc", call_id),
            "call_id": call_id, "name": call["function"]["name"],
            "arguments": call["function"]["arguments"].as_str().unwrap_or("{}"),
            "status": "completed"}),
        );
    }
    let usage = hub
        .get("usage")
        .map(super::openai::usage_of)
        .unwrap_or_default();
    let (status, incomplete) = status_of(choice["finish_reason"].as_str().unwrap_or("stop"));
    response_object(
        &item_id("resp", id),
        now(),
        model,
        status,
        incomplete,
        output,
        usage_json_of(&usage),
    )
}

/// Decodes Responses stream events (the type is the data's `type`, else the `event:` line).
/// `response.completed`, `response.incomplete` and `response.failed` end the stream.
#[derive(Debug, Default)]
pub struct Decoder {
    /// Function call item id → tool call index.
    by_item: HashMap<String, usize>,
    /// Output index of a function call item → tool call index.
    by_output: HashMap<u64, usize>,
    done: bool,
}

impl Decoder {
    fn tool_index(&self, value: &Value) -> Option<usize> {
        value["item_id"]
            .as_str()
            .and_then(|id| self.by_item.get(id))
            .or_else(|| {
                value["output_index"]
                    .as_u64()
                    .and_then(|i| self.by_output.get(&i))
            })
            .copied()
    }
}

impl Decode for Decoder {
    fn event(&mut self, event: &str, data: &str) -> Vec<Piece> {
        let Ok(value) = serde_json::from_str::<Value>(data) else {
            return Vec::new();
        };
        let kind = value["type"].as_str().unwrap_or(event);
        let text = |field: &str| {
            value[field]
                .as_str()
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
        };
        let mut pieces = Vec::new();
        match kind {
            "response.created" => pieces.push(Piece::Start {
                id: value["response"]["id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                model: value["response"]["model"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            }),
            "response.output_text.delta" | "response.refusal.delta" => {
                pieces.extend(text("delta").map(Piece::Text));
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                pieces.extend(text("delta").map(Piece::Thinking));
            }
            "response.output_item.added" if value["item"]["type"] == "function_call" => {
                let item = &value["item"];
                let index = self.by_item.len().max(self.by_output.len());
                if let Some(id) = item["id"].as_str() {
                    self.by_item.insert(id.to_owned(), index);
                }
                if let Some(at) = value["output_index"].as_u64() {
                    self.by_output.insert(at, index);
                }
                pieces.push(Piece::ToolStart {
                    index,
                    id: item["call_id"].as_str().unwrap_or_default().to_owned(),
                    name: item["name"].as_str().unwrap_or_default().to_owned(),
                });
                if let Some(args) = item["arguments"].as_str().filter(|a| !a.is_empty()) {
                    pieces.push(Piece::ToolArgs {
                        index,
                        json: args.to_owned(),
                    });
                }
            }
            "response.function_call_arguments.delta" => {
                if let (Some(index), Some(json)) = (self.tool_index(&value), text("delta")) {
                    pieces.push(Piece::ToolArgs { index, json });
                }
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                let response = &value["response"];
                if let Some(usage) = crate::relay::components::responses_usage(response) {
                    pieces.push(Piece::Usage(usage));
                }
                if kind == "response.failed" {
                    let message = response["error"]["message"]
                        .as_str()
                        .unwrap_or("the response failed");
                    pieces.push(Piece::Error(message.to_owned()));
                }
                let called = !self.by_item.is_empty() || !self.by_output.is_empty();
                pieces.push(Piece::Stop(finish_of(response, called).to_owned()));
                self.done = true;
            }
            "error" => {
                let message = value["message"].as_str().unwrap_or("upstream error");
                pieces.push(Piece::Error(message.to_owned()));
            }
            _ => {}
        }
        pieces
    }

    fn done(&self) -> bool {
        self.done
    }
}

/// One output item being streamed.
#[derive(Debug)]
enum Item {
    Message {
        id: String,
        text: String,
    },
    Reasoning {
        id: String,
        text: String,
    },
    Call {
        id: String,
        call_id: String,
        name: String,
        args: String,
    },
}

impl Item {
    /// The item as it stands (`done`: its final form).
    fn json(&self, done: bool) -> Value {
        let status = if done { "completed" } else { "in_progress" };
        match self {
            Item::Message { id, text } => {
                let content = if done {
                    json!([{"type": "output_text", "text": text, "annotations": []}])
                } else {
                    json!([])
                };
                json!({"id": id, "type": "message", "status": status, "role": "assistant", "content": content})
            }
            Item::Reasoning { id, text } => {
                let summary = if done {
                    json!([{"type": "summary_text", "text": text}])
                } else {
                    json!([])
                };
                json!({"id": id, "type": "reasoning", "summary": summary})
            }
            Item::Call {
                id,
                call_id,
                name,
                args,
            } => {
                let args = if done { args.as_str() } else { "" };
                json!({"id": id, "type": "function_call", "status": status, "call_id": call_id,
                    "name": name, "arguments": args})
            }
        }
    }
}

/// Encodes pieces as Responses stream events: `response.created` and `response.in_progress`,
/// an output item per run of text, reasoning or tool call (added, deltas, done), and
/// `response.completed` (`response.incomplete` when the output limit stopped it) carrying the
/// whole response and its usage.
pub struct Encoder {
    ctx: EncodeCtx,
    id: String,
    created: i64,
    sequence: u64,
    started: bool,
    items: Vec<Item>,
    /// The text or reasoning item still open (tool calls stay open to the end).
    open: Option<usize>,
    /// Tool call index → item index.
    calls: HashMap<usize, usize>,
    stop: Option<String>,
    usage: Option<Usage>,
}

impl Encoder {
    /// An encoder for one answer.
    pub fn new(ctx: EncodeCtx) -> Encoder {
        Encoder {
            ctx,
            id: "resp_tollgate".into(),
            created: now(),
            sequence: 0,
            started: false,
            items: Vec::new(),
            open: None,
            calls: HashMap::new(),
            stop: None,
            usage: None,
        }
    }

    fn emit(&mut self, out: &mut Vec<u8>, kind: &str, mut data: Value) {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        sse(out, kind, &data);
    }

    fn response(&self, status: &str, incomplete: Value, usage: Value) -> Value {
        let done = status != "in_progress";
        let output = if done {
            self.items.iter().map(|i| i.json(true)).collect()
        } else {
            Vec::new()
        };
        response_object(
            &self.id,
            self.created,
            &self.ctx.model,
            status,
            incomplete,
            output,
            usage,
        )
    }

    fn start(&mut self, out: &mut Vec<u8>) {
        if self.started {
            return;
        }
        self.started = true;
        let response = self.response("in_progress", Value::Null, Value::Null);
        self.emit(out, "response.created", json!({"response": response}));
        self.emit(out, "response.in_progress", json!({"response": response}));
    }

    /// Opens a new output item; returns its index.
    fn add(&mut self, out: &mut Vec<u8>, item: Item) -> usize {
        let at = self.items.len();
        let json = item.json(false);
        self.items.push(item);
        self.emit(
            out,
            "response.output_item.added",
            json!({"output_index": at, "item": json}),
        );
        at
    }

    /// Closes the open text or reasoning item.
    fn close_open(&mut self, out: &mut Vec<u8>) {
        if let Some(at) = self.open.take() {
            self.close(out, at);
        }
    }

    fn close(&mut self, out: &mut Vec<u8>, at: usize) {
        let (done, item) = match self.items.get(at) {
            Some(item) => (item.json(true), item),
            None => return,
        };
        let events: Vec<(&str, Value)> = match item {
            Item::Message { id, text } => vec![
                (
                    "response.output_text.done",
                    json!({"item_id": id, "output_index": at, "content_index": 0, "text": text, "logprobs": []}),
                ),
                (
                    "response.content_part.done",
                    json!({"item_id": id, "output_index": at, "content_index": 0,
                        "part": {"type": "output_text", "text": text, "annotations": []}}),
                ),
            ],
            Item::Reasoning { id, text } => vec![
                (
                    "response.reasoning_summary_text.done",
                    json!({"item_id": id, "output_index": at, "summary_index": 0, "text": text}),
                ),
                (
                    "response.reasoning_summary_part.done",
                    json!({"item_id": id, "output_index": at, "summary_index": 0,
                        "part": {"type": "summary_text", "text": text}}),
                ),
            ],
            Item::Call { id, name, args, .. } => vec![(
                "response.function_call_arguments.done",
                json!({"item_id": id, "output_index": at, "name": name, "arguments": args}),
            )],
        };
        for (kind, data) in events {
            self.emit(out, kind, data);
        }
        self.emit(
            out,
            "response.output_item.done",
            json!({"output_index": at, "item": done}),
        );
    }

    /// Appends `delta` to the open item of the kind `reasoning` says, opening one if needed.
    fn text(&mut self, out: &mut Vec<u8>, delta: &str, reasoning: bool) {
        let open_kind = self
            .open
            .and_then(|at| self.items.get(at))
            .map(|i| matches!(i, Item::Reasoning { .. }));
        if open_kind != Some(reasoning) {
            self.close_open(out);
            let n = self.items.len();
            let at = if reasoning {
                let id = format!("rs_{n}_{}", self.id.trim_start_matches("resp_"));
                let at = self.add(
                    out,
                    Item::Reasoning {
                        id: id.clone(),
                        text: String::new(),
                    },
                );
                self.emit(
                    out,
                    "response.reasoning_summary_part.added",
                    json!({"item_id": id, "output_index": at, "summary_index": 0,
                        "part": {"type": "summary_text", "text": ""}}),
                );
                at
            } else {
                let id = format!("msg_{n}_{}", self.id.trim_start_matches("resp_"));
                let at = self.add(
                    out,
                    Item::Message {
                        id: id.clone(),
                        text: String::new(),
                    },
                );
                self.emit(
                    out,
                    "response.content_part.added",
                    json!({"item_id": id, "output_index": at, "content_index": 0,
                        "part": {"type": "output_text", "text": "", "annotations": []}}),
                );
                at
            };
            self.open = Some(at);
        }
        let Some(at) = self.open else { return };
        let id = match self.items.get_mut(at) {
            Some(Item::Message { id, text } | Item::Reasoning { id, text }) => {
                text.push_str(delta);
                id.clone()
            }
            _ => return,
        };
        if reasoning {
            self.emit(
                out,
                "response.reasoning_summary_text.delta",
                json!({"item_id": id, "output_index": at, "summary_index": 0, "delta": delta}),
            );
        } else {
            self.emit(
                out,
                "response.output_text.delta",
                json!({"item_id": id, "output_index": at, "content_index": 0, "delta": delta, "logprobs": []}),
            );
        }
    }
}

impl Encode for Encoder {
    fn piece(&mut self, piece: &Piece, out: &mut Vec<u8>) {
        if let Piece::Start { id, .. } = piece {
            if !id.is_empty() {
                self.id = item_id("resp", id);
            }
            self.start(out);
            return;
        }
        self.start(out);
        match piece {
            Piece::Start { .. } => {}
            Piece::Text(t) => self.text(out, t, false),
            Piece::Thinking(t) => self.text(out, t, true),
            Piece::ToolStart { index, id, name } => {
                self.close_open(out);
                let at = self.add(
                    out,
                    Item::Call {
                        id: item_id("fc", id),
                        call_id: id.clone(),
                        name: name.clone(),
                        args: String::new(),
                    },
                );
                self.calls.insert(*index, at);
            }
            Piece::ToolArgs { index, json } => {
                let Some(&at) = self.calls.get(index) else {
                    return;
                };
                let id = match self.items.get_mut(at) {
                    Some(Item::Call { id, args, .. }) => {
                        args.push_str(json);
                        id.clone()
                    }
                    _ => return,
                };
                self.emit(
                    out,
                    "response.function_call_arguments.delta",
                    json!({"item_id": id, "output_index": at, "delta": json}),
                );
            }
            // A Responses reasoning item carries OpenAI's own encrypted content, not another
            // provider's signature; a function_call item has no field for Gemini's. The
            // client's next turn comes back without them, and the converters for those
            // upstreams leave unsigned thinking out (see `wire`'s module comment).
            Piece::ThinkingSignature(_)
            | Piece::RedactedThinking(_)
            | Piece::ToolSignature { .. } => {}
            Piece::Stop(reason) => self.stop = Some(reason.clone()),
            Piece::Usage(usage) => self.usage = Some(*usage),
            Piece::Error(message) => self.emit(
                out,
                "error",
                json!({"code": "upstream_error", "message": message, "param": null}),
            ),
        }
    }

    fn end(&mut self, out: &mut Vec<u8>) {
        self.start(out);
        self.close_open(out);
        let mut calls: Vec<usize> = self.calls.values().copied().collect();
        calls.sort_unstable();
        for at in calls {
            self.close(out, at);
        }
        let (status, incomplete) = status_of(self.stop.as_deref().unwrap_or("stop"));
        let usage = self.usage.as_ref().map_or(Value::Null, usage_json_of);
        let response = self.response(status, incomplete, usage);
        let kind = if status == "incomplete" {
            "response.incomplete"
        } else {
            "response.completed"
        };
        self.emit(out, kind, json!({"response": response}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> EncodeCtx {
        EncodeCtx {
            model: "m".into(),
            prompt_estimate: 3,
            include_usage: true,
        }
    }

    fn events(bytes: &[u8]) -> Vec<(String, Value)> {
        let text = String::from_utf8_lossy(bytes);
        let mut events = Vec::new();
        let mut name = String::new();
        for line in text.lines() {
            if let Some(n) = line.strip_prefix("event: ") {
                name = n.to_owned();
            } else if let Some(d) = line.strip_prefix("data: ") {
                events.push((
                    std::mem::take(&mut name),
                    serde_json::from_str(d).unwrap_or_default(),
                ));
            }
        }
        events
    }

    #[test]
    fn a_request_with_history_and_tools_becomes_a_hub_request() {
        let body = json!({"model": "m", "instructions": "be brief", "max_output_tokens": 64,
            "reasoning": {"effort": "low"},
            "input": [
                {"role": "user", "content": [{"type": "input_text", "text": "weather?"},
                    {"type": "input_image", "image_url": "https://x/y.png", "detail": "low"}]},
                {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "think"}]},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Let me look."}]},
                {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{\"city\":\"Oslo\"}"},
                {"type": "function_call_output", "call_id": "c1", "output": "sunny"}],
            "tools": [{"type": "function", "name": "weather", "parameters": {"type": "object"}, "strict": true}],
            "tool_choice": {"type": "function", "name": "weather"},
            "text": {"format": {"type": "json_schema", "name": "w", "schema": {"type": "object"}}}});
        let hub = request_to_hub(&body).unwrap_or_default();
        assert_eq!(
            hub["messages"],
            json!([
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "weather?"},
                    {"type": "image_url", "image_url": {"url": "https://x/y.png", "detail": "low"}}]},
                {"role": "assistant", "content": "Let me look.", "tool_calls": [{"id": "c1", "type": "function",
                    "function": {"name": "weather", "arguments": "{\"city\":\"Oslo\"}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "sunny"}])
        );
        assert_eq!(hub["max_tokens"], 64);
        assert_eq!(hub["reasoning_effort"], "low");
        assert_eq!(
            hub["tools"],
            json!([{"type": "function", "function": {"name": "weather",
                "parameters": {"type": "object"}, "strict": true}}])
        );
        assert_eq!(
            hub["tool_choice"],
            json!({"type": "function", "function": {"name": "weather"}})
        );
        assert_eq!(
            hub["response_format"],
            json!({"type": "json_schema", "json_schema": {"name": "w", "schema": {"type": "object"}}})
        );
    }

    #[test]
    fn what_a_chat_upstream_cannot_honour_is_refused_by_name() {
        let refused = |body: Value| request_to_hub(&body).err().map(|e| e.0);
        let msg = refused(json!({"model": "m", "input": "hi", "previous_response_id": "resp_1"}));
        assert!(msg.is_some_and(|m| m.starts_with("previous_response_id:")));
        let msg = refused(json!({"model": "m", "input": "hi",
            "tools": [{"type": "function", "name": "f"}, {"type": "web_search_preview"}]}));
        assert!(
            msg.as_deref().is_some_and(
                |m| m.starts_with("tools[1].type:") && m.contains("web_search_preview")
            ),
            "{msg:?}"
        );
        let msg = refused(json!({"model": "m", "input": [
            {"role": "user", "content": "hi"},
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"}]}));
        assert!(msg.is_some_and(|m| m.starts_with("input[1]:")));
        let msg =
            refused(json!({"model": "m", "input": [{"type": "web_search_call", "id": "ws_1"}]}));
        assert!(msg.is_some_and(|m| m.starts_with("input[0].type:")));
        let msg =
            refused(json!({"model": "m", "input": [{"type": "item_reference", "id": "msg_1"}]}));
        assert!(msg.is_some_and(|m| m.starts_with("input[0]:")));
        assert!(check_hub(&json!({"n": 2})).is_err_and(|e| e.0.starts_with("n:")));
        assert!(check_hub(&json!({"stop": ["x"]})).is_err_and(|e| e.0.starts_with("stop:")));
        assert!(check_hub(&json!({"n": 1, "stop": []})).is_ok());
    }

    #[test]
    fn a_hub_request_becomes_a_responses_request() {
        let hub = json!({"model": "m", "max_tokens": 20, "temperature": 0.2,
            "messages": [{"role": "system", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "hi"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}]},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                    "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "42"}],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
            "tool_choice": "auto",
            "response_format": {"type": "json_object"}});
        assert_eq!(
            request_from_hub(&hub, "up", true),
            json!({"model": "up", "store": false, "stream": true, "max_output_tokens": 20,
                "temperature": 0.2, "tool_choice": "auto",
                "input": [{"role": "system", "content": "be brief"},
                    {"role": "user", "content": [{"type": "input_text", "text": "hi"},
                        {"type": "input_image", "image_url": "data:image/png;base64,AA"}]},
                    {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
                    {"type": "function_call_output", "call_id": "c1", "output": "42"}],
                "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}],
                "text": {"format": {"type": "json_object"}}})
        );
    }

    #[test]
    fn whole_answers_convert_both_ways() {
        let answer = json!({"id": "resp_1", "object": "response", "model": "gpt", "status": "completed",
            "output": [{"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "hmm"}]},
                {"type": "message", "id": "msg_1", "role": "assistant",
                    "content": [{"type": "output_text", "text": "Hi", "annotations": []}]},
                {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f", "arguments": "{}"}],
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 4},
                "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 2}, "total_tokens": 15}});
        let hub = answer_to_hub(&answer);
        let message = &hub["choices"][0]["message"];
        assert_eq!(
            (&message["content"], &message["reasoning_content"]),
            (&json!("Hi"), &json!("hmm"))
        );
        assert_eq!(message["tool_calls"][0]["id"], "c1");
        assert_eq!(hub["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(
            (
                &hub["usage"]["prompt_tokens"],
                &hub["usage"]["prompt_tokens_details"]["cached_tokens"]
            ),
            (&json!(10), &json!(4))
        );
        let back = answer_from_hub(&hub, "client-model");
        assert_eq!(back["object"], "response");
        assert_eq!(back["model"], "client-model");
        assert_eq!(back["status"], "completed");
        let kinds: Vec<&str> = back["output"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|i| i["type"].as_str())
            .collect();
        assert_eq!(kinds, ["reasoning", "message", "function_call"]);
        assert_eq!(back["output"][2]["call_id"], "c1");
        assert_eq!(
            back["usage"],
            json!({"input_tokens": 10, "input_tokens_details": {"cached_tokens": 4},
                "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 2}, "total_tokens": 15})
        );
        let cut = json!({"choices": [{"message": {"content": "abc"}, "finish_reason": "length"}]});
        let back = answer_from_hub(&cut, "m");
        assert_eq!(
            (&back["status"], &back["incomplete_details"]),
            (
                &json!("incomplete"),
                &json!({"reason": "max_output_tokens"})
            )
        );
    }

    #[test]
    fn stream_events_decode_into_pieces() {
        let mut d = Decoder::default();
        let p = d.event(
            "response.created",
            r#"{"type":"response.created","response":{"id":"resp_1","model":"gpt"},"sequence_number":0}"#,
        );
        assert_eq!(
            p,
            vec![Piece::Start {
                id: "resp_1".into(),
                model: "gpt".into()
            }]
        );
        let p = d.event(
            "",
            r#"{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi"}"#,
        );
        assert_eq!(p, vec![Piece::Text("Hi".into())]);
        let p = d.event(
            "",
            r#"{"type":"response.output_item.added","output_index":1,"item":{"id":"fc_1","type":"function_call","call_id":"c1","name":"f","arguments":""}}"#,
        );
        assert_eq!(
            p,
            vec![Piece::ToolStart {
                index: 0,
                id: "c1".into(),
                name: "f".into()
            }]
        );
        let p = d.event(
            "",
            r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":"{}"}"#,
        );
        assert_eq!(
            p,
            vec![Piece::ToolArgs {
                index: 0,
                json: "{}".into()
            }]
        );
        assert!(!d.done());
        let p = d.event(
            "",
            r#"{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":7,"output_tokens":3,"total_tokens":10}}}"#,
        );
        assert_eq!(p.len(), 2);
        assert_eq!(p[1], Piece::Stop("tool_calls".into()));
        assert!(d.done());
    }

    #[test]
    fn pieces_encode_into_typed_events() {
        let mut e = Encoder::new(ctx());
        let mut out = Vec::new();
        for piece in [
            Piece::Start {
                id: "chatcmpl-abc".into(),
                model: "up".into(),
            },
            Piece::Thinking("hmm".into()),
            Piece::Text("Hel".into()),
            Piece::Text("lo".into()),
            Piece::ToolStart {
                index: 0,
                id: "c1".into(),
                name: "f".into(),
            },
            Piece::ToolArgs {
                index: 0,
                json: "{}".into(),
            },
            Piece::Stop("tool_calls".into()),
            Piece::Usage(Usage {
                prompt_tokens: 7,
                completion_tokens: 3,
                ..Usage::default()
            }),
        ] {
            e.piece(&piece, &mut out);
        }
        e.end(&mut out);
        let events = events(&out);
        let kinds: Vec<&str> = events.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.reasoning_summary_part.added",
                "response.reasoning_summary_text.delta",
                "response.reasoning_summary_text.done",
                "response.reasoning_summary_part.done",
                "response.output_item.done",
                "response.output_item.added",
                "response.content_part.added",
                "response.output_text.delta",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.output_item.added",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "response.output_item.done",
                "response.completed",
            ]
        );
        let sequence: Vec<u64> = events
            .iter()
            .filter_map(|(_, d)| d["sequence_number"].as_u64())
            .collect();
        assert_eq!(sequence, (0..20).collect::<Vec<_>>());
        let done = &events[19].1["response"];
        assert_eq!(done["id"], "resp_abc");
        assert_eq!(done["model"], "m");
        assert_eq!(done["output"][1]["content"][0]["text"], "Hello");
        assert_eq!(done["output"][2]["arguments"], "{}");
        assert_eq!(done["usage"]["input_tokens"], 7);
        assert_eq!(done["usage"]["total_tokens"], 10);
    }
}
