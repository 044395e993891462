//! Coze (channel type 49) through the public HTTP API, against a mock bot speaking its chat API
//! v3 (tests/common/mock_coze.rs): OpenAI chat and Anthropic clients, whole (the event stream
//! gathered) and streamed, billed from Coze's usage; a conversation continued; its documented
//! error codes classified (a spent balance disables the key and the next channel answers; a
//! refused token condemns it; a rate limit goes to the next channel; a parameter error is the
//! client's 400 without failover), before the stream and inside it; images by URL as Coze's
//! multimodal `object_string` messages, inline ones refused; a route it cannot serve; the
//! console's channel test.

mod common;

use common::mock_coze::{Answer, BOT, CONVERSATION, KEY, MockCoze};
use common::relay_fixture::{
    balances, chat_request, fixture, hi, other, raw, sse_events, wait_until,
};
use common::{Actor, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate_storage::{ChannelId, channels};

const MODEL: &str = "coze-bot";

fn coze_channel(mock: &MockCoze, key: &str) -> Value {
    json!({"name": "coze", "type": 49, "key": key, "base_url": mock.base, "other": BOT,
        "models": MODEL, "group": "default"})
}

/// A second channel on its own mock, at a lower priority than the first (at 10, auto-banned).
fn pair(first: &MockCoze, second: &MockCoze) -> [Value; 2] {
    let mut main = coze_channel(first, KEY);
    main["priority"] = json!(10);
    main["auto_ban"] = json!(1);
    let mut backup = coze_channel(second, KEY);
    backup["name"] = json!("backup");
    [main, backup]
}

/// coze-bot: ratio 2, completion 3; failover to one more channel; auto-disable on.
async fn setup(channels: &[Value]) -> (TestServer, Actor, Actor, String) {
    let server = TestServer::start().await;
    let (root, payer, key) = fixture(&server, channels, 1_000_000, 500_000).await;
    for (name, value) in [
        ("ModelRatio", r#"{"coze-bot": 2}"#),
        ("CompletionRatio", r#"{"coze-bot": 3}"#),
        ("AutomaticDisableChannelEnabled", "true"),
        ("RetryTimes", "1"),
    ] {
        server.set_option(&root, name, json!(value)).await;
    }
    (server, root, payer, key)
}

/// Waits until channel 1 is disabled (status 3).
async fn first_channel_disabled(server: &TestServer) {
    wait_until("channel 1 auto-disabled", || {
        server
            .store()
            .read_blocking(|rtx| channels::get(rtx, ChannelId(1)))
            .ok()
            .flatten()
            .is_some_and(|c| c.status == 3)
    })
    .await;
}

#[tokio::test]
async fn a_whole_answer_is_gathered_from_the_stream_billed_and_a_conversation_continued() {
    let mock = MockCoze::start().await;
    mock.push_text(&["Hi ", "there"], 7, 9);
    let (server, _, payer, key) = setup(&[coze_channel(&mock, KEY)]).await;
    let body = json!({"model": MODEL, "user": "alice",
        "messages": [{"role": "system", "content": "be brief"},
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": "hi"},
            {"role": "user", "content": "how are you?"}]});
    let (status, answer) = server.send(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["object"], "chat.completion");
    assert_eq!(answer["choices"][0]["message"]["content"], "Hi there");
    assert_eq!(answer["usage"]["prompt_tokens"], 7);
    assert_eq!(answer["usage"]["completion_tokens"], 9);
    let q = |role: &str, kind: &str, content: &str| json!({"role": role, "type": kind, "content": content, "content_type": "text"});
    assert_eq!(
        mock.last(),
        json!({"bot_id": BOT, "user_id": "alice", "stream": true, "additional_messages": [
            q("user", "question", "be brief"), q("user", "question", "hello"),
            q("assistant", "answer", "hi"), q("user", "question", "how are you?")]})
    );
    assert!(mock.calls()[0].query.is_empty());
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // 2 × (7 + 9 × 3) = 68
    assert_eq!(quota, 1_000_000 - 68);
    assert_eq!((logs[0].prompt_tokens, logs[0].completion_tokens), (7, 9));
    assert_eq!(other(&logs[0])["usage_source"], "upstream");

    // A client's conversation_id continues that Coze conversation.
    mock.push_text(&["Again"], 3, 1);
    let mut body = hi(MODEL);
    body["conversation_id"] = json!(CONVERSATION);
    let (status, answer) = server.send(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let call = mock.calls().pop().expect("a call");
    assert_eq!(
        call.query.get("conversation_id").map(String::as_str),
        Some(CONVERSATION)
    );
    assert_eq!(call.body["user_id"], "tollgate");
}

#[tokio::test]
async fn a_stream_reaches_the_client_with_usage_and_a_cut_one_is_partial() {
    let mock = MockCoze::start().await;
    mock.push_text(&["Hi ", "there"], 5, 3);
    let (server, _, payer, key) = setup(&[coze_channel(&mock, KEY)]).await;
    let body = json!({"model": MODEL, "stream": true,
        "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": "hi"}]});
    let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let chunks = sse_events(&text);
    let content: String = chunks
        .iter()
        .filter_map(|(_, c)| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    // The answer's deltas once: not its completed message, the verbose or follow-up ones.
    assert_eq!(content, "Hi there");
    assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // 2 × (5 + 3 × 3) = 28
    assert_eq!(quota, 1_000_000 - 28);
    assert_eq!(other(&logs[0])["usage_source"], "upstream");

    // Cut before conversation.chat.completed: no [DONE], billed as partial.
    mock.push(Answer::Stream {
        pieces: vec!["half".into()],
        usage: (5, 2),
        complete: false,
    });
    let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(text.contains("half") && !text.contains("[DONE]"), "{text}");
    let (_, _, _, logs) = balances(&server, payer.id).await;
    assert_eq!(other(&logs[0])["usage_source"], "partial");

    // An error event after text: the text so far, then the error, no [DONE].
    mock.push(Answer::StreamError {
        pieces: vec!["so far".into()],
        code: 4013,
        msg: "model error".into(),
        failed: false,
    });
    let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(text.contains("so far") && text.contains("4013"), "{text}");
    assert!(!text.contains("[DONE]"), "{text}");
}

#[tokio::test]
async fn anthropic_clients_reach_coze_bots() {
    let mock = MockCoze::start().await;
    mock.push_text(&["Hi."], 4, 2);
    let (server, _, payer, key) = setup(&[coze_channel(&mock, KEY)]).await;
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/messages"))
                .header("x-api-key", &key)
                .json(
                    &json!({"model": MODEL, "max_tokens": 64, "system": "be brief",
                    "messages": [{"role": "user", "content": "Hello"}]}),
                ),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["content"][0]["text"], "Hi.");
    assert_eq!(
        mock.last()["additional_messages"][1]["content"],
        "Hello",
        "{}",
        mock.last()
    );
    let (quota, _, _, _) = balances(&server, payer.id).await;
    // 2 × (4 + 2 × 3) = 20
    assert_eq!(quota, 1_000_000 - 20);
}

#[tokio::test]
async fn a_spent_balance_in_the_stream_disables_the_key_and_the_next_channel_answers() {
    let first = MockCoze::start().await;
    let second = MockCoze::start().await;
    first.push(Answer::StreamError {
        pieces: vec![],
        code: 4011,
        msg: "Insufficient Coze token balance".into(),
        failed: false,
    });
    second.push_text(&["ok"], 1, 1);
    let (server, _, payer, key) = setup(&pair(&first, &second)).await;
    let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["choices"][0]["message"]["content"], "ok");
    first_channel_disabled(&server).await;
    let (quota, _, _, _) = balances(&server, payer.id).await;
    // Only the backup's answer: 2 × (1 + 1 × 3) = 8.
    assert_eq!(quota, 1_000_000 - 8);
}

#[tokio::test]
async fn a_rate_limit_goes_to_the_next_channel_and_client_errors_do_not() {
    let first = MockCoze::start().await;
    let second = MockCoze::start().await;
    // Before the stream, in an HTTP 200 body.
    first.push_error(200, 4020, "RPM exceeded");
    second.push_text(&["from the backup"], 1, 1);
    let (server, root, payer, key) = setup(&pair(&first, &second)).await;
    let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        "from the backup"
    );
    let (_, channel) = root.get("/api/channel/1").await;
    assert_eq!(channel["data"]["status"], 1, "a rate limit bans nothing");

    // A prompt too long (before the stream) and a failed chat's parameter error (in it).
    first.push_error(200, 4010, "prompt too long");
    first.push(Answer::StreamError {
        pieces: vec![],
        code: 4000,
        msg: "invalid parameter".into(),
        failed: true,
    });
    let before = second.calls().len();
    for code in ["4010", "4000"] {
        let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert!(answer.to_string().contains(code), "{answer}");
    }
    assert_eq!(
        second.calls().len(),
        before,
        "no failover on a client error"
    );
    let (quota, _, _, _) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000 - 8);
}

