//! iFlytek Spark (channel type 18) through the public HTTP API, against a mock speaking its
//! WebSocket chat API as documented (tests/common/mock_spark.rs checks the signed URL itself):
//! OpenAI chat and Anthropic clients, whole and streamed, billed from Spark's usage; the model
//! version (a `SparkDesk-vX.Y` model, else `other`) picking the path and `domain`; its errors by
//! `header.code` (a used-up grant disables the key and the next channel answers; flow control
//! goes to the next channel; a content refusal is the client's 400 without failover; a refused
//! signature condemns the key); what Spark cannot take is a 400 before anything is sent; the
//! console's channel test goes through the same conversation.

mod common;

use common::mock_spark::{APP_ID, Answer, KEY, MockSpark};
use common::relay_fixture::{
    balances, chat_request, hi, other, priced_setup, raw, sse_events, wait_channel_status,
};
use common::socks::SocksProxy;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The test model: ratio 2, completion 3.
const MODEL: &str = "spark-test";

fn spark_channel(mock: &MockSpark, key: &str) -> Value {
    json!({"name": "spark", "type": 18, "key": key, "base_url": mock.base,
        "models": "spark-test", "group": "default",
        "model_mapping": r#"{"spark-test": "SparkDesk-v3.5"}"#})
}

#[tokio::test]
async fn openai_chat_is_a_signed_conversation_billed_from_sparks_usage() {
    let mock = MockSpark::start().await;
    mock.push(Answer::Text {
        pieces: vec!["你好".into(), "！".into()],
        usage: (7, 9),
        complete: true,
    });
    let (server, _, payer, key) = priced_setup(&[spark_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    let body = json!({"model": "spark-test", "temperature": 0.3, "max_tokens": 100,
        "messages": [{"role": "system", "content": "be brief"},
            {"role": "user", "content": "你好"}]});
    let (status, answer) = server.send(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["object"], "chat.completion");
    assert_eq!(answer["model"], "SparkDesk-v3.5");
    assert_eq!(answer["choices"][0]["message"]["content"], "你好！");
    assert_eq!(answer["choices"][0]["finish_reason"], "stop");
    assert_eq!(answer["usage"]["prompt_tokens"], 7);
    assert_eq!(answer["usage"]["completion_tokens"], 9);
    let call = mock.last();
    assert!(call.signed, "the mock checked the signed URL");
    assert_eq!(call.path, "/v3.5/chat");
    assert_eq!(
        call.frame,
        json!({"header": {"app_id": APP_ID},
            "parameter": {"chat": {"domain": "generalv3.5", "temperature": 0.3, "max_tokens": 100}},
            "payload": {"message": {"text": [{"role": "system", "content": "be brief"},
                {"role": "user", "content": "你好"}]}}})
    );
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // 2 × (7 + 9 × 3) = 68
    assert_eq!(quota, 1_000_000 - 68);
    assert_eq!((logs[0].prompt_tokens, logs[0].completion_tokens), (7, 9));
    assert_eq!(other(&logs[0])["usage_source"], "upstream");
}

#[tokio::test]
async fn the_version_comes_from_other_when_the_model_names_none() {
    let mock = MockSpark::start().await;
    let mut channel = spark_channel(&mock, KEY);
    channel["model_mapping"] = json!("");
    channel["other"] = json!("v4.0");
    let (server, _, _, key) = priced_setup(&[channel], MODEL, 2.0, 3.0).await;
    let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let call = mock.last();
    assert_eq!(call.path, "/v4.0/chat");
    assert_eq!(call.frame["parameter"]["chat"]["domain"], "4.0Ultra");
}

#[tokio::test]
async fn a_stream_reaches_openai_clients_as_chunks_with_usage_and_a_cut_one_is_partial() {
    let mock = MockSpark::start().await;
    mock.push(Answer::Text {
        pieces: vec!["你".into(), "好".into(), "！".into()],
        usage: (5, 3),
        complete: true,
    });
    let (server, _, payer, key) = priced_setup(&[spark_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    let body = json!({"model": "spark-test", "stream": true,
        "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": "你好"}]});
    let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
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

    // Closed before the frame of status 2: no [DONE], billed as partial.
    mock.push(Answer::Text {
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
async fn an_error_frame_after_text_ends_a_stream_unfinished_and_fails_a_whole_answer() {
    let mock = MockSpark::start().await;
    let (server, _, payer, key) = priced_setup(&[spark_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    // Streamed: the text so far, then the error in OpenAI's shape, no [DONE]; billed partial.
    mock.push(Answer::TextThenError {
        pieces: vec!["半".into()],
        code: 10014,
    });
    let body = json!({"model": "spark-test", "stream": true,
        "messages": [{"role": "user", "content": "hi"}]});
    let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(text.contains("半"), "{text}");
    assert!(text.contains("10014"), "{text}");
    assert!(!text.contains("[DONE]"), "{text}");
    let (_, _, _, logs) = balances(&server, payer.id).await;
    assert_eq!(
        other(&logs[0])["usage_source"],
        "partial",
        "{:?}",
        logs[0].other
    );
    // Whole: the client's 400 with Spark's code (an output refusal: no failover).
    mock.push(Answer::TextThenError {
        pieces: vec!["半".into()],
        code: 10014,
    });
    let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("10014"),
        "{answer}"
    );
}

#[tokio::test]
async fn anthropic_clients_reach_spark_channels() {
    let mock = MockSpark::start().await;
    mock.push_text("Hi.", 4, 2);
    let (server, _, payer, key) = priced_setup(&[spark_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/messages"))
                .header("x-api-key", &key)
                .json(
                    &json!({"model": "spark-test", "max_tokens": 64, "system": "be brief",
                    "messages": [{"role": "user", "content": "Hello"}]}),
                ),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["type"], "message");
    assert_eq!(answer["content"][0]["text"], "Hi.");
    assert_eq!(answer["usage"]["input_tokens"], 4);
    assert_eq!(
        mock.last().frame["payload"]["message"]["text"][0],
        json!({"role": "system", "content": "be brief"})
    );
    let (quota, _, _, _) = balances(&server, payer.id).await;
    // 2 × (4 + 2 × 3) = 20
    assert_eq!(quota, 1_000_000 - 20);
}

/// A second channel on its own mock, at a lower priority than the first.
fn backup(mock: &MockSpark) -> Value {
    let mut channel = spark_channel(mock, KEY);
    channel["name"] = json!("backup");
    channel["priority"] = json!(-1);
    channel
}

#[tokio::test]
async fn a_used_up_grant_disables_the_key_and_the_next_channel_answers() {
    let first = MockSpark::start().await;
    let second = MockSpark::start().await;
    first.push_error(
        11200,
        "AppIdNoAuthError:(11200)授权错误：该appId没有相关功能的授权 或者 业务量超过限制",
    );
    second.push_text("ok", 1, 1);
    let mut main = spark_channel(&first, KEY);
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
    assert_eq!(second.calls().len(), 1);
    wait_channel_status(&root, 1, 3).await;
}

#[tokio::test]
async fn flow_control_goes_to_the_next_channel_and_a_content_refusal_does_not() {
    let first = MockSpark::start().await;
    let second = MockSpark::start().await;
    first.push_error(11202, "秒级流控超限");
    second.push_text("from the backup", 1, 1);
    let mut main = spark_channel(&first, KEY);
    main["priority"] = json!(10);
    let (server, root, payer, key) = priced_setup(&[main, backup(&second)], MODEL, 2.0, 3.0).await;
    server.set_option(&root, "RetryTimes", json!("1")).await;
    let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        "from the backup"
    );

    // A content refusal is the client's 400 with Spark's code; the backup is not asked.
    first.push_error(10013, "输入内容审核不通过，涉嫌违规，请重新调整输入内容");
    let before = second.calls().len();
    let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("10013"), "{answer}");
    assert!(!message.contains("mock-api-secret"), "{answer}");
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
async fn a_wrong_api_secret_is_refused_at_the_handshake_and_condemns_the_key() {
    let mock = MockSpark::start().await;
    let mut wrong = spark_channel(&mock, "mockapp1|not-the-secret|mock-api-key-abcdef");
    wrong["auto_ban"] = json!(1);
    let (server, root, payer, key) = priced_setup(&[wrong], MODEL, 2.0, 3.0).await;
    server
        .set_option(&root, "AutomaticDisableChannelEnabled", json!("true"))
        .await;
    let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("HMAC signature"), "{answer}");
    assert!(!message.contains("not-the-secret"), "{answer}");
    let call = mock.last();
    assert!(!call.signed);
    assert_eq!(call.frame, Value::Null, "nothing was sent");
    wait_channel_status(&root, 1, 3).await;
    let (quota, _, _, _) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000);
}

#[tokio::test]
async fn what_spark_cannot_take_is_a_400_before_anything_is_sent() {
    let mock = MockSpark::start().await;
    let (server, _, _, key) = priced_setup(&[spark_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    let image = json!({"model": "spark-test", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "what is it?"},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]}]});
    let (status, answer) = server.send(chat_request(&server, &key, &image)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("image_url"),
        "{answer}"
    );
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/embeddings"))
                .bearer_auth(&key)
                .json(&json!({"model": "spark-test", "input": "hello"})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("/v1/embeddings"), "{answer}");
    assert!(mock.calls().is_empty());
}

#[tokio::test]
async fn the_channel_test_goes_through_the_conversation() {
    let mock = MockSpark::start().await;
    mock.push_text("hi", 1, 1);
    let (_server, root, _, _) = priced_setup(&[spark_channel(&mock, KEY)], MODEL, 2.0, 3.0).await;
    let (status, answer) = root.get("/api/channel/test/1").await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["success"], true, "{answer}");
    let call = mock.last();
    assert!(call.signed);
    assert_eq!(call.path, "/v3.5/chat");
    assert_eq!(call.frame["parameter"]["chat"]["max_tokens"], 1);

    // An error frame fails the test with Spark's message.
    mock.push_error(11200, "授权错误");
    let (_, answer) = root.get("/api/channel/test/1").await;
    assert_eq!(answer["success"], false, "{answer}");
    assert!(
        answer["message"]
            .as_str()
            .unwrap_or_default()
            .contains("11200"),
        "{answer}"
    );
}

#[tokio::test]
async fn a_socks5_proxy_carries_the_conversation_and_an_http_proxy_is_refused() {
    let mock = MockSpark::start().await;
    let socks = SocksProxy::start(Some(("alice", "s3cret"))).await;
    let mut channel = spark_channel(&mock, KEY);
    channel["proxy"] = json!(format!("socks5h://alice:s3cret@{}", socks.addr));
    let (server, _, _, key) = priced_setup(&[channel], MODEL, 2.0, 3.0).await;
    let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert!(
        socks.relayed() >= 1,
        "the conversation went through the proxy"
    );
    assert!(mock.last().signed);

    let mut channel = spark_channel(&mock, KEY);
    channel["proxy"] = json!("http://127.0.0.1:9");
    let (server, _, _, key) = priced_setup(&[channel], MODEL, 2.0, 3.0).await;
    let before = mock.calls().len();
    let (status, answer) = server.send(chat_request(&server, &key, &hi(MODEL))).await;
    assert!(!status.is_success(), "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("socks5"),
        "{answer}"
    );
    assert_eq!(mock.calls().len(), before, "nothing was sent");
}
