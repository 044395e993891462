//! Unit tests of the Anthropic conversions.

use super::*;
use crate::relay::wire::{Encode, EncodeCtx, Piece};
use serde_json::json;

/// Golden: Anthropic usage, cache reads and writes beside `input_tokens`, writes split
/// by TTL.
#[test]
fn usage_counts_cache_inside_the_prompt() {
    let u = usage_of(&json!({"input_tokens": 10, "output_tokens": 5,
        "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20}));
    assert_eq!(
        u,
        Usage {
            prompt_tokens: 130,
            completion_tokens: 5,
            cached_tokens: 100,
            cache_write_5m_tokens: 20,
            ..Usage::default()
        }
    );
    assert_eq!(usage_json_of(&u)["input_tokens"], 10);
    let split = usage_of(&json!({"input_tokens": 10, "output_tokens": 5,
        "cache_read_input_tokens": 100, "cache_creation_input_tokens": 50,
        "cache_creation": {"ephemeral_5m_input_tokens": 20, "ephemeral_1h_input_tokens": 30}}));
    assert_eq!(
        (
            split.prompt_tokens,
            split.cached_tokens,
            split.cache_write_5m_tokens,
            split.cache_write_1h_tokens,
            split.cache_in_prompt
        ),
        (160, 100, 20, 30, false)
    );
    let back = usage_json_of(&split);
    assert_eq!(
        (
            &back["input_tokens"],
            &back["cache_creation_input_tokens"],
            &back["cache_creation"]["ephemeral_1h_input_tokens"]
        ),
        (&json!(10), &json!(50), &json!(30))
    );
}

#[test]
fn request_round_trip_keeps_system_tools_and_results() {
    let anthropic = json!({
        "model": "claude", "max_tokens": 100, "system": "be brief",
        "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "w", "input": {"city": "Paris"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}]}
        ],
        "tools": [{"name": "w", "description": "weather", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "any"}, "stop_sequences": ["END"]
    });
    let hub = request_to_hub(&anthropic).expect("converts");
    assert_eq!(
        hub["messages"][0],
        json!({"role": "system", "content": "be brief"})
    );
    assert_eq!(
        hub["messages"][2]["tool_calls"][0]["function"]["arguments"],
        r#"{"city":"Paris"}"#
    );
    assert_eq!(hub["messages"][3]["role"], "tool");
    assert_eq!(hub["tool_choice"], "required");
    assert_eq!(hub["stop"], json!(["END"]));
    let back = request_from_hub(&hub, "claude-up", true);
    assert_eq!(back["model"], "claude-up");
    assert_eq!(back["system"][0]["text"], "be brief");
    assert_eq!(back["messages"][1]["content"][0]["input"]["city"], "Paris");
    assert_eq!(back["messages"][2]["content"][0]["type"], "tool_result");
    assert_eq!(back["tool_choice"], json!({"type": "any"}));
    assert_eq!(back["stream"], true);
}

#[test]
fn encoder_emits_the_event_sequence() {
    let mut e = Encoder::new(EncodeCtx {
        model: "claude".into(),
        prompt_estimate: 7,
        include_usage: false,
    });
    let mut out = Vec::new();
    for p in [
        Piece::Start {
            id: "abc".into(),
            model: "x".into(),
        },
        Piece::Text("Hel".into()),
        Piece::Text("lo".into()),
        Piece::Stop("stop".into()),
        Piece::Usage(Usage {
            prompt_tokens: 9,
            completion_tokens: 2,
            ..Usage::default()
        }),
    ] {
        e.piece(&p, &mut out);
    }
    e.end(&mut out);
    let text = String::from_utf8(out).expect("utf8");
    let names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(
        names,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    assert!(text.contains(r#""stop_reason":"end_turn""#));
    assert!(text.contains(r#""output_tokens":2"#));
}

/// `created` aside (the clock), the hub answer.
fn without_created(mut hub: serde_json::Value) -> serde_json::Value {
    if let Some(map) = hub.as_object_mut() {
        map.remove("created");
    }
    hub
}

#[test]
fn an_answer_read_from_its_bytes_converts_as_its_parsed_value() {
    // Keys out of name order and repeated inside the tool input, escapes in the text.
    let text = r#"{"usage":{"output_tokens":40,"input_tokens":100,"cache_read_input_tokens":20},
        "content":[{"type":"text","text":"a \u00e9\n"},{"input":{"z":{"y":1,"b":2},"a":[{"q":1,"c":2}],
        "d":1,"d":2},"name":"w","type":"tool_use","id":"t"}],"model":"m","id":"msg_x",
        "stop_reason":"tool_use"}"#;
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
    assert_eq!(usage.map(|u| u.prompt_tokens), Some(120));
    // A usage that is not an object is a usage of nothing, as before; none is none.
    let (_, usage) = answer_from_bytes(br#"{"content":[],"usage":null}"#).expect("read");
    assert_eq!(usage, Some(Usage::default()));
    assert_eq!(
        answer_from_bytes(br#"{"content":[]}"#).expect("read").1,
        None
    );
    // A repeated field is left to the parsed value (which keeps the last), not JSON is none.
    assert!(answer_from_bytes(br#"{"id":"a","id":"b"}"#).is_none());
    let (hub, _) = crate::relay::wire::read_answer(
        crate::relay::wire::Wire::Anthropic,
        br#"{"id":"a","id":"b"}"#,
    )
    .expect("JSON");
    assert_eq!(hub["id"], "chatcmpl-b");
    assert!(crate::relay::wire::read_answer(crate::relay::wire::Wire::Anthropic, b"{").is_none());
}
