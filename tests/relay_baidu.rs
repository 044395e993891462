//! Baidu Qianfan v1 (channel type 15) through the public HTTP API, against a mock of its token
//! endpoint and ERNIE chat (tests/common/mock_baidu.rs): the key `APIKey|SecretKey` exchanged
//! for an access token once and reused; OpenAI chat and Anthropic clients, whole and streamed,
//! billed from Qianfan's usage; its errors — which come in HTTP 200 bodies — classified (a used
//! up allowance disables the key and the next channel answers; a rate limit goes to the next
//! channel; a client error is the client's 400 without failover); a refused key; a route it
//! cannot serve; the console's channel test through the same transport.

mod common;

use common::mock_baidu::{Answer, KEY, MockBaidu};
use common::relay_fixture::{
    balances, chat_request, hi, other, priced_setup, raw, sse_events, wait_channel_status,
};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The test model: ratio 2, completion 3.
const MODEL: &str = "ernie-test";

fn baidu_channel(mock: &MockBaidu, key: &str) -> Value {
    json!({"name": "baidu", "type": 15, "key": key, "base_url": mock.base,
        "models": "ernie-test", "group": "default",
        "model_mapping": r#"{"ernie-test": "ERNIE-4.0-8K"}"#})
}

#[tokio::test]
async fn openai_chat_gets_a_token_once_is_converted_and_billed_from_qianfans_usage() {
    let mock = MockBaidu::start().await;
    mock.push_text("你好！", 7, 9);
    mock.push_text("again", 3, 1);
    let (server, _, payer, key) = priced_setup(&[baidu_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    let body = json!({"model": "ernie-test", "temperature": 0.3, "max_tokens": 100,
        "messages": [{"role": "system", "content": "be brief"},
            {"role": "user", "content": "你好"}]});
    let (status, answer) = server.send(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["object"], "chat.completion");
    assert_eq!(answer["model"], "ERNIE-4.0-8K");
    assert_eq!(answer["choices"][0]["message"]["content"], "你好！");
    assert_eq!(answer["choices"][0]["finish_reason"], "stop");
    assert_eq!(answer["usage"]["prompt_tokens"], 7);
    let call = mock.last();
    assert_eq!(
        call.path,
        "/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/completions_pro"
    );
    assert_eq!(
        call.query.get("access_token").map(String::as_str),
        Some("24.mock-access-token-1")
    );
    assert_eq!(
        call.body,
        json!({"messages": [{"role": "user", "content": "你好"}], "system": "be brief",
            "temperature": 0.3, "max_output_tokens": 100})
    );
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // 2 × (7 + 9 × 3) = 68
    assert_eq!(quota, 1_000_000 - 68);
    assert_eq!((logs[0].prompt_tokens, logs[0].completion_tokens), (7, 9));
    assert_eq!(other(&logs[0])["usage_source"], "upstream");

    // The token is cached: the second request asks for none.
    let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(mock.tokens_issued(), 1);
    assert_eq!(
        mock.last().query.get("access_token").map(String::as_str),
        Some("24.mock-access-token-1")
    );
}

#[tokio::test]
async fn a_stream_reaches_openai_clients_with_usage_and_a_cut_one_is_partial() {
    let mock = MockBaidu::start().await;
    mock.push(Answer::Stream {
        pieces: vec!["你".into(), "好".into(), "！".into()],
        usage: (5, 3),
        complete: true,
    });
    let (server, _, payer, key) = priced_setup(&[baidu_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    let body = json!({"model": "ernie-test", "stream": true,
        "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": "你好"}]});
    let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(mock.last().body["stream"], true);
    let chunks = sse_events(&text);
    let content: String = chunks
        .iter()
        .filter_map(|(_, c)| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "你好！");
    assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // 2 × (5 + 3 × 3) = 28
    assert_eq!(quota, 1_000_000 - 28);
    assert!(logs[0].is_stream);
    assert_eq!(other(&logs[0])["usage_source"], "upstream");

    // Cut before the chunk with `is_end`: no [DONE], billed as partial.
    mock.push(Answer::Stream {
        pieces: vec!["半".into(), "截".into()],
        usage: (5, 2),
        complete: false,
    });
    let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(!text.contains("[DONE]"), "{text}");
    let (_, _, _, logs) = balances(&server, payer.id).await;
    assert_eq!(other(&logs[0])["usage_source"], "partial");
}

#[tokio::test]
async fn anthropic_clients_reach_baidu_channels() {
    let mock = MockBaidu::start().await;
    mock.push_text("Hi.", 4, 2);
    let (server, _, payer, key) = priced_setup(&[baidu_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/messages"))
                .header("x-api-key", &key)
                .json(
                    &json!({"model": "ernie-test", "max_tokens": 64, "system": "be brief",
                    "messages": [{"role": "user", "content": "Hello"}]}),
                ),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["type"], "message");
    assert_eq!(answer["content"][0]["text"], "Hi.");
    assert_eq!(mock.last().body["system"], "be brief");
    let (quota, _, _, _) = balances(&server, payer.id).await;
    // 2 × (4 + 2 × 3) = 20
    assert_eq!(quota, 1_000_000 - 20);
}

/// A second channel on its own mock, at a lower priority than the first.
fn backup(mock: &MockBaidu) -> Value {
    let mut channel = baidu_channel(mock, KEY);
    channel["name"] = json!("backup");
    channel["priority"] = json!(-1);
    channel
}

#[tokio::test]
async fn a_used_up_allowance_disables_the_key_and_the_next_channel_answers() {
    let first = MockBaidu::start().await;
    let second = MockBaidu::start().await;
    first.push_error(17, "Open api daily request limit reached");
    second.push_text("ok", 1, 1);
    let mut main = baidu_channel(&first, KEY);
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
async fn a_rate_limit_goes_to_the_next_channel_and_a_client_error_does_not() {
    let first = MockBaidu::start().await;
    let second = MockBaidu::start().await;
    first.push_error(18, "Open api qps request limit reached");
    second.push_text("from the backup", 1, 1);
    let mut main = baidu_channel(&first, KEY);
    main["priority"] = json!(10);
    let (server, root, payer, key) = priced_setup(&[main, backup(&second)], MODEL, 2.0, 3.0).await;
    server.set_option(&root, "RetryTimes", json!("1")).await;
    let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        "from the backup"
    );

    first.push_error(336001, "Invalid Argument");
    let before = second.calls().len();
    let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("336001"), "{answer}");
    assert!(!message.contains("mock-baidu-secret"), "{answer}");
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
async fn a_refused_key_gets_no_token_and_condemns_the_key() {
    let mock = MockBaidu::start().await;
    let mut wrong = baidu_channel(&mock, "mock-baidu-api-key|not-the-secret");
    wrong["auto_ban"] = json!(1);
    let (server, root, _, key) = priced_setup(&[wrong], MODEL, 2.0, 3.0).await;
    server
        .set_option(&root, "AutomaticDisableChannelEnabled", json!("true"))
        .await;
    let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
    let text = answer.to_string();
    assert!(!text.contains("not-the-secret"), "{answer}");
    assert!(mock.calls().is_empty(), "no chat without a token");
    wait_channel_status(&root, 1, 3).await;
}

#[tokio::test]
async fn a_token_refused_before_it_expires_is_exchanged_anew_and_the_key_stays_enabled() {
    let mock = MockBaidu::start().await;
    mock.push_text("first", 1, 1);
    let mut channel = baidu_channel(&mock, KEY);
    channel["auto_ban"] = json!(1);
    let (server, root, _, key) = priced_setup(&[channel], MODEL, 2.0, 3.0).await;
    server
        .set_option(&root, "AutomaticDisableChannelEnabled", json!("true"))
        .await;
    let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(mock.tokens_issued(), 1);
    // Baidu refuses the cached token (110): not the key's fault.
    mock.revoke_tokens();
    let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{answer}");
    assert!(answer.to_string().contains("110"), "{answer}");
    server.pool().retest_now().await.ok();
    let (_, stored) = root.get("/api/channel/1").await;
    assert_eq!(
        stored["data"]["status"], 1,
        "the key stays enabled: {stored}"
    );
    // The next request exchanges the key again and is answered.
    mock.push_text("again", 1, 1);
    let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["choices"][0]["message"]["content"], "again");
    assert_eq!(mock.tokens_issued(), 2);
    assert_eq!(
        mock.last().query.get("access_token").map(String::as_str),
        Some("24.mock-access-token-2")
    );
}

#[tokio::test]
async fn routes_baidu_cannot_serve_and_tools_are_a_400() {
    let mock = MockBaidu::start().await;
    let (server, _, _, key) = priced_setup(&[baidu_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/embeddings"))
                .bearer_auth(&key)
                .json(&json!({"model": "ernie-test", "input": "hello"})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("/v1/embeddings"),
        "{answer}"
    );
    let body = json!({"model": "ernie-test", "messages": [{"role": "user", "content": "hi"}],
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
async fn the_channel_test_goes_through_the_token_and_the_conversion() {
    let mock = MockBaidu::start().await;
    mock.push_text("hi", 1, 1);
    let (_server, root, _, _) = priced_setup(&[baidu_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    let (status, answer) = root.get("/api/channel/test/1").await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["success"], true, "{answer}");
    assert_eq!(
        mock.last().path,
        "/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/completions_pro"
    );

    mock.push_error(19, "Open api total request limit reached");
    let (_, answer) = root.get("/api/channel/test/1").await;
    assert_eq!(answer["success"], false, "{answer}");
    assert!(
        answer["message"]
            .as_str()
            .unwrap_or_default()
            .contains("19"),
        "{answer}"
    );
}