#[tokio::test]
async fn a_refused_token_condemns_the_key() {
    let mock = MockCoze::start().await;
    let mut wrong = coze_channel(&mock, "pat_not_the_token");
    wrong["auto_ban"] = json!(1);
    let (server, _, _, key) = setup(&[wrong]).await;
    let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
    assert!(
        !answer.to_string().contains("pat_not_the_token"),
        "{answer}"
    );
    first_channel_disabled(&server).await;
}

#[tokio::test]
async fn routes_coze_cannot_serve_and_tools_are_a_400() {
    let mock = MockCoze::start().await;
    let (server, _, _, key) = setup(&[coze_channel(&mock, KEY)]).await;
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/embeddings"))
                .bearer_auth(&key)
                .json(&json!({"model": MODEL, "input": "hello"})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let mut body = hi(MODEL);
    body["tools"] = json!([{"type": "function", "function": {"name": "f", "parameters": {}}}]);
    let (status, answer) = server.send(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(answer.to_string().contains("tools"), "{answer}");
    assert!(mock.calls().is_empty());
}

#[tokio::test]
async fn an_image_by_url_reaches_the_bot_as_a_multimodal_message_and_an_inline_one_is_a_400() {
    let mock = MockCoze::start().await;
    mock.push_text(&["A cat."], 40, 3);
    let (server, _, payer, key) = setup(&[coze_channel(&mock, KEY)]).await;
    let url = "https://example.com/cat.png";
    let body = json!({"model": MODEL, "messages": [{"role": "user", "content": [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": url}}]}]});
    let (status, answer) = server.send(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["choices"][0]["message"]["content"], "A cat.");
    let sent = &mock.last()["additional_messages"][0];
    assert_eq!(sent["content_type"], "object_string");
    let objects: Value =
        serde_json::from_str(sent["content"].as_str().expect("a string")).expect("JSON");
    assert_eq!(
        objects,
        json!([{"type": "text", "text": "what is this?"}, {"type": "image", "file_url": url}])
    );
    let (quota, _, _, _) = balances(&server, payer.id).await;
    // 2 × (40 + 3 × 3) = 98
    assert_eq!(quota, 1_000_000 - 98);

    // Coze fetches images by URL: an inline one is the client's 400 and nothing is sent.
    let body = json!({"model": MODEL, "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}]});
    let (status, answer) = server.send(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(answer.to_string().contains("by URL"), "{answer}");
    assert_eq!(mock.calls().len(), 1);
}

#[tokio::test]
async fn the_channel_test_asks_the_bot() {
    let mock = MockCoze::start().await;
    mock.push_text(&["hi"], 1, 1);
    mock.push_error(200, 4015, "bot not published to API");
    let (_server, root, _, _) = setup(&[coze_channel(&mock, KEY)]).await;
    let (status, answer) = root.get("/api/channel/test/1").await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["success"], true, "{answer}");
    assert_eq!(mock.last()["stream"], true);
    let (_, answer) = root.get("/api/channel/test/1").await;
    assert_eq!(answer["success"], false, "{answer}");
    assert!(answer.to_string().contains("4015"), "{answer}");
}
