//! The one relay test fixture: channels, a paying user with a key, prices, the requests every
//! relay test sends ([`chat`], [`chat_request`]), waiting for what happens after the answer
//! ([`wait_until`]), and the balances and logs after the fact. Relay test files use these instead
//! of private copies.
#![allow(
    dead_code,
    reason = "each test binary uses a different subset of the fixture"
)]
#![expect(
    clippy::expect_used,
    reason = "test helpers: a failed call fails the test"
)]

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate_storage::{StorageError, UserId, logs, users};

use super::{Actor, ROOT_PASS, ROOT_USER, TestServer};

/// Test prices: `claude-test` (ratio 2, completion 5, cache 0.1), `gemini-test` (ratio 0.5,
/// completion 4, cache 0.25), `tts-test` (ratio 7.5), `whisper-test` (ratio 15).
pub async fn set_test_prices(server: &TestServer, root: &Actor) {
    server
        .set_option(
            root,
            "ModelRatio",
            json!(r#"{"claude-test": 2, "gemini-test": 0.5, "tts-test": 7.5, "whisper-test": 15}"#),
        )
        .await;
    server
        .set_option(
            root,
            "CompletionRatio",
            json!(r#"{"claude-test": 5, "gemini-test": 4}"#),
        )
        .await;
    server
        .set_option(
            root,
            "CacheRatio",
            json!(r#"{"claude-test": 0.1, "gemini-test": 0.25}"#),
        )
        .await;
}

/// Root set up, the test prices set, `channels` created (JSON bodies of POST /api/channel/), a
/// user "payer" with `quota` and a key with `token_quota`. Returns (root, payer, full key).
pub async fn fixture(
    server: &TestServer,
    channels: &[Value],
    quota: i64,
    token_quota: i64,
) -> (Actor, Actor, String) {
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    for channel in channels {
        let (status, body) = root.post("/api/channel/", channel.clone()).await;
        assert_eq!(status, StatusCode::OK, "channel: {body}");
        assert_eq!(body["success"], true, "channel: {body}");
    }
    set_test_prices(server, &root).await;
    let payer_id = server.create_user(&root, "payer", "password1").await;
    let (status, body) = root
        .put("/api/user/", json!({"id": payer_id, "quota": quota}))
        .await;
    assert_eq!(status, StatusCode::OK, "quota: {body}");
    let payer = server.client_for("payer", "password1").await;
    let key = new_key(&payer, token_quota, json!({})).await;
    (root, payer, key)
}

/// An OpenAI-compatible channel (type 1, key `upstream-key-1`, group `default`) on the mock at
/// `base` serving `models` (comma-separated), as the body of POST /api/channel/.
pub fn openai_channel(base: &str, models: &str) -> Value {
    json!({"name": "mock", "type": 1, "key": "upstream-key-1", "base_url": base,
           "models": models, "group": "default"})
}

/// POST /v1/chat/completions with `key` and `body`, not yet sent.
pub fn chat_request(server: &TestServer, key: &str, body: &Value) -> reqwest::RequestBuilder {
    server
        .client
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(key)
        .json(body)
}

/// A chat body for `model`: one user message, "hi".
pub fn hi(model: &str) -> Value {
    json!({"model": model, "messages": [{"role": "user", "content": "hi"}]})
}

/// A chat body for `model` with at most `max_tokens`: one user message, "hi".
pub fn hi_max(model: &str, max_tokens: i64) -> Value {
    json!({"model": model, "max_tokens": max_tokens,
           "messages": [{"role": "user", "content": "hi"}]})
}

/// POST /v1/chat/completions with `key` and `body`: the status and the JSON answer.
pub async fn chat(server: &TestServer, key: &str, body: Value) -> (StatusCode, Value) {
    server.send(chat_request(server, key, &body)).await
}

/// Waits until `done` holds, polling every 20 ms; fails the test naming `what` after 10 s.
pub async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    wait_until_async(what, || std::future::ready(done())).await;
}

/// [`wait_until`] with an asynchronous check (e.g. a console request).
pub async fn wait_until_async<F, Fut>(what: &str, mut done: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !done().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "waited 10 s for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until channel `id`'s stored status is `status` (3: auto-disabled), as root reads it.
pub async fn wait_channel_status(root: &Actor, id: i64, status: i64) {
    wait_until_async(&format!("channel {id} to have status {status}"), || async {
        let (_, channel) = root.get(&format!("/api/channel/{id}")).await;
        channel["data"]["status"] == status
    })
    .await;
}

/// A server with [`fixture`]'s root, payer and key, `channels` created, and `model` priced at
/// `ratio` with `completion` as its completion ratio. Returns (server, root, payer, key).
pub async fn priced_setup(
    channels: &[Value],
    model: &str,
    ratio: f64,
    completion: f64,
) -> (TestServer, Actor, Actor, String) {
    let server = TestServer::start().await;
    let (root, payer, key) = fixture(&server, channels, 1_000_000, 500_000).await;
    server
        .set_option(
            &root,
            "ModelRatio",
            json!(json!({model: ratio}).to_string()),
        )
        .await;
    server
        .set_option(
            &root,
            "CompletionRatio",
            json!(json!({model: completion}).to_string()),
        )
        .await;
    (server, root, payer, key)
}

/// A new key of `owner` with `token_quota` and extra token fields (e.g. model limits).
pub async fn new_key(owner: &Actor, token_quota: i64, extra: Value) -> String {
    let mut body = json!({"name": "k", "remain_quota": token_quota});
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    let (_, token) = owner.post("/api/token/", body).await;
    let id = token["data"]["id"].as_i64().expect("token id");
    let (_, full) = owner.post(&format!("/api/token/{id}/key"), json!({})).await;
    full["data"]["key"].as_str().expect("key").to_owned()
}

/// (quota, used_quota, request_count, logs newest first) of `user`, after every settlement so
/// far is committed.
pub async fn balances(server: &TestServer, user: i64) -> (i64, i64, i64, Vec<logs::LogEntry>) {
    server.flush().await;
    server
        .store()
        .read_blocking(|rtx| {
            let u = users::get(rtx, UserId(user))?.expect("user");
            // The set-up's balance edits (type-3 rows) aside: the rows of what was relayed.
            let all: Vec<_> = logs::recent_for_user(rtx, UserId(user), 1000)?
                .into_iter()
                .filter(|l| l.log_type != logs::LOG_MANAGE)
                .collect();
            Ok::<_, StorageError>((u.quota.0, u.used_quota.0, u.request_count, all))
        })
        .expect("read")
}

/// The `other` JSON of a log row.
pub fn other(log: &logs::LogEntry) -> Value {
    serde_json::from_str(&log.other).expect("other is JSON")
}

/// A request's status, headers and raw body.
pub async fn raw(req: reqwest::RequestBuilder) -> (StatusCode, reqwest::header::HeaderMap, String) {
    let resp = req.send().await.expect("request sent");
    let status = resp.status();
    let headers = resp.headers().clone();
    let text = resp.text().await.expect("body");
    (status, headers, text)
}

/// The `(event, data)` pairs of an SSE body.
pub fn sse_events(text: &str) -> Vec<(String, Value)> {
    let mut events = Vec::new();
    let mut name = String::new();
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if let Some(n) = line.strip_prefix("event: ") {
            n.clone_into(&mut name);
        } else if let Some(d) = line.strip_prefix("data: ") {
            let data = serde_json::from_str(d).unwrap_or_else(|_| Value::String(d.to_owned()));
            events.push((std::mem::take(&mut name), data));
        }
    }
    events
}
