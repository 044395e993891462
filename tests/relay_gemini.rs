//! Gemini through the public HTTP API: generateContent and streamGenerateContent to Gemini
//! channels (byte-exact pass-through; a mapped model changes only the URL), to OpenAI channels
//! (converted both ways), OpenAI chat and Anthropic clients of Gemini channels, billing from
//! usageMetadata, keys by header and query, Gemini-shaped errors, countTokens (forwarded or
//! counted locally) and embedContent / batchEmbedContents (Gemini and OpenAI channels).

mod common;

use common::fault::{Script, Tail};
use common::mock_gemini::MockGemini;
use common::mock_upstream::MockUpstream;
use common::relay_fixture::{balances, fixture, other, raw, sse_events};
use common::{TestServer, log_capture};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn gemini_channel(mock: &MockGemini, extra: Value) -> Value {
    let mut channel = json!({"name": "gemini", "type": 24, "key": "gemini-upstream-key",
        "base_url": mock.base, "models": "gemini-test", "group": "default"});
    if let (Some(c), Some(e)) = (channel.as_object_mut(), extra.as_object()) {
        c.extend(e.clone());
    }
    channel
}

fn generate(server: &TestServer, model_action: &str) -> reqwest::RequestBuilder {
    server
        .client
        .post(server.url(&format!("/v1beta/models/{model_action}")))
}

