//! The OpenAI-compatible channel types beyond OpenAI through the public HTTP API, each against a
//! mock answering as its provider documents (fixtures in tests/common/mock_compatible.rs):
//! MiniMax (35) and 360 (19) chat, Jina (38) embeddings and rerank, M3E (44) embeddings, PaLM2
//! (11) sent to the Gemini API, Zhipu (16, 26) with its signed JWT, Cloudflare Workers AI (39)
//! under the account's path, Qianfan v2 (46) with its app id; the path and auth each upstream is
//! called with, the usage billed,
//! the routes a type lacks refused with a 400, and the providers' documented error codes
//! (balance exhausted: the channel disabled with auto-ban and the next one tried; rate limit: the
//! next channel; client error: a 400, no other channel tried).

mod common;

use common::mock_compatible::{
    chat_answer, chat_stream, cloudflare_error, embeddings_answer, gemini_answer,
    jina_rerank_answer, minimax_error, zhipu_error,
};
use common::mock_scripted::MockScripted;
use common::relay_fixture::{balances, chat_request, fixture, hi, raw, sse_events};
use common::{Actor, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// A channel of `kind` on the mock serving `models`, with key `key`.
fn channel(mock: &MockScripted, kind: i64, key: &str, models: &str) -> Value {
    json!({"name": format!("type-{kind}-{key}"), "type": kind, "key": key,
        "base_url": mock.base, "models": models, "group": "default"})
}

/// Every test model at ratio 1, completion ratio 2 (a chat of p prompt and c completion tokens
/// costs p + 2c).
async fn prices(server: &TestServer, root: &Actor, models: &[&str]) {
    let ratios: serde_json::Map<String, Value> =
        models.iter().map(|m| ((*m).to_owned(), json!(1))).collect();
    let completion: serde_json::Map<String, Value> =
        models.iter().map(|m| ((*m).to_owned(), json!(2))).collect();
    server
        .set_option(root, "ModelRatio", json!(Value::Object(ratios).to_string()))
        .await;
    server
        .set_option(
            root,
            "CompletionRatio",
            json!(Value::Object(completion).to_string()),
        )
        .await;
}

async fn post(server: &TestServer, key: &str, path: &str, body: Value) -> (StatusCode, Value) {
    server
        .send(
            server
                .client
                .post(server.url(path))
                .bearer_auth(key)
                .json(&body),
        )
        .await
}

#[tokio::test]
async fn minimax_and_360_chat_whole_and_streamed_and_are_billed_from_their_usage() {
    let mock = MockScripted::start().await;
    let server = TestServer::start().await;
    let channels = [
        channel(&mock, 35, "mm-key", "MiniMax-M2.1"),
        channel(&mock, 19, "k-360", "360gpt-pro"),
    ];
    let (root, payer, key) = fixture(&server, &channels, 1_000_000, 500_000).await;
    prices(&server, &root, &["MiniMax-M2.1", "360gpt-pro"]).await;
    let mut spent = 0;
    for (model, upstream_key) in [("MiniMax-M2.1", "mm-key"), ("360gpt-pro", "k-360")] {
        mock.push_json(200, &chat_answer(model, "Hello!", 9, 5));
        let (status, body) = server.send(chat_request(&server, &key, &hi(model))).await;
        assert_eq!(status, StatusCode::OK, "{model}: {body}");
        assert_eq!(body["choices"][0]["message"]["content"], "Hello!");
        let call = mock.last();
        assert_eq!(call.uri, "/v1/chat/completions", "{model}");
        assert_eq!(
            call.header("authorization").as_deref(),
            Some(format!("Bearer {upstream_key}").as_str())
        );
        assert_eq!(call.json()["model"], model);
        spent += 9 + 2 * 5;
        // Streamed: the deltas reach the client, the last chunk's usage is billed.
        mock.push(common::fault::Script::ok(
            "text/event-stream",
            chat_stream(model, ["Hel", "lo!"], 11, 6),
        ));
        let mut body = hi(model);
        body["stream"] = json!(true);
        let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
        assert_eq!(status, StatusCode::OK, "{model}: {text}");
        let said: String = sse_events(&text)
            .iter()
            .filter_map(|(_, d)| d["choices"][0]["delta"]["content"].as_str())
            .collect();
        assert_eq!(said, "Hello!");
        assert_eq!(mock.last().json()["stream"], true);
        spent += 11 + 2 * 6;
    }
    let (quota, _, count, logs) = balances(&server, payer.id).await;
    assert_eq!(count, 4);
    assert_eq!(quota, 1_000_000 - spent, "{logs:?}");
    // Neither serves embeddings: a 400 naming the route and the model, nothing sent.
    let before = mock.calls().len();
    let (status, body) = post(
        &server,
        &key,
        "/v1/embeddings",
        json!({"model": "MiniMax-M2.1", "input": "hi"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("/v1/embeddings") && message.contains("MiniMax-M2.1"));
    assert_eq!(mock.calls().len(), before);
}

#[tokio::test]
async fn jina_embeds_and_reranks_and_m3e_embeds_and_neither_chats() {
    let mock = MockScripted::start().await;
    let server = TestServer::start().await;
    let channels = [
        channel(
            &mock,
            38,
            "jina_key",
            "jina-embeddings-v3,jina-reranker-v2-base-multilingual",
        ),
        channel(&mock, 44, "sk-aaabbbcccdddeeefffggghhhiiijjjkkk", "m3e"),
    ];
    let (root, payer, key) = fixture(&server, &channels, 1_000_000, 500_000).await;
    prices(
        &server,
        &root,
        &[
            "jina-embeddings-v3",
            "jina-reranker-v2-base-multilingual",
            "m3e",
        ],
    )
    .await;
    mock.push_json(200, &embeddings_answer("jina-embeddings-v3", 8));
    let (status, body) = post(
        &server,
        &key,
        "/v1/embeddings",
        json!({"model": "jina-embeddings-v3", "input": ["Organic skincare"], "task": "retrieval.query"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"][0]["embedding"][1], -0.042);
    let call = mock.last();
    assert_eq!(call.uri, "/v1/embeddings");
    assert_eq!(
        call.header("authorization").as_deref(),
        Some("Bearer jina_key")
    );
    assert_eq!(
        call.json()["task"],
        "retrieval.query",
        "Jina's own fields pass"
    );
    // Rerank: Jina reports `total_tokens` alone; that is the prompt billed.
    mock.push_json(200, &jina_rerank_answer(38));
    let (status, body) = post(
        &server,
        &key,
        "/v1/rerank",
        json!({"model": "jina-reranker-v2-base-multilingual", "query": "Organic skincare",
            "documents": ["Eco-friendly kitchenware", "Organic skincare for sensitive skin"],
            "top_n": 2}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["results"][0]["index"], 1);
    assert_eq!(mock.last().uri, "/v1/rerank");
    // M3E: OpenAI's embeddings at /v1/embeddings with the server's key.
    mock.push_json(200, &embeddings_answer("m3e", 3));
    let (status, body) = post(
        &server,
        &key,
        "/v1/embeddings",
        json!({"model": "m3e", "input": ["What is laf"]}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let call = mock.last();
    assert_eq!(call.uri, "/v1/embeddings");
    assert_eq!(
        call.header("authorization").as_deref(),
        Some("Bearer sk-aaabbbcccdddeeefffggghhhiiijjjkkk")
    );
    let (quota, _, count, _) = balances(&server, payer.id).await;
    assert_eq!(count, 3);
    assert_eq!(quota, 1_000_000 - 8 - 38 - 3);
    // Chat is a route neither has.
    let before = mock.calls().len();
    for model in ["jina-embeddings-v3", "m3e"] {
        let (status, body) = server.send(chat_request(&server, &key, &hi(model))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("/v1/chat/completions") && message.contains(model),
            "{message}"
        );
    }
    assert_eq!(mock.calls().len(), before);
    // The console's channel test embeds for them (their test request).
    mock.push_json(200, &embeddings_answer("m3e", 3));
    let (status, body) = root.get("/api/channel/test/2").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["success"], true, "{body}");
    assert_eq!(mock.last().uri, "/v1/embeddings");
}

#[tokio::test]
async fn palm2_channels_are_sent_to_the_gemini_api_with_the_same_key() {
    let mock = MockScripted::start().await;
    let server = TestServer::start().await;
    let channels = [channel(&mock, 11, "AIzaSy-palm-key", "gemini-2.0-flash")];
    let (root, payer, key) = fixture(&server, &channels, 1_000_000, 500_000).await;
    prices(&server, &root, &["gemini-2.0-flash"]).await;
    mock.push_json(200, &gemini_answer("Hi there", 4, 3));
    let (status, body) = server
        .send(chat_request(&server, &key, &hi("gemini-2.0-flash")))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["choices"][0]["message"]["content"], "Hi there");
    let call = mock.last();
    assert_eq!(call.uri, "/v1beta/models/gemini-2.0-flash:generateContent");
    assert_eq!(
        call.header("x-goog-api-key").as_deref(),
        Some("AIzaSy-palm-key")
    );
    let (quota, _, _, _) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000 - 4 - 2 * 3);
    // The console's channel test goes to Gemini too.
    mock.push_json(200, &gemini_answer("ok", 1, 1));
    let (status, body) = root.get("/api/channel/test/1").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["success"], true, "{body}");
    assert!(mock.last().uri.ends_with(":generateContent"));
}

#[tokio::test]
async fn ai_proxy_library_is_refused_at_creation_with_the_reason() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server
        .client_for(common::ROOT_USER, common::ROOT_PASS)
        .await;
    let (status, body) = root
        .post(
            "/api/channel/",
            json!({"name": "kb", "type": 21, "key": "k", "models": "m", "other": "kb-1"}),
        )
        .await;
    assert_eq!(body["success"], false, "{status} {body}");
    assert_eq!(body["detail"], "channel_type_refused", "{body}");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("AI Proxy Library") && message.contains("no documentation"),
        "{message}"
    );
}

/// Two channels of `kind` for `model`: "first" (priority 10, auto-ban on) and "second"
/// (priority 0), RetryTimes 1 and auto-disable on.
async fn failover_pair(
    mock: &MockScripted,
    kind: i64,
    model: &str,
) -> (TestServer, Actor, Actor, String) {
    let server = TestServer::start().await;
    let mut first = channel(mock, kind, "first-key", model);
    first["priority"] = json!(10);
    first["auto_ban"] = json!(1);
    let second = channel(mock, kind, "second-key", model);
    let (root, payer, key) = fixture(&server, &[first, second], 1_000_000, 500_000).await;
    prices(&server, &root, &[model]).await;
    server.set_option(&root, "RetryTimes", json!("1")).await;
    server
        .set_option(&root, "AutomaticDisableChannelEnabled", json!("true"))
        .await;
    (server, root, payer, key)
}

/// The status of channel `id` once every outcome so far is applied.
async fn channel_status(server: &TestServer, root: &Actor, id: i64) -> Value {
    server.pool().retest_now().await.ok();
    root.get(&format!("/api/channel/{id}")).await.1["data"]["status"].clone()
}

#[tokio::test]
async fn minimax_errors_follow_its_documented_codes() {
    minimax_codes_answered_with(500).await;
}

/// MiniMax answers its errors with HTTP 200 too, `base_resp` in the body
/// (https://platform.minimax.io/docs/api-reference/errorcode): each is the error its code means,
/// never a served answer; a streamed request answered so is one too.
#[tokio::test]
async fn minimax_errors_in_http_200_answers_follow_its_documented_codes() {
    minimax_codes_answered_with(200).await;
    let model = "MiniMax-M2.1";
    // Streamed: balance exhausted answered as JSON with 200, the next channel streams.
    let mock = MockScripted::start().await;
    let (server, root, payer, key) = failover_pair(&mock, 35, model).await;
    mock.push_json(200, &minimax_error(1008, "insufficient balance"));
    mock.push(common::fault::Script::ok(
        "text/event-stream",
        chat_stream(model, ["o", "k"], 2, 1),
    ));
    let mut body = hi(model);
    body["stream"] = json!(true);
    let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(text.contains("[DONE]"), "{text}");
    assert_eq!(mock.calls().len(), 2);
    assert_eq!(channel_status(&server, &root, 1).await, 3, "auto-disabled");
    let (quota, _, _, _) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000 - 4);
    // An undocumented code (1033, a system error) is the upstream's failure: the next channel.
    let mock = MockScripted::start().await;
    let (server, root, _, key) = failover_pair(&mock, 35, model).await;
    mock.push_json(200, &minimax_error(1033, "system error"));
    mock.push_json(200, &chat_answer(model, "ok", 2, 1));
    let (status, body) = server.send(chat_request(&server, &key, &hi(model))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["choices"][0]["message"]["content"], "ok", "{body}");
    assert_eq!(mock.calls().len(), 2);
    assert_eq!(channel_status(&server, &root, 1).await, 1);
    // A success keeps its base_resp {status_code: 0} and is served as it came.
    let mock = MockScripted::start().await;
    let (server, _, _, key) = failover_pair(&mock, 35, model).await;
    let mut ok = chat_answer(model, "fine", 2, 1);
    ok["base_resp"] = json!({"status_code": 0, "status_msg": ""});
    mock.push_json(200, &ok);
    let (status, body) = server.send(chat_request(&server, &key, &hi(model))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["choices"][0]["message"]["content"], "fine", "{body}");
    assert_eq!(mock.calls().len(), 1);
}

/// MiniMax reports errors in a stream's first event too (`base_resp` in its data, the same
/// codes; the event split across two reads here): before anything reaches the client it is the
/// error its code means, as in a whole answer; a stream that begins with an answer goes on.
#[tokio::test]
async fn minimax_errors_in_a_streams_first_event_follow_its_documented_codes() {
    let model = "MiniMax-M2.1";
    let error_stream = |code: i64, message: &str| {
        let event = format!("data: {}\n\n", minimax_error(code, message));
        let (a, b) = event.split_at(event.len() / 2);
        common::fault::Script::ok("text/event-stream", vec![a.to_owned(), b.to_owned()])
    };
    let mut body = hi(model);
    body["stream"] = json!(true);
    // Balance exhausted (1008): the first channel is disabled, the second streams the answer.
    let mock = MockScripted::start().await;
    let (server, root, payer, key) = failover_pair(&mock, 35, model).await;
    mock.push(error_stream(1008, "insufficient balance"));
    mock.push(common::fault::Script::ok(
        "text/event-stream",
        chat_stream(model, ["o", "k"], 2, 1),
    ));
    let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(
        !text.contains("base_resp") && text.contains("[DONE]"),
        "{text}"
    );
    let content: String = sse_events(&text)
        .iter()
        .filter_map(|(_, c)| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "ok", "{text}");
    assert_eq!(mock.calls().len(), 2);
    assert_eq!(channel_status(&server, &root, 1).await, 3, "auto-disabled");
    let (quota, _, _, _) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000 - 4);

    // A client error (2013): 400 at once, no other channel tried, nothing billed.
    let mock = MockScripted::start().await;
    let (server, root, payer, key) = failover_pair(&mock, 35, model).await;
    mock.push(error_stream(
        2013,
        "invalid params, tool call id is invalid",
    ));
    let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
    assert!(text.contains("2013"), "{text}");
    assert_eq!(mock.calls().len(), 1);
    assert_eq!(channel_status(&server, &root, 1).await, 1);
    let (quota, _, _, _) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000, "nothing billed");
}

