//! What the text formula alone does not price (P16 item 2), through the public HTTP API against
//! a scripted upstream: audio tokens at AudioRatio / AudioCompletionRatio, server tool calls at
//! ToolCallPrice, Gemini's tool-use prompt as prompt, long-context tiers (ModelPriceTiers); each
//! component the mock reports raises the log row's quota by exactly its configured price, and a
//! request that would use a component without a price is refused with a 400 naming it before
//! any upstream call.
//!
//! Usage shapes: OpenAI `prompt_tokens_details` / `completion_tokens_details.audio_tokens`
//! (<https://platform.openai.com/docs/api-reference/chat/object>) and Responses
//! `web_search_call` items (<https://platform.openai.com/docs/guides/tools-web-search>);
//! Anthropic `usage.server_tool_use.web_search_requests`
//! (<https://docs.anthropic.com/en/docs/build-with-claude/tool-use/web-search-tool>); Gemini
//! `usageMetadata.promptTokensDetails` / `toolUsePromptTokenCount` and
//! `groundingMetadata.webSearchQueries` (<https://ai.google.dev/api/generate-content>).

mod common;

use common::mock_scripted::MockScripted;
use common::relay_fixture::{balances, fixture, other};
use common::{Actor, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn channels(mock: &MockScripted) -> Vec<Value> {
    vec![
        json!({"name": "openai", "type": 1, "key": "openai-upstream-key", "base_url": mock.base,
            "models": "audio-test,tier-test,search-test", "group": "default"}),
        json!({"name": "claude", "type": 14, "key": "claude-upstream-key", "base_url": mock.base,
            "models": "claude-test", "group": "default"}),
        json!({"name": "gemini", "type": 24, "key": "gemini-upstream-key", "base_url": mock.base,
            "models": "gemini-test", "group": "default"}),
    ]
}

/// A server with the three channels, a payer with 10,000,000 units and a key, and prices:
/// audio-test ratio 1 and completion 2, AudioRatio 10 and AudioCompletionRatio 3; tier-test
/// ratio 1, completion 2, above 100 prompt tokens ratio 3 and completion 4; search-test ratio 1;
/// ToolCallPrice openai $0.01, anthropic $0.01, gemini $0.035; gemini-test AudioRatio 3 (plus
/// the fixture's claude-test and gemini-test ratios).
async fn setup(mock: &MockScripted) -> (TestServer, Actor, Actor, String) {
    let server = TestServer::start().await;
    let (root, payer, key) = fixture(&server, &channels(mock), 10_000_000, 10_000_000).await;
    let prices = [
        (
            "ModelRatio",
            r#"{"claude-test": 2, "gemini-test": 0.5, "audio-test": 1, "tier-test": 1, "search-test": 1}"#,
        ),
        (
            "CompletionRatio",
            r#"{"claude-test": 5, "gemini-test": 4, "audio-test": 2, "tier-test": 2}"#,
        ),
        ("AudioRatio", r#"{"audio-test": 10, "gemini-test": 3}"#),
        ("AudioCompletionRatio", r#"{"audio-test": 3}"#),
        (
            "ToolCallPrice",
            r#"{"openai:web_search": 0.01, "anthropic:web_search": 0.01, "gemini:google_search": 0.035}"#,
        ),
        (
            "ModelPriceTiers",
            r#"{"tier-test": [{"above_prompt_tokens": 100, "model_ratio": 3, "completion_ratio": 4}]}"#,
        ),
    ];
    for (key, value) in prices {
        server.set_option(&root, key, json!(value)).await;
    }
    (server, root, payer, key)
}

fn chat_answer(usage: &Value) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "audio-test",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
            "finish_reason": "stop"}],
        "usage": usage})
}

fn audio_chat() -> Value {
    json!({"model": "audio-test", "max_tokens": 100, "modalities": ["text", "audio"],
        "audio": {"voice": "alloy", "format": "wav"},
        "messages": [{"role": "user", "content": [
            {"type": "text", "text": "what is said?"},
            {"type": "input_audio", "input_audio": {"data": "UklGRgAAAABXQVZF", "format": "wav"}}]}]})
}

async fn post(server: &TestServer, path: &str, key: &str, body: &Value) -> (StatusCode, Value) {
    server
        .send(
            server
                .client
                .post(server.url(path))
                .bearer_auth(key)
                .json(body),
        )
        .await
}

