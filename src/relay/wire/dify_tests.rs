//! Dify conversions: requests, answers, usage (golden), the stream events and errors.

use serde_json::{Value, json};

use super::*;

fn hub_text(body: &Value) -> String {
    body.to_string()
}

#[test]
fn a_conversation_is_one_transcript_and_a_continued_one_its_last_question() {
    let text = hub_text(&json!({"user": "u-7", "messages": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": [{"type": "text", "text": "bye"}]}]}));
    let hub: hub::Request<'_> = serde_json::from_str(&text).expect("hub");
    check(&hub).expect("text only");
    let out = serde_json::to_value(request_from_hub(&hub, "", false)).expect("json");
    assert_eq!(
        out,
        json!({"inputs": {}, "query": "SYSTEM: \nbe brief\nUSER: \nhi\nASSISTANT: \nhello\nUSER: \nbye\n",
            "response_mode": "blocking", "conversation_id": "", "user": "u-7"})
    );
    let out = serde_json::to_value(request_from_hub(&hub, "conv-1", true)).expect("json");
    assert_eq!(out["query"], "bye");
    assert_eq!(out["conversation_id"], "conv-1");
    assert_eq!(out["response_mode"], "streaming");
    let anonymous = hub_text(&json!({"messages": [{"role": "user", "content": "x"}]}));
    let hub: hub::Request<'_> = serde_json::from_str(&anonymous).expect("hub");
    assert_eq!(request_from_hub(&hub, "", false).user, DEFAULT_USER);
}

#[test]
fn tools_and_images_are_refused_by_name() {
    let tools = hub_text(&json!({"messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f"}}]}));
    let hub: hub::Request<'_> = serde_json::from_str(&tools).expect("hub");
    assert!(check(&hub).expect_err("tools").0.contains("tools"));
    let image = hub_text(&json!({"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}]}));
    let hub: hub::Request<'_> = serde_json::from_str(&image).expect("hub");
    assert!(check(&hub).expect_err("image").0.contains("image_url"));
}

/// Golden: Dify's usage (with its prices) is billed as its prompt and completion counts.
#[test]
fn a_blocking_answer_and_its_usage() {
    let v = json!({"event": "message", "task_id": "t1", "id": "m1", "message_id": "m1",
        "conversation_id": "c1", "mode": "chat", "answer": "Hi there",
        "metadata": {"usage": {"prompt_tokens": 1033, "prompt_unit_price": "0.001",
            "prompt_price_unit": "0.001", "prompt_price": "0.0010330", "completion_tokens": 128,
            "completion_unit_price": "0.002", "completion_price_unit": "0.001",
            "completion_price": "0.0002560", "total_tokens": 1161, "total_price": "0.0012890",
            "currency": "USD", "latency": 0.768}, "retriever_resources": []},
        "created_at": 1_705_407_629});
    let event: Event<'_> = typed::view(&v);
    let usage = event.metadata.usage.as_ref().expect("usage").usage();
    assert_eq!((usage.prompt_tokens, usage.completion_tokens), (1033, 128));
    let hub = answer_to_hub(&event);
    assert_eq!(hub["choices"][0]["message"]["content"], "Hi there");
    assert_eq!(hub["usage"]["total_tokens"], 1161);
    assert_eq!(hub["conversation_id"], "c1");
    assert_eq!(hub["id"], "chatcmpl-m1");
}

#[test]
fn stream_events_become_pieces_and_message_end_ends_it() {
    let mut d = Decoder::default();
    let first = d.event(
        "",
        r#"{"event": "message", "message_id": "m2", "conversation_id": "c2", "answer": "Hi ", "created_at": 1}"#,
    );
    assert_eq!(
        first,
        [
            Piece::Start {
                id: "m2".into(),
                model: String::new()
            },
            Piece::Text("Hi ".into())
        ]
    );
    assert!(d.event("", r#"{"event": "ping"}"#).is_empty());
    assert!(
        d.event("", r#"{"event": "agent_thought", "thought": "hmm"}"#)
            .is_empty()
    );
    assert_eq!(
        d.event("", r#"{"event": "agent_message", "answer": "there"}"#),
        [Piece::Text("there".into())]
    );
    assert!(!d.done());
    let end = d.event(
        "",
        r#"{"event": "message_end", "conversation_id": "c2", "metadata": {"usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}}"#,
    );
    assert!(matches!(&end[0], Piece::Usage(u) if u.prompt_tokens == 5 && u.completion_tokens == 2));
    assert_eq!(end[1], Piece::Stop("stop".into()));
    assert!(d.done());
    let mut d = Decoder::default();
    assert_eq!(
        d.event(
            "",
            r#"{"event": "error", "status": 400, "code": "provider_quota_exceeded", "message": "quota"}"#
        ),
        [Piece::Error("provider_quota_exceeded: quota".into())]
    );
    assert!(!d.done());
}
