//! Azure OpenAI (channel type 3) through the public HTTP API, against a mock speaking Azure's
//! documented wire format (Azure OpenAI REST reference, data plane inference 2024-10-21:
//! https://learn.microsoft.com/azure/ai-foundry/openai/reference; the fixtures are the spec's
//! examples, specification/cognitiveservices/data-plane/AzureOpenAI/inference/stable/2024-10-21):
//! deployment URLs with the api-version from the channel's `other`, the `api-key` header, the
//! model mapped to a deployment, the v1 style, chat whole and streamed, tools, embeddings,
//! Anthropic clients converted, billing from the reported usage, and errors.

mod common;

use common::TestServer;
use common::mock_cloud::{Answer, MockCloud, Recorded, sse};
use common::relay_fixture::{balances, chat_request, fixture, raw, sse_events};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The 2024-10-21 spec's chat completion example (examples/chat_completions.json), shortened.
fn chat_answer() -> Value {
    json!({
        "id": "chatcmpl-7R1nGnsXO8n4oi9UPz2f3UHdgAYMn",
        "created": 1686676106,
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Ahoy matey!"}}],
        "usage": {"completion_tokens": 557, "prompt_tokens": 33, "total_tokens": 590}
    })
}

/// Chat completion chunks as Azure streams them, the usage chunk last when asked for.
fn chat_stream(include_usage: bool) -> Vec<u8> {
    let mut events = vec![
        (
            "",
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
            "model": "gpt-4o", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Ahoy"},
            "finish_reason": null}]}),
        ),
        (
            "",
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
            "model": "gpt-4o", "choices": [{"index": 0, "delta": {"content": " matey!"},
            "finish_reason": "stop"}]}),
        ),
    ];
    if include_usage {
        events.push((
            "",
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk",
            "created": 1, "model": "gpt-4o", "choices": [],
            "usage": {"completion_tokens": 557, "prompt_tokens": 33, "total_tokens": 590}}),
        ));
    }
    let mut bytes = sse(&events);
    bytes.extend_from_slice(b"data: [DONE]\n\n");
    bytes
}

/// The spec's embeddings example answer (examples/embeddings.json), shortened.
fn embeddings_answer() -> Value {
    json!({"object": "list", "model": "ada",
        "data": [{"index": 0, "object": "embedding", "embedding": [0.0023064255, -0.009327292]}],
        "usage": {"prompt_tokens": 4, "total_tokens": 4}})
}

/// Answers like an Azure resource: chat (whole or streamed) and embeddings under a deployment or
/// the v1 path; 404 for anything else.
fn azure(req: &Recorded) -> Answer {
    let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
    if req.path.ends_with("/chat/completions") {
        if body["stream"] == true {
            let usage = body["stream_options"]["include_usage"] == true;
            return Answer::Chunks("text/event-stream", vec![chat_stream(usage)]);
        }
        return Answer::Json(200, chat_answer());
    }
    if req.path.ends_with("/embeddings") {
        return Answer::Json(200, embeddings_answer());
    }
    if req.path.ends_with("/images/generations") {
        // The spec's image generation example (examples/image_generation.json), shortened.
        return Answer::Json(
            200,
            json!({"created": 1698116662, "data": [{"url": "https://example.blob.core.windows.net/img.png",
                "revised_prompt": "A painting of a dog."}]}),
        );
    }
    if req.path == "/openai/responses" {
        return Answer::Json(
            200,
            json!({"id": "resp_1", "object": "response", "status": "completed", "model": "gpt-4o",
                "output": [{"type": "message", "role": "assistant", "content": [
                    {"type": "output_text", "text": "Hello!", "annotations": []}]}],
                "usage": {"input_tokens": 9, "output_tokens": 3, "total_tokens": 12}}),
        );
    }
    if req.path.ends_with("/audio/speech") {
        return Answer::Bytes(200, "audio/mpeg", b"ID3-fake-mp3".to_vec());
    }
    Answer::Json(
        404,
        json!({"error": {"code": "DeploymentNotFound", "message": "no such deployment"}}),
    )
}

fn azure_channel(base: &str, other: &str, mapping: Value) -> Value {
    json!({"name": "azure", "type": 3, "key": "azure-resource-key-123", "base_url": base,
        "other": other, "models": "azure-test,azure-embed,azure-tts", "group": "default",
        "model_mapping": mapping.to_string()})
}