/// The newest log row's quota and `other`.
#[expect(clippy::expect_used, reason = "test helper: no row fails the test")]
async fn last_row(server: &TestServer, payer: &Actor) -> (i64, Value) {
    let (_, _, _, logs) = balances(server, payer.id).await;
    let row = logs.first().expect("a log row");
    (row.quota, other(row))
}

#[tokio::test]
async fn openai_audio_tokens_are_billed_at_the_audio_ratios() {
    let mock = MockScripted::start().await;
    let (server, _root, payer, key) = setup(&mock).await;
    let text_only = json!({"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150});
    mock.push_json(200, &chat_answer(&text_only));
    let (status, body) = post(&server, "/v1/chat/completions", &key, &audio_chat()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Text only: 100 + 50 × 2.
    assert_eq!(last_row(&server, &payer).await.0, 200);

    let with_audio = json!({"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 60},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 20}});
    mock.push_json(200, &chat_answer(&with_audio));
    let (status, body) = post(&server, "/v1/chat/completions", &key, &audio_chat()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (quota, other) = last_row(&server, &payer).await;
    // Text 40 + 30 × 2; audio in 60 × 10; audio out 20 × 10 × 3: the audio adds exactly
    // 60 × (10 − 1) + 20 × (30 − 2) = 1,100 to the text-only 200.
    assert_eq!(quota, 1_300, "{other}");
    assert_eq!(other["audio_input"], 60);
    assert_eq!(other["audio_output"], 20);
    assert_eq!(other["audio_ratio"], 10.0);
    assert_eq!(other["audio_completion_ratio"], 3.0);
}

#[tokio::test]
async fn unpriced_audio_is_refused_before_any_upstream_call() {
    let mock = MockScripted::start().await;
    let (server, root, _payer, key) = setup(&mock).await;
    server
        .set_option(&root, "AudioCompletionRatio", json!("{}"))
        .await;
    let (status, body) = post(&server, "/v1/chat/completions", &key, &audio_chat()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("audio output"), "{message}");
    assert!(message.contains("AudioCompletionRatio"), "{message}");

    server.set_option(&root, "AudioRatio", json!("{}")).await;
    let mut input_only = audio_chat();
    input_only["modalities"] = json!(["text"]);
    input_only.as_object_mut().map(|b| b.remove("audio"));
    let (status, body) = post(&server, "/v1/chat/completions", &key, &input_only).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("audio input (AudioRatio)"), "{message}");
    assert!(mock.calls().is_empty(), "nothing was forwarded");
}

fn messages(server: &TestServer, key: &str) -> reqwest::RequestBuilder {
    server
        .client
        .post(server.url("/v1/messages"))
        .header("x-api-key", key)
        .header("anthropic-version", "2023-06-01")
}

fn search_request() -> Value {
    json!({"model": "claude-test", "max_tokens": 100,
        "messages": [{"role": "user", "content": "what happened today?"}],
        "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}]})
}

#[tokio::test]
async fn anthropic_web_searches_are_billed_per_search() {
    let mock = MockScripted::start().await;
    let (server, _root, payer, key) = setup(&mock).await;
    mock.push_json(
        200,
        &json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": "news"}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 100, "output_tokens": 10,
                "server_tool_use": {"web_search_requests": 2}}}),
    );
    let (status, body) = server
        .send(messages(&server, &key).json(&search_request()))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (quota, other) = last_row(&server, &payer).await;
    // Text (100 + 10 × 5) × 2 = 300; 2 searches × $0.01 × 500,000 = 10,000.
    assert_eq!(quota, 10_300, "{other}");
    assert_eq!(other["tool_calls"]["anthropic:web_search"], 2);
    assert_eq!(other["tool_call_price"]["anthropic:web_search"], 0.01);
}

#[tokio::test]
async fn an_unpriced_server_tool_or_long_context_is_refused_naming_it() {
    let mock = MockScripted::start().await;
    let (server, root, _payer, key) = setup(&mock).await;
    server
        .set_option(
            &root,
            "ToolCallPrice",
            json!(r#"{"openai:web_search": 0.01}"#),
        )
        .await;
    let (status, body) = server
        .send(messages(&server, &key).json(&search_request()))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body.to_string().contains("anthropic:web_search"),
        "the refusal names the tool: {body}"
    );

    let long = json!({"model": "claude-test", "max_tokens": 100,
        "messages": [{"role": "user", "content": "a long document"}]});
    let (status, body) = server
        .send(
            messages(&server, &key)
                .header("anthropic-beta", "context-1m-2025-08-07")
                .json(&long),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.to_string().contains("context-1m"), "{body}");

    let gemini = json!({"contents": [{"role": "user", "parts": [{"text": "search"}]}],
        "tools": [{"google_search": {}}]});
    let (status, body) = server
        .send(
            server
                .client
                .post(server.url("/v1beta/models/gemini-test:generateContent"))
                .header("x-goog-api-key", &key)
                .json(&gemini),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.to_string().contains("gemini:google_search"), "{body}");
    assert!(mock.calls().is_empty(), "nothing was forwarded");
}

#[tokio::test]
async fn gemini_audio_tool_use_prompt_and_grounding_are_billed() {
    let mock = MockScripted::start().await;
    let (server, _root, payer, key) = setup(&mock).await;
    mock.push_json(
        200,
        &json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]},
                "finishReason": "STOP", "index": 0,
                "groundingMetadata": {"webSearchQueries": ["weather today"]}}],
            "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10,
                "toolUsePromptTokenCount": 50, "totalTokenCount": 160,
                "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 60},
                    {"modality": "AUDIO", "tokenCount": 40}]},
            "modelVersion": "gemini-test"}),
    );
    let body = json!({"contents": [{"role": "user", "parts": [{"text": "what is said?"},
            {"inlineData": {"mimeType": "audio/wav", "data": "UklGRgAAAABXQVZF"}}]}],
        "tools": [{"google_search": {}}]});
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1beta/models/gemini-test:generateContent"))
                .header("x-goog-api-key", &key)
                .json(&body),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (quota, other) = last_row(&server, &payer).await;
    // Prompt 100 + 50 tool-use = 150, of which 40 audio: text (110 + 10 × 4) + audio 40 × 3 =
    // 270, × 0.5 = 135; one grounded prompt $0.035 × 500,000 = 17,500.
    assert_eq!(quota, 17_635, "{other}");
    let (_, _, _, logs) = balances(&server, payer.id).await;
    assert_eq!(logs[0].prompt_tokens, 150, "the tool-use prompt is prompt");
    assert_eq!(other["tool_calls"]["gemini:google_search"], 1);
}

