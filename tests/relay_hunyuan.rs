//! Tencent Hunyuan (channel type 23) through the public HTTP API, against a mock speaking
//! `ChatCompletions` as documented (tests/common/mock_hunyuan.rs checks the TC3-HMAC-SHA256
//! signature itself): OpenAI chat and Anthropic clients, whole and streamed, billed from
//! Hunyuan's usage; its errors — which come in HTTP 200 bodies — classified (a spent balance
//! disables the key and the next channel answers; a rate limit goes to the next channel; a
//! client error is the client's 400 without failover); a route Hunyuan cannot serve is a 400;
//! the console's channel test goes through the same transport.

mod common;

use common::TestServer;
use common::mock_hunyuan::{Answer, KEY, MockHunyuan};
use common::relay_fixture::{
    balances, chat_request, fixture, other, priced_setup, raw, sse_events, wait_channel_status,
};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The test model: ratio 2, completion 3.
const MODEL: &str = "hunyuan-test";

fn hunyuan_channel(mock: &MockHunyuan, key: &str) -> Value {
    json!({"name": "hunyuan", "type": 23, "key": key, "base_url": mock.base,
        "models": "hunyuan-test", "group": "default",
        "model_mapping": r#"{"hunyuan-test": "hunyuan-turbo"}"#})
}

#[tokio::test]
async fn openai_chat_is_signed_converted_and_billed_from_hunyuans_usage() {
    let mock = MockHunyuan::start().await;
    mock.push_text("你好！有什么可以帮你？", 7, 9);
    let (server, _, payer, key) =
        priced_setup(&[hunyuan_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    let body = json!({"model": "hunyuan-test", "temperature": 0.3,
        "messages": [{"role": "system", "content": "be brief"},
            {"role": "user", "content": "你好"}]});
    let (status, answer) = server.send(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["object"], "chat.completion");
    // As an OpenAI channel's answer: the model the upstream was asked for (after the mapping).
    assert_eq!(answer["model"], "hunyuan-turbo");
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        "你好！有什么可以帮你？"
    );
    assert_eq!(answer["choices"][0]["finish_reason"], "stop");
    assert_eq!(answer["usage"]["prompt_tokens"], 7);
    assert_eq!(answer["usage"]["completion_tokens"], 9);
    let call = mock.last();
    assert!(call.signed, "the mock checked the TC3 signature");
    assert_eq!(call.uri, "/");
    assert_eq!(
        call.header("x-tc-action").as_deref(),
        Some("ChatCompletions")
    );
    assert_eq!(call.header("x-tc-version").as_deref(), Some("2023-09-01"));
    assert_eq!(
        call.body,
        json!({"Model": "hunyuan-turbo", "Temperature": 0.3,
            "Messages": [{"Role": "system", "Content": "be brief"},
                {"Role": "user", "Content": "你好"}]})
    );
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // 2 × (7 + 9 × 3) = 68
    assert_eq!(quota, 1_000_000 - 68);
    assert_eq!((logs[0].prompt_tokens, logs[0].completion_tokens), (7, 9));
    assert_eq!(other(&logs[0])["usage_source"], "upstream");
}

/// A fresh install bills Hunyuan Turbo S from its default price (ratio 0.0548, completion 2.5:
/// ¥0.8 / ¥2 per 1M tokens), with no price set by the admin.
#[tokio::test]
async fn a_fresh_install_bills_hunyuan_turbo_s_from_its_default_price() {
    let mock = MockHunyuan::start().await;
    mock.push_text("ok", 10_000, 4_000);
    let server = TestServer::start().await;
    let mut channel = hunyuan_channel(&mock, KEY);
    channel["models"] = json!("hunyuan-turbos-latest");
    if let Some(fields) = channel.as_object_mut() {
        fields.remove("model_mapping");
    }
    let (_, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let body = json!({"model": "hunyuan-turbos-latest",
        "messages": [{"role": "user", "content": "hi"}]});
    let (status, answer) = server.send(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (quota, _, _, _) = balances(&server, payer.id).await;
    // 0.0548 × (10,000 + 4,000 × 2.5) = 1,096
    assert_eq!(quota, 1_000_000 - 1_096);
}

#[tokio::test]
async fn a_stream_reaches_openai_clients_as_chunks_with_usage_and_a_cut_one_is_partial() {
    let mock = MockHunyuan::start().await;
    mock.push(Answer::Stream {
        pieces: vec!["你".into(), "好".into(), "！".into()],
        usage: (5, 3),
        complete: true,
    });
    let (server, _, payer, key) =
        priced_setup(&[hunyuan_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    let body = json!({"model": "hunyuan-test", "stream": true,
        "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": "你好"}]});
    let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(mock.last().body["Stream"], true);
    let chunks = sse_events(&text);
    let content: String = chunks
        .iter()
        .filter_map(|(_, c)| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "你好！");
    let usage = chunks
        .iter()
        .find_map(|(_, c)| c.get("usage").filter(|u| u.is_object()))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (&usage["prompt_tokens"], &usage["completion_tokens"]),
        (&json!(5), &json!(3))
    );
    assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // 2 × (5 + 3 × 3) = 28
    assert_eq!(quota, 1_000_000 - 28);
    assert!(logs[0].is_stream);
    assert_eq!(other(&logs[0])["usage_source"], "upstream");

    // Cut before the chunk with a FinishReason: no [DONE], billed as partial.
    mock.push(Answer::Stream {
        pieces: vec!["半".into(), "截".into()],
        usage: (5, 2),
        complete: false,
    });
    let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(!text.contains("[DONE]"), "{text}");
    let (_, _, _, logs) = balances(&server, payer.id).await;
    assert_eq!(
        other(&logs[0])["usage_source"],
        "partial",
        "{:?}",
        logs[0].other
    );
}

#[tokio::test]
async fn anthropic_clients_reach_hunyuan_channels() {
    let mock = MockHunyuan::start().await;
    mock.push_text("Hi.", 4, 2);
    let (server, _, payer, key) =
        priced_setup(&[hunyuan_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/messages"))
                .header("x-api-key", &key)
                .json(
                    &json!({"model": "hunyuan-test", "max_tokens": 64, "system": "be brief",
                    "messages": [{"role": "user", "content": "Hello"}]}),
                ),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["type"], "message");
    assert_eq!(answer["content"][0]["text"], "Hi.");
    assert_eq!(answer["usage"]["input_tokens"], 4);
    assert_eq!(
        mock.last().body["Messages"][0],
        json!({"Role": "system", "Content": "be brief"})
    );
    let (quota, _, _, _) = balances(&server, payer.id).await;
    // 2 × (4 + 2 × 3) = 20
    assert_eq!(quota, 1_000_000 - 20);
}

#[tokio::test]
async fn tools_go_to_hunyuan_and_calls_come_back() {
    let mock = MockHunyuan::start().await;
    mock.push(Answer::Whole {
        text: String::new(),
        calls: vec![(
            "call_1".into(),
            "get_weather".into(),
            r#"{"city":"深圳"}"#.into(),
        )],
        usage: (20, 8),
    });
    let (server, _, _, key) = priced_setup(&[hunyuan_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    let body = json!({"model": "hunyuan-test",
        "tools": [{"type": "function", "function": {"name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
        "messages": [{"role": "user", "content": "深圳天气？"}]});
    let (status, answer) = server.send(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let choice = &answer["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(
        choice["message"]["tool_calls"][0]["function"],
        json!({"name": "get_weather", "arguments": r#"{"city":"深圳"}"#})
    );
    let sent = mock.last().body;
    assert_eq!(sent["Tools"][0]["Function"]["Name"], "get_weather");
    assert_eq!(
        sent["Tools"][0]["Function"]["Parameters"],
        r#"{"properties":{"city":{"type":"string"}},"type":"object"}"#
    );
}

/// A second channel on its own mock, at a lower priority than the first.
fn backup(mock: &MockHunyuan) -> Value {
    let mut channel = hunyuan_channel(mock, KEY);
    channel["name"] = json!("backup");
    channel["priority"] = json!(-1);
    channel
}

#[tokio::test]
async fn a_spent_balance_disables_the_key_and_the_next_channel_answers() {
    let first = MockHunyuan::start().await;
    let second = MockHunyuan::start().await;
    first.push_error("ResourceUnavailable.LowBalance", "余额不足");
    second.push_text("ok", 1, 1);
    let mut main = hunyuan_channel(&first, KEY);
    main["auto_ban"] = json!(1);
    main["priority"] = json!(10);
    let (server, root, _, key) = priced_setup(&[main, backup(&second)], MODEL, 2.0, 3.0).await;
    server
        .set_option(&root, "AutomaticDisableChannelEnabled", json!("true"))
        .await;
    server.set_option(&root, "RetryTimes", json!("1")).await;
    let body = json!({"model": "hunyuan-test", "messages": [{"role": "user", "content": "hi"}]});
    let (status, answer) = server.send(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["choices"][0]["message"]["content"], "ok");
    assert_eq!(second.calls().len(), 1);
    wait_channel_status(&root, 1, 3).await;
}

#[tokio::test]
async fn a_rate_limit_goes_to_the_next_channel_and_a_client_error_does_not() {
    let first = MockHunyuan::start().await;
    let second = MockHunyuan::start().await;
    first.push_error("LimitExceeded", "超过配额限制");
    second.push_text("from the backup", 1, 1);
    let mut main = hunyuan_channel(&first, KEY);
    main["priority"] = json!(10);
    let (server, root, payer, key) = priced_setup(&[main, backup(&second)], MODEL, 2.0, 3.0).await;
    server.set_option(&root, "RetryTimes", json!("1")).await;
    let body = json!({"model": "hunyuan-test", "messages": [{"role": "user", "content": "hi"}]});
    let (status, answer) = server.send(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        "from the backup"
    );

    // A client error is answered 400 with Hunyuan's message; the backup is not asked.
    first.push_error("InvalidParameterValue.Model", "模型不存在");
    let before = second.calls().len();
    let (status, answer) = server.send(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("InvalidParameterValue.Model"), "{answer}");
    assert!(!message.contains("mock-secret-key"), "{answer}");
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
async fn a_wrong_secret_key_is_refused_by_the_signature_check_and_condemns_the_key() {
    let mock = MockHunyuan::start().await;
    let mut wrong = hunyuan_channel(&mock, "1300000000|AKIDmockhunyuan0123456789|not-the-key");
    wrong["auto_ban"] = json!(1);
    let (server, root, _, key) = priced_setup(&[wrong], MODEL, 2.0, 3.0).await;
    server
        .set_option(&root, "AutomaticDisableChannelEnabled", json!("true"))
        .await;
    let body = json!({"model": "hunyuan-test", "messages": [{"role": "user", "content": "hi"}]});
    let (status, answer) = server.send(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("AuthFailure.SignatureFailure"),
        "{answer}"
    );
    assert!(!mock.last().signed);
    wait_channel_status(&root, 1, 3).await;
}

#[tokio::test]
async fn routes_hunyuan_cannot_serve_are_a_400_naming_the_route() {
    let mock = MockHunyuan::start().await;
    let (server, _, _, key) = priced_setup(&[hunyuan_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/embeddings"))
                .bearer_auth(&key)
                .json(&json!({"model": "hunyuan-test", "input": "hello"})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("/v1/embeddings"), "{answer}");
    assert!(mock.calls().is_empty());
}

#[tokio::test]
async fn the_channel_test_goes_through_the_signed_transport() {
    let mock = MockHunyuan::start().await;
    mock.push_text("hi", 1, 1);
    let (_server, root, _, _) = priced_setup(&[hunyuan_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    let (status, answer) = root.get("/api/channel/test/1").await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["success"], true, "{answer}");
    let call = mock.last();
    assert!(call.signed);
    assert_eq!(call.body["Model"], "hunyuan-turbo");

    // An in-body error fails the test with Hunyuan's message.
    mock.push_error("ResourceUnavailable.InArrears", "账号已欠费");
    let (_, answer) = root.get("/api/channel/test/1").await;
    assert_eq!(answer["success"], false, "{answer}");
    assert!(
        answer["message"]
            .as_str()
            .unwrap_or_default()
            .contains("InArrears"),
        "{answer}"
    );
}

/// A body that repeats a field the hub view reads (`seed`, a penalty, a message's
/// `thinking_blocks`) is read as the OpenAI path reads it, the last value kept, not refused as
/// a repeated field: what it was before the one hub view read those fields too.
#[tokio::test]
async fn a_body_repeating_a_field_is_read_with_its_last_value() {
    let mock = MockHunyuan::start().await;
    mock.push_text("好", 3, 1);
    // No model mapping: the client's bytes reach the conversion as sent.
    let mut channel = hunyuan_channel(&mock, KEY);
    channel["model_mapping"] = json!("");
    let (server, _, _, key) = priced_setup(&[channel], MODEL, 2.0, 3.0).await;
    let body = r#"{"model": "hunyuan-test", "seed": 1, "seed": 2,
        "presence_penalty": 0.1, "presence_penalty": 0.2, "temperature": 0.3,
        "messages": [{"role": "assistant", "content": "早", "thinking_blocks": [], "thinking_blocks": null},
            {"role": "user", "content": "你好"}]}"#;
    let (status, _, text) = raw(server
        .client
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .body(body))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(
        mock.last().body,
        json!({"Model": "hunyuan-test", "Temperature": 0.3,
            "Messages": [{"Role": "assistant", "Content": "早"},
                {"Role": "user", "Content": "你好"}]})
    );
}
