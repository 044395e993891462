//! Rate-limit configuration (P15 item 1) through the console API: a key's limits for its
//! owner, a user's and a channel's (with per-key limits) for an admin, each edit audited and
//! kept across a restart; `RateLimitRules` refused with a code naming the rule. The engine
//! itself is tested beside its code (actors/src/limiter).

mod common;

use common::TestServer;
use common::relay_fixture::{fixture, openai_channel};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn limits_are_set_read_back_audited_and_kept_across_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = TestServer::start_in(dir).await;
    let (root, payer, _key) = fixture(
        &server,
        &[openai_channel("http://127.0.0.1:9", "m")],
        1_000,
        1_000,
    )
    .await;
    let (_, list) = payer.get("/api/token/?p=1&page_size=10").await;
    let token = list["data"]["items"][0]["id"].as_i64().expect("token id");
    let (_, channels) = root.get("/api/channel/?p=1&page_size=10").await;
    let channel = channels["data"]["items"][0]["id"]
        .as_i64()
        .expect("channel id");

    // A key's limits, by its owner; another user's key reads as not found.
    let path = format!("/api/token/{token}/limits");
    let (status, body) = payer.get(&path).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["data"],
        json!({"concurrency_limit": 0, "rpm_limit": 0, "tpm_limit": 0, "rpd_limit": 0,
               "key_limits": []})
    );
    let (status, body) = payer
        .put(&path, json!({"rpm_limit": 60, "concurrency_limit": 2}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["rpm_limit"], 60);
    let (status, _) = root.get(&path).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "root does not own the key");
    // key_limits belong to channels only; a negative limit is not a number of requests.
    let (status, body) = payer
        .put(&path, json!({"key_limits": [{"index": 0, "rpm_limit": 1}]}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["detail"], "limit_key_not_channel", "{body}");
    let (status, body) = payer.put(&path, json!({"rpm_limit": -1})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    // A user's, by an admin.
    let user_path = format!("/api/user/{}/limits", payer.id);
    let (status, body) = root
        .put(&user_path, json!({"tpm_limit": 100000, "rpd_limit": 1000}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = payer.get(&user_path).await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "a user does not read the admin's route"
    );

    // A channel's, with per-key limits (sorted, empty entries dropped, a key given twice refused).
    let channel_path = format!("/api/channel/{channel}/limits");
    let (status, body) = root
        .put(
            &channel_path,
            json!({"concurrency_limit": 10, "key_limits": [
                {"index": 2, "rpm_limit": 30}, {"index": 1}, {"index": 0, "tpm_limit": 5000}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["data"]["key_limits"],
        json!([
            {"index": 0, "concurrency_limit": 0, "rpm_limit": 0, "tpm_limit": 5000, "rpd_limit": 0},
            {"index": 2, "concurrency_limit": 0, "rpm_limit": 30, "tpm_limit": 0, "rpd_limit": 0}
        ])
    );
    let (status, body) = root
        .put(
            &channel_path,
            json!({"key_limits": [{"index": 1, "rpm_limit": 1}, {"index": 1, "rpm_limit": 2}]}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["detail"], "limit_key_twice", "{body}");
    assert_eq!(body["args"], json!(["1"]), "{body}");

    // Each edit is audited with what it replaced.
    for action in ["token.limits", "user.limits", "channel.limits"] {
        let (_, audit) = root.get(&format!("/api/audit?action={action}")).await;
        assert_eq!(audit["data"]["total"], json!(1), "{action}: {audit}");
    }
    let (_, audit) = root.get("/api/audit?action=token.limits").await;
    let row = &audit["data"]["items"][0];
    assert!(
        row["after"]
            .as_str()
            .is_some_and(|a| a.contains("\"rpm_limit\":60")),
        "{row}"
    );

    // Kept across a restart, and the engine starts with them.
    let dir = server.stop().await;
    let server = TestServer::start_in(dir).await;
    let payer = server.client_for("payer", "password1").await;
    let (_, body) = payer.get(&path).await;
    assert_eq!(body["data"]["rpm_limit"], 60, "{body}");
    assert_eq!(body["data"]["concurrency_limit"], 2, "{body}");
}

#[tokio::test]
async fn rate_limit_rules_are_checked_and_refusals_name_the_rule() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server
        .client_for(common::ROOT_USER, common::ROOT_PASS)
        .await;
    let put = |value: &'static str| {
        let root = root.clone();
        async move {
            root.put(
                "/api/option/",
                json!({"key": "RateLimitRules", "value": value}),
            )
            .await
        }
    };
    let (status, body) = put(r#"[{"group":"free","rpm_limit":60},{"model":"gpt-4o","concurrency_limit":5,"queue":10,"queue_timeout_ms":2000}]"#).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    for (value, detail, args) in [
        (r#"{"group":"a"}"#, "limit_rule_shape", None),
        (
            r#"[{"rpm_limit":1}]"#,
            "limit_rule_no_target",
            Some(json!(["1"])),
        ),
        (
            r#"[{"group":"a","rpm_limit":1},{"group":"a","model":"m"}]"#,
            "limit_rule_no_limit",
            Some(json!(["2"])),
        ),
        (
            r#"[{"group":"a","rpm_limit":1},{"group":"a","tpm_limit":5}]"#,
            "limit_rule_duplicate",
            Some(json!(["2", "1"])),
        ),
        (
            r#"[{"model":"m","rpm_limit":1,"queue":3}]"#,
            "limit_rule_queue",
            Some(json!(["1", "10000", "600000"])),
        ),
    ] {
        let (status, body) = put(value).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{value}: {body}");
        assert_eq!(body["detail"], detail, "{value}: {body}");
        if let Some(args) = args {
            assert_eq!(body["args"], args, "{value}: {body}");
        }
    }
    let (_, options) = root.get("/api/option/").await;
    let saved = options["data"]
        .as_array()
        .and_then(|all| all.iter().find(|o| o["key"] == "RateLimitRules"))
        .expect("RateLimitRules is listed");
    assert!(
        saved["value"].as_str().is_some_and(|v| v.contains("free")),
        "the refused values left the saved one: {saved}"
    );
}
