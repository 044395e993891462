//! Unit tests of the Bedrock Converse conversions.

use serde_json::json;

use super::*;
use crate::relay::wire::{Decode, Piece};

#[test]
fn hub_requests_become_converse_requests() {
    let hub = json!({"model": "m", "max_tokens": 64, "temperature": 0.5, "stop": "END",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Weather?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "t1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": "t1", "content": "sunny"},
            {"role": "user", "content": "thanks"}],
        "tools": [{"type": "function", "function": {"name": "get_weather",
            "description": "Weather", "parameters": {"type": "object"}}}],
        "tool_choice": "required"});
    let body = request_from_hub(&hub).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        body,
        json!({
            "system": [{"text": "Be brief."}],
            "messages": [
                {"role": "user", "content": [{"text": "Weather?"},
                    {"image": {"format": "png", "source": {"bytes": "iVBORw0KGgo="}}}]},
                {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1",
                    "name": "get_weather", "input": {"city": "Paris"}}}]},
                {"role": "user", "content": [
                    {"toolResult": {"toolUseId": "t1", "content": [{"text": "sunny"}]}},
                    {"text": "thanks"}]}],
            "inferenceConfig": {"maxTokens": 64, "temperature": 0.5, "stopSequences": ["END"]},
            "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather",
                "description": "Weather", "inputSchema": {"json": {"type": "object"}}}}],
                "toolChoice": {"any": {}}}
        })
    );
    let remote = json!({"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}]});
    assert!(request_from_hub(&remote).is_err());
}

/// DocumentBlock (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_DocumentBlock.html):
/// format from the MIME type, a name of the allowed characters, the bytes as base64.
#[test]
fn file_parts_become_documents_with_valid_distinct_names() {
    let pdf = |name: &str| {
        json!({"type": "file", "file": {"filename": name,
            "file_data": "data:application/pdf;base64,JVBERi0xLjQK"}})
    };
    let hub = json!({"messages": [{"role": "user", "content": [
        {"type": "text", "text": "Compare"},
        pdf("Q3 report (final).v2.pdf"),
        pdf("Q3 report (final).v2.pdf"),
        {"type": "file", "file": {"file_data": "data:text/csv;base64,YSxiCg=="}},
        pdf("ветер__ü.pdf")]}]});
    let body = request_from_hub(&hub).unwrap_or_else(|e| panic!("{e}"));
    let content = &body["messages"][0]["content"];
    assert_eq!(
        content[1],
        json!({"document": {"format": "pdf", "name": "Q3 report (final) v2",
            "source": {"bytes": "JVBERi0xLjQK"}}})
    );
    assert_eq!(content[2]["document"]["name"], "Q3 report (final) v2 (2)");
    assert_eq!(
        (
            &content[3]["document"]["format"],
            &content[3]["document"]["name"]
        ),
        (&json!("csv"), &json!("document"))
    );
    assert_eq!(content[4]["document"]["name"], "document (2)");
    let mut names = Names::default();
    let long = names.give(Some(&format!("{}.pdf", "a".repeat(100))));
    assert_eq!(long.len(), 64);
    assert_eq!(
        names.give(Some(&format!("{}.pdf", "a".repeat(100)))).len(),
        64
    );
    let broken = json!({"messages": [{"role": "user", "content": [
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,@@@"}}]}]});
    assert!(request_from_hub(&broken).is_err());
}

#[test]
fn answers_and_usage_convert() {
    // The Converse response of the API reference's shape.
    let answer = json!({"output": {"message": {"role": "assistant", "content": [
            {"text": "Let me check."},
            {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Paris"}}}]}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": 30, "outputTokens": 12, "totalTokens": 42,
            "cacheReadInputTokens": 100, "cacheWriteInputTokens": 8},
        "metrics": {"latencyMs": 100}});
    let hub = answer_to_hub(&answer);
    assert_eq!(hub["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(hub["choices"][0]["message"]["content"], "Let me check.");
    assert_eq!(
        hub["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"],
        "{\"city\":\"Paris\"}"
    );
    let usage = usage_of(&answer["usage"]);
    assert_eq!(
        (
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.cached_tokens
        ),
        (138, 12, 100)
    );
    assert_eq!(usage.cache_write_5m_tokens, 8);
}

fn without_created(mut hub: serde_json::Value) -> serde_json::Value {
    if let Some(map) = hub.as_object_mut() {
        map.remove("created");
    }
    hub
}

#[test]
fn an_answer_read_from_its_bytes_converts_as_its_parsed_value() {
    // Keys out of name order and repeated inside the tool input, escapes in the text.
    let text = r#"{"usage":{"outputTokens":12,"inputTokens":30,"cacheReadInputTokens":100},
        "stopReason":"tool_use","output":{"message":{"content":[{"text":"a \u00e9\n"},
        {"toolUse":{"input":{"z":{"y":1,"b":2},"a":[{"q":1,"c":2}],"d":1,"d":2},"name":"w",
        "toolUseId":"t"}}]}}}"#;
    let value: serde_json::Value = serde_json::from_str(text).expect("JSON");
    let (hub, usage) = answer_from_bytes(text.as_bytes()).expect("read");
    assert_eq!(
        without_created(hub.clone()),
        without_created(answer_to_hub(&value))
    );
    assert_eq!(
        hub["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"],
        r#"{"a":[{"c":2,"q":1}],"d":2,"z":{"b":2,"y":1}}"#
    );
    assert_eq!(usage, value.get("usage").map(usage_of));
    assert_eq!(usage.map(|u| u.prompt_tokens), Some(130));
    // A usage that is not an object is a usage of nothing, as before; none is none.
    let (_, usage) = answer_from_bytes(br#"{"output":{},"usage":null}"#).expect("read");
    assert_eq!(usage, Some(Usage::default()));
    assert_eq!(
        answer_from_bytes(br#"{"output":{}}"#).expect("read").1,
        None
    );
    // A repeated field is left to the parsed value (which keeps the last), not JSON is none.
    let repeated = br#"{"stopReason":"tool_use","stopReason":"max_tokens"}"#;
    assert!(answer_from_bytes(repeated).is_none());
    let (hub, _) = crate::relay::wire::read_answer(crate::relay::wire::Wire::Converse, repeated)
        .expect("read");
    assert_eq!(hub["choices"][0]["finish_reason"], "length");
    assert!(crate::relay::wire::read_answer(crate::relay::wire::Wire::Converse, b"{").is_none());
}

#[test]
fn stream_events_become_pieces() {
    let mut d = Decoder::default();
    let mut all = Vec::new();
    for (event, data) in [
        ("messageStart", r#"{"role":"assistant"}"#),
        (
            "contentBlockDelta",
            r#"{"contentBlockIndex":0,"delta":{"text":"Hi"}}"#,
        ),
        (
            "contentBlockStart",
            r#"{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"t9","name":"f"}}}"#,
        ),
        (
            "contentBlockDelta",
            r#"{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"a\":1}"}}}"#,
        ),
        ("messageStop", r#"{"stopReason":"tool_use"}"#),
    ] {
        all.extend(d.event(event, data));
    }
    assert!(!d.done());
    all.extend(d.event(
        "metadata",
        r#"{"usage":{"inputTokens":5,"outputTokens":7,"totalTokens":12},"metrics":{"latencyMs":1}}"#,
    ));
    assert!(d.done());
    assert_eq!(all[1], Piece::Text("Hi".into()));
    assert_eq!(
        all[2],
        Piece::ToolStart {
            index: 0,
            id: "t9".into(),
            name: "f".into()
        }
    );
    assert_eq!(
        all[3],
        Piece::ToolArgs {
            index: 0,
            json: "{\"a\":1}".into()
        }
    );
    assert_eq!(all[4], Piece::Stop("tool_calls".into()));
    let Piece::Usage(u) = &all[5] else {
        panic!("usage last: {all:?}");
    };
    assert_eq!((u.prompt_tokens, u.completion_tokens), (5, 7));
}