/// MiniMax's balance, rate-limit and client-error codes, answered with HTTP `http`.
async fn minimax_codes_answered_with(http: u16) {
    let model = "MiniMax-M2.1";
    // Balance exhausted (1008): the first channel is disabled, the second answers.
    let mock = MockScripted::start().await;
    let (server, root, payer, key) = failover_pair(&mock, 35, model).await;
    mock.push_json(http, &minimax_error(1008, "insufficient balance"));
    mock.push_json(200, &chat_answer(model, "ok", 2, 1));
    let (status, body) = server.send(chat_request(&server, &key, &hi(model))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let calls = mock.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[0].header("authorization").as_deref(),
        Some("Bearer first-key")
    );
    assert_eq!(
        calls[1].header("authorization").as_deref(),
        Some("Bearer second-key")
    );
    assert_eq!(channel_status(&server, &root, 1).await, 3, "auto-disabled");
    assert_eq!(channel_status(&server, &root, 2).await, 1);
    let (quota, _, _, _) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000 - 4);

    // Rate limit (1002): the next channel answers, the first stays enabled.
    let mock = MockScripted::start().await;
    let (server, root, _, key) = failover_pair(&mock, 35, model).await;
    mock.push_json(http, &minimax_error(1002, "rate limit"));
    mock.push_json(200, &chat_answer(model, "ok", 2, 1));
    let (status, body) = server.send(chat_request(&server, &key, &hi(model))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(mock.calls().len(), 2);
    assert_eq!(channel_status(&server, &root, 1).await, 1);

    // A client error (2013, invalid parameters): 400 at once, no other channel tried.
    let mock = MockScripted::start().await;
    let (server, root, payer, key) = failover_pair(&mock, 35, model).await;
    mock.push_json(
        http,
        &minimax_error(2013, "invalid params, tool call id is invalid"),
    );
    let (status, body) = server.send(chat_request(&server, &key, &hi(model))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(mock.calls().len(), 1);
    assert_eq!(channel_status(&server, &root, 1).await, 1);
    let (quota, _, _, _) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000, "nothing billed");
}

