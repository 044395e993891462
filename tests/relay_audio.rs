//! Audio through the public HTTP API: speech billed per input character with the audio passed
//! through, transcriptions and translations streamed to the upstream byte for byte and billed
//! from token usage or audio duration, model mapping inside the form, errors and refunds.

mod common;

use std::time::Duration;

use common::fault::{Script, Tail};
use common::mock_audio::{AUDIO, MockAudio};
use common::relay_fixture::{balances, fixture, other};
use common::{ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn audio_channel(mock: &MockAudio, extra: Value) -> Value {
    let mut channel = json!({"name": "audio", "type": 1, "key": "audio-key", "base_url": mock.base,
        "models": "tts-test,whisper-test", "group": "default"});
    if let (Some(c), Some(e)) = (channel.as_object_mut(), extra.as_object()) {
        c.extend(e.clone());
    }
    channel
}

/// A multipart body with `model` first, then a file of `size` bytes, then response_format.
fn form(model: &str, size: usize, format: &str) -> (String, Vec<u8>) {
    let boundary = "----tollgate-test-boundary";
    let mut body = Vec::new();
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\n{model}\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(
        format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.mp3\"\r\nContent-Type: audio/mpeg\r\n\r\n")
            .as_bytes(),
    );
    body.extend((0..size).map(|i| u8::try_from(i % 251).unwrap_or(0)));
    body.extend_from_slice(
        format!("\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"response_format\"\r\n\r\n{format}\r\n--{boundary}--\r\n")
            .as_bytes(),
    );
    (format!("multipart/form-data; boundary={boundary}"), body)
}

#[tokio::test]
async fn speech_streams_the_audio_back_and_bills_input_characters() {
    let mock = MockAudio::start().await;
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(
        &server,
        &[audio_channel(&mock, json!({}))],
        1_000_000,
        500_000,
    )
    .await;
    let resp = server
        .client
        .post(server.url("/v1/audio/speech"))
        .bearer_auth(&key)
        .json(&json!({"model": "tts-test", "input": "Hello wörld", "voice": "alloy"}))
        .send()
        .await
        .unwrap_or_else(|e| unreachable!("{e}"));
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "audio/mpeg");
    let audio = resp.bytes().await.unwrap_or_default();
    assert_eq!(&audio[..], AUDIO, "the audio passes through untouched");
    assert_eq!(mock.last_path(), "/v1/audio/speech");
    assert_eq!(mock.last_auth().as_deref(), Some("Bearer audio-key"));
    let (quota, _, count, logs) = balances(&server, payer.id).await;
    // 11 characters (not bytes) × ratio 7.5 = 82.5 → 83
    assert_eq!((quota, count), (1_000_000 - 83, 1));
    assert_eq!((logs[0].prompt_tokens, logs[0].completion_tokens), (11, 0));
    assert_eq!(logs[0].model_name, "tts-test");
}

#[tokio::test]
async fn transcriptions_stream_the_upload_unchanged_and_bill_token_usage() {
    let mock = MockAudio::start().await;
    mock.set_answer(
        "application/json",
        r#"{"text":"hello","usage":{"type":"tokens","input_tokens":100,"output_tokens":5}}"#,
    );
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(
        &server,
        &[audio_channel(&mock, json!({}))],
        1_000_000,
        500_000,
    )
    .await;
    let (content_type, body) = form("whisper-test", 3 * 1024 * 1024, "json");
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/audio/transcriptions"))
                .bearer_auth(&key)
                .header("content-type", &content_type)
                .body(body.clone()),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["text"], "hello");
    assert_eq!(mock.last_path(), "/v1/audio/transcriptions");
    assert_eq!(
        mock.last_content_type().as_deref(),
        Some(content_type.as_str())
    );
    assert!(
        mock.last_body() == body,
        "the upload reaches the upstream byte for byte"
    );
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // whisper-test: 15 × (100 + 5) = 1575
    assert_eq!(quota, 1_000_000 - 1575);
    assert_eq!(other(&logs[0])["usage_source"], "upstream");
}