#[tokio::test]
async fn a_prompt_above_a_tier_is_billed_at_the_tier() {
    let mock = MockScripted::start().await;
    let (server, _root, payer, key) = setup(&mock).await;
    let body = json!({"model": "tier-test", "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}]});
    for prompt in [100, 101] {
        mock.push_json(
            200,
            &chat_answer(&json!({"prompt_tokens": prompt, "completion_tokens": 10})),
        );
        let (status, answer) = post(&server, "/v1/chat/completions", &key, &body).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
    }
    let (_, _, _, logs) = balances(&server, payer.id).await;
    // 100 is not above the tier: 100 + 10 × 2; 101 is: (101 + 10 × 4) × 3.
    assert_eq!(logs[1].quota, 120);
    assert_eq!(logs[0].quota, 423);
    assert_eq!(other(&logs[0])["price_tier"], 100);
    assert_eq!(other(&logs[0])["model_ratio"], 3.0);
}

#[tokio::test]
async fn openai_responses_web_search_calls_are_billed_per_call() {
    let mock = MockScripted::start().await;
    let (server, _root, payer, key) = setup(&mock).await;
    mock.push_json(
        200,
        &json!({"id": "resp_1", "object": "response", "status": "completed", "model": "search-test",
            "output": [
                {"type": "web_search_call", "id": "ws_1", "status": "completed"},
                {"type": "web_search_call", "id": "ws_2", "status": "completed"},
                {"type": "message", "id": "msg_1", "role": "assistant",
                    "content": [{"type": "output_text", "text": "news", "annotations": []}]}],
            "usage": {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120}}),
    );
    let body = json!({"model": "search-test", "input": "what happened today?",
        "tools": [{"type": "web_search"}]});
    let (status, answer) = post(&server, "/v1/responses", &key, &body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (quota, other) = last_row(&server, &payer).await;
    // Text 100 + 20; 2 calls × $0.01 × 500,000 = 10,000.
    assert_eq!(quota, 10_120, "{other}");
    assert_eq!(other["tool_calls"]["openai:web_search"], 2);
}
