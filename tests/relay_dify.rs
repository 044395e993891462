//! Dify (channel type 37) through the public HTTP API, against a mock chat app speaking its
//! "Chat App API" (tests/common/mock_dify.rs): OpenAI chat and Anthropic clients, blocking and
//! streamed (`message` and `agent_message` events, `message_end` with usage), billed from
//! Dify's usage; conversation ids given back and continued; its documented errors classified (a
//! used-up model quota disables the key and the next channel answers; a refused key condemns
//! it; a rate limit goes to the next channel; a parameter error is the client's 400 without
//! failover); a route it cannot serve; the console's channel test.

mod common;

use common::mock_dify::{Answer, CONVERSATION, KEY, MockDify};
use common::relay_fixture::{
    balances, chat_request, hi, other, priced_setup, raw, sse_events, wait_channel_status,
};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The test model: ratio 2, completion 3.
const MODEL: &str = "dify-app";

fn dify_channel(mock: &MockDify, key: &str) -> Value {
    json!({"name": "dify", "type": 37, "key": key, "base_url": mock.base,
        "models": "dify-app", "group": "default"})
}

#[tokio::test]
async fn a_conversation_is_sent_blocking_billed_and_its_id_given_back_and_continued() {
    let mock = MockDify::start().await;
    mock.push_text("Hi there", 7, 9);
    let (server, _, payer, key) = priced_setup(&[dify_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    let body = json!({"model": "dify-app", "user": "alice",
        "messages": [{"role": "system", "content": "be brief"},
            {"role": "user", "content": "hello"}]});
    let (status, answer) = server.send(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["choices"][0]["message"]["content"], "Hi there");
    assert_eq!(answer["usage"]["prompt_tokens"], 7);
    assert_eq!(answer["conversation_id"], CONVERSATION);
    assert_eq!(
        mock.last(),
        json!({"inputs": {}, "query": "SYSTEM: \nbe brief\nUSER: \nhello\n",
            "response_mode": "blocking", "conversation_id": "", "user": "alice"})
    );
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // 2 × (7 + 9 × 3) = 68
    assert_eq!(quota, 1_000_000 - 68);
    assert_eq!((logs[0].prompt_tokens, logs[0].completion_tokens), (7, 9));
    assert_eq!(other(&logs[0])["usage_source"], "upstream");

    // Continued: only the last question goes, with the conversation's id.
    mock.push_text("Again", 3, 1);
    let body = json!({"model": "dify-app", "conversation_id": CONVERSATION,
        "messages": [{"role": "user", "content": "hello"},
            {"role": "assistant", "content": "Hi there"},
            {"role": "user", "content": "and now?"}]});
    let (status, answer) = server.send(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let sent = mock.last();
    assert_eq!(sent["query"], "and now?");
    assert_eq!(sent["conversation_id"], CONVERSATION);
    assert_eq!(sent["user"], "tollgate");
}

#[tokio::test]
async fn streams_of_chat_and_agent_apps_reach_clients_with_usage_and_a_cut_one_is_partial() {
    let mock = MockDify::start().await;
    for agent in [false, true] {
        mock.push(Answer::Stream {
            pieces: vec!["Hi ".into(), "there".into()],
            usage: (5, 3),
            agent,
            complete: true,
        });
    }
    let (server, _, payer, key) = priced_setup(&[dify_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    let body = json!({"model": "dify-app", "stream": true,
        "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": "hi"}]});
    for round in 0..2 {
        let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
        assert_eq!(status, StatusCode::OK, "{text}");
        assert_eq!(mock.last()["response_mode"], "streaming");
        let chunks = sse_events(&text);
        let content: String = chunks
            .iter()
            .filter_map(|(_, c)| c["choices"][0]["delta"]["content"].as_str())
            .collect();
        assert_eq!(content, "Hi there", "round {round}");
        assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
        let (quota, _, _, logs) = balances(&server, payer.id).await;
        // 2 × (5 + 3 × 3) = 28 per answer
        assert_eq!(quota, 1_000_000 - 28 * (round + 1));
        assert_eq!(other(&logs[0])["usage_source"], "upstream");
    }

    // Cut before message_end: no [DONE], billed as partial.
    mock.push(Answer::Stream {
        pieces: vec!["half".into()],
        usage: (5, 2),
        agent: false,
        complete: false,
    });
    let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(!text.contains("[DONE]"), "{text}");
    let (_, _, _, logs) = balances(&server, payer.id).await;
    assert_eq!(other(&logs[0])["usage_source"], "partial");
}

#[tokio::test]
async fn anthropic_clients_reach_dify_apps() {
    let mock = MockDify::start().await;
    mock.push_text("Hi.", 4, 2);
    let (server, _, payer, key) = priced_setup(&[dify_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/messages"))
                .header("x-api-key", &key)
                .json(&json!({"model": "dify-app", "max_tokens": 64,
                    "messages": [{"role": "user", "content": "Hello"}]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["content"][0]["text"], "Hi.");
    assert_eq!(mock.last()["query"], "USER: \nHello\n");
    let (quota, _, _, _) = balances(&server, payer.id).await;
    // 2 × (4 + 2 × 3) = 20
    assert_eq!(quota, 1_000_000 - 20);
}

/// A second channel on its own mock, at a lower priority than the first.
fn backup(mock: &MockDify) -> Value {
    let mut channel = dify_channel(mock, KEY);
    channel["name"] = json!("backup");
    channel["priority"] = json!(-1);
    channel
}

#[tokio::test]
async fn a_used_up_model_quota_disables_the_key_and_the_next_channel_answers() {
    let first = MockDify::start().await;
    let second = MockDify::start().await;
    first.push_error(
        400,
        "provider_quota_exceeded",
        "Your quota for Dify Hosted Model Provider has been exhausted.",
    );
    second.push_text("ok", 1, 1);
    let mut main = dify_channel(&first, KEY);
    main["auto_ban"] = json!(1);
    main["priority"] = json!(10);
    let (server, root, _, key) = priced_setup(&[main, backup(&second)], MODEL, 2.0, 3.0).await;
    server
        .set_option(&root, "AutomaticDisableChannelEnabled", json!("true"))
        .await;
    server.set_option(&root, "RetryTimes", json!("1")).await;
    let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["choices"][0]["message"]["content"], "ok");
    wait_channel_status(&root, 1, 3).await;
}

#[tokio::test]
async fn a_rate_limit_goes_to_the_next_channel_and_a_parameter_error_does_not() {
    let first = MockDify::start().await;
    let second = MockDify::start().await;
    first.push_error(429, "too_many_requests", "Too many requests.");
    second.push_text("from the backup", 1, 1);
    let mut main = dify_channel(&first, KEY);
    main["priority"] = json!(10);
    let (server, root, payer, key) = priced_setup(&[main, backup(&second)], MODEL, 2.0, 3.0).await;
    server.set_option(&root, "RetryTimes", json!("1")).await;
    let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        "from the backup"
    );

    first.push_error(400, "invalid_param", "query is required");
    let before = second.calls().len();
    let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(
        second.calls().len(),
        before,
        "no failover on a client error"
    );
    let (quota, _, _, _) = balances(&server, payer.id).await;
    // Only the backup's answer is billed: 2 × (1 + 1 × 3) = 8.
    assert_eq!(quota, 1_000_000 - 8);
}

#[tokio::test]
async fn a_refused_key_condemns_the_key() {
    let mock = MockDify::start().await;
    let mut wrong = dify_channel(&mock, "app-not-the-key");
    wrong["auto_ban"] = json!(1);
    let (server, root, _, key) = priced_setup(&[wrong], MODEL, 2.0, 3.0).await;
    server
        .set_option(&root, "AutomaticDisableChannelEnabled", json!("true"))
        .await;
    let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
    assert!(!answer.to_string().contains("app-not-the-key"), "{answer}");
    wait_channel_status(&root, 1, 3).await;
}

#[tokio::test]
async fn routes_dify_cannot_serve_and_tools_are_a_400() {
    let mock = MockDify::start().await;
    let (server, _, _, key) = priced_setup(&[dify_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/embeddings"))
                .bearer_auth(&key)
                .json(&json!({"model": "dify-app", "input": "hello"})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let body = json!({"model": "dify-app", "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]});
    let (status, answer) = server.send(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("tools"),
        "{answer}"
    );
    assert!(mock.calls().is_empty());
}

#[tokio::test]
async fn the_channel_test_asks_the_app() {
    let mock = MockDify::start().await;
    mock.push_text("hi", 1, 1);
    let (_server, root, _, _) = priced_setup(&[dify_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    let (status, answer) = root.get("/api/channel/test/1").await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["success"], true, "{answer}");
    assert_eq!(mock.last()["response_mode"], "blocking");
}
