//! The one meter through the public HTTP API: output that the upstream does not report usage
//! for is counted whatever its kind (tool calls, reasoning, legacy completions, the Responses
//! API's typed events), the Responses API's own usage is billed, provider usage is normalised
//! (cache reads, Anthropic cache writes by TTL), and upstream errors never carry the channel's
//! key to the client, the log or the channel.

mod common;

use std::time::Duration;

use common::fault::Script;
use common::mock_anthropic::{AnthropicUsage, MockAnthropic};
use common::mock_gemini::MockGemini;
use common::mock_upstream::MockUpstream;
use common::relay_fixture::{balances, fixture, other, raw};
use common::{ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate_storage::logs::{LOG_CONSUME, LogEntry};

/// `mock-test`: ratio 1, completion 2 (so a row's quota is prompt + 2 × completion).
async fn price_mock_models(server: &TestServer) {
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    server
        .set_option(
            &root,
            "ModelRatio",
            json!(r#"{"mock-test": 1, "claude-test": 2, "gemini-test": 0.5}"#),
        )
        .await;
    server
        .set_option(
            &root,
            "CompletionRatio",
            json!(r#"{"mock-test": 2, "claude-test": 5, "gemini-test": 4}"#),
        )
        .await;
}

fn openai_channel(mock: &MockUpstream, key: &str) -> Value {
    json!({"name": "oa", "type": 1, "key": key, "base_url": mock.base,
        "models": "mock-test,gpt-4o", "group": "default"})
}

fn sse(parts: &[Value]) -> Vec<String> {
    parts.iter().map(|p| format!("data: {p}\n\n")).collect()
}

/// The newest consume row.
#[expect(clippy::expect_used, reason = "test helper: no row fails the test")]
fn consume(logs: &[LogEntry]) -> &LogEntry {
    logs.iter()
        .find(|l| l.log_type == LOG_CONSUME)
        .expect("a consume row")
}

async fn stream_text(server: &TestServer, key: &str, path: &str, body: Value) -> String {
    let (status, _, text) = raw(server
        .client
        .post(server.url(path))
        .bearer_auth(key)
        .json(&body))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    text
}

/// Before the one meter, a streamed tool call from an upstream that sends no usage was logged
/// with 0 completion tokens (only `delta.content` was counted).
#[tokio::test]
async fn a_streamed_tool_call_without_usage_is_counted() {
    let mock = MockUpstream::start().await;
    let server = TestServer::start().await;
    let (_, payer, key) =
        fixture(&server, &[openai_channel(&mock, "k-1")], 1_000_000, 500_000).await;
    price_mock_models(&server).await;
    let args = r#"{"city": "Paris", "unit": "celsius", "days": 5}"#;
    let mut parts = sse(&[
        json!({"id": "c", "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
            {"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]}}]}),
        json!({"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": args}}]}}]}),
        json!({"id": "c", "choices": [{"index": 0, "delta": {"reasoning_content": "think about the weather"}}]}),
        json!({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ]);
    parts.push("data: [DONE]\n\n".into());
    mock.push_script(Script::ok("text/event-stream", parts));
    let text = stream_text(
        &server,
        &key,
        "/v1/chat/completions",
        json!({"model": "mock-test", "stream": true, "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert!(text.contains("get_weather"), "{text}");
    let (_, _, _, logs) = balances(&server, payer.id).await;
    let row = consume(&logs);
    assert_eq!(other(row)["usage_source"], "estimated");
    // Estimator (mock-test is no OpenAI model): "get_weather" 3 + the arguments 12 + the
    // reasoning 6 = 21 tokens; the prompt "hi" is 1 + 3 + 3 framing = 7.
    assert_eq!((row.prompt_tokens, row.completion_tokens), (7, 21));
    assert_eq!(row.quota, 7 + 2 * 21);
}

/// Legacy completions stream their output as `choices[].text`.
#[tokio::test]
async fn legacy_completions_text_is_counted() {
    let mock = MockUpstream::start().await;
    let server = TestServer::start().await;
    let (_, payer, key) =
        fixture(&server, &[openai_channel(&mock, "k-1")], 1_000_000, 500_000).await;
    price_mock_models(&server).await;
    let mut parts = sse(&[
        json!({"id": "c", "object": "text_completion", "choices": [{"index": 0, "text": "once upon a time"}]}),
        json!({"id": "c", "object": "text_completion", "choices": [{"index": 0, "text": " there was", "finish_reason": "stop"}]}),
    ]);
    parts.push("data: [DONE]\n\n".into());
    mock.push_script(Script::ok("text/event-stream", parts));
    stream_text(
        &server,
        &key,
        "/v1/completions",
        json!({"model": "mock-test", "stream": true, "prompt": "tell me"}),
    )
    .await;
    let (_, _, _, logs) = balances(&server, payer.id).await;
    let row = consume(&logs);
    // "once upon a time there was": 26 characters → 7 tokens; "tell me" → 2.
    assert_eq!((row.prompt_tokens, row.completion_tokens), (2, 7));
    assert_eq!(other(row)["usage_source"], "estimated");
}

/// Before the one meter, streamed `/v1/responses` output was not counted at all, and its usage
/// (in `response.completed`) was not read.
#[tokio::test]
async fn streamed_responses_are_billed_from_their_typed_events() {
    let mock = MockUpstream::start().await;
    let server = TestServer::start().await;
    let (_, payer, key) =
        fixture(&server, &[openai_channel(&mock, "k-1")], 1_000_000, 500_000).await;
    price_mock_models(&server).await;
    let event = |kind: &str, data: Value| format!("event: {kind}\ndata: {data}\n\n");
    let head = vec![
        event(
            "response.created",
            json!({"type": "response.created", "response": {"id": "r", "status": "in_progress", "usage": null}}),
        ),
        event(
            "response.output_text.delta",
            json!({"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "content_index": 0, "delta": "The answer is forty-two."}),
        ),
        event(
            "response.function_call_arguments.delta",
            json!({"type": "response.function_call_arguments.delta", "item_id": "f", "output_index": 1, "delta": "{\"q\":\"x\"}"}),
        ),
    ];
    // Without usage (and without `response.completed`, so cut short: P16's one ending rule):
    // the output is counted. "The answer is forty-two." 24 chars → 6, "{\"q\":\"x\"}" 9
    // chars → 3.
    mock.push_script(Script::ok("text/event-stream", head.clone()));
    let body = json!({"model": "mock-test", "stream": true, "input": "hello there"});
    let text = stream_text(&server, &key, "/v1/responses", body.clone()).await;
    assert!(text.contains("forty-two"), "{text}");
    let (_, _, _, logs) = balances(&server, payer.id).await;
    let row = consume(&logs);
    assert_eq!(other(row)["usage_source"], "partial");
    assert_eq!(other(row)["partial_reason"], "upstream_cut");
    assert_eq!((row.prompt_tokens, row.completion_tokens), (3, 9));
    // With `response.completed`: its usage is billed, and the client still gets the event.
    let mut parts = head;
    parts.push(event(
        "response.completed",
        json!({"type": "response.completed", "response": {"id": "r", "status": "completed",
            "output": [{"type": "message", "content": [{"type": "output_text", "text": "The answer is forty-two."}]}],
            "usage": {"input_tokens": 120, "input_tokens_details": {"cached_tokens": 100},
                "output_tokens": 30, "output_tokens_details": {"reasoning_tokens": 10}, "total_tokens": 150}}}),
    ));
    mock.push_script(Script::ok("text/event-stream", parts));
    let text = stream_text(&server, &key, "/v1/responses", body).await;
    assert!(text.contains("response.completed"), "{text}");
    assert!(
        mock.last_body()
            .is_some_and(|b| b.get("stream_options").is_none()),
        "the Responses API is not asked for a chat usage chunk"
    );
    let (_, _, _, logs) = balances(&server, payer.id).await;
    let row = consume(&logs);
    assert_eq!(other(row)["usage_source"], "upstream");
    assert_eq!((row.prompt_tokens, row.completion_tokens), (120, 30));
    assert_eq!(other(row)["cache_tokens"], 100);
}

/// A whole Responses answer without usage is counted from its `output` items.
#[tokio::test]
async fn whole_responses_and_tool_calls_without_usage_are_counted() {
    let mock = MockUpstream::start().await;
    let server = TestServer::start().await;
    let (_, payer, key) =
        fixture(&server, &[openai_channel(&mock, "k-1")], 1_000_000, 500_000).await;
    price_mock_models(&server).await;
    let answer = json!({"id": "r", "object": "response", "output": [
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "abcdefgh"}]},
        {"type": "function_call", "name": "lookup", "arguments": "{\"id\":12345678}"},
        {"type": "message", "content": [{"type": "output_text", "text": "abcd"}]}]});
    mock.push_script(Script::ok("application/json", vec![answer.to_string()]));
    let (status, _) = server
        .send(
            server
                .client
                .post(server.url("/v1/responses"))
                .bearer_auth(&key)
                .json(&json!({"model": "mock-test", "input": "hi"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, _, _, logs) = balances(&server, payer.id).await;
    let row = consume(&logs);
    // "abcdefgh" 2 + "lookup" 2 + "{\"id\":12345678}" 4 + "abcd" 1 = 9
    assert_eq!(row.completion_tokens, 9);
    assert_eq!(other(row)["usage_source"], "estimated");
    // A whole chat answer that is a tool call.
    let chat = json!({"id": "c", "object": "chat.completion", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": null, "tool_calls": [{"id": "t", "type": "function",
        "function": {"name": "lookup", "arguments": "{\"id\":12345678}"}}]}, "finish_reason": "tool_calls"}]});
    mock.push_script(Script::ok("application/json", vec![chat.to_string()]));
    let (status, _) = server
        .send(
            server
                .client
                .post(server.url("/v1/chat/completions"))
                .bearer_auth(&key)
                .json(
                    &json!({"model": "mock-test", "messages": [{"role": "user", "content": "hi"}]}),
                ),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, _, _, logs) = balances(&server, payer.id).await;
    assert_eq!(consume(&logs).completion_tokens, 6);
}

/// Golden usage per provider, through the relay: OpenAI's cached tokens (inside the prompt),
/// Anthropic's cache reads and 5-minute / 1-hour writes (beside `input_tokens`), Gemini's
/// cached content (inside the prompt) — each billed once at its rate.
#[tokio::test]
async fn provider_usage_is_normalised_and_cache_writes_priced_by_ttl() {
    let openai = MockUpstream::start().await;
    let anthropic = MockAnthropic::start().await;
    let gemini = MockGemini::start().await;
    let server = TestServer::start().await;
    let channels = [
        json!({"name": "oa", "type": 1, "key": "k-oa", "base_url": openai.base,
            "models": "mock-test", "group": "default"}),
        json!({"name": "claude", "type": 14, "key": "k-claude", "base_url": anthropic.base,
            "models": "claude-test", "group": "default"}),
        json!({"name": "gemini", "type": 24, "key": "k-gemini", "base_url": gemini.base,
            "models": "gemini-test", "group": "default"}),
    ];
    let (root, payer, key) = fixture(&server, &channels, 10_000_000, 5_000_000).await;
    server
        .set_option(
            &root,
            "CacheRatio",
            json!(r#"{"mock-test": 0.5, "claude-test": 0.1, "gemini-test": 0.25}"#),
        )
        .await;
    price_mock_models(&server).await;

    // OpenAI: 1000 prompt of which 600 cached, 100 completion; 1 × (400 + 600 × 0.5 + 100 × 2) = 900.
    openai.set_usage(Some((1000, 100, 600)));
    let (status, body) = server
        .send(
            server
                .client
                .post(server.url("/v1/chat/completions"))
                .bearer_auth(&key)
                .json(
                    &json!({"model": "mock-test", "messages": [{"role": "user", "content": "hi"}]}),
                ),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, _, _, logs) = balances(&server, payer.id).await;
    let row = consume(&logs);
    assert_eq!(
        (row.prompt_tokens, row.completion_tokens, row.quota),
        (1000, 100, 900)
    );
    assert_eq!(other(row)["cache_tokens"], 600);

    // Anthropic: 100 input + 1000 read + 200 written (5 min) + 300 written (1 h), 50 output:
    // 2 × (100 + 1000 × 0.1 + 200 × 1.25 + 300 × 2 + 50 × 5) = 2 × 1300 = 2600.
    anthropic.set_usage(AnthropicUsage {
        input: 100,
        output: 50,
        cache_read: 1000,
        cache_write: 500,
    });
    anthropic.push_script(Script::ok(
        "application/json",
        vec![json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 100, "output_tokens": 50, "cache_read_input_tokens": 1000,
                "cache_creation_input_tokens": 500,
                "cache_creation": {"ephemeral_5m_input_tokens": 200, "ephemeral_1h_input_tokens": 300}}})
        .to_string()],
    ));
    let (status, body) = server
        .send(server.client.post(server.url("/v1/messages")).header("x-api-key", &key)
            .json(&json!({"model": "claude-test", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]})))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["usage"]["cache_creation"]["ephemeral_1h_input_tokens"], 300,
        "passed through"
    );
    let (_, _, _, logs) = balances(&server, payer.id).await;
    let row = consume(&logs);
    assert_eq!(
        (row.prompt_tokens, row.completion_tokens, row.quota),
        (1600, 50, 2600)
    );
    let o = other(row);
    assert_eq!(
        (
            &o["cache_tokens"],
            &o["cache_creation_tokens"],
            &o["cache_creation_tokens_5m"],
            &o["cache_creation_tokens_1h"]
        ),
        (&json!(1000), &json!(500), &json!(200), &json!(300))
    );
    assert_eq!(
        (&o["cache_creation_ratio_5m"], &o["cache_creation_ratio_1h"]),
        (&json!(1.25), &json!(2.0))
    );

    // Gemini: 1000 prompt of which 800 cached, 40 candidates + 10 thoughts:
    // 0.5 × (200 + 800 × 0.25 + 50 × 4) = 0.5 × 600 = 300.
    gemini.set_usage((1000, 40, 10, 800));
    let (status, body) = server
        .send(
            server
                .client
                .post(server.url("/v1beta/models/gemini-test:generateContent"))
                .header("x-goog-api-key", &key)
                .json(&json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, _, _, logs) = balances(&server, payer.id).await;
    let row = consume(&logs);
    assert_eq!(
        (row.prompt_tokens, row.completion_tokens, row.quota),
        (1000, 50, 300)
    );
    assert_eq!(other(row)["cache_tokens"], 800);
}

