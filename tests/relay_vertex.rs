//! Vertex AI (channel type 41) through the public HTTP API, against a mock Google speaking the
//! documented wire formats: the token endpoint of the signed-JWT grant, which checks the
//! assertion as Google does (https://developers.google.com/identity/protocols/oauth2/service-account#httprest),
//! Gemini `generateContent` / `streamGenerateContent?alt=sse` under the project and location
//! (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference), and Claude
//! `rawPredict` / `streamRawPredict` with `anthropic_version` in the body
//! (https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/use-claude),
//! token counts — Gemini `:countTokens` with `contents` / `systemInstruction` / `tools`,
//! answering `totalTokens` and `totalBillableCharacters`
//! (https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.endpoints/countTokens)
//! and Claude's `count-tokens:rawPredict` with the model in the body
//! (https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/count-tokens) —
//! text embeddings through `:predict` (`instances[].content`, `parameters.outputDimensionality`,
//! answered `predictions[].embeddings.{values, statistics.token_count}`;
//! https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/text-embeddings-api),
//! and express mode: an API key in `x-goog-api-key` on
//! `/v1/publishers/google/models/{model}:{method}`, no project or location
//! (https://cloud.google.com/vertex-ai/generative-ai/docs/start/express-mode/vertex-ai-express-mode-api-reference).

mod common;

use common::TestServer;
use common::cloud_auth::{PROJECT, service_account_json, verify_grant};
use common::mock_cloud::{Answer, MockCloud, Recorded, sse};
use common::relay_fixture::{balances, chat_request, fixture, raw, sse_events};
use reqwest::StatusCode;
use serde_json::{Value, json};

const TOKEN: &str = "ya29.vertex-test-token";
const EXPRESS_KEY: &str = "AQ.Ab8RN6Lexpress-test-key";

/// A Gemini answer of the reference's response shape.
fn gemini_answer() -> Value {
    json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": "The sky is blue."}]},
            "finishReason": "STOP", "avgLogprobs": -0.1}],
        "usageMetadata": {"promptTokenCount": 6, "candidatesTokenCount": 12, "totalTokenCount": 18},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "vertex-1"
    })
}

/// A Gemini function call answer.
fn gemini_tool_answer() -> Value {
    json!({
        "candidates": [{"content": {"role": "model", "parts": [{"functionCall":
            {"name": "get_weather", "args": {"city": "Paris"}}}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 5, "totalTokenCount": 25},
        "modelVersion": "gemini-2.5-flash"
    })
}

/// The Gemini stream (`alt=sse`: one GenerateContentResponse per event).
fn gemini_stream() -> Vec<u8> {
    sse(&[
        (
            "",
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "The sky"}]}}],
            "usageMetadata": {"promptTokenCount": 6, "totalTokenCount": 6},
            "modelVersion": "gemini-2.5-flash"}),
        ),
        (
            "",
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": " is blue."}]},
            "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 6, "candidatesTokenCount": 12, "totalTokenCount": 18},
            "modelVersion": "gemini-2.5-flash"}),
        ),
    ])
}

/// A Claude answer on Vertex (Anthropic's Messages response; `msg_vrtx_` ids).
fn claude_answer() -> Value {
    json!({"id": "msg_vrtx_01", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-20250514", "content": [{"type": "text", "text": "Olá!"}],
        "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 16, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 100, "output_tokens": 7}})
}

/// A Claude stream on Vertex (the events of the use-claude page's streaming example).
fn claude_stream() -> Vec<u8> {
    sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"model": "claude-sonnet-4-20250514",
            "id": "msg_vrtx_01", "type": "message", "role": "assistant", "content": [],
            "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 16,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 5}}}),
        ),
        ("ping", json!({"type": "ping"})),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": "Olá!"}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn",
            "stop_sequence": null}, "usage": {"output_tokens": 7}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ])
}

