//! The channel type table through the public HTTP API: `GET /api/channel/types`, key formats and
//! extra fields checked on save, capability routing (a route no channel of the model can serve
//! is a 400; failover never picks a channel whose type cannot serve the route), and the channel
//! test agreeing with the relay.

#![expect(clippy::expect_used, reason = "test helpers fail the test loudly")]

mod common;

use common::mock_anthropic::MockAnthropic;
use common::mock_cloud::{Answer, MockCloud, Recorded};
use common::mock_gemini::MockGemini;
use common::mock_upstream::MockUpstream;
use common::relay_fixture::fixture;
use common::{ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// A service-account key file as Google writes it (pretty-printed, a multi-line private key).
fn service_account(email: &str) -> Value {
    json!({
        "type": "service_account",
        "project_id": "tollgate-test",
        "private_key_id": "k1",
        "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvSECRETSECRET\n-----END PRIVATE KEY-----\n",
        "client_email": email,
        "token_uri": "https://oauth2.googleapis.com/token",
    })
}

#[tokio::test]
async fn the_types_route_describes_every_type_for_the_editor() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let (status, body) = root.get("/api/channel/types").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["success"], true);
    let types = body["data"].as_array().expect("a list");
    assert_eq!(types.len(), 38, "every type of spec 02 §3");
    let row = |id: i64| {
        types
            .iter()
            .find(|t| t["id"] == id)
            .unwrap_or_else(|| panic!("type {id}"))
    };
    let openai = row(1);
    assert_eq!(openai["family"], "open_ai");
    assert_eq!(openai["default_base_url"], "https://api.openai.com");
    assert_eq!(openai["auth"], "bearer");
    assert_eq!(openai["key_format"]["kind"], "lines");
    assert_eq!(openai["test"], "chat");
    let caps = openai["capabilities"].as_array().expect("caps");
    for cap in ["chat", "stream", "embeddings", "balance"] {
        assert!(caps.contains(&json!(cap)), "OpenAI has {cap}: {caps:?}");
    }
    let claude = row(14);
    assert_eq!(claude["auth"], "x_api_key");
    assert_eq!(
        claude["capabilities"],
        json!(["chat", "stream", "count_tokens"])
    );
    // Refused at creation (no provider documentation): no capability, neither routed nor
    // tested.
    assert_eq!(row(21)["capabilities"], json!([]));
    let azure = row(3);
    assert_eq!(
        azure["capabilities"],
        json!([
            "chat",
            "stream",
            "completions",
            "responses",
            "embeddings",
            "images",
            "audio"
        ])
    );
    assert_eq!(azure["base_url_required"], true);
    assert_eq!(azure["fields"][0]["target"], "other");
    assert_eq!(azure["fields"][0]["default"], "2024-10-21");
    assert_eq!(azure["fields"][0]["label"], "typeField.apiVersion");
    let aws = row(33);
    assert_eq!(aws["key_format"]["kind"], "aws");
    assert_eq!(aws["auth"], "aws_sig_v4");
    let vertex = row(41);
    assert_eq!(vertex["key_format"]["kind"], "service_account_json");
    let fields = vertex["fields"].as_array().expect("fields");
    assert_eq!(fields[0]["default"], "global");
    assert_eq!(fields[1]["target"], "setting");
    assert_eq!(fields[1]["key"], "vertex_key_type");
    assert_eq!(fields[1]["kind"], "select");
    assert_eq!(fields[1]["options"], json!(["json", "api_key"]));
    assert_eq!(
        row(15)["key_format"]["parts"],
        json!(["APIKey", "SecretKey"])
    );
    assert_eq!(row(39)["fields"][0]["required"], true);

    let user_id = server.create_user(&root, "plain", "password1").await;
    assert!(user_id > 0);
    let plain = server.client_for("plain", "password1").await;
    let (status, body) = plain.get("/api/channel/types").await;
    assert_ne!(status, StatusCode::OK, "admins only: {body}");
    assert_eq!(body["success"], false);
}