#[tokio::test]
async fn gemini_pass_through_is_byte_exact_and_billed_from_usage_metadata() {
    let mock = MockGemini::start().await;
    let answer = r#"{"candidates": [{"content": {"parts": [{"text": "Hi"}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 1000,"candidatesTokenCount": 100,"thoughtsTokenCount": 50,"cachedContentTokenCount": 400,"totalTokenCount": 1150},"modelVersion": "gemini-test"}"#;
    mock.set_raw_answer("application/json; charset=UTF-8", answer);
    let server = TestServer::start().await;
    let channel = gemini_channel(
        &mock,
        json!({"model_mapping": r#"{"gemini-test": "gemini-upstream"}"#}),
    );
    let (_, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let body = "{\"contents\": [{\"role\":\"user\", \"parts\":[{\"text\":\"hi\"}]}],\n \"generationConfig\": {\"maxOutputTokens\": 100}}";
    let (status, headers, text) = raw(generate(&server, "gemini-test:generateContent")
        .header("x-goog-api-key", &key)
        .header("content-type", "application/json")
        .body(body))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(text, answer, "the answer reaches the client byte for byte");
    assert_eq!(headers["content-type"], "application/json; charset=UTF-8");
    assert_eq!(
        mock.last_raw_body().as_deref(),
        Some(body.as_bytes()),
        "the body is not rewritten"
    );
    assert_eq!(
        mock.last_uri().as_deref(),
        Some("/v1beta/models/gemini-upstream:generateContent"),
        "the mapped model goes in the URL"
    );
    assert_eq!(
        mock.last_header("x-goog-api-key").as_deref(),
        Some("gemini-upstream-key")
    );
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // 0.5 × (600 + 400 × 0.25 + (100 + 50) × 4) = 0.5 × 1300 = 650
    assert_eq!(quota, 1_000_000 - 650);
    assert_eq!(
        (logs[0].prompt_tokens, logs[0].completion_tokens),
        (1000, 150)
    );
    assert_eq!(other(&logs[0])["cache_tokens"], 400);
}

#[tokio::test]
async fn gemini_stream_by_query_key_is_piped_unchanged_and_the_key_never_logged() {
    log_capture::install();
    let mock = MockGemini::start().await;
    mock.set_usage((40, 12, 0, 0));
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(
        &server,
        &[gemini_channel(&mock, json!({}))],
        1_000_000,
        500_000,
    )
    .await;
    let (status, headers, text) = raw(generate(
        &server,
        &format!("gemini-test:streamGenerateContent?alt=sse&key={key}"),
    )
    .json(&json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(headers["content-type"], "text/event-stream");
    assert!(
        text.contains("\r\n\r\n"),
        "the upstream's own framing is kept: {text:?}"
    );
    let chunks = sse_events(&text);
    let content: String = chunks
        .iter()
        .filter_map(|(_, c)| c["candidates"][0]["content"]["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(content, "Hello");
    assert_eq!(
        mock.last_uri().as_deref(),
        Some("/v1beta/models/gemini-test:streamGenerateContent?alt=sse")
    );
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // 0.5 × (40 + 12 × 4) = 44
    assert_eq!(quota, 1_000_000 - 44);
    assert!(logs[0].is_stream);
    let logged = log_capture::logs();
    assert!(
        logged.contains("streamGenerateContent"),
        "requests are traced"
    );
    assert!(
        !logged.contains(key.trim_start_matches("sk-")),
        "a key in the query is never logged"
    );
}

#[tokio::test]
async fn gemini_errors_have_gemini_shape() {
    let mock = MockGemini::start().await;
    let server = TestServer::start().await;
    let (_, _, key) = fixture(
        &server,
        &[gemini_channel(&mock, json!({}))],
        1_000_000,
        500_000,
    )
    .await;
    let body = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
    let (status, answer) = server
        .send(generate(&server, "gemini-test:generateContent").json(&body))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(answer["error"]["code"], 401);
    assert_eq!(answer["error"]["status"], "UNAUTHENTICATED");
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("x-goog-api-key"))
    );

    let (status, answer) = server
        .send(
            generate(&server, "gemini-test:predict")
                .header("x-goog-api-key", &key)
                .json(&body),
        )
        .await;
    assert_eq!(
        (status, answer["error"]["status"].as_str()),
        (StatusCode::NOT_IMPLEMENTED, Some("UNIMPLEMENTED"))
    );

    let (status, answer) = server
        .send(
            generate(&server, "unpriced-model:generateContent")
                .header("x-goog-api-key", &key)
                .json(&body),
        )
        .await;
    assert_eq!(
        (status, answer["error"]["status"].as_str()),
        (StatusCode::BAD_REQUEST, Some("INVALID_ARGUMENT"))
    );

    mock.push_fault(429, json!({"error": {"code": 429, "message": "Resource has been exhausted", "status": "RESOURCE_EXHAUSTED"}}));
    let (status, answer) = server
        .send(
            generate(&server, "gemini-test:generateContent")
                .header("x-goog-api-key", &key)
                .json(&body),
        )
        .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(answer["error"]["message"], "Resource has been exhausted");
    assert_eq!(answer["error"]["status"], "RESOURCE_EXHAUSTED");
}

#[tokio::test]
async fn gemini_clients_of_openai_channels_are_converted_both_ways() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((30, 6, 0)));
    mock.set_pieces(&["Hel", "lo"]);
    let server = TestServer::start().await;
    let channel = json!({"name": "openai", "type": 1, "key": "k1", "base_url": mock.base,
        "models": "gpt-4o", "group": "default"});
    let (_, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let body = json!({"systemInstruction": {"parts": [{"text": "be brief"}]},
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "generationConfig": {"maxOutputTokens": 64, "temperature": 0.2}});
    let (status, answer) = server
        .send(
            generate(&server, "gpt-4o:generateContent")
                .header("x-goog-api-key", &key)
                .json(&body),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let sent = mock.last_body().unwrap_or_default();
    assert_eq!(sent["model"], "gpt-4o");
    assert_eq!(
        sent["messages"],
        json!([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}])
    );
    assert_eq!(
        (sent["max_tokens"].as_i64(), sent["temperature"].as_f64()),
        (Some(64), Some(0.2))
    );
    assert_eq!(
        answer["candidates"][0]["content"]["parts"][0]["text"],
        "Hello"
    );
    assert_eq!(answer["candidates"][0]["finishReason"], "STOP");
    assert_eq!(answer["usageMetadata"]["promptTokenCount"], 30);
    assert_eq!(answer["usageMetadata"]["candidatesTokenCount"], 6);
    assert_eq!(answer["modelVersion"], "gpt-4o");

    let (status, _, text) = raw(generate(&server, "gpt-4o:streamGenerateContent?alt=sse")
        .header("x-goog-api-key", &key)
        .json(&body))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let chunks = sse_events(&text);
    let content: String = chunks
        .iter()
        .filter_map(|(_, c)| c["candidates"][0]["content"]["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(content, "Hello");
    let last = &chunks.last().map(|(_, c)| c.clone()).unwrap_or_default();
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    assert_eq!(last["usageMetadata"]["candidatesTokenCount"], 6);
    let (quota, _, count, _) = balances(&server, payer.id).await;
    // each: 1.25 × (30 + 6 × 4) = 67.5 → 68
    assert_eq!((quota, count), (1_000_000 - 2 * 68, 2));
}

#[tokio::test]
async fn openai_and_anthropic_clients_of_gemini_channels() {
    let mock = MockGemini::start().await;
    mock.set_usage((20, 4, 0, 0));
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(
        &server,
        &[gemini_channel(&mock, json!({}))],
        1_000_000,
        500_000,
    )
    .await;
    let chat = json!({"model": "gemini-test", "max_tokens": 50, "messages": [
        {"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]});
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/chat/completions"))
                .bearer_auth(&key)
                .json(&chat),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let sent = mock.last_body().unwrap_or_default();
    assert_eq!(
        sent["systemInstruction"],
        json!({"parts": [{"text": "be brief"}]})
    );
    assert_eq!(
        sent["contents"],
        json!([{"role": "user", "parts": [{"text": "hi"}]}])
    );
    assert_eq!(sent["generationConfig"]["maxOutputTokens"], 50);
    assert_eq!(
        mock.last_uri().as_deref(),
        Some("/v1beta/models/gemini-test:generateContent")
    );
    assert_eq!(
        mock.last_header("x-goog-api-key").as_deref(),
        Some("gemini-upstream-key")
    );
    assert_eq!(answer["choices"][0]["message"]["content"], "Hello");
    assert_eq!(answer["usage"]["prompt_tokens"], 20);

    let mut streamed = chat.clone();
    streamed["stream"] = json!(true);
    let (_, _, text) = raw(server
        .client
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(&key)
        .json(&streamed))
    .await;
    let events = sse_events(&text);
    let content: String = events
        .iter()
        .filter_map(|(_, d)| d["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "Hello");
    assert_eq!(events.last().map(|(_, d)| d.clone()), Some(json!("[DONE]")));

    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/messages"))
                .header("x-api-key", &key)
                .json(&json!({"model": "gemini-test", "max_tokens": 50,
                "messages": [{"role": "user", "content": "hi"}]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["type"], "message");
    assert_eq!(answer["content"][0]["text"], "Hello");
    assert_eq!(answer["usage"]["input_tokens"], 20);
    let (quota, _, count, _) = balances(&server, payer.id).await;
    // each: 0.5 × (20 + 4 × 4) = 18
    assert_eq!((quota, count), (1_000_000 - 3 * 18, 3));
}

#[tokio::test]
async fn gemini_count_tokens_asks_the_channel_and_counts_itself_when_it_cannot() {
    let mock = MockGemini::start().await;
    mock.set_usage((37, 0, 0, 0));
    let server = TestServer::start().await;
    let channel = gemini_channel(
        &mock,
        json!({"model_mapping": r#"{"gemini-test": "gemini-upstream"}"#}),
    );
    let (_, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let body = json!({"contents": [{"role": "user", "parts": [{"text": "hello world!"}]}]});
    let (status, answer) = server
        .send(
            generate(&server, "gemini-test:countTokens")
                .header("x-goog-api-key", &key)
                .json(&body),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer,
        json!({"totalTokens": 37}),
        "the channel's own count"
    );
    assert_eq!(
        mock.last_uri().as_deref(),
        Some("/v1beta/models/gemini-upstream:countTokens")
    );
    assert_eq!(mock.last_body(), Some(body.clone()));

    // The channel fails: Tollgate counts the text itself ("hello world!": 12 chars → 3).
    mock.push_fault(
        500,
        json!({"error": {"code": 500, "message": "boom", "status": "INTERNAL"}}),
    );
    let (status, answer) = server
        .send(
            generate(&server, "gemini-test:countTokens")
                .header("x-goog-api-key", &key)
                .json(&body),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer, json!({"totalTokens": 3}));

    let (quota, _, count, logs) = balances(&server, payer.id).await;
    assert_eq!(
        (quota, count, logs.len()),
        (1_000_000, 0, 0),
        "counting is free"
    );
}

#[tokio::test]
async fn gemini_embeddings_are_forwarded_and_billed_for_prompt_tokens_only() {
    let mock = MockGemini::start().await;
    let server = TestServer::start().await;
    let channel = gemini_channel(
        &mock,
        json!({"model_mapping": r#"{"gemini-test": "gemini-upstream"}"#}),
    );
    let (_, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;

    // embedContent with usage reported: 0.5 × 1000 = 500.
    mock.set_embed_usage(Some(1000));
    let one = r#"{"content": {"parts": [{"text": "embed me"}]}, "taskType": "RETRIEVAL_QUERY"}"#;
    let (status, _, text) = raw(generate(&server, "gemini-test:embedContent")
        .header("x-goog-api-key", &key)
        .header("content-type", "application/json")
        .body(one))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let answer: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(answer["embedding"]["values"], json!([0.25, 0.5]));
    assert_eq!(
        mock.last_uri().as_deref(),
        Some("/v1beta/models/gemini-upstream:embedContent")
    );
    assert_eq!(
        mock.last_raw_body().as_deref(),
        Some(one.as_bytes()),
        "the body passes unchanged"
    );
    let (quota, _, count, logs) = balances(&server, payer.id).await;
    assert_eq!((quota, count), (1_000_000 - 500, 1));
    assert_eq!(
        (
            logs[0].prompt_tokens,
            logs[0].completion_tokens,
            logs[0].quota
        ),
        (1000, 0, 500)
    );
    assert_eq!(other(&logs[0])["usage_source"], "upstream");
    assert_eq!(other(&logs[0])["upstream_model_name"], "gemini-upstream");

    // batchEmbedContents without usage: Tollgate's count of every text part, 400 chars → 100
    // tokens, 0.5 × 100 = 50; each request names the mapped model upstream.
    mock.set_embed_usage(None);
    let text_a = "a".repeat(240);
    let text_b = "b".repeat(160);
    let batch = json!({"requests": [
        {"model": "models/gemini-test", "content": {"parts": [{"text": text_a}]}},
        {"model": "models/gemini-test", "content": {"parts": [{"text": text_b}]}}]});
    let (status, answer) = server
        .send(
            generate(&server, "gemini-test:batchEmbedContents")
                .header("x-goog-api-key", &key)
                .json(&batch),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["embeddings"].as_array().map(Vec::len), Some(2));
    let sent = mock.last_body().expect("body");
    assert_eq!(sent["requests"][0]["model"], "models/gemini-upstream");
    assert_eq!(
        sent["requests"][1]["content"],
        batch["requests"][1]["content"]
    );
    let (quota, _, count, logs) = balances(&server, payer.id).await;
    assert_eq!((quota, count), (1_000_000 - 550, 2));
    assert_eq!((logs[0].prompt_tokens, logs[0].quota), (100, 50));
    assert_eq!(other(&logs[0])["usage_source"], "estimated");

    // An upstream error releases the reservation and is answered in Gemini's shape.
    mock.push_fault(
        400,
        json!({"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}}),
    );
    let (status, answer) = server
        .send(
            generate(&server, "gemini-test:embedContent")
                .header("x-goog-api-key", &key)
                .json(&json!({"content": {"parts": [{"text": "x"}]}})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["error"]["status"], "INVALID_ARGUMENT");
    let (status, answer) = server
        .send(
            generate(&server, "gemini-test:embedContent")
                .header("x-goog-api-key", &key)
                .json(&json!({"parts": "no content"})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let (quota, _, count, _) = balances(&server, payer.id).await;
    assert_eq!(
        (quota, count),
        (1_000_000 - 550, 2),
        "failures cost nothing"
    );
}

/// Gemini embeddings read their answer on their own and released the reservation when it broke
/// off or was not JSON: the upstream had embedded the texts and nobody paid. They go through
/// the whole-answer reader now: billed as partial at the counted prompt, answered 502.
#[tokio::test]
async fn gemini_embeddings_cut_off_or_not_json_are_billed_as_partial() {
    let mock = MockGemini::start().await;
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(
        &server,
        &[gemini_channel(&mock, json!({}))],
        1_000_000,
        500_000,
    )
    .await;
    // 400 characters → 100 tokens by Tollgate's count; gemini-test at ratio 0.5 → 50.
    let ask = json!({"content": {"parts": [{"text": "a".repeat(400)}]}});
    let mut cut = Script::ok(
        "application/json",
        vec![r#"{"embedding": {"values": [0.25,"#.to_owned()],
    );
    cut.tail = Tail::Cut;
    mock.push_script(cut);
    let (status, answer) = server
        .send(
            generate(&server, "gemini-test:embedContent")
                .header("x-goog-api-key", &key)
                .json(&ask),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{answer}");
    let (quota, _, count, logs) = balances(&server, payer.id).await;
    assert_eq!((quota, count), (1_000_000 - 50, 1), "{logs:?}");
    assert_eq!((logs[0].prompt_tokens, logs[0].quota), (100, 50));
    assert_eq!(other(&logs[0])["usage_source"], "partial");
    assert_eq!(other(&logs[0])["partial_reason"], "upstream_cut");

    mock.push_script(Script::ok(
        "text/html",
        vec!["<html><body>502 Bad Gateway</body></html>".to_owned()],
    ));
    let (status, answer) = server
        .send(
            generate(&server, "gemini-test:embedContent")
                .header("x-goog-api-key", &key)
                .json(&ask),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{answer}");
    let (quota, _, count, logs) = balances(&server, payer.id).await;
    assert_eq!((quota, count), (1_000_000 - 100, 2), "{logs:?}");
    assert_eq!(other(&logs[0])["partial_reason"], "non_json");
}

#[tokio::test]
async fn gemini_embeddings_through_an_openai_channel_are_converted_both_ways() {
    let openai = MockUpstream::start().await;
    openai.set_usage(Some((300, 0, 0)));
    let server = TestServer::start().await;
    let channel = json!({"name": "openai", "type": 1, "key": "k", "base_url": openai.base,
        "models": "gemini-test", "group": "default"});
    let (_, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let (status, answer) = server
        .send(
            generate(&server, "gemini-test:embedContent")
                .header("x-goog-api-key", &key)
                .json(
                    &json!({"content": {"parts": [{"text": "one"}, {"text": "two"}]},
                    "outputDimensionality": 2}),
                ),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer, json!({"embedding": {"values": [0.5, 0.25]}}));
    assert_eq!(
        openai.last_body(),
        Some(json!({"model": "gemini-test", "input": "one\ntwo", "dimensions": 2}))
    );
    let (quota, _, count, logs) = balances(&server, payer.id).await;
    // 0.5 × 300 = 150, from the upstream's usage.
    assert_eq!((quota, count), (1_000_000 - 150, 1));
    assert_eq!((logs[0].prompt_tokens, logs[0].quota), (300, 150));
    assert_eq!(other(&logs[0])["usage_source"], "upstream");
}
