//! Unit tests of the Cohere conversions.

use serde_json::json;

use super::*;
use crate::relay::wire::{Decode, Piece};

/// Golden, from the non-streamed example of <https://docs.cohere.com/reference/chat>:
/// billed units (5 in, 418 out) are billed, not the model's tokens (71 in).
#[test]
fn usage_takes_billed_units_else_tokens() {
    let usage = json!({"billed_units": {"input_tokens": 5, "output_tokens": 418},
        "tokens": {"input_tokens": 71, "output_tokens": 418}});
    let u = usage_of(&usage);
    assert_eq!((u.prompt_tokens, u.completion_tokens), (5, 418));
    let u = usage_of(&json!({"tokens": {"input_tokens": 71, "output_tokens": 9}}));
    assert_eq!((u.prompt_tokens, u.completion_tokens), (71, 9));
    assert_eq!(usage_of(&json!({})).prompt_tokens, 0);
}

#[test]
fn request_maps_roles_tools_and_options() {
    let hub = json!({"model": "x", "max_tokens": 50, "top_p": 0.5, "stop": "END",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": [{"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA", "detail": "low"}}]},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "f", "arguments": "{\"a\":1}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "{\"ok\":true}"}],
        "tools": [{"type": "function", "function": {"name": "f", "description": "d",
            "parameters": {"type": "object"}}},
            {"type": "function", "function": {"name": "g"}}],
        "tool_choice": {"type": "function", "function": {"name": "f"}}});
    let body = request_from_hub(&hub, "command-a", true);
    assert_eq!(body["model"], "command-a");
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "be brief"})
    );
    assert_eq!(
        body["messages"][1]["content"][1],
        json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,AA", "detail": "low"}})
    );
    assert_eq!(
        body["messages"][2],
        json!({"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "f", "arguments": "{\"a\":1}"}}]})
    );
    assert_eq!(
        body["messages"][3],
        json!({"role": "tool", "tool_call_id": "c1", "content": "{\"ok\":true}"})
    );
    assert_eq!(
        (&body["max_tokens"], &body["p"], &body["stop_sequences"]),
        (&json!(50), &json!(0.5), &json!(["END"]))
    );
    assert_eq!(body["tool_choice"], "REQUIRED");
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "function": {"name": "f", "description": "d",
            "parameters": {"type": "object"}}}]),
        "a named tool choice offers only that tool"
    );
}

/// From the tool-use example of <https://docs.cohere.com/reference/chat>.
#[test]
fn a_tool_call_answer_becomes_a_hub_answer() {
    let answer = json!({"id": "9e5f00aa", "message": {"role": "assistant",
        "content": [{"type": "thinking", "thinking": "I will look it up."}],
        "tool_calls": [{"id": "query_daily_sales_report_hgxxmkby3wta", "type": "function",
            "function": {"name": "query_daily_sales_report", "arguments": "{\"day\": \"2023-09-29\"}"}}]},
        "finish_reason": "TOOL_CALL",
        "usage": {"billed_units": {"input_tokens": 127, "output_tokens": 69},
            "tokens": {"input_tokens": 1032, "output_tokens": 124}}});
    let hub = answer_to_hub(&answer);
    let choice = &hub["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(choice["message"]["content"], Value::Null);
    assert_eq!(choice["message"]["reasoning_content"], "I will look it up.");
    assert_eq!(
        choice["message"]["tool_calls"][0]["function"]["arguments"],
        "{\"day\": \"2023-09-29\"}"
    );
    assert_eq!(hub["usage"]["prompt_tokens"], 127);
    assert_eq!(hub["usage"]["completion_tokens"], 69);
}

/// The stream events of the reference's streaming and tool examples.
#[test]
fn an_answer_read_from_its_bytes_converts_as_its_parsed_value() {
    let text = r#"{"usage":{"tokens":{"output_tokens":418,"input_tokens":71},
        "billed_units":{"output_tokens":418,"input_tokens":5}},"finish_reason":"TOOL_CALL",
        "message":{"tool_calls":[{"id":"t1","function":{"name":"f","arguments":"{\"a\":1}"}}],
        "tool_plan":"plan \u00e9","content":[{"type":"text","text":"Hi"}]},"id":"c-1"}"#;
    let value: serde_json::Value = serde_json::from_str(text).expect("JSON");
    let (mut hub, usage) = answer_from_bytes(text.as_bytes()).expect("read");
    let mut parsed = answer_to_hub(&value);
    for answer in [&mut hub, &mut parsed] {
        answer.as_object_mut().map(|o| o.remove("created"));
    }
    assert_eq!(hub, parsed);
    assert_eq!(
        hub["choices"][0]["message"]["reasoning_content"],
        "plan \u{e9}"
    );
    assert_eq!(usage, value.get("usage").map(usage_of));
    assert_eq!(usage.map(|u| u.prompt_tokens), Some(5));
    // A usage that is not an object is none, as before.
    assert_eq!(
        answer_from_bytes(br#"{"usage":null}"#).expect("read").1,
        None
    );
    // A repeated field is left to the parsed value (which keeps the last), not JSON is none.
    let repeated = br#"{"id":"a","id":"b"}"#;
    assert!(answer_from_bytes(repeated).is_none());
    let (hub, _) =
        crate::relay::wire::read_answer(crate::relay::wire::Wire::Cohere, repeated).expect("read");
    assert_eq!(hub["id"], "chatcmpl-b");
    assert!(crate::relay::wire::read_answer(crate::relay::wire::Wire::Cohere, b"{").is_none());
}