/// An upstream error that echoes the channel's key — whole, or masked OpenAI's way with the
/// key's head and tail — reaches neither the client, nor the error log, nor the channel's
/// stored error, after failover is exhausted, on the JSON, stream and adaptor paths.
#[tokio::test]
async fn upstream_errors_never_echo_the_channel_key() {
    const KEY_A: &str = "sk-live-abcdef0123456789wxyz";
    const KEY_B: &str = "sk-live-ZYXWVU9876543210mnop";
    let first = MockUpstream::start().await;
    let second = MockUpstream::start().await;
    let anthropic = MockAnthropic::start().await;
    let server = TestServer::start().await;
    let channels = [
        json!({"name": "a", "type": 1, "key": KEY_A, "base_url": first.base,
            "models": "mock-test", "group": "default", "priority": 10}),
        json!({"name": "b", "type": 1, "key": KEY_B, "base_url": second.base,
            "models": "mock-test", "group": "default", "priority": 0}),
        json!({"name": "claude", "type": 14, "key": KEY_A, "base_url": anthropic.base,
            "models": "claude-test", "group": "default"}),
    ];
    let (root, payer, key) = fixture(&server, &channels, 1_000_000, 500_000).await;
    price_mock_models(&server).await;
    server.set_option(&root, "RetryTimes", json!("1")).await;
    server
        .set_option(&root, "AutomaticDisableChannelEnabled", json!("false"))
        .await;
    let openai_echo = |k: &str| {
        json!({"error": {"message": format!("Incorrect API key provided: {}{}{}. You can find your API key at https://platform.openai.com/account/api-keys.",
            &k[..8], "*".repeat(20), &k[k.len() - 4..]), "type": "invalid_request_error", "code": "invalid_api_key"}})
    };
    let whole_echo = |k: &str| json!({"error": {"message": format!("key {k} is not allowed"), "type": "server_error"}});
    let leaks = |text: &str| {
        [KEY_A, KEY_B]
            .iter()
            .flat_map(|k| [&k[..11], &k[k.len() - 4..], &k[8..20]])
            .any(|part| text.contains(part))
    };
    for stream in [false, true] {
        first.push_fault(500, whole_echo(KEY_A));
        second.push_fault(401, openai_echo(KEY_B));
        let (status, _, text) = raw(server.client.post(server.url("/v1/chat/completions")).bearer_auth(&key)
            .json(&json!({"model": "mock-test", "stream": stream, "messages": [{"role": "user", "content": "hi"}]})))
            .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{text}");
        assert!(
            !leaks(&text) && text.contains("*****"),
            "stream {stream}: {text}"
        );
    }
    // The adaptor path: an OpenAI client of a Claude channel, and an Anthropic client.
    anthropic.push_fault(
        401,
        json!({"type": "error", "error": {"type": "authentication_error",
        "message": format!("invalid x-api-key {}...{}", &KEY_A[..6], &KEY_A[KEY_A.len() - 4..])}}),
    );
    let (status, _, text) = raw(server
        .client
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(&key)
        .json(&json!({"model": "claude-test", "messages": [{"role": "user", "content": "hi"}]})))
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{text}");
    assert!(!leaks(&text), "{text}");
    anthropic.push_fault(
        401,
        json!({"type": "error", "error": {"type": "authentication_error",
        "message": format!("invalid x-api-key {KEY_A}")}}),
    );
    let (status, _, text) = raw(server.client.post(server.url("/v1/messages")).header("x-api-key", &key)
        .json(&json!({"model": "claude-test", "max_tokens": 10, "stream": true, "messages": [{"role": "user", "content": "hi"}]})))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{text}");
    assert!(!leaks(&text), "{text}");
    // Nothing in the error rows, nothing in the channels' stored errors.
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000, "failed requests cost nothing");
    assert!(logs.len() >= 4, "{logs:?}");
    for log in &logs {
        assert!(!leaks(&log.content) && !leaks(&log.other), "{log:?}");
    }
    let (_, channels) = root.get("/api/channel/?p=0&page_size=10").await;
    let listed = channels.to_string();
    assert!(
        !leaks(&listed.replace(KEY_A, "").replace(KEY_B, "")),
        "{listed}"
    );
}