#[tokio::test]
async fn translations_bill_the_duration_and_mapped_models_are_rewritten_in_the_form() {
    let mock = MockAudio::start().await;
    mock.set_answer(
        "application/json",
        r#"{"text":"hello world!","duration":61.2}"#,
    );
    let server = TestServer::start().await;
    let channel = audio_channel(
        &mock,
        json!({"model_mapping": r#"{"whisper-test": "whisper-upstream"}"#}),
    );
    let (_, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let (content_type, body) = form("whisper-test", 1000, "verbose_json");
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/audio/translations"))
                .bearer_auth(&key)
                .header("content-type", &content_type)
                .body(body.clone()),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(mock.last_path(), "/v1/audio/translations");
    let sent = mock.last_body();
    let text = String::from_utf8_lossy(&sent);
    assert!(
        text.contains("name=\"model\"\r\n\r\nwhisper-upstream\r\n"),
        "{text}"
    );
    assert_eq!(
        sent.len(),
        body.len() + "whisper-upstream".len() - "whisper-test".len()
    );
    assert!(
        sent.ends_with(&body[body.len() - 200..]),
        "the rest is untouched"
    );
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // ceil(61.2) = 62 s → 1033 prompt tokens; "hello world!" → 3 tokens; × 15 = 15540
    assert_eq!(quota, 1_000_000 - 15_540);
    assert_eq!(
        (logs[0].prompt_tokens, logs[0].completion_tokens),
        (1033, 3)
    );
    let other = other(&logs[0]);
    assert_eq!(other["upstream_model_name"], "whisper-upstream");
    assert_eq!(other["usage_source"], "estimated");
}

#[tokio::test]
async fn audio_errors_refund_and_uploads_are_not_replayed() {
    let mock = MockAudio::start().await;
    let backup = MockAudio::start().await;
    let server = TestServer::start().await;
    let mut first = audio_channel(&mock, json!({}));
    first["priority"] = json!(10);
    let (root, payer, key) = fixture(
        &server,
        &[first, audio_channel(&backup, json!({}))],
        1_000_000,
        500_000,
    )
    .await;
    server.set_option(&root, "RetryTimes", json!("2")).await;

    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/audio/transcriptions"))
                .bearer_auth(&key)
                .body("x"),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("multipart"))
    );

    mock.fail_next(500);
    let (content_type, body) = form("whisper-test", 10, "json");
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/audio/transcriptions"))
                .bearer_auth(&key)
                .header("content-type", &content_type)
                .body(body),
        )
        .await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{answer}");
    assert_eq!(answer["error"]["message"], "upstream failed");
    assert_eq!(backup.calls(), 0, "a spent upload is not sent again");

    mock.fail_next(500);
    let (status, _) = server
        .send(
            server
                .client
                .post(server.url("/v1/audio/speech"))
                .bearer_auth(&key)
                .json(&json!({"model": "tts-test", "input": "hi"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "speech fails over");
    assert_eq!(backup.calls(), 1);

    let (quota, _, count, _) = balances(&server, payer.id).await;
    // Only the speech request cost anything: 2 × 7.5 = 15.
    assert_eq!((quota, count), (1_000_000 - 15, 1));
}

/// A transcription whose answer broke off used to release its reservation (its own read, not
/// the whole-answer reader): the upstream had done the work and nobody paid. It is billed as
/// partial now, like every whole answer, and answered 502.
#[tokio::test]
async fn a_transcription_cut_off_by_the_upstream_is_billed_as_partial() {
    let mock = MockAudio::start().await;
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(
        &server,
        &[audio_channel(&mock, json!({}))],
        1_000_000,
        500_000,
    )
    .await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    // A per-call price: the audio is not counted up front, so a cut costs the call.
    server
        .set_option(&root, "ModelPrice", json!(r#"{"whisper-test": 0.01}"#))
        .await;
    let mut script = Script::ok("application/json", vec![r#"{"text":"hel"#.to_owned()]);
    script.tail = Tail::Cut;
    mock.push_script(script);
    let (content_type, body) = form("whisper-test", 1024, "json");
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/audio/transcriptions"))
                .bearer_auth(&key)
                .header("content-type", &content_type)
                .body(body),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{answer}");
    let logs = rows_after(&server, payer.id, 1).await;
    // 0.01 × QuotaPerUnit 500,000 = 5,000 per call.
    assert_eq!(
        (
            logs[0].log_type,
            logs[0].prompt_tokens,
            logs[0].completion_tokens,
            logs[0].quota
        ),
        (tollgate_storage::logs::LOG_CONSUME, 0, 0, 5000)
    );
    assert_eq!(other(&logs[0])["usage_source"], "partial");
    assert_eq!(other(&logs[0])["partial_reason"], "upstream_cut");
    let (quota, _, _, _) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000 - 5000);
}

/// Before audio was forwarded in a task of its own, a client that hung up while the upstream
/// worked dropped the request with its reservation: the upstream's work was never paid for.
#[tokio::test]
async fn a_client_that_leaves_still_pays_for_the_audio_the_upstream_made() {
    let mock = MockAudio::start().await;
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(
        &server,
        &[audio_channel(&mock, json!({}))],
        1_000_000,
        500_000,
    )
    .await;
    leave(
        &mock,
        server
            .client
            .post(server.url("/v1/audio/speech"))
            .bearer_auth(&key)
            .json(&json!({"model": "tts-test", "input": "Hello wörld", "voice": "alloy"})),
    )
    .await;
    let logs = rows_after(&server, payer.id, 1).await;
    assert_eq!((logs[0].prompt_tokens, logs[0].quota), (11, 83));
    assert_eq!(other(&logs[0])["usage_source"], "partial");
    assert_eq!(other(&logs[0])["partial_reason"], "client_gone");

    mock.set_answer(
        "application/json",
        r#"{"text":"hello","usage":{"type":"tokens","input_tokens":100,"output_tokens":5}}"#,
    );
    let (content_type, body) = form("whisper-test", 1024, "json");
    leave(
        &mock,
        server
            .client
            .post(server.url("/v1/audio/transcriptions"))
            .bearer_auth(&key)
            .header("content-type", &content_type)
            .body(body),
    )
    .await;
    let logs = rows_after(&server, payer.id, 2).await;
    // whisper-test: 15 × (100 + 5) = 1575
    assert_eq!(logs[0].quota, 1575);
    assert_eq!(other(&logs[0])["partial_reason"], "client_gone");
    let (quota, _, _, _) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000 - 83 - 1575);
}

/// Sends `req` and hangs up once the upstream has it; then lets the upstream answer.
async fn leave(mock: &MockAudio, req: reqwest::RequestBuilder) {
    mock.hold_answers();
    let call = tokio::spawn(req.send());
    mock.arrived().await;
    call.abort();
    let _ = call.await;
    mock.release();
}

/// The user's log rows once there are `n` (newest first); the settlement of a request whose
/// client left comes after the client is gone, so it is waited for.
async fn rows_after(
    server: &TestServer,
    user: i64,
    n: usize,
) -> Vec<tollgate_storage::logs::LogEntry> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let (_, _, _, logs) = balances(server, user).await;
        if logs.len() >= n || tokio::time::Instant::now() > deadline {
            assert!(logs.len() >= n, "{n} rows expected, got {logs:?}");
            return logs;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
