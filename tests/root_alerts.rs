//! Alerts to root (issue P12 item 13) through the public HTTP API: a channel the health rules
//! auto-disable is reported to root's webhook (root's notification setting), signed like every
//! notice.

mod common;

use std::time::Duration;

use common::mock_upstream::MockUpstream;
use common::relay_fixture::fixture;
use common::webhook::receiver;
use common::{ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};

#[tokio::test]
async fn an_auto_disabled_channel_is_reported_to_root() {
    let (url, mut hooks) = receiver().await;
    let mock = MockUpstream::start().await;
    let dir = tempfile::tempdir().unwrap_or_else(|e| unreachable!("{e}"));
    let server = TestServer::start_with(dir, |c| c.webhook_allow_loopback_http = true).await;
    let channel = json!({"name": "flaky-upstream", "type": 1, "key": "upstream-key-1",
        "base_url": mock.base, "models": "gpt-4o", "group": "default"});
    let (_, _, key) = fixture(&server, &[channel], 1_000_000, 1_000_000).await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    server
        .set_option(&root, "AutomaticDisableChannelEnabled", json!("true"))
        .await;
    let (status, body) = root
        .put(
            "/api/user/setting",
            json!({"notify_type": "webhook", "webhook_url": url, "webhook_secret": "root-secret-1"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    mock.push_fault(
        401,
        json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}),
    );
    let (status, _) = server
        .send(
            server
                .client
                .post(server.url("/v1/chat/completions"))
                .bearer_auth(&key)
                .json(&json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]})),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (headers, raw) = tokio::time::timeout(Duration::from_secs(10), hooks.recv())
        .await
        .unwrap_or_else(|_| unreachable!("no alert within 10 s"))
        .unwrap_or_else(|| unreachable!("receiver gone"));
    let notice: Value = serde_json::from_slice(&raw).unwrap_or_default();
    assert_eq!(notice["type"], "channel_disabled", "{notice}");
    assert_eq!(notice["values"][0], "flaky-upstream", "{notice}");
    assert!(
        headers.contains_key("x-webhook-signature"),
        "signed like every notice"
    );
    assert!(
        !raw.windows(14).any(|w| w == b"upstream-key-1"),
        "the channel key is not in the alert"
    );
}
