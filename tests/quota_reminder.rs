//! The low-balance reminder through the public HTTP API: a request that leaves the balance
//! below the user's threshold sends one email (real SMTP on loopback) or one signed webhook;
//! further crossings within two hours send nothing, across a restart too.

mod common;

use std::time::Duration;

use common::mock_upstream::MockUpstream;
use common::relay_fixture::{balances, chat, fixture, hi_max};
use common::smtp::SmtpServer;
use common::webhook::receiver;
use common::{Actor, ROOT_PASS, ROOT_USER, TestServer};
use hmac::{Hmac, Mac};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::Sha256;

/// How long a test waits to be sure that no reminder is sent.
const QUIET: Duration = Duration::from_millis(1500);

/// An OpenAI channel serving `claude-test` (ratio 2, completion 5): every request costs
/// 2 × (100 + 20 × 5) = 400.
fn channel(mock: &MockUpstream) -> Value {
    json!({"name": "openai", "type": 1, "key": "k", "base_url": mock.base,
        "models": "claude-test", "group": "default"})
}

async fn set_quota(root: &Actor, user: i64, quota: i64) {
    let (status, body) = root
        .put("/api/user/", json!({"id": user, "quota": quota}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn crossing_the_threshold_mails_once_per_window_even_across_a_restart() {
    let mut smtp = SmtpServer::start();
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((100, 20, 0)));
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(&server, &[channel(&mock)], 10_000, 1_000_000).await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    for (k, v) in [
        ("SMTPServer", "127.0.0.1".to_owned()),
        ("SMTPPort", smtp.port.to_string()),
        ("SMTPFrom", "gate@tollgate.test".to_owned()),
        ("SMTPAllowPlaintext", "true".to_owned()),
        ("DisplayInCurrencyEnabled", "false".to_owned()),
    ] {
        server.set_option(&root, k, json!(v)).await;
    }
    // Webhooks must be https unless the loopback flag is set.
    let (status, body) = payer
        .put(
            "/api/user/setting",
            json!({"notify_type": "webhook",
            "webhook_url": "http://127.0.0.1:9/hook", "quota_warning_threshold": 9_800}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = payer
        .put(
            "/api/user/setting",
            json!({"notify_type": "email",
            "notification_email": "payer@user.test", "quota_warning_threshold": 9_800}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // 10 000 → 9 600, below 9 800: one mail.
    let (status, body) = chat(&server, &key, hi_max("claude-test", 20)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mail = smtp.next_mail().await;
    assert_eq!(mail.to, vec!["payer@user.test".to_owned()]);
    assert!(mail.body.contains("quota is running low"), "{}", mail.body);
    assert!(
        mail.body.contains("9600"),
        "the balance is named: {}",
        mail.body
    );
    assert!(
        mail.body.contains("9800"),
        "the threshold is named: {}",
        mail.body
    );
    assert!(mail.body.contains("/topup"), "a top-up link: {}", mail.body);

    // Still below (9 200): nothing. Topped up and crossing again (10 000 → 9 600): nothing.
    let (status, body) = chat(&server, &key, hi_max("claude-test", 20)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    set_quota(&root, payer.id, 10_000).await;
    let (status, body) = chat(&server, &key, hi_max("claude-test", 20)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(smtp.mail_within(QUIET).await.is_none(), "one mail per 2 h");

    // A restart forgets nothing: the last reminder time is stored.
    set_quota(&root, payer.id, 10_000).await;
    let dir = server.stop().await;
    let server = TestServer::start_in(dir).await;
    let (status, body) = chat(&server, &key, hi_max("claude-test", 20)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        smtp.mail_within(QUIET).await.is_none(),
        "no second mail after a restart"
    );
    let (quota, _, count, _) = balances(&server, payer.id).await;
    assert_eq!((quota, count), (9_600, 4), "every request was billed");
}

#[tokio::test]
async fn the_webhook_is_signed_and_sent_once_using_the_site_threshold() {
    let (url, mut hooks) = receiver().await;
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((100, 20, 0)));
    let dir = tempfile::tempdir().expect("tempdir");
    let server = TestServer::start_with(dir, |c| c.webhook_allow_loopback_http = true).await;
    let (_, payer, key) = fixture(&server, &[channel(&mock)], 10_000, 1_000_000).await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    server
        .set_option(&root, "QuotaRemindThreshold", json!("9700"))
        .await;
    server
        .set_option(&root, "DisplayInCurrencyEnabled", json!("false"))
        .await;
    let secret = "whsec-test-1234";
    let (status, body) = payer
        .put(
            "/api/user/setting",
            json!({"notify_type": "webhook", "webhook_url": url,
            "webhook_secret": secret}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let (status, body) = chat(&server, &key, hi_max("claude-test", 20)).await;

    assert_eq!(status, StatusCode::OK, "{body}");
    let (headers, raw) = tokio::time::timeout(Duration::from_secs(10), hooks.recv())
        .await
        .expect("a webhook within 10 s")
        .expect("receiver alive");
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("key");
    mac.update(&raw);
    let expected: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        headers["x-webhook-signature"].to_str().ok(),
        Some(format!("sha256={expected}").as_str())
    );
    assert_eq!(
        headers["authorization"].to_str().ok(),
        Some(format!("Bearer {secret}").as_str())
    );
    let notice: Value = serde_json::from_slice(&raw).expect("json");
    assert_eq!(notice["type"], "quota_exceed");
    assert!(notice["title"].as_str().is_some_and(|t| !t.is_empty()));
    let content = notice["content"].as_str().expect("content");
    assert_eq!(content.matches("{{value}}").count(), 3, "{content}");
    assert_eq!(notice["values"][0], "9600");
    assert_eq!(notice["values"][1], "9700", "the site threshold applies");
    assert!(
        notice["timestamp"]
            .as_i64()
            .is_some_and(|t| t > 1_700_000_000)
    );

    let (status, body) = chat(&server, &key, hi_max("claude-test", 20)).await;

    assert_eq!(status, StatusCode::OK, "{body}");
    set_quota(&root, payer.id, 10_000).await;
    let (status, body) = chat(&server, &key, hi_max("claude-test", 20)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let again = tokio::time::timeout(QUIET, hooks.recv()).await;
    assert!(again.is_err(), "one webhook per 2 h");
}
