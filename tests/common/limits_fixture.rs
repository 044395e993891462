//! The rate-limit tests' set-up (tests/rate_limits.rs): one mock upstream behind one OpenAI
//! channel serving `claude-test`, root, the user "payer" and their key, then only what a test
//! changes — the payer's balance, the channel's upstream keys, the key's or the channel's limits,
//! options such as `RateLimitRules`. The mock's pacing and usage are set on [`Limited::mock`].

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::mock_upstream::MockUpstream;
use super::relay_fixture::{chat_request, fixture, openai_channel, raw};
use super::{Actor, TestServer};

/// What a test sets beyond the common set-up.
#[derive(Debug)]
pub struct Setup {
    /// The payer's balance (100,000,000 by default).
    pub quota: i64,
    /// The channel's upstream keys, one a line (`upstream-key-1` by default).
    pub keys: &'static str,
    /// The key's limits, put by its owner (`PUT /api/token/{id}/limits`).
    pub token_limits: Option<Value>,
    /// The channel's limits, put by root (`PUT /api/channel/{id}/limits`).
    pub channel_limits: Option<Value>,
    /// Options set by root, in order.
    pub options: &'static [(&'static str, &'static str)],
    /// A data directory to start in (one a test restarts from), else a fresh one.
    pub dir: Option<tempfile::TempDir>,
}

impl Default for Setup {
    fn default() -> Setup {
        Setup {
            quota: 100_000_000,
            keys: "upstream-key-1",
            token_limits: None,
            channel_limits: None,
            options: &[],
            dir: None,
        }
    }
}

/// The set-up a rate-limit test runs against.
pub struct Limited {
    /// The mock behind the channel.
    pub mock: MockUpstream,
    /// The server.
    pub server: TestServer,
    /// Root's session.
    pub root: Actor,
    /// The payer's session.
    pub payer: Actor,
    /// The payer's full key.
    pub key: String,
    /// That key's token id.
    pub token: i64,
    /// The channel's id.
    pub channel: i64,
}

/// The common set-up with `setup`'s changes applied.
pub async fn limits_fixture(setup: Setup) -> Limited {
    let mock = MockUpstream::start().await;
    let server = match setup.dir {
        Some(dir) => TestServer::start_in(dir).await,
        None => TestServer::start().await,
    };
    let mut channel = openai_channel(&mock.base, "claude-test");
    channel["key"] = json!(setup.keys);
    let (root, payer, key) = fixture(&server, &[channel], setup.quota, 100_000_000).await;
    let (_, tokens) = payer.get("/api/token/?p=1&page_size=10").await;
    let token = tokens["data"]["items"][0]["id"].as_i64().expect("token id");
    let (_, channels) = root.get("/api/channel/?p=1&page_size=10").await;
    let channel = channels["data"]["items"][0]["id"]
        .as_i64()
        .expect("channel id");
    if let Some(limits) = setup.token_limits {
        put_limits(&payer, &format!("/api/token/{token}/limits"), limits).await;
    }
    if let Some(limits) = setup.channel_limits {
        put_limits(&root, &format!("/api/channel/{channel}/limits"), limits).await;
    }
    for (option, value) in setup.options {
        server.set_option(&root, option, json!(value)).await;
    }
    Limited {
        mock,
        server,
        root,
        payer,
        key,
        token,
        channel,
    }
}

/// PUTs `body` to a limits route as `actor`; fails the test unless it is accepted.
pub async fn put_limits(actor: &Actor, path: &str, body: Value) {
    let (status, answer) = actor.put(path, body).await;
    assert_eq!(status, StatusCode::OK, "{path}: {answer}");
}

/// A chat body for `claude-test` with at most 5 output tokens: one user message, "hi".
pub fn hi() -> Value {
    json!({"model": "claude-test", "max_tokens": 5,
           "messages": [{"role": "user", "content": "hi"}]})
}

impl Limited {
    /// Sends `body` with the payer's key to /v1/chat/completions: status, headers, text.
    pub async fn send(&self, body: &Value) -> (StatusCode, reqwest::header::HeaderMap, String) {
        raw(chat_request(&self.server, &self.key, body)).await
    }
}