/// POSTs a channel; returns (status, response).
async fn post_channel(server: &TestServer, root: i64, body: Value) -> (StatusCode, Value) {
    server.post_as(root, "/api/channel/", body).await
}

fn refused(status: StatusCode, resp: &Value, expected: &str, secrets: &[&str]) {
    assert_eq!(status, StatusCode::BAD_REQUEST, "{resp}");
    assert_eq!(resp["success"], false);
    let message = resp["message"].as_str().expect("message");
    assert!(
        message.contains(expected),
        "{message:?} should contain {expected:?}"
    );
    for secret in secrets {
        assert!(!message.contains(secret), "{message:?} shows the key");
    }
}

#[tokio::test]
async fn keys_are_checked_against_their_type_format_on_save() {
    let server = TestServer::start().await;
    let root = server.root().await;
    let base = |t: i64, key: Value| json!({"name": "c", "type": t, "key": key, "models": "m"});

    let (s, r) = post_channel(&server, root, base(15, json!("baidu-secret-only"))).await;
    refused(s, &r, "expected APIKey|SecretKey", &["baidu-secret-only"]);
    let (s, r) = post_channel(&server, root, base(15, json!("ak|sk\nak2"))).await;
    refused(s, &r, "key line 2", &["ak2"]);

    let (s, r) = post_channel(&server, root, base(33, json!("AKIAEXAMPLEwJalrSECRET"))).await;
    refused(
        s,
        &r,
        "AK|SK|region[|session token] or APIKey|region",
        &["AKIAEXAMPLE", "wJalrSECRET"],
    );
    let (s, r) = post_channel(&server, root, base(33, json!("AKIAEX|wJalrSECRET|moon"))).await;
    refused(s, &r, "not an AWS region", &["wJalrSECRET"]);
    for good in [
        "AKIAEX|wJalrSECRET|us-east-1",
        "AKIAEX|wJalrSECRET|eu-west-3|FwoGZXIvSESSION",
        "ABSKbedrockapikey|us-west-2",
    ] {
        let (s, r) = post_channel(&server, root, base(33, json!(good))).await;
        assert_eq!(s, StatusCode::OK, "{good}: {r}");
    }

    // Service-account JSON: pretty-printed over many lines, it is one key, never split.
    let pretty = serde_json::to_string_pretty(&service_account("a@p.iam")).expect("json");
    let (s, r) = post_channel(&server, root, base(41, json!(pretty))).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let id = r["data"]["ids"][0].as_i64().expect("id");
    let (_, got) = server.get_as(root, &format!("/api/channel/{id}")).await;
    assert_eq!(got["data"]["key_count"], 1, "one key: {got}");
    // An array of key files in batch mode: one channel per key file.
    let array = json!([service_account("a@p.iam"), service_account("b@p.iam")]).to_string();
    let (s, r) = server
        .post_as(
            root,
            "/api/channel/",
            json!({"mode": "batch", "channel": base(41, json!(array))}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["data"]["ids"].as_array().map(Vec::len), Some(2), "{r}");
    let mut incomplete = service_account("c@p.iam");
    incomplete
        .as_object_mut()
        .expect("object")
        .remove("client_email");
    let (s, r) = post_channel(&server, root, base(41, json!(incomplete.to_string()))).await;
    refused(s, &r, "lacks client_email", &["MIIEvSECRETSECRET"]);
    let (s, r) = post_channel(
        &server,
        root,
        base(41, json!("{\"private_key\": \"MIIEvSECRETSECRET")),
    )
    .await;
    refused(s, &r, "not valid JSON (line 1", &["MIIEvSECRETSECRET"]);
    // A Vertex API key instead, when the channel's setting says so.
    let mut api_key = base(41, json!("AIzaVertexKey1\nAIzaVertexKey2"));
    api_key["setting"] = json!(r#"{"vertex_key_type": "api_key"}"#);
    let (s, r) = post_channel(&server, root, api_key.clone()).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    api_key["setting"] = json!(r#"{"vertex_key_type": "pem"}"#);
    let (s, r) = post_channel(&server, root, api_key).await;
    refused(s, &r, "setting.vertex_key_type", &[]);

    // A JSON key pasted into a line-key type.
    let (s, r) = post_channel(&server, root, base(1, json!(pretty))).await;
    refused(s, &r, "one per line, not JSON", &["MIIEvSECRETSECRET"]);

    // A kept key is checked again when the type changes under it.
    let (s, r) = post_channel(&server, root, base(1, json!("sk-plain-key"))).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let plain = r["data"]["ids"][0].as_i64().expect("id");
    let (s, r) = server
        .put_as(root, "/api/channel/", json!({"id": plain, "type": 33}))
        .await;
    refused(s, &r, "invalid AWS Claude key", &["sk-plain-key"]);
    let (s, r) = server
        .put_as(root, "/api/channel/", json!({"id": plain, "status": 2}))
        .await;
    assert_eq!(s, StatusCode::OK, "the refused retype stored nothing: {r}");
}

/// Zhipu's keys are `id.secret` (signed into a JWT): a key of another shape is refused when the
/// channel is saved, with the reason, instead of failing every request later.
#[tokio::test]
async fn zhipu_keys_without_the_id_secret_shape_are_refused_on_save() {
    let server = TestServer::start().await;
    let root = server.root().await;
    let base = |t: i64, key: Value| json!({"name": "c", "type": t, "key": key, "models": "m"});
    for kind in [16, 26] {
        for bad in [
            "sk-zhipu-no-secret",
            "zhipu-id.",
            ".zhipu-secret",
            "a.b.c-secret",
        ] {
            let (s, r) = post_channel(&server, root, base(kind, json!(bad))).await;
            refused(s, &r, "expected id.secret", &[bad]);
            assert_eq!(r["detail"], "channel_key_invalid", "{r}");
        }
        let (s, r) = post_channel(&server, root, base(kind, json!("zp-id.zp-secret"))).await;
        assert_eq!(s, StatusCode::OK, "{kind}: {r}");
    }
    let (s, r) = post_channel(&server, root, base(16, json!("a.b\nzhipu-bare-key"))).await;
    refused(s, &r, "key line 2", &["zhipu-bare-key"]);
    // The editor is told the format.
    let (_, types) = server.get_as(root, "/api/channel/types").await;
    let zhipu = types["data"]
        .as_array()
        .and_then(|rows| rows.iter().find(|t| t["id"] == 16))
        .cloned()
        .unwrap_or_default();
    assert_eq!(zhipu["key_format"]["kind"], "id_secret", "{zhipu}");
}

#[tokio::test]
async fn required_extra_fields_are_required() {
    let server = TestServer::start().await;
    let root = server.root().await;
    let (s, r) = post_channel(
        &server,
        root,
        json!({"name": "cf", "type": 39, "key": "cf-key", "models": "m"}),
    )
    .await;
    refused(s, &r, "needs its account id (other)", &["cf-key"]);
    let (s, r) = post_channel(
        &server,
        root,
        json!({"name": "cf", "type": 39, "key": "cf-key", "models": "m", "other": "acc-1"}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let (s, r) = post_channel(
        &server,
        root,
        json!({"name": "x", "type": 47, "key": "k", "models": "m"}),
    )
    .await;
    refused(s, &r, "needs a base_url", &[]);
}

fn claude_channel(mock: &MockAnthropic, priority: i64) -> Value {
    json!({"name": "claude", "type": 14, "key": "claude-upstream-key", "base_url": mock.base,
        "models": "claude-test", "group": "default", "priority": priority})
}

async fn embeddings(server: &TestServer, key: &str, model: &str) -> (StatusCode, Value) {
    server
        .send(
            server
                .client
                .post(server.url("/v1/embeddings"))
                .bearer_auth(key)
                .json(&json!({"model": model, "input": "hello"})),
        )
        .await
}

#[tokio::test]
async fn a_route_whose_only_channel_cannot_serve_it_is_a_400_naming_route_and_model() {
    let anthropic = MockAnthropic::start().await;
    let server = TestServer::start().await;
    let (_, _, key) = fixture(
        &server,
        &[claude_channel(&anthropic, 0)],
        1_000_000,
        500_000,
    )
    .await;
    let (status, body) = embeddings(&server, &key, "claude-test").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let message = body["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("/v1/embeddings") && message.contains("claude-test"),
        "{message}"
    );
    assert_eq!(
        anthropic.calls(),
        0,
        "nothing was sent to the Claude channel"
    );
    // A model nobody serves is still "no channel", not a 400.
    let (status, body) = embeddings(&server, &key, "gemini-test").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    // Chat still reaches the Claude channel.
    let (status, body) = server
        .send(
            server
                .client
                .post(server.url("/v1/chat/completions"))
                .bearer_auth(&key)
                .json(&json!({"model": "claude-test",
                    "messages": [{"role": "user", "content": "hi"}]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(anthropic.calls(), 1);
}

#[tokio::test]
async fn failover_never_picks_a_channel_whose_type_cannot_serve_the_route() {
    let anthropic = MockAnthropic::start().await;
    let openai = MockUpstream::start().await;
    let server = TestServer::start().await;
    // The Claude channel is the preferred tier; RetryTimes is 0, so a pick of it would end the
    // request.
    let channels = [
        claude_channel(&anthropic, 10),
        json!({"name": "openai", "type": 1, "key": "openai-upstream-key", "base_url": openai.base,
            "models": "claude-test", "group": "default", "priority": 0}),
    ];
    let (_, _, key) = fixture(&server, &channels, 1_000_000, 500_000).await;
    for _ in 0..3 {
        let (status, body) = embeddings(&server, &key, "claude-test").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["data"][0]["embedding"], json!([0.5, 0.25]));
    }
    assert_eq!(openai.chat_calls(), 3);
    assert_eq!(anthropic.calls(), 0);
}

#[tokio::test]
async fn the_channel_test_agrees_with_the_relay() {
    let openai = MockUpstream::start().await;
    let server = TestServer::start().await;
    let root = server.root().await;
    // 360 (19) speaks OpenAI's wire: it is tested and relayed.
    let (s, r) = post_channel(
        &server,
        root,
        json!({"name": "360", "type": 19, "key": "k-360", "models": "gpt-4o", "base_url": openai.base}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let id = r["data"]["ids"][0].as_i64().expect("id");
    let (status, body) = server
        .get_as(root, &format!("/api/channel/test/{id}"))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["success"], true, "{body}");
    // Midjourney (2) takes tasks, not chat: its test is refused rather than passing and then
    // 501.
    let (s, r) = post_channel(
        &server,
        root,
        json!({"name": "mj", "type": 2, "key": "k-mj", "models": "gpt-4o", "base_url": openai.base}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let azure = r["data"]["ids"][0].as_i64().expect("id");
    let (status, body) = server
        .get_as(root, &format!("/api/channel/test/{azure}"))
        .await;
    assert_eq!(status, StatusCode::NOT_IMPLEMENTED, "{body}");
    assert!(
        body["message"]
            .as_str()
            .expect("message")
            .contains("cannot serve this type yet"),
        "{body}"
    );
}

#[tokio::test]
async fn model_lists_come_through_the_type_model_api() {
    let gemini = MockGemini::start().await;
    let server = TestServer::start().await;
    let root = server.root().await;
    let (status, body) = server
        .post_as(
            root,
            "/api/channel/fetch_models",
            json!({"type": 24, "base_url": gemini.base, "key": "gemini-list-key"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"], json!(["gemini-test", "text-embedding-004"]));
    // Types without a model-list API say so.
    let (status, body) = server
        .post_as(
            root,
            "/api/channel/fetch_models",
            json!({"type": 33, "key": "AKIAEX|secret|us-east-1"}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_IMPLEMENTED, "{body}");
}

/// An OpenAI-compatible upstream answering chat, embeddings and the model list on any path, so
/// the test sees where requests went.
fn openai_compatible(request: &Recorded) -> Answer {
    if request.path.ends_with("/models") {
        return Answer::Json(
            200,
            json!({"object": "list", "data": [{"id": "listed-model"}]}),
        );
    }
    if request.path.ends_with("/embeddings") {
        return Answer::Json(
            200,
            json!({"object": "list", "data": [{"object": "embedding", "index": 0,
                "embedding": [0.5]}], "model": "m", "usage": {"prompt_tokens": 1, "total_tokens": 1}}),
        );
    }
    Answer::Json(
        200,
        json!({"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"},
            "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}),
    )
}

#[tokio::test]
async fn qwen_and_volcano_reach_their_openai_compatible_paths() {
    // DashScope serves OpenAI's API under /compatible-mode/v1
    // (https://help.aliyun.com/zh/model-studio/compatibility-of-openai-with-dashscope), Volcano
    // Ark under /api/v3 (https://www.volcengine.com/docs/82379/1298459): with the base URL set to
    // the mock, the relay, the channel test and the model list use those paths.
    for (channel_type, prefix) in [(17, "/compatible-mode/v1"), (45, "/api/v3")] {
        let mock = MockCloud::start(openai_compatible).await;
        let server = TestServer::start().await;
        let channel = json!({"name": "c", "type": channel_type, "key": "upstream-key",
            "base_url": mock.base, "models": "claude-test", "group": "default"});
        let (root, _, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
        let (status, body) = server
            .send(
                server
                    .client
                    .post(server.url("/v1/chat/completions"))
                    .bearer_auth(&key)
                    .json(&json!({"model": "claude-test",
                        "messages": [{"role": "user", "content": "hi"}]})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "type {channel_type}: {body}");
        assert_eq!(body["choices"][0]["message"]["content"], "hi");
        let (status, body) = embeddings(&server, &key, "claude-test").await;
        assert_eq!(status, StatusCode::OK, "type {channel_type}: {body}");
        let (status, body) = root.get("/api/channel/test/1").await;
        assert_eq!(status, StatusCode::OK, "type {channel_type}: {body}");
        assert_eq!(body["success"], true, "type {channel_type}: {body}");
        let (status, body) = root
            .post(
                "/api/channel/fetch_models",
                json!({"type": channel_type, "base_url": mock.base, "key": "upstream-key"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "type {channel_type}: {body}");
        assert_eq!(body["data"], json!(["listed-model"]));
        let paths: Vec<String> = mock.requests().into_iter().map(|r| r.path).collect();
        assert_eq!(
            paths,
            [
                format!("{prefix}/chat/completions"),
                format!("{prefix}/embeddings"),
                format!("{prefix}/chat/completions"),
                format!("{prefix}/models"),
            ],
            "type {channel_type}"
        );
    }
}

#[tokio::test]
async fn deepseek_channels_are_never_sent_routes_deepseek_lacks() {
    // DeepSeek's API has chat but no embeddings or images
    // (https://api-docs.deepseek.com/api/deepseek-api): those routes are a 400 naming the route
    // and the model, and nothing reaches the upstream; chat still does.
    let upstream = MockUpstream::start().await;
    let server = TestServer::start().await;
    let channel = json!({"name": "ds", "type": 43, "key": "ds-key", "base_url": upstream.base,
        "models": "claude-test", "group": "default"});
    let (root, _, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let (status, body) = embeddings(&server, &key, "claude-test").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let message = body["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("/v1/embeddings") && message.contains("claude-test"),
        "{message}"
    );
    let (status, body) = server
        .send(
            server
                .client
                .post(server.url("/v1/images/generations"))
                .bearer_auth(&key)
                .json(&json!({"model": "claude-test", "prompt": "a cat"})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let message = body["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("/v1/images/generations") && message.contains("claude-test"),
        "{message}"
    );
    assert_eq!(upstream.calls(), 0, "nothing was sent to DeepSeek");
    let (status, body) = server
        .send(
            server
                .client
                .post(server.url("/v1/chat/completions"))
                .bearer_auth(&key)
                .json(&json!({"model": "claude-test",
                    "messages": [{"role": "user", "content": "hi"}]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(upstream.chat_calls(), 1);
    // The console's type list says the same.
    let (_, types) = root.get("/api/channel/types").await;
    let deepseek = types["data"]
        .as_array()
        .expect("types")
        .iter()
        .find(|t| t["id"] == 43)
        .expect("DeepSeek");
    assert_eq!(
        deepseek["capabilities"],
        json!(["chat", "stream", "completions", "balance"])
    );
}

/// Prices `m-<type>` for each of `types` at ratio 1 (an unpriced model is refused).
async fn price_models(server: &TestServer, root: &common::Actor, types: impl Iterator<Item = i64>) {
    let ratios: serde_json::Map<String, Value> =
        types.map(|t| (format!("m-{t}"), json!(1))).collect();
    server
        .set_option(root, "ModelRatio", json!(Value::Object(ratios).to_string()))
        .await;
}

/// One request of each capability class an OpenAI-compatible type may lack, as a client sends it.
fn capability_request(
    server: &TestServer,
    key: &str,
    model: &str,
    class: &str,
) -> (&'static str, reqwest::RequestBuilder) {
    let (route, body) = match class {
        "completions" => ("/v1/completions", json!({"model": model, "prompt": "hi"})),
        "embeddings" => ("/v1/embeddings", json!({"model": model, "input": "hi"})),
        "images" => (
            "/v1/images/generations",
            json!({"model": model, "prompt": "a cat"}),
        ),
        "audio" => (
            "/v1/audio/speech",
            json!({"model": model, "input": "hi", "voice": "alloy"}),
        ),
        "rerank" => (
            "/v1/rerank",
            json!({"model": model, "query": "q", "documents": ["a", "b"]}),
        ),
        _ => ("/v1/moderations", json!({"model": model, "input": "hi"})),
    };
    let request = server
        .client
        .post(server.url(route))
        .bearer_auth(key)
        .json(&body);
    (route, request)
}

#[tokio::test]
async fn each_openai_compatible_type_is_sent_only_the_routes_its_provider_serves() {
    // What each provider's API reference lists (cited beside its row in
    // src/channel_types/table.rs): a route the type serves reaches the upstream, one it lacks is
    // a 400 naming the route, the model and the type, and nothing is sent. Legacy completions
    // only where the provider documents `/v1/completions`.
    const CLASSES: [&str; 6] = [
        "completions",
        "embeddings",
        "images",
        "audio",
        "rerank",
        "moderation",
    ];
    let serves: [(i64, &[&str]); 16] = [
        (4, &["completions", "embeddings", "images", "audio"]),
        (17, &["completions", "embeddings"]),
        (19, &[]),
        (35, &[]),
        (38, &["embeddings", "rerank"]),
        (44, &["embeddings"]),
        (20, &["embeddings"]),
        (22, &[]),
        (25, &[]),
        (31, &[]),
        (40, &["embeddings", "images", "audio", "rerank"]),
        (42, &["embeddings", "audio", "moderation"]),
        (43, &["completions"]),
        (45, &["embeddings", "images"]),
        (
            47,
            &["completions", "embeddings", "images", "audio", "rerank"],
        ),
        (48, &["completions", "images"]),
    ];
    let mock = MockCloud::start(openai_compatible).await;
    let server = TestServer::start().await;
    let channels: Vec<Value> = serves
        .iter()
        .map(|(t, _)| {
            json!({"name": format!("type-{t}"), "type": t, "key": format!("key-{t}"),
                "base_url": mock.base, "models": format!("m-{t}"), "group": "default"})
        })
        .collect();
    let (root, _, key) = fixture(&server, &channels, 100_000_000, 50_000_000).await;
    price_models(&server, &root, serves.iter().map(|(t, _)| *t)).await;
    let mut wrong = Vec::new();
    for (channel_type, served) in serves {
        let model = format!("m-{channel_type}");
        for class in CLASSES {
            let before = mock.requests().len();
            let (route, request) = capability_request(&server, &key, &model, class);
            let (status, body) = server.send(request).await;
            let sent = mock.requests().len() - before;
            let ok = if served.contains(&class) {
                status == StatusCode::OK
                    && sent == 1
                    && mock.last().path.ends_with(route.trim_start_matches("/v1"))
            } else {
                let message = body["error"]["message"].as_str().unwrap_or_default();
                status == StatusCode::BAD_REQUEST
                    && sent == 0
                    && message.contains(route)
                    && message.contains(&model)
                    && message.contains(&format!("({channel_type})"))
            };
            if !ok {
                wrong.push(format!("type {channel_type} {class}: {status} {body}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // The console's type list says the same.
    let (_, types) = root.get("/api/channel/types").await;
    let caps = |id: i64| {
        types["data"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["id"] == id))
            .map(|t| t["capabilities"].clone())
            .unwrap_or_default()
    };
    assert_eq!(caps(25), json!(["chat", "stream", "balance"]));
    assert_eq!(
        caps(42),
        json!(["chat", "stream", "embeddings", "audio", "moderation"])
    );
    assert_eq!(
        caps(48),
        json!(["chat", "stream", "completions", "responses", "images"])
    );
}

#[tokio::test]
async fn responses_reach_only_types_whose_provider_has_the_api() {
    // A channel set to speak the Responses API (`setting.upstream_api`) is sent Responses requests
    // only when its provider has the API: xAI does (https://docs.x.ai/api-reference), Moonshot does
    // not (https://platform.kimi.ai/docs/api/overview).
    let mock = MockCloud::start(openai_compatible).await;
    let server = TestServer::start().await;
    let channel = |t: i64| {
        json!({"name": format!("type-{t}"), "type": t, "key": format!("key-{t}"),
            "base_url": mock.base, "models": format!("m-{t}"), "group": "default",
            "setting": r#"{"upstream_api": "responses"}"#})
    };
    let (root, _, key) = fixture(&server, &[channel(48), channel(25)], 1_000_000, 500_000).await;
    price_models(&server, &root, [48, 25].into_iter()).await;
    let respond = |model: &str| {
        server
            .client
            .post(server.url("/v1/responses"))
            .bearer_auth(&key)
            .json(&json!({"model": model, "input": "hi"}))
    };
    let (status, body) = server.send(respond("m-48")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(mock.last().path, "/v1/responses");
    let before = mock.requests().len();
    let (status, body) = server.send(respond("m-25")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("/v1/responses") && message.contains("m-25"),
        "{message}"
    );
    assert_eq!(
        mock.requests().len(),
        before,
        "nothing was sent to Moonshot"
    );
}

#[tokio::test]
async fn deepseek_fim_completions_reach_its_beta_path() {
    // DeepSeek serves FIM as legacy completions on its beta base URL only
    // (https://api-docs.deepseek.com/guides/fim_completion; the request is the guide's example):
    // `/v1/completions` goes to `{base}/beta/completions` with the client's body, and is billed.
    let mock = MockCloud::start(openai_compatible).await;
    let server = TestServer::start().await;
    let channel = json!({"name": "ds", "type": 43, "key": "ds-key", "base_url": mock.base,
        "models": "deepseek-chat", "group": "default"});
    let (_, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let fim = json!({"model": "deepseek-chat", "prompt": "def fib(a):",
        "suffix": "    return fib(a-1) + fib(a-2)", "max_tokens": 128});
    let (status, body) = server
        .send(
            server
                .client
                .post(server.url("/v1/completions"))
                .bearer_auth(&key)
                .json(&fim),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let sent = mock.last();
    assert_eq!(sent.path, "/beta/completions");
    assert_eq!(sent.json(), fim, "the client's body as it came");
    let (quota, _, count, _) = common::relay_fixture::balances(&server, payer.id).await;
    assert_eq!(count, 1);
    assert!(quota < 1_000_000, "the completion was billed");
}