/// The mock Google: `/token` (the grant, checked), `/bad-token` (refuses every grant), and the
/// Vertex publisher-model methods (the token checked).
fn google(req: &Recorded) -> Answer {
    let host = req.header("host").unwrap_or_default();
    if req.path == "/token" {
        return match verify_grant(&req.body, &format!("http://{host}/token")) {
            Ok(_) => Answer::Json(
                200,
                json!({"access_token": TOKEN, "expires_in": 3599, "token_type": "Bearer"}),
            ),
            Err(e) => Answer::Json(
                400,
                json!({"error": "invalid_grant", "error_description": e}),
            ),
        };
    }
    if req.path == "/bad-token" {
        return Answer::Json(
            400,
            json!({"error": "invalid_grant", "error_description": "Invalid JWT Signature."}),
        );
    }
    let express = req.path.starts_with("/v1/publishers/google/models/");
    let authorized = if express {
        req.header("x-goog-api-key").as_deref() == Some(EXPRESS_KEY)
            && req.header("authorization").is_none()
    } else {
        req.header("authorization").as_deref() == Some(&format!("Bearer {TOKEN}"))
    };
    if !authorized {
        return Answer::Json(
            401,
            json!({"error": {"code": 401, "status": "UNAUTHENTICATED",
                "message": "Request had invalid authentication credentials."}}),
        );
    }
    let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
    let Some((_, method)) = req.path.rsplit_once(':') else {
        return Answer::Json(404, json!({"error": {"code": 404, "message": "not found"}}));
    };
    if req
        .path
        .ends_with("/publishers/anthropic/models/count-tokens:rawPredict")
    {
        return if body["model"]
            .as_str()
            .is_some_and(|m| m.contains("nocount"))
        {
            Answer::Json(
                404,
                json!({"error": {"code": 404, "status": "NOT_FOUND",
                    "message": "Publisher model count-tokens is not servable in this region."}}),
            )
        } else {
            Answer::Json(200, json!({"input_tokens": 23}))
        };
    }
    match method {
        "countTokens" if body.to_string().contains("invalid") => Answer::Json(
            400,
            json!({"error": {"code": 400, "status": "INVALID_ARGUMENT",
                "message": "Request contains an invalid argument."}}),
        ),
        // Text embeddings: one prediction per instance, token counts in the statistics.
        "predict" => {
            let instances = body["instances"].as_array().cloned().unwrap_or_default();
            let predictions: Vec<Value> = instances
                .iter()
                .enumerate()
                .map(|(i, instance)| {
                    let len = instance["content"].as_str().map_or(0, str::len);
                    json!({"embeddings": {"values": [0.25, i],
                        "statistics": {"truncated": false, "token_count": len}}})
                })
                .collect();
            Answer::Json(200, json!({"predictions": predictions}))
        }
        "countTokens" => Answer::Json(
            200,
            json!({"totalTokens": 14, "totalBillableCharacters": 52,
                "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 14}]}),
        ),
        "generateContent" if body["tools"].is_array() => Answer::Json(200, gemini_tool_answer()),
        "generateContent" => Answer::Json(200, gemini_answer()),
        "streamGenerateContent" => Answer::Chunks("text/event-stream", vec![gemini_stream()]),
        "rawPredict" => Answer::Json(200, claude_answer()),
        "streamRawPredict" => Answer::Chunks("text/event-stream", vec![claude_stream()]),
        _ => Answer::Json(
            404,
            json!({"error": {"code": 404, "message": "no such method"}}),
        ),
    }
}

fn vertex_channel(mock: &MockCloud, location: &str, models: &str, mapping: Value) -> Value {
    json!({"name": "vertex", "type": 41, "key": service_account_json(&format!("{}/token", mock.base)),
        "base_url": mock.base, "other": location, "models": models, "group": "default",
        "model_mapping": mapping.to_string()})
}

#[tokio::test]
async fn gemini_on_vertex_gets_a_token_by_the_jwt_grant_and_bills_usage_metadata() {
    let mock = MockCloud::start(google).await;
    let server = TestServer::start().await;
    let channel = vertex_channel(
        &mock,
        "us-central1",
        "gemini-test",
        json!({"gemini-test": "gemini-2.5-flash"}),
    );
    let (_, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let body = json!({"model": "gemini-test", "messages": [{"role": "user", "content": "Why is the sky blue?"}]});
    let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let answer: Value = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        "The sky is blue."
    );
    assert_eq!(answer["usage"]["prompt_tokens"], 6);
    let call = mock
        .requests_to("/v1/")
        .pop()
        .unwrap_or_else(|| panic!("no call"));
    assert_eq!(
        call.path,
        format!(
            "/v1/projects/{PROJECT}/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent"
        )
    );
    assert_eq!(
        call.header("authorization"),
        Some(format!("Bearer {TOKEN}"))
    );
    assert_eq!(
        call.json()["contents"][0]["parts"][0]["text"],
        "Why is the sky blue?"
    );
    // The token is reused: a second request makes no second grant.
    let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(mock.requests_to("/token").len(), 1, "the token is cached");
    let (quota, _, count, logs) = balances(&server, payer.id).await;
    // gemini-test: 0.5 × (6 + 12 × 4) = 27 per request.
    assert_eq!((quota, count), (1_000_000 - 54, 2));
    assert_eq!((logs[0].prompt_tokens, logs[0].completion_tokens), (6, 12));
}

#[tokio::test]
async fn concurrent_requests_share_one_token_grant() {
    let mock = MockCloud::start(google).await;
    let server = TestServer::start().await;
    let channel = vertex_channel(&mock, "", "gemini-test", json!({}));
    let (_, _, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let body = json!({"model": "gemini-test", "messages": [{"role": "user", "content": "hi"}]});
    let calls: Vec<_> = (0..6)
        .map(|_| raw(chat_request(&server, &key, &body)))
        .collect();
    for (status, _, text) in futures_util::future::join_all(calls).await {
        assert_eq!(status, StatusCode::OK, "{text}");
    }
    assert_eq!(mock.requests_to("/token").len(), 1, "one grant in flight");
    let call = mock
        .requests_to("/v1/")
        .pop()
        .unwrap_or_else(|| panic!("no call"));
    assert!(
        call.path
            .contains("/locations/global/publishers/google/models/gemini-test:"),
        "an empty location is global: {}",
        call.path
    );
}

#[tokio::test]
async fn gemini_clients_stream_through_vertex_byte_for_byte() {
    let mock = MockCloud::start(google).await;
    let server = TestServer::start().await;
    let channel = vertex_channel(&mock, "europe-west4", "gemini-test", json!({}));
    let (_, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let (status, _, text) = raw(server
        .client
        .post(server.url("/v1beta/models/gemini-test:streamGenerateContent?alt=sse"))
        .header("x-goog-api-key", &key)
        .json(
            &json!({"contents": [{"role": "user", "parts": [{"text": "Why is the sky blue?"}]}]}),
        ))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(text.as_bytes(), gemini_stream(), "passed through unchanged");
    let call = mock
        .requests_to("/v1/")
        .pop()
        .unwrap_or_else(|| panic!("no call"));
    assert_eq!(
        call.path,
        format!(
            "/v1/projects/{PROJECT}/locations/europe-west4/publishers/google/models/gemini-test:streamGenerateContent"
        )
    );
    assert_eq!(call.query, "alt=sse");
    let (quota, _, _, _) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000 - 27);
}

#[tokio::test]
async fn tools_reach_gemini_on_vertex_and_come_back_as_tool_calls() {
    let mock = MockCloud::start(google).await;
    let server = TestServer::start().await;
    let channel = vertex_channel(&mock, "us-central1", "gemini-test", json!({}));
    let (_, _, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let (status, _, text) = raw(chat_request(
        &server,
        &key,
        &json!({"model": "gemini-test", "messages": [{"role": "user", "content": "Weather in Paris?"}],
            "tools": [{"type": "function", "function": {"name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]}),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let answer: Value = serde_json::from_str(&text).unwrap_or_default();
    let call = &answer["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "get_weather");
    assert_eq!(call["function"]["arguments"], "{\"city\":\"Paris\"}");
    assert_eq!(answer["choices"][0]["finish_reason"], "tool_calls");
    let sent = mock
        .requests_to("/v1/")
        .pop()
        .unwrap_or_else(|| panic!("no call"));
    assert_eq!(
        sent.json()["tools"][0]["functionDeclarations"][0]["name"],
        "get_weather"
    );
}

#[tokio::test]
async fn claude_on_vertex_takes_the_version_in_the_body_and_the_model_in_the_url() {
    let mock = MockCloud::start(google).await;
    let server = TestServer::start().await;
    let channel = vertex_channel(
        &mock,
        "us-east5",
        "claude-test",
        json!({"claude-test": "claude-sonnet-4@20250514"}),
    );
    let (_, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let (status, _, text) = raw(server
        .client
        .post(server.url("/v1/messages"))
        .header("x-api-key", &key)
        .header("anthropic-version", "2023-06-01")
        .json(&json!({"model": "claude-test", "max_tokens": 100,
            "messages": [{"role": "user", "content": "Say hi in Portuguese"}]})))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap_or_default(),
        claude_answer(),
        "an Anthropic client gets Vertex's Messages answer as it came"
    );
    let call = mock
        .requests_to("/v1/")
        .pop()
        .unwrap_or_else(|| panic!("no call"));
    assert_eq!(
        call.path,
        format!(
            "/v1/projects/{PROJECT}/locations/us-east5/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict"
        )
    );
    let sent = call.json();
    assert_eq!(sent["anthropic_version"], "vertex-2023-10-16");
    assert!(sent.get("model").is_none(), "no model in the body: {sent}");
    assert_eq!(call.header("anthropic-version"), None);
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // claude-test: 2 × (16 + 100 × 0.1 + 7 × 5) = 122.
    assert_eq!(quota, 1_000_000 - 122);
    assert_eq!((logs[0].prompt_tokens, logs[0].completion_tokens), (116, 7));
}

#[tokio::test]
async fn openai_clients_stream_claude_on_vertex_converted() {
    let mock = MockCloud::start(google).await;
    let server = TestServer::start().await;
    let channel = vertex_channel(&mock, "us-east5", "claude-test", json!({}));
    let (_, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let (status, _, text) = raw(chat_request(
        &server,
        &key,
        &json!({"model": "claude-test", "stream": true, "max_tokens": 100,
            "stream_options": {"include_usage": true},
            "messages": [{"role": "user", "content": "Say hi in Portuguese"}]}),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let events = sse_events(&text);
    let content: String = events
        .iter()
        .filter_map(|(_, d)| d["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "Olá!");
    assert!(
        events
            .iter()
            .any(|(_, d)| d["usage"]["completion_tokens"] == 7),
        "{text}"
    );
    let call = mock
        .requests_to("/v1/")
        .pop()
        .unwrap_or_else(|| panic!("no call"));
    assert!(
        call.path
            .ends_with("/publishers/anthropic/models/claude-test:streamRawPredict")
    );
    assert_eq!(call.json()["stream"], true);
    assert_eq!(call.json()["anthropic_version"], "vertex-2023-10-16");
    let (quota, _, _, _) = balances(&server, payer.id).await;
    // 2 × (16 + 7 × 5) = 102.
    assert_eq!(quota, 1_000_000 - 102);
}

#[tokio::test]
async fn a_refused_grant_fails_the_request_without_showing_the_key() {
    let mock = MockCloud::start(google).await;
    let server = TestServer::start().await;
    let mut channel = vertex_channel(&mock, "us-central1", "gemini-test", json!({}));
    channel["key"] = json!(service_account_json(&format!("{}/bad-token", mock.base)));
    let (_, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let (status, _, text) = raw(chat_request(
        &server,
        &key,
        &json!({"model": "gemini-test", "messages": [{"role": "user", "content": "hi"}]}),
    ))
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{text}");
    assert!(text.contains("invalid_grant"), "{text}");
    assert!(!text.contains("PRIVATE KEY"), "{text}");
    assert!(
        mock.requests_to("/v1/").is_empty(),
        "no model call without a token"
    );
    let (quota, _, count, _) = balances(&server, payer.id).await;
    assert_eq!((quota, count), (1_000_000, 0));

    // A key that is not a service-account key at all is refused when the channel is saved (the
    // channel type table's key format), so it never reaches the relay.
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server
        .client_for(common::ROOT_USER, common::ROOT_PASS)
        .await;
    let mut channel = vertex_channel(&mock, "us-central1", "gemini-test", json!({}));
    channel["key"] = json!("{\"not\": \"a key\"}");
    let (status, resp) = root.post("/api/channel/", channel).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{resp}");
    let message = resp["message"].as_str().unwrap_or_default();
    assert!(message.contains("service-account"), "{message}");
}

#[tokio::test]
async fn the_channel_test_gets_a_token_and_calls_the_model() {
    let mock = MockCloud::start(google).await;
    let server = TestServer::start().await;
    let channel = vertex_channel(&mock, "us-east5", "claude-test", json!({}));
    let (root, _, _) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let (status, answer) = root.get("/api/channel/test/1").await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["success"], true, "{answer}");
    assert_eq!(mock.requests_to("/token").len(), 1);
    let call = mock
        .requests_to("/v1/")
        .pop()
        .unwrap_or_else(|| panic!("no call"));
    assert!(
        call.path
            .ends_with("/publishers/anthropic/models/claude-test:rawPredict")
    );
    assert_eq!(call.json()["anthropic_version"], "vertex-2023-10-16");

    // A key the token endpoint refuses fails the test, without the key in the message.
    let server = TestServer::start().await;
    let mut channel = vertex_channel(&mock, "us-east5", "gemini-test", json!({}));
    channel["key"] = json!(service_account_json(&format!("{}/bad-token", mock.base)));
    let (root, _, _) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let (_, answer) = root.get("/api/channel/test/1").await;
    assert_eq!(answer["success"], false, "{answer}");
    let message = answer["message"].as_str().unwrap_or_default();
    assert!(message.contains("invalid_grant"), "{answer}");
    assert!(!message.contains("PRIVATE KEY"), "{answer}");
}

#[tokio::test]
async fn gemini_clients_reach_claude_on_vertex_converted() {
    let mock = MockCloud::start(google).await;
    let server = TestServer::start().await;
    let channel = vertex_channel(&mock, "us-east5", "claude-test", json!({}));
    let (_, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let (status, _, text) = raw(server
        .client
        .post(server.url("/v1beta/models/claude-test:generateContent"))
        .header("x-goog-api-key", &key)
        .json(
            &json!({"contents": [{"role": "user", "parts": [{"text": "Say hi in Portuguese"}]}]}),
        ))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let answer: Value = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(
        answer["candidates"][0]["content"]["parts"][0]["text"],
        "Olá!"
    );
    let call = mock
        .requests_to("/v1/")
        .pop()
        .unwrap_or_else(|| panic!("no call"));
    assert!(
        call.path
            .ends_with("/publishers/anthropic/models/claude-test:rawPredict")
    );
    let sent = call.json();
    assert_eq!(sent["anthropic_version"], "vertex-2023-10-16");
    assert!(sent.get("model").is_none());
    assert_eq!(
        sent["messages"][0]["content"][0]["text"], "Say hi in Portuguese",
        "{sent}"
    );
    let (quota, _, _, _) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000 - 122);
}

#[tokio::test]
async fn token_counts_go_to_the_vertex_count_endpoints() {
    let mock = MockCloud::start(google).await;
    let server = TestServer::start().await;
    let channel = vertex_channel(
        &mock,
        "us-east5",
        "claude-test,claude-nocount,gemini-test",
        json!({"claude-test": "claude-sonnet-4@20250514", "gemini-test": "gemini-2.5-flash"}),
    );
    let (_, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let anthropic = |body: Value| {
        server
            .client
            .post(server.url("/v1/messages/count_tokens"))
            .header("x-api-key", &key)
            .header("anthropic-version", "2023-06-01")
            .json(&body)
    };
    let gemini = |body: Value| {
        server
            .client
            .post(server.url("/v1beta/models/gemini-test:countTokens"))
            .header("x-goog-api-key", &key)
            .json(&body)
    };

    // Claude: the count-tokens model's rawPredict, the (mapped) model in the body, the token.
    let messages = json!([{"role": "user", "content": "Hello, Claude"}]);
    let (status, answer) = server
        .send(anthropic(
            json!({"model": "claude-test", "system": "Be brief.", "messages": messages}),
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer, json!({"input_tokens": 23}));
    let call = mock.last();
    assert_eq!(
        call.path,
        format!(
            "/v1/projects/{PROJECT}/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict"
        )
    );
    assert_eq!(
        call.header("authorization"),
        Some(format!("Bearer {TOKEN}"))
    );
    assert_eq!(
        call.json(),
        json!({"model": "claude-sonnet-4@20250514", "system": "Be brief.", "messages": messages})
    );

    // Where Vertex cannot count (404 in this region): Tollgate counts — "Be brief." (3) +
    // "Hello, Claude" (4) + 3 per message × 2 + 3 = 16.
    let (status, answer) = server
        .send(anthropic(
            json!({"model": "claude-nocount", "system": "Be brief.", "messages": messages}),
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer, json!({"input_tokens": 16}));
    assert!(
        mock.last().path.ends_with("count-tokens:rawPredict"),
        "Vertex was asked"
    );

    // Gemini: `:countTokens` on the publisher model, the wrapped request unwrapped (Vertex takes
    // contents, systemInstruction and tools at the top), the answer in the Gemini API's fields.
    let contents = json!([{"role": "user", "parts": [{"text": "hello world!"}]}]);
    let system = json!({"parts": [{"text": "Be brief."}]});
    let (status, answer) = server
        .send(gemini(
            json!({"generateContentRequest": {"model": "models/gemini-test",
            "contents": contents, "systemInstruction": system}}),
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer,
        json!({"totalTokens": 14, "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 14}]})
    );
    let call = mock.last();
    assert_eq!(
        call.path,
        format!(
            "/v1/projects/{PROJECT}/locations/us-east5/publishers/google/models/gemini-2.5-flash:countTokens"
        )
    );
    assert_eq!(
        call.json(),
        json!({"contents": contents, "systemInstruction": system})
    );

    // A request Vertex calls invalid is the client's fault: a 400 with Google's message.
    let (status, answer) = server
        .send(gemini(
            json!({"contents": [{"role": "user", "parts": [{"text": "invalid"}]}]}),
        ))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(
        answer
            .to_string()
            .contains("Request contains an invalid argument."),
        "{answer}"
    );

    // Counting is free; the token was fetched once.
    let (quota, _, requests, logs) = balances(&server, payer.id).await;
    assert_eq!((quota, requests, logs.len()), (1_000_000, 0, 0));
    assert_eq!(mock.requests_to("/token").len(), 1);
}

/// A Vertex channel whose key is an express-mode API key.
fn express_channel(mock: &MockCloud, models: &str) -> Value {
    json!({"name": "vertex-express", "type": 41, "key": EXPRESS_KEY, "base_url": mock.base,
        "other": "us-central1", "setting": r#"{"vertex_key_type": "api_key"}"#,
        "models": models, "group": "default"})
}

#[tokio::test]
async fn express_mode_api_keys_call_gemini_without_project_or_token() {
    let mock = MockCloud::start(google).await;
    let server = TestServer::start().await;
    let channel = express_channel(&mock, "gemini-test,claude-test");
    let (_, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;

    // OpenAI client → Gemini on express mode: the global publisher path, the key in the header.
    let (status, _, text) = raw(chat_request(
        &server,
        &key,
        &json!({"model": "gemini-test", "messages": [{"role": "user", "content": "Why is the sky blue?"}]}),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let answer: Value = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        "The sky is blue."
    );
    let call = mock.last();
    assert_eq!(
        call.path,
        "/v1/publishers/google/models/gemini-test:generateContent"
    );
    assert_eq!(call.header("x-goog-api-key").as_deref(), Some(EXPRESS_KEY));
    assert!(mock.requests_to("/token").is_empty(), "no token grant");

    // A Gemini client streams through it unchanged.
    let (status, _, text) = raw(server
        .client
        .post(server.url("/v1beta/models/gemini-test:streamGenerateContent?alt=sse"))
        .header("x-goog-api-key", &key)
        .json(&json!({"contents": [{"role": "user", "parts": [{"text": "Why?"}]}]})))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(text.as_bytes(), gemini_stream());
    let call = mock.last();
    assert_eq!(
        call.path,
        "/v1/publishers/google/models/gemini-test:streamGenerateContent"
    );
    assert_eq!(call.query, "alt=sse");

    // Token counts go to express mode's countTokens.
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1beta/models/gemini-test:countTokens"))
                .header("x-goog-api-key", &key)
                .json(&json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["totalTokens"], 14);
    assert_eq!(
        mock.last().path,
        "/v1/publishers/google/models/gemini-test:countTokens"
    );

    // Billing as for a service account: gemini-test 0.5 × (6 + 12 × 4) = 27, once per answer.
    let (quota, _, requests, _) = balances(&server, payer.id).await;
    assert_eq!((quota, requests), (1_000_000 - 54, 2));

    // Express mode has no Claude: such a request is not sent anywhere.
    let calls = mock.requests().len();
    let (status, _, text) = raw(chat_request(
        &server,
        &key,
        &json!({"model": "claude-test", "messages": [{"role": "user", "content": "hi"}]}),
    ))
    .await;
    assert!(
        status.is_client_error() || status.is_server_error(),
        "{text}"
    );
    assert!(!text.contains(EXPRESS_KEY), "{text}");
    assert_eq!(mock.requests().len(), calls, "nothing sent");

    // The channel test uses express mode too.
    let server = TestServer::start().await;
    let (root, _, _) = fixture(
        &server,
        &[express_channel(&mock, "gemini-test")],
        1_000_000,
        500_000,
    )
    .await;
    let (status, answer) = root.get("/api/channel/test/1").await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["success"], true, "{answer}");
    assert_eq!(
        mock.last().path,
        "/v1/publishers/google/models/gemini-test:generateContent"
    );
}

#[tokio::test]
async fn openai_embeddings_reach_vertex_predict_and_are_billed_from_its_token_counts() {
    let mock = MockCloud::start(google).await;
    let server = TestServer::start().await;
    let channel = vertex_channel(
        &mock,
        "us-central1",
        "gemini-test",
        json!({"gemini-test": "text-embedding-005"}),
    );
    let (_, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let (status, _, text) = raw(server
        .client
        .post(server.url("/v1/embeddings"))
        .bearer_auth(&key)
        .json(&json!({"model": "gemini-test", "input": ["four", "sixsix"], "dimensions": 256})))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let answer: Value = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(answer["object"], "list");
    assert_eq!(answer["model"], "gemini-test");
    assert_eq!(answer["data"][0]["embedding"], json!([0.25, 0]));
    assert_eq!(answer["data"][1]["index"], 1);
    assert_eq!(answer["data"][1]["embedding"], json!([0.25, 1]));
    assert_eq!(
        answer["usage"]["prompt_tokens"], 10,
        "4 + 6 from the statistics"
    );
    let call = mock.last();
    assert_eq!(
        call.path,
        format!(
            "/v1/projects/{PROJECT}/locations/us-central1/publishers/google/models/text-embedding-005:predict"
        )
    );
    assert_eq!(
        call.header("authorization"),
        Some(format!("Bearer {TOKEN}"))
    );
    assert_eq!(
        call.json(),
        json!({"instances": [{"content": "four"}, {"content": "sixsix"}],
            "parameters": {"outputDimensionality": 256}})
    );
    // gemini-test: 0.5 × 10 prompt tokens = 5, no completion.
    let (quota, _, requests, logs) = balances(&server, payer.id).await;
    assert_eq!((quota, requests), (1_000_000 - 5, 1));
    assert_eq!((logs[0].prompt_tokens, logs[0].completion_tokens), (10, 0));
}

#[tokio::test]
async fn gemini_embed_content_reaches_vertex_predict() {
    let mock = MockCloud::start(google).await;
    let server = TestServer::start().await;
    let channel = vertex_channel(
        &mock,
        "us-central1",
        "gemini-test",
        json!({"gemini-test": "gemini-embedding-001"}),
    );
    let (_, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let embed = |action: &str, body: Value| {
        server
            .client
            .post(server.url(&format!("/v1beta/models/gemini-test:{action}")))
            .header("x-goog-api-key", &key)
            .json(&body)
    };

    // embedContent: the parts' text as one instance, taskType / title / outputDimensionality
    // in Vertex's names; the answer in Gemini's shape.
    let (status, answer) = server
        .send(embed(
            "embedContent",
            json!({"content": {"parts": [{"text": "four"}, {"text": "more"}]},
                "taskType": "RETRIEVAL_DOCUMENT", "title": "Doc", "outputDimensionality": 8}),
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer, json!({"embedding": {"values": [0.25, 0]}}));
    let call = mock.last();
    assert_eq!(
        call.path,
        format!(
            "/v1/projects/{PROJECT}/locations/us-central1/publishers/google/models/gemini-embedding-001:predict"
        )
    );
    assert_eq!(
        call.json(),
        json!({"instances": [{"content": "four\nmore", "task_type": "RETRIEVAL_DOCUMENT",
            "title": "Doc"}], "parameters": {"outputDimensionality": 8}})
    );

    // batchEmbedContents: one instance per request.
    let (status, answer) = server
        .send(embed(
            "batchEmbedContents",
            json!({"requests": [
                {"model": "models/gemini-test", "content": {"parts": [{"text": "ab"}]}},
                {"model": "models/gemini-test", "content": {"parts": [{"text": "cdef"}]}}]}),
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer,
        json!({"embeddings": [{"values": [0.25, 0]}, {"values": [0.25, 1]}]})
    );
    assert_eq!(
        mock.last().json(),
        json!({"instances": [{"content": "ab"}, {"content": "cdef"}]})
    );

    // Billed from Vertex's token counts (the mock counts bytes): 9 then 2 + 4 = 6;
    // gemini-test 0.5 × (9 + 6) = 7.5 → 4 + 3.
    let (_, _, requests, logs) = balances(&server, payer.id).await;
    assert_eq!(requests, 2);
    let mut prompts: Vec<i64> = logs.iter().map(|l| l.prompt_tokens).collect();
    prompts.sort_unstable();
    assert_eq!(prompts, [6, 9]);
}