/// An error the upstream sends inside a 200 stream is masked too: on the OpenAI path (the
/// event is re-framed only when a key part had to be masked), on the converting adaptor, and
/// on a same-protocol pass-through (which forwarded the upstream's bytes unread before).
#[tokio::test]
async fn in_band_stream_errors_never_echo_the_channel_key() {
    const KEY: &str = "sk-live-abcdef0123456789wxyz";
    let openai = MockUpstream::start().await;
    let anthropic = MockAnthropic::start().await;
    let server = TestServer::start().await;
    let channels = [
        openai_channel(&openai, KEY),
        json!({"name": "claude", "type": 14, "key": KEY, "base_url": anthropic.base,
            "models": "claude-test", "group": "default"}),
    ];
    let (_, _, key) = fixture(&server, &channels, 1_000_000, 500_000).await;
    price_mock_models(&server).await;
    let leaks = |text: &str| {
        [&KEY[..11], &KEY[KEY.len() - 4..], &KEY[8..20]]
            .iter()
            .any(|p| text.contains(p))
    };
    let text_event = json!({"id": "c", "choices": [{"index": 0, "delta": {"content": "Hi"}}]});
    let clean_error =
        json!({"error": {"message": "the upstream is overloaded", "type": "server_error"}});
    let echo = json!({"error": {"message": format!("quota exceeded for key {}...{}", &KEY[..7], &KEY[KEY.len() - 4..]),
        "type": "insufficient_quota"}});
    let mut parts = sse(&[text_event, clean_error.clone(), echo]);
    parts.push("data: [DONE]\n\n".into());
    openai.push_script(Script::ok("text/event-stream", vec![parts.concat()]));
    let text = stream_text(&server, &key, "/v1/chat/completions",
        json!({"model": "mock-test", "stream": true, "messages": [{"role": "user", "content": "hi"}]})).await;
    assert!(!leaks(&text), "{text}");
    assert!(text.contains("quota exceeded for key *****"), "{text}");
    assert!(
        text.contains(&format!("data: {clean_error}\n\n")),
        "other errors pass as sent: {text}"
    );
    assert!(
        text.contains("\"content\":\"Hi\"") && text.ends_with("data: [DONE]\n\n"),
        "{text}"
    );

    let claude = [
        format!(
            "event: message_start\ndata: {}\n\n",
            json!({"type": "message_start", "message": {"id": "msg_1",
            "type": "message", "role": "assistant", "model": "claude-test", "content": [],
            "usage": {"input_tokens": 5, "output_tokens": 1}}})
        ),
        format!(
            "event: error\ndata: {}\n\n",
            json!({"type": "error", "error": {"type": "authentication_error",
            "message": format!("invalid x-api-key {KEY}")}})
        ),
    ];
    anthropic.push_script(Script::ok("text/event-stream", vec![claude.concat()]));
    let text = stream_text(&server, &key, "/v1/chat/completions",
        json!({"model": "claude-test", "stream": true, "messages": [{"role": "user", "content": "hi"}]})).await;
    assert!(!leaks(&text), "{text}");
    assert!(text.contains("invalid x-api-key *****"), "{text}");

    // An Anthropic client of a Claude channel gets the upstream's own bytes (passed through),
    // events split across reads included — but the error event is masked.
    let whole = claude.concat();
    let cuts = [0, 17, 60, claude[0].len() + 9, whole.len()];
    let reads = cuts
        .windows(2)
        .map(|w| whole[w[0]..w[1]].to_owned())
        .collect();
    anthropic.push_script(Script {
        // Apart in time, so the reads arrive apart.
        gap: Duration::from_millis(20),
        ..Script::ok("text/event-stream", reads)
    });
    let text = stream_text(&server, &key, "/v1/messages",
        json!({"model": "claude-test", "max_tokens": 10, "stream": true, "messages": [{"role": "user", "content": "hi"}]})).await;
    assert!(!leaks(&text), "{text}");
    assert!(text.contains("invalid x-api-key *****"), "{text}");
    assert!(
        text.starts_with(&claude[0]),
        "the other events pass byte for byte: {text}"
    );
}