/// Prices of the Azure tests: `azure-test` ratio 1, completion 4; `azure-embed` ratio 0.5.
async fn azure_prices(server: &TestServer, root: &common::Actor) {
    server
        .set_option(
            root,
            "ModelRatio",
            json!(r#"{"azure-test": 1, "azure-embed": 0.5, "azure-tts": 1, "claude-test": 2}"#),
        )
        .await;
    server
        .set_option(root, "CompletionRatio", json!(r#"{"azure-test": 4}"#))
        .await;
}

#[tokio::test]
async fn chat_goes_to_the_deployment_with_the_api_key_and_bills_the_reported_usage() {
    let mock = MockCloud::start(azure).await;
    let server = TestServer::start().await;
    let channel = azure_channel(&mock.base, "", json!({"azure-test": "gpt4o-prod"}));
    let (root, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    azure_prices(&server, &root).await;
    let tools = json!([{"type": "function", "function": {"name": "get_weather",
        "description": "Weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]);
    let (status, _, text) = raw(chat_request(
        &server,
        &key,
        &json!({"model": "azure-test", "messages": [{"role": "user", "content": "hi"}],
            "tools": tools, "tool_choice": "auto"}),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let answer: Value = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(answer["choices"][0]["message"]["content"], "Ahoy matey!");
    let sent = mock.last();
    assert_eq!(sent.path, "/openai/deployments/gpt4o-prod/chat/completions");
    assert_eq!(
        sent.query, "api-version=2024-10-21",
        "the default GA version"
    );
    assert_eq!(
        sent.header("api-key").as_deref(),
        Some("azure-resource-key-123")
    );
    assert_eq!(sent.header("authorization"), None, "no bearer key to Azure");
    assert_eq!(sent.json()["tools"], tools, "tools reach Azure unchanged");
    let (quota, _, count, logs) = balances(&server, payer.id).await;
    // 1 × (33 + 557 × 4) = 2261: the usage Azure reported.
    assert_eq!((quota, count), (1_000_000 - 2261, 1));
    assert_eq!(
        (logs[0].prompt_tokens, logs[0].completion_tokens),
        (33, 557)
    );
}

#[tokio::test]
async fn a_stream_asks_for_usage_and_bills_it_without_showing_it_to_the_client() {
    let mock = MockCloud::start(azure).await;
    let server = TestServer::start().await;
    let channel = azure_channel(&mock.base, "2025-04-01-preview", json!({}));
    let (root, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    azure_prices(&server, &root).await;
    let (status, headers, text) = raw(chat_request(
        &server,
        &key,
        &json!({"model": "azure-test", "stream": true,
            "messages": [{"role": "user", "content": "hi"}]}),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(headers["content-type"], "text/event-stream");
    let events = sse_events(&text);
    let content: String = events
        .iter()
        .filter_map(|(_, d)| d["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "Ahoy matey!");
    assert!(
        events.iter().all(|(_, d)| d.get("usage").is_none()),
        "the usage chunk the client did not ask for is held back: {text}"
    );
    let sent = mock.last();
    assert_eq!(sent.path, "/openai/deployments/azure-test/chat/completions");
    assert_eq!(sent.query, "api-version=2025-04-01-preview");
    assert_eq!(sent.json()["stream_options"]["include_usage"], true);
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000 - 2261);
    assert!(logs[0].is_stream);
}

#[tokio::test]
async fn the_v1_style_sends_the_deployment_as_the_model_and_no_api_version() {
    let mock = MockCloud::start(azure).await;
    let server = TestServer::start().await;
    let channel = azure_channel(&mock.base, "v1", json!({"azure-test": "my-deployment"}));
    let (root, _, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    azure_prices(&server, &root).await;
    let (status, _, text) = raw(chat_request(
        &server,
        &key,
        &json!({"model": "azure-test", "messages": [{"role": "user", "content": "hi"}]}),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let sent = mock.last();
    assert_eq!(sent.path, "/openai/v1/chat/completions");
    assert_eq!(sent.query, "");
    assert_eq!(sent.json()["model"], "my-deployment");
}

#[tokio::test]
async fn embeddings_use_the_deployment_url() {
    let mock = MockCloud::start(azure).await;
    let server = TestServer::start().await;
    let channel = azure_channel(&mock.base, "", json!({"azure-embed": "ada-prod"}));
    let (root, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    azure_prices(&server, &root).await;
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/embeddings"))
                .bearer_auth(&key)
                .json(&json!({"model": "azure-embed", "input": "This is a test."})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["data"][0]["embedding"][0], 0.0023064255);
    let sent = mock.last();
    assert_eq!(sent.path, "/openai/deployments/ada-prod/embeddings");
    assert_eq!(sent.query, "api-version=2024-10-21");
    let (quota, _, _, _) = balances(&server, payer.id).await;
    // 0.5 × 4 = 2.
    assert_eq!(quota, 1_000_000 - 2);
}

#[tokio::test]
async fn anthropic_clients_reach_azure_converted() {
    let mock = MockCloud::start(azure).await;
    let server = TestServer::start().await;
    let channel = azure_channel(&mock.base, "", json!({"claude-test": "gpt4o-prod"}));
    let mut channel = channel;
    channel["models"] = json!("claude-test");
    let (root, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    azure_prices(&server, &root).await;
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/messages"))
                .header("x-api-key", &key)
                .header("anthropic-version", "2023-06-01")
                .json(&json!({"model": "claude-test", "max_tokens": 50,
                    "messages": [{"role": "user", "content": "hi"}]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["type"], "message");
    assert_eq!(answer["content"][0]["text"], "Ahoy matey!");
    assert_eq!(answer["usage"]["output_tokens"], 557);
    let sent = mock.last();
    assert_eq!(sent.path, "/openai/deployments/gpt4o-prod/chat/completions");
    assert_eq!(
        sent.header("api-key").as_deref(),
        Some("azure-resource-key-123")
    );
    assert_eq!(sent.header("x-api-key"), None);
    let (_, _, count, logs) = balances(&server, payer.id).await;
    assert_eq!(count, 1);
    assert_eq!(
        (logs[0].prompt_tokens, logs[0].completion_tokens),
        (33, 557),
        "billed from Azure's usage"
    );
}

#[tokio::test]
async fn a_refused_key_never_reaches_the_client() {
    let refusing = MockCloud::start(|_: &Recorded| {
        Answer::Json(
            401,
            json!({"error": {"code": "401", "message":
                "Access denied due to invalid subscription key azure-resource-key-123"}}),
        )
    })
    .await;
    let server = TestServer::start().await;
    let (root, _, key) = fixture(
        &server,
        &[azure_channel(&refusing.base, "", json!({}))],
        1_000_000,
        500_000,
    )
    .await;
    azure_prices(&server, &root).await;
    let (status, _, text) = raw(chat_request(
        &server,
        &key,
        &json!({"model": "azure-test", "messages": [{"role": "user", "content": "hi"}]}),
    ))
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{text}");
    assert!(text.contains("Access denied"), "{text}");
    assert!(!text.contains("azure-resource-key-123"), "{text}");
}

#[tokio::test]
async fn errors_fail_over_on_a_bad_key_and_stop_on_the_clients_mistake() {
    // The first resource refuses its key (401), the second answers.
    let refusing = MockCloud::start(|_: &Recorded| {
        Answer::Json(
            401,
            json!({"error": {"code": "401", "message":
                "Access denied due to invalid subscription key azure-resource-key-123"}}),
        )
    })
    .await;
    let good = MockCloud::start(azure).await;
    let server = TestServer::start().await;
    let mut first = azure_channel(&refusing.base, "", json!({}));
    first["priority"] = json!(10);
    let second = azure_channel(&good.base, "", json!({}));
    let (root, payer, key) = fixture(&server, &[first, second], 1_000_000, 500_000).await;
    azure_prices(&server, &root).await;
    server.set_option(&root, "RetryTimes", json!("2")).await;
    let body = json!({"model": "azure-test", "messages": [{"role": "user", "content": "hi"}]});
    let (status, _, text) = raw(chat_request(&server, &key, &body.clone())).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(refusing.requests().len(), 1);
    assert_eq!(good.requests().len(), 1);

    // A content-filter 400 is the client's: not retried, passed on, not billed.
    let filtered = MockCloud::start(|_: &Recorded| {
        Answer::Json(
            400,
            json!({"error": {"code": "content_filter", "message":
                "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
                "param": "prompt", "status": 400}}),
        )
    })
    .await;
    let server = TestServer::start().await;
    let only = azure_channel(&filtered.base, "", json!({}));
    let (root, payer2, key) = fixture(&server, &[only], 1_000_000, 500_000).await;
    azure_prices(&server, &root).await;
    let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
    assert!(text.contains("content management policy"), "{text}");
    assert_eq!(filtered.requests().len(), 1, "not retried");
    let (quota, _, count, _) = balances(&server, payer2.id).await;
    assert_eq!((quota, count), (1_000_000, 0));
    let _ = payer;
}

#[tokio::test]
async fn an_unknown_route_for_azure_is_refused_not_sent() {
    let mock = MockCloud::start(azure).await;
    let server = TestServer::start().await;
    let (root, _, key) = fixture(
        &server,
        &[azure_channel(&mock.base, "", json!({}))],
        1_000_000,
        500_000,
    )
    .await;
    azure_prices(&server, &root).await;
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/rerank"))
                .bearer_auth(&key)
                .json(&json!({"model": "azure-test", "query": "q", "documents": ["a"]})),
        )
        .await;
    assert!(
        status.is_client_error() || status.is_server_error(),
        "{answer}"
    );
    assert!(mock.requests().is_empty(), "nothing reached Azure");
}

#[tokio::test]
async fn the_channel_test_calls_the_deployment() {
    let mock = MockCloud::start(azure).await;
    let server = TestServer::start().await;
    let channel = azure_channel(&mock.base, "", json!({"azure-test": "gpt4o-prod"}));
    let (root, _, _) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let (status, answer) = root.get("/api/channel/test/1").await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["success"], true, "{answer}");
    let sent = mock.last();
    assert_eq!(sent.path, "/openai/deployments/gpt4o-prod/chat/completions");
    assert_eq!(sent.query, "api-version=2024-10-21");
    assert_eq!(
        sent.header("api-key").as_deref(),
        Some("azure-resource-key-123")
    );
    assert_eq!(sent.json()["max_tokens"], 1);
}

#[tokio::test]
async fn speech_goes_to_the_deployment_and_is_billed_by_its_input() {
    let mock = MockCloud::start(azure).await;
    let server = TestServer::start().await;
    let channel = azure_channel(
        &mock.base,
        "2025-04-01-preview",
        json!({"azure-tts": "tts-prod"}),
    );
    let (root, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    azure_prices(&server, &root).await;
    let (status, headers, text) = raw(server
        .client
        .post(server.url("/v1/audio/speech"))
        .bearer_auth(&key)
        .json(&json!({"model": "azure-tts", "input": "Hello", "voice": "alloy"})))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(headers["content-type"], "audio/mpeg");
    assert_eq!(text, "ID3-fake-mp3");
    let sent = mock.last();
    assert_eq!(sent.path, "/openai/deployments/tts-prod/audio/speech");
    assert_eq!(sent.query, "api-version=2025-04-01-preview");
    assert_eq!(
        sent.header("api-key").as_deref(),
        Some("azure-resource-key-123")
    );
    let (_, _, count, logs) = balances(&server, payer.id).await;
    assert_eq!((count, logs[0].prompt_tokens), (1, 5));
}

#[tokio::test]
async fn responses_and_image_generations_reach_azure() {
    let mock = MockCloud::start(azure).await;
    let server = TestServer::start().await;
    let channel = azure_channel(
        &mock.base,
        "2025-04-01-preview",
        json!({"azure-test": "gpt4o-prod"}),
    );
    let (root, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    azure_prices(&server, &root).await;
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/responses"))
                .bearer_auth(&key)
                .json(&json!({"model": "azure-test", "input": "Hi"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["output"][0]["content"][0]["text"], "Hello!");
    let sent = mock.last();
    assert_eq!(sent.path, "/openai/responses");
    assert_eq!(sent.query, "api-version=2025-04-01-preview");
    assert_eq!(
        sent.json()["model"],
        "gpt4o-prod",
        "the deployment names the model"
    );
    let (quota, _, _, _) = balances(&server, payer.id).await;
    // 9 + 3 × 4 = 21.
    assert_eq!(quota, 1_000_000 - 21);

    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/images/generations"))
                .bearer_auth(&key)
                .json(&json!({"model": "azure-test", "prompt": "A dog", "n": 1})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["data"][0]["revised_prompt"], "A painting of a dog.");
    let sent = mock.last();
    assert_eq!(
        sent.path,
        "/openai/deployments/gpt4o-prod/images/generations"
    );
}
