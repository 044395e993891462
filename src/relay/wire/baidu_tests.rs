//! Baidu Qianfan v1 conversions: requests, answers, usage (golden), the stream and errors.

use serde_json::{Value, json};

use super::*;

fn hub_of(body: &Value) -> String {
    body.to_string()
}

#[test]
fn system_prompts_become_the_system_field_and_turns_alternate() {
    let text = hub_of(
        &json!({"model": "ERNIE-3.5-8K", "temperature": 0.3, "max_tokens": 64,
        "user": "u-1",
        "messages": [{"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"},
            {"role": "user", "content": [{"type": "text", "text": "again"}]},
            {"role": "assistant", "content": "hello"},
            {"role": "user", "content": "bye"}]}),
    );
    let hub: hub::Request<'_> = serde_json::from_str(&text).expect("hub");
    check(&hub).expect("text only");
    let out = serde_json::to_value(request_from_hub(&hub, true)).expect("json");
    assert_eq!(
        out,
        json!({"messages": [{"role": "user", "content": "hi\nagain"},
            {"role": "assistant", "content": "hello"},
            {"role": "user", "content": "bye"}],
            "system": "be brief", "stream": true, "temperature": 0.3,
            "max_output_tokens": 64, "user_id": "u-1"})
    );
}

#[test]
fn tools_and_images_are_refused_by_name() {
    let tools = hub_of(&json!({"messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f"}}]}));
    let hub: hub::Request<'_> = serde_json::from_str(&tools).expect("hub");
    assert!(check(&hub).expect_err("tools").0.contains("tools"));
    let image = hub_of(&json!({"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}]}));
    let hub: hub::Request<'_> = serde_json::from_str(&image).expect("hub");
    assert!(check(&hub).expect_err("image").0.contains("image_url"));
}

/// Golden: Qianfan's usage is billed as its prompt and completion counts.
#[test]
fn usage_is_read_as_prompt_and_completion() {
    let v = json!({"id": "as-1", "object": "chat.completion", "created": 1, "result": "你好",
        "is_truncated": false, "need_clear_history": false, "finish_reason": "normal",
        "usage": {"prompt_tokens": 7, "completion_tokens": 9, "total_tokens": 16}});
    let answer: Answer<'_> = typed::view(&v);
    assert_eq!(answer.error(), None);
    let usage = answer.usage.as_ref().expect("usage").usage();
    assert_eq!((usage.prompt_tokens, usage.completion_tokens), (7, 9));
    let hub = answer_to_hub(&answer);
    assert_eq!(hub["choices"][0]["message"]["content"], "你好");
    assert_eq!(hub["choices"][0]["finish_reason"], "stop");
    assert_eq!(hub["usage"]["prompt_tokens"], 7);
    assert_eq!(hub["usage"]["completion_tokens"], 9);
    assert_eq!(hub["usage"]["total_tokens"], 16);
    assert_eq!(hub["id"], "chatcmpl-as-1");
}

#[test]
fn errors_in_200_bodies_are_read() {
    let v = json!({"error_code": 110, "error_msg": "Access token invalid or no longer valid"});
    let answer: Answer<'_> = typed::view(&v);
    assert_eq!(
        answer.error(),
        Some((110, "Access token invalid or no longer valid"))
    );
    assert_eq!(error_status("336100"), 503);
    assert_eq!(error_status("999"), 500);
}

#[test]
fn a_stream_ends_with_is_end() {
    let mut d = Decoder::default();
    let first = d.event(
        "",
        r#"{"id":"as-2","sentence_id":0,"is_end":false,"result":"你","usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}"#,
    );
    assert_eq!(
        first[..2],
        [
            Piece::Start {
                id: "as-2".into(),
                model: String::new()
            },
            Piece::Text("你".into())
        ]
    );
    assert!(!d.done());
    let last = d.event(
        "",
        r#"{"id":"as-2","sentence_id":1,"is_end":true,"result":"好","usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}"#,
    );
    assert_eq!(last[0], Piece::Text("好".into()));
    assert!(matches!(&last[1], Piece::Usage(u) if u.completion_tokens == 2));
    assert_eq!(last[2], Piece::Stop("stop".into()));
    assert!(d.done());
    let mut d = Decoder::default();
    let error = d.event("", r#"{"error_code":336100,"error_msg":"try again later"}"#);
    assert_eq!(error, [Piece::Error("336100: try again later".into())]);
}