/// Whether `auth` is `Bearer <JWT>` of Zhipu's documented shape signed with `secret` for `id`.
fn zhipu_jwt_ok(auth: Option<String>, id: &str, secret: &str) -> bool {
    use jsonwebtoken::{Algorithm, DecodingKey, Validation};
    let Some(token) = auth.as_deref().and_then(|a| a.strip_prefix("Bearer ")) else {
        return false;
    };
    let Ok(header) = jsonwebtoken::decode_header(token) else {
        return false;
    };
    let mut check = Validation::new(Algorithm::HS256);
    check.validate_exp = false;
    check.required_spec_claims.clear();
    let Ok(data) =
        jsonwebtoken::decode::<Value>(token, &DecodingKey::from_secret(secret.as_bytes()), &check)
    else {
        return false;
    };
    header
        .extras
        .get::<String>("sign_type")
        .ok()
        .flatten()
        .as_deref()
        == Some("SIGN")
        && data.claims["api_key"] == id
        && data.claims["exp"].as_i64() > data.claims["timestamp"].as_i64()
}

#[tokio::test]
async fn zhipu_signs_its_key_into_a_jwt_and_speaks_the_v4_api() {
    let mock = MockScripted::start().await;
    let server = TestServer::start().await;
    let channels = [
        channel(&mock, 16, "4b0a2c.Secr3tPart", "glm-4-flash,embedding-3"),
        channel(&mock, 26, "77aa.GlmV", "glm-4v-plus"),
    ];
    let (root, payer, key) = fixture(&server, &channels, 1_000_000, 500_000).await;
    prices(
        &server,
        &root,
        &["glm-4-flash", "embedding-3", "glm-4v-plus"],
    )
    .await;
    mock.push_json(200, &chat_answer("glm-4-flash", "你好", 8, 12));
    let (status, body) = server
        .send(chat_request(&server, &key, &hi("glm-4-flash")))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let call = mock.last();
    assert_eq!(call.uri, "/api/paas/v4/chat/completions");
    assert!(
        zhipu_jwt_ok(call.header("authorization"), "4b0a2c", "Secr3tPart"),
        "{:?}",
        call.header("authorization")
    );
    // GLM-4V: an image part passes as it is; streamed, usage from the last chunk.
    mock.push(common::fault::Script::ok(
        "text/event-stream",
        chat_stream("glm-4v-plus", ["一只", "猫"], 20, 4),
    ));
    let vision = json!({"model": "glm-4v-plus", "stream": true, "messages": [{"role": "user",
        "content": [{"type": "text", "text": "这是什么"},
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}]}]});
    let (status, _, text) = raw(chat_request(&server, &key, &vision)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(text.contains("一只") && text.contains("[DONE]"), "{text}");
    let call = mock.last();
    assert!(zhipu_jwt_ok(call.header("authorization"), "77aa", "GlmV"));
    assert_eq!(
        call.json()["messages"][0]["content"][1]["image_url"]["url"],
        "https://example.com/cat.png"
    );
    // Embeddings at /api/paas/v4/embeddings.
    mock.push_json(200, &embeddings_answer("embedding-3", 4));
    let (status, body) = post(
        &server,
        &key,
        "/v1/embeddings",
        json!({"model": "embedding-3", "input": "hello"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(mock.last().uri, "/api/paas/v4/embeddings");
    let (quota, _, count, _) = balances(&server, payer.id).await;
    assert_eq!(count, 3);
    assert_eq!(quota, 1_000_000 - (8 + 24) - (20 + 8) - 4);
    // The console's channel test signs too.
    mock.push_json(200, &chat_answer("glm-4-flash", "hi", 1, 1));
    let (status, body) = root.get("/api/channel/test/1").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["success"], true, "{body}");
    assert!(zhipu_jwt_ok(
        mock.last().header("authorization"),
        "4b0a2c",
        "Secr3tPart"
    ));
}

#[tokio::test]
async fn zhipu_errors_follow_its_documented_codes() {
    let model = "glm-4-flash";
    let zhipu_pair = |mock: &MockScripted| {
        let mut first = channel(mock, 16, "first.secret1", model);
        first["priority"] = json!(10);
        first["auto_ban"] = json!(1);
        [first, channel(mock, 16, "second.secret2", model)]
    };
    // An account in arrears (429, 1113): the first channel is disabled, the second answers.
    let mock = MockScripted::start().await;
    let server = TestServer::start().await;
    let (root, _, key) = fixture(&server, &zhipu_pair(&mock), 1_000_000, 500_000).await;
    prices(&server, &root, &[model]).await;
    server.set_option(&root, "RetryTimes", json!("1")).await;
    server
        .set_option(&root, "AutomaticDisableChannelEnabled", json!("true"))
        .await;
    mock.push_json(429, &zhipu_error("1113", "您的账户已欠费，请充值后重试"));
    mock.push_json(200, &chat_answer(model, "ok", 2, 1));
    let (status, body) = server.send(chat_request(&server, &key, &hi(model))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let calls = mock.calls();
    assert_eq!(calls.len(), 2);
    assert!(zhipu_jwt_ok(
        calls[1].header("authorization"),
        "second",
        "secret2"
    ));
    assert_eq!(channel_status(&server, &root, 1).await, 3, "auto-disabled");
    // A rate limit (429, 1302) on the second: there is no third, the client gets the 429 and
    // the channel stays enabled.
    mock.push_json(429, &zhipu_error("1302", "您当前使用该API的并发数过高"));
    let (status, body) = server.send(chat_request(&server, &key, &hi(model))).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(channel_status(&server, &root, 2).await, 1);
    // Sensitive content (400, 1301) is the client's: a 400, nothing disabled.
    mock.push_json(
        400,
        &zhipu_error("1301", "系统检测到输入或生成内容可能包含不安全或敏感内容"),
    );
    let (status, body) = server.send(chat_request(&server, &key, &hi(model))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(channel_status(&server, &root, 2).await, 1);
}

#[tokio::test]
async fn cloudflare_reaches_the_accounts_ai_path_and_its_errors_are_classified() {
    let mock = MockScripted::start().await;
    let server = TestServer::start().await;
    let model = "@cf/meta/llama-3.1-8b-instruct";
    let mut first = channel(
        &mock,
        39,
        "cf-token-1",
        &format!("{model},@cf/baai/bge-large-en-v1.5"),
    );
    first["other"] = json!("023e105f4ecef8ad9ca31a8372d0c353");
    first["priority"] = json!(10);
    first["auto_ban"] = json!(1);
    let mut second = channel(&mock, 39, "cf-token-2", model);
    second["other"] = json!("acc2");
    let (root, payer, key) = fixture(&server, &[first, second], 1_000_000, 500_000).await;
    prices(&server, &root, &[model, "@cf/baai/bge-large-en-v1.5"]).await;
    mock.push_json(200, &chat_answer(model, "beep boop", 10, 3));
    let (status, body) = server.send(chat_request(&server, &key, &hi(model))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let call = mock.last();
    assert_eq!(
        call.uri,
        "/client/v4/accounts/023e105f4ecef8ad9ca31a8372d0c353/ai/v1/chat/completions"
    );
    assert_eq!(
        call.header("authorization").as_deref(),
        Some("Bearer cf-token-1")
    );
    mock.push_json(200, &embeddings_answer("@cf/baai/bge-large-en-v1.5", 5));
    let (status, body) = post(
        &server,
        &key,
        "/v1/embeddings",
        json!({"model": "@cf/baai/bge-large-en-v1.5", "input": "I love matcha"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        mock.last().uri,
        "/client/v4/accounts/023e105f4ecef8ad9ca31a8372d0c353/ai/v1/embeddings"
    );
    let (quota, _, _, _) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000 - (10 + 6) - 5);
    // The daily allocation used up (429, 3036): the first account is disabled, the second
    // answers.
    server.set_option(&root, "RetryTimes", json!("1")).await;
    server
        .set_option(&root, "AutomaticDisableChannelEnabled", json!("true"))
        .await;
    mock.push_json(
        429,
        &cloudflare_error(
            3036,
            "Account limited: you have used up your daily free allocation of 10,000 neurons",
        ),
    );
    mock.push_json(200, &chat_answer(model, "ok", 2, 1));
    let (status, body) = server.send(chat_request(&server, &key, &hi(model))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        mock.last().uri,
        "/client/v4/accounts/acc2/ai/v1/chat/completions"
    );
    assert_eq!(channel_status(&server, &root, 1).await, 3);
    // No such model (400, 5007) is the client's.
    mock.push_json(400, &cloudflare_error(5007, "No such model @cf/x or task"));
    let (status, _) = server.send(chat_request(&server, &key, &hi(model))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(channel_status(&server, &root, 2).await, 1);
    // The console's channel test uses the account path.
    mock.push_json(200, &chat_answer(model, "hi", 1, 1));
    let (status, body) = root.get("/api/channel/test/2").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["success"], true, "{body}");
    assert_eq!(
        mock.last().uri,
        "/client/v4/accounts/acc2/ai/v1/chat/completions"
    );
}

#[tokio::test]
async fn qianfan_v2_sends_the_api_key_and_the_app_id() {
    let mock = MockScripted::start().await;
    let server = TestServer::start().await;
    let model = "ernie-4.0-8k";
    let mut first = channel(&mock, 46, "bce-v3/ALTAK-abc/def|app-42", model);
    first["priority"] = json!(10);
    let second = channel(&mock, 46, "bce-v3/ALTAK-ghi/jkl", model);
    let (root, payer, key) = fixture(&server, &[first, second], 1_000_000, 500_000).await;
    prices(&server, &root, &[model]).await;
    mock.push_json(200, &chat_answer(model, "你好", 3, 7));
    let (status, body) = server.send(chat_request(&server, &key, &hi(model))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let call = mock.last();
    assert_eq!(call.uri, "/v2/chat/completions");
    assert_eq!(
        call.header("authorization").as_deref(),
        Some("Bearer bce-v3/ALTAK-abc/def")
    );
    assert_eq!(call.header("appid").as_deref(), Some("app-42"));
    let (quota, _, _, _) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000 - (3 + 14));
    // RPM reached: the next channel (no app id) answers.
    server.set_option(&root, "RetryTimes", json!("1")).await;
    mock.push_json(
        429,
        &json!({"error": {"code": "rpm_rate_limit_exceeded", "message": "Rate limit reached for RPM",
            "type": "rate_limit_error"}}),
    );
    mock.push_json(200, &chat_answer(model, "ok", 1, 1));
    let (status, body) = server.send(chat_request(&server, &key, &hi(model))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let call = mock.last();
    assert_eq!(
        call.header("authorization").as_deref(),
        Some("Bearer bce-v3/ALTAK-ghi/jkl")
    );
    assert_eq!(call.header("appid"), None);
    // A malformed request is the client's.
    mock.push_json(
        400,
        &json!({"error": {"code": "invalid_messages", "message": "messages is invalid",
            "type": "invalid_request_error"}}),
    );
    let (status, _) = server.send(chat_request(&server, &key, &hi(model))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}