#[test]
fn stream_events_become_pieces() {
    let mut d = Decoder::default();
    let p = d.event(
        "message-start",
        r#"{"type":"message-start","id":"29f14a5a","delta":{"message":{"role":"assistant"}}}"#,
    );
    assert_eq!(
        p,
        vec![Piece::Start {
            id: "29f14a5a".into(),
            model: String::new()
        }]
    );
    let p = d.event(
        "content-start",
        r#"{"type":"content-start","index":0,"delta":{"message":{"content":{"type":"text","text":""}}}}"#,
    );
    assert!(p.is_empty());
    let p = d.event(
        "content-delta",
        r#"{"type":"content-delta","index":0,"delta":{"message":{"content":{"text":"LL"}}}}"#,
    );
    assert_eq!(p, vec![Piece::Text("LL".into())]);
    let p = d.event(
        "tool-plan-delta",
        r#"{"type":"tool-plan-delta","delta":{"message":{"tool_plan":"I will"}}}"#,
    );
    assert_eq!(p, vec![Piece::Thinking("I will".into())]);
    let p = d.event(
        "tool-call-start",
        r#"{"type":"tool-call-start","index":1,"delta":{"message":{"tool_calls":{"id":"q_1","type":"function","function":{"name":"query","arguments":""}}}}}"#,
    );
    assert_eq!(
        p,
        vec![Piece::ToolStart {
            index: 0,
            id: "q_1".into(),
            name: "query".into()
        }]
    );
    let p = d.event(
        "tool-call-delta",
        r#"{"type":"tool-call-delta","index":1,"delta":{"message":{"tool_calls":{"function":{"arguments":"{\""}}}}}"#,
    );
    assert_eq!(
        p,
        vec![Piece::ToolArgs {
            index: 0,
            json: "{\"".into()
        }]
    );
    assert!(!d.done());
    let p = d.event(
        "message-end",
        r#"{"type":"message-end","delta":{"finish_reason":"TOOL_CALL","usage":{"billed_units":{"input_tokens":126,"output_tokens":84},"tokens":{"input_tokens":1589,"output_tokens":135}}}}"#,
    );
    assert_eq!(p.len(), 2);
    assert_eq!(p[1], Piece::Stop("tool_calls".into()));
    let Piece::Usage(u) = &p[0] else {
        panic!("usage first: {p:?}")
    };
    assert_eq!((u.prompt_tokens, u.completion_tokens), (126, 84));
    assert!(d.done());
}
