//! Unit tests of the Responses conversions.

use serde_json::{Value, json};

use super::*;
use crate::relay::wire::{Decode, Encode, EncodeCtx, Piece};

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
        msg.as_deref()
            .is_some_and(|m| m.starts_with("tools[1].type:") && m.contains("web_search_preview")),
        "{msg:?}"
    );
    let msg = refused(json!({"model": "m", "input": [
        {"role": "user", "content": "hi"},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"}]}));
    assert!(msg.is_some_and(|m| m.starts_with("input[1]:")));
    let msg = refused(json!({"model": "m", "input": [{"type": "web_search_call", "id": "ws_1"}]}));
    assert!(msg.is_some_and(|m| m.starts_with("input[0].type:")));
    let msg = refused(json!({"model": "m", "input": [{"type": "item_reference", "id": "msg_1"}]}));
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
    // Read from its bytes (the relay's whole-answer path): the same hub and usage, its web
    // search calls counted.
    let mut searched = answer.clone();
    searched["output"]
        .as_array_mut()
        .expect("output")
        .push(json!({"type": "web_search_call", "id": "ws_1"}));
    let (read, usage) = answer_from_bytes(searched.to_string().as_bytes()).expect("read");
    let strip = |mut v: Value| {
        v.as_object_mut().map(|m| m.remove("created"));
        v
    };
    assert_eq!(strip(read), strip(answer_to_hub(&searched)));
    assert_eq!(usage, answer_usage(&searched));
    assert_eq!(
        usage.map(|u| u.tool_calls
            [tollgate_actors::options::component_prices::Tool::OpenAiWebSearch.index()]),
        Some(1)
    );
    // A usage repeating a key is read as a value reads it (the last).
    let (_, usage) =
        answer_from_bytes(br#"{"output":[],"usage":{"input_tokens":4,"input_tokens":7}}"#)
            .expect("read");
    assert_eq!(usage.map(|u| u.prompt_tokens), Some(7));
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
