//! Channel balances from the providers' billing APIs (mock providers on 127.0.0.1): each
//! supported type's request and arithmetic, CNY conversion with the Price option, refusals for
//! unsupported types and multi-key channels, upstream errors without the key, and the
//! update-all run that auto-disables an empty channel.
#![expect(clippy::expect_used, reason = "test helpers fail the test loudly")]

mod common;

use common::TestServer;
use common::mock_json::MockJson;
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn create(server: &TestServer, root: i64, body: Value) -> i64 {
    let (status, resp) = server.post_as(root, "/api/channel/", body).await;
    assert_eq!(status, StatusCode::OK, "{resp}");
    resp["data"]["ids"][0].as_i64().expect("id")
}

async fn balance_of(server: &TestServer, root: i64, id: i64) -> (StatusCode, Value) {
    server
        .get_as(root, &format!("/api/channel/update_balance/{id}/"))
        .await
}

async fn channel(server: &TestServer, root: i64, id: i64) -> Value {
    server.get_as(root, &format!("/api/channel/{id}")).await.1["data"].clone()
}

fn channel_body(name: &str, kind: i64, base: &str) -> Value {
    json!({"name": name, "type": kind, "key": format!("sk-{name}-key"), "models": "m",
        "base_url": base})
}

#[tokio::test]
async fn each_provider_balance_is_read_and_stored_in_usd() {
    let server = TestServer::start().await;
    let root = server.root().await;
    server.set_option_as(root, "Price", "8").await;
    let mock = MockJson::start().await;
    mock.answer(
        "/v1/dashboard/billing/subscription",
        200,
        json!({"hard_limit_usd": 120.0, "has_payment_method": true}),
    );
    mock.answer(
        "/v1/dashboard/billing/usage",
        200,
        json!({"total_usage": 2050.0}),
    );
    mock.answer(
        "/api/v1/credits",
        200,
        json!({"data": {"total_credits": 50.0, "total_usage": 12.25}}),
    );
    mock.answer(
        "/v1/users/me/balance",
        200,
        json!({"code": 0, "data": {"available_balance": 80.0}}),
    );
    mock.answer(
        "/v1/user/info",
        200,
        json!({"code": 20000, "data": {"totalBalance": "16.00"}}),
    );
    mock.answer(
        "/user/balance",
        200,
        json!({"is_available": true, "balance_infos": [
            {"currency": "CNY", "total_balance": "40.00"}]}),
    );
    for (name, kind, want) in [
        ("openai", 1, 99.5),
        ("custom", 8, 99.5),
        ("openrouter", 20, 37.75),
        ("moonshot", 25, 10.0),
        ("silicon", 40, 2.0),
        ("deepseek", 43, 5.0),
    ] {
        let id = create(&server, root, channel_body(name, kind, &mock.base)).await;
        let (status, resp) = balance_of(&server, root, id).await;
        assert_eq!(status, StatusCode::OK, "{name}: {resp}");
        assert_eq!(resp["data"], json!(want), "{name}");
        let stored = channel(&server, root, id).await;
        assert_eq!(stored["balance"], json!(want), "{name} stored");
        assert!(stored["balance_updated_time"].as_i64().expect("time") > 0);
    }
    let calls = mock.calls();
    let usage = calls
        .iter()
        .find(|c| c.uri.starts_with("/v1/dashboard/billing/usage?start_date="))
        .expect("usage asked with a window");
    assert!(usage.uri.contains("&end_date="), "{}", usage.uri);
    assert!(
        calls.iter().all(|c| c
            .auth
            .as_deref()
            .is_some_and(|a| a.starts_with("Bearer sk-"))),
        "the key travels as a bearer token"
    );
}

