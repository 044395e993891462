//! Coze conversions: requests, usage (golden), the stream events and errors.

use serde_json::{Value, json};

use super::*;

fn hub_of(body: &Value) -> String {
    body.to_string()
}

#[test]
fn a_conversation_goes_as_additional_messages_the_last_the_query() {
    let text = hub_of(&json!({"user": "u-7", "messages": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": [{"type": "text", "text": "bye"}]}]}));
    let hub: hub::Request<'_> = serde_json::from_str(&text).expect("hub");
    check(&hub).expect("text only");
    let out = serde_json::to_value(request_from_hub(&hub, "7348293334")).expect("json");
    assert_eq!(
        out,
        json!({"bot_id": "7348293334", "user_id": "u-7", "stream": true,
            "additional_messages": [
                {"role": "user", "type": "question", "content": "be brief", "content_type": "text"},
                {"role": "user", "type": "question", "content": "hi", "content_type": "text"},
                {"role": "assistant", "type": "answer", "content": "hello", "content_type": "text"},
                {"role": "user", "type": "question", "content": "bye", "content_type": "text"}]})
    );
    let anonymous = hub_of(&json!({"messages": [{"role": "user", "content": "x"}]}));
    let hub: hub::Request<'_> = serde_json::from_str(&anonymous).expect("hub");
    assert_eq!(request_from_hub(&hub, "b").user_id, DEFAULT_USER);
}

#[test]
fn tools_inline_images_and_files_are_refused_by_name() {
    let tools = hub_of(&json!({"messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f"}}]}));
    let hub: hub::Request<'_> = serde_json::from_str(&tools).expect("hub");
    assert!(check(&hub).expect_err("tools").0.contains("tools"));
    let inline = hub_of(&json!({"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}]}));
    let hub: hub::Request<'_> = serde_json::from_str(&inline).expect("hub");
    let refused = check(&hub).expect_err("inline image").0;
    assert!(refused.contains("image_url part cannot be sent") && refused.contains("by URL"));
    let file = hub_of(&json!({"messages": [{"role": "user", "content": [
        {"type": "file", "file": {"file_id": "f-1"}}]}]}));
    let hub: hub::Request<'_> = serde_json::from_str(&file).expect("hub");
    assert!(check(&hub).expect_err("file").0.contains("a file part"));
}

/// An image by URL goes as Coze's multimodal message: `object_string` content, the JSON text
/// of its text and image objects in order (coze-py's `MessageObjectString`).
#[test]
fn images_by_url_go_as_object_string_messages() {
    let text = hub_of(&json!({"messages": [
        {"role": "user", "content": "earlier"},
        {"role": "user", "content": [{"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.png", "detail": "low"}},
            {"type": "image_url", "image_url": "HTTP://example.com/dog.png"}]}]}));
    let hub: hub::Request<'_> = serde_json::from_str(&text).expect("hub");
    check(&hub).expect("images by URL");
    let out = serde_json::to_value(request_from_hub(&hub, "b")).expect("json");
    let messages = &out["additional_messages"];
    assert_eq!(messages[0]["content_type"], "text");
    assert_eq!(messages[1]["content_type"], "object_string");
    let objects: Value =
        serde_json::from_str(messages[1]["content"].as_str().expect("a string")).expect("JSON");
    assert_eq!(
        objects,
        json!([{"type": "text", "text": "what is this?"},
            {"type": "image", "file_url": "https://example.com/cat.png"},
            {"type": "image", "file_url": "HTTP://example.com/dog.png"}])
    );
}

/// Golden: the documented Chat object's usage is billed as its input and output counts.
#[test]
fn a_completed_chats_usage() {
    let chat = json!({"id": "7382159487131697202", "conversation_id": "7381473525342978089",
        "bot_id": "7379462189365198898", "completed_at": 1_718_609_575,
        "created_at": 1_718_609_571, "last_error": {"code": 0, "msg": ""}, "status": "completed",
        "usage": {"token_count": 7792, "output_count": 37, "input_count": 7755}});
    let data: EventData<'_> = typed::view(&chat);
    let usage = data.usage.as_ref().expect("usage").0.usage();
    assert_eq!((usage.prompt_tokens, usage.completion_tokens), (7755, 37));
    // A total alone: the rest of the output is input.
    let total = json!({"token_count": 10, "output_count": 4});
    let usage: UsageIn = typed::view(&total);
    assert_eq!(
        (usage.usage().prompt_tokens, usage.usage().completion_tokens),
        (6, 4)
    );
}

fn message(event_id: &str, kind: &str, content: &str) -> String {
    json!({"id": event_id, "conversation_id": "c1", "bot_id": "b1", "role": "assistant",
        "type": kind, "content": content, "content_type": "text", "chat_id": "chat-1",
        "section_id": "c1"})
    .to_string()
}

fn texts(pieces: &[Piece]) -> String {
    pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn the_stream_gives_the_answers_deltas_once_then_usage_and_stop() {
    let chat = json!({"id": "chat-1", "conversation_id": "c1", "bot_id": "b1",
        "status": "in_progress", "usage": null, "last_error": null})
    .to_string();
    let done = json!({"id": "chat-1", "conversation_id": "c1", "status": "completed",
        "usage": {"token_count": 12, "output_count": 3, "input_count": 9}})
    .to_string();
    let events = [
        ("conversation.chat.created", chat.clone()),
        ("conversation.chat.in_progress", chat),
        (
            "conversation.message.completed",
            message("k1", "knowledge", "recall 1"),
        ),
        ("conversation.message.delta", message("m1", "answer", "Hi ")),
        (
            "conversation.message.delta",
            message("m1", "answer", "there"),
        ),
        (
            "conversation.message.completed",
            message("m1", "answer", "Hi there"),
        ),
        (
            "conversation.message.completed",
            message("m2", "answer", "[card]"),
        ),
        (
            "conversation.message.completed",
            message("v1", "verbose", "{\"msg_type\":\"generate_answer_finish\"}"),
        ),
        (
            "conversation.message.completed",
            message("f1", "follow_up", "Why?"),
        ),
        ("conversation.chat.completed", done),
        ("done", "\"[DONE]\"".to_owned()),
    ];
    let mut decoder = Decoder::default();
    let mut pieces = Vec::new();
    for (name, data) in &events {
        pieces.extend(decoder.event(name, data));
    }
    assert!(decoder.done());
    assert!(matches!(&pieces[0], Piece::Start { id, .. } if id == "chat-1"));
    assert_eq!(texts(&pieces), "Hi there[card]");
    let usage = pieces.iter().find_map(|p| match p {
        Piece::Usage(u) => Some((u.prompt_tokens, u.completion_tokens)),
        _ => None,
    });
    assert_eq!(usage, Some((9, 3)));
    assert!(matches!(pieces.last(), Some(Piece::Stop(s)) if s == "stop"));
}

#[test]
fn errors_end_the_stream_with_their_code() {
    let mut decoder = Decoder::default();
    let pieces = decoder.event(
        "error",
        &json!({"code": 4011, "msg": "insufficient balance"}).to_string(),
    );
    assert!(matches!(pieces.last(), Some(Piece::Error(e)) if e == "4011: insufficient balance"));
    assert!(!decoder.done());
    let mut decoder = Decoder::default();
    let failed = json!({"id": "chat-1", "status": "failed",
        "last_error": {"code": 4013, "msg": "model error"}})
    .to_string();
    let pieces = decoder.event("conversation.chat.failed", &failed);
    assert!(matches!(pieces.last(), Some(Piece::Error(e)) if e == "4013: model error"));
    let pieces = Decoder::default().event(
        "conversation.chat.requires_action",
        &json!({"id": "chat-1", "status": "requires_action"}).to_string(),
    );
    assert!(matches!(pieces.last(), Some(Piece::Error(e)) if e.starts_with("requires_action")));
    let ok = json!({"code": 0, "msg": ""});
    let body: ErrorIn<'_> = typed::view(&ok);
    assert_eq!(body.error(), None);
    assert_eq!((error_status("5000"), error_status("4013")), (500, 502));
}