#[tokio::test]
async fn refusals_and_upstream_errors_are_clear_and_key_free() {
    let server = TestServer::start().await;
    let root = server.root().await;
    let mock = MockJson::start().await;

    let claude = create(&server, root, channel_body("claude", 14, &mock.base)).await;
    let (status, resp) = balance_of(&server, root, claude).await;
    assert_eq!(status, StatusCode::NOT_IMPLEMENTED, "{resp}");
    assert!(
        resp["message"]
            .as_str()
            .expect("m")
            .contains("not supported")
    );

    let multi = create(
        &server,
        root,
        json!({"name": "multi", "type": 43, "key": "sk-one\nsk-two", "models": "m",
            "base_url": mock.base}),
    )
    .await;
    let (status, resp) = balance_of(&server, root, multi).await;
    assert_eq!(status, StatusCode::NOT_IMPLEMENTED, "{resp}");
    assert!(resp["message"].as_str().expect("m").contains("multi-key"));

    mock.answer(
        "/api/v1/credits",
        401,
        json!({"error": {"message": "bad key sk-leaky-key"}}),
    );
    let leaky = create(
        &server,
        root,
        json!({"name": "leaky", "type": 20, "key": "sk-leaky-key", "models": "m",
            "base_url": mock.base}),
    )
    .await;
    let (status, resp) = balance_of(&server, root, leaky).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{resp}");
    let message = resp["message"].as_str().expect("m");
    assert!(message.contains("balance query failed"), "{message}");
    assert!(!message.contains("sk-leaky-key"), "{message}");

    mock.answer("/user/balance", 200, json!({"unexpected": true}));
    let odd = create(&server, root, channel_body("odd", 43, &mock.base)).await;
    let (status, resp) = balance_of(&server, root, odd).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{resp}");
    assert!(
        resp["message"]
            .as_str()
            .expect("m")
            .contains("unexpected shape")
    );

    let (status, _) = balance_of(&server, root, 999).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn update_all_refreshes_and_disables_empty_channels() {
    let server = TestServer::start().await;
    let root = server.root().await;
    server
        .set_option_as(root, "AutomaticDisableChannelEnabled", "true")
        .await;
    let rich = MockJson::start().await;
    rich.answer(
        "/api/v1/credits",
        200,
        json!({"data": {"total_credits": 10.0, "total_usage": 1.0}}),
    );
    let broke = MockJson::start().await;
    broke.answer(
        "/api/v1/credits",
        200,
        json!({"data": {"total_credits": 10.0, "total_usage": 10.0}}),
    );
    let down = MockJson::start().await;
    let a = create(&server, root, channel_body("rich", 20, &rich.base)).await;
    let b = create(&server, root, channel_body("broke", 20, &broke.base)).await;
    let c = create(&server, root, channel_body("down", 20, &down.base)).await;
    let _claude = create(&server, root, channel_body("claude", 14, &rich.base)).await;
    let mut no_ban = channel_body("broke-no-ban", 20, &broke.base);
    no_ban["auto_ban"] = json!(0);
    let d = create(&server, root, no_ban).await;

    let (status, resp) = server.get_as(root, "/api/channel/update_balance").await;
    assert_eq!(status, StatusCode::OK, "{resp}");
    assert_eq!(
        resp["data"],
        json!({"updated": 3, "failed": 1, "disabled": 1, "skipped": 1}),
        "{resp}"
    );
    assert_eq!(channel(&server, root, a).await["status"], 1);
    let disabled = channel(&server, root, b).await;
    assert_eq!(disabled["status"], 3, "{disabled}");
    let info: Value =
        serde_json::from_str(disabled["other_info"].as_str().expect("info")).expect("json");
    assert_eq!(info["status_reason"], "insufficient balance");
    assert_eq!(
        channel(&server, root, c).await["status"],
        1,
        "a failed query changes nothing"
    );
    assert_eq!(
        channel(&server, root, d).await["status"],
        1,
        "auto_ban 0 is never disabled"
    );
    assert_eq!(channel(&server, root, d).await["balance"], json!(0.0));
}
