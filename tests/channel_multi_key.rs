//! Multi-key channels: one key per line, used in turn; a key the upstream condemns (401) is
//! disabled alone and skipped by the relay and by tests; the channel goes when its last key
//! does; re-enabling the channel makes every key usable again.

mod common;

use common::TestServer;
use common::mock_upstream::MockUpstream;
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn channel(server: &TestServer, root: i64, id: i64) -> Value {
    server.get_as(root, &format!("/api/channel/{id}")).await.1["data"].clone()
}

fn info(channel: &Value) -> Value {
    serde_json::from_str(channel["other_info"].as_str().unwrap_or("{}")).unwrap_or(Value::Null)
}

async fn test_channel(server: &TestServer, root: i64, id: i64) -> Value {
    server
        .get_as(root, &format!("/api/channel/test/{id}"))
        .await
        .1
}

#[tokio::test]
async fn a_rejected_key_is_disabled_alone_and_the_channel_goes_with_the_last() {
    let server = TestServer::start().await;
    let root = server.root().await;
    server
        .set_option_as(root, "AutomaticDisableChannelEnabled", "true")
        .await;
    let mock = MockUpstream::start().await;
    mock.accept_keys(&["sk-good-key"]);
    let (status, resp) = server
        .post_as(
            root,
            "/api/channel/",
            json!({"name": "multi", "key": "sk-bad-key\nsk-good-key", "models": "gpt-4o",
                "base_url": mock.base}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{resp}");
    let id = resp["data"]["ids"][0].as_i64().expect("id");

    let first = test_channel(&server, root, id).await;
    assert_eq!(
        first["success"], false,
        "the first key is rejected: {first}"
    );
    let c = channel(&server, root, id).await;
    assert_eq!(c["status"], 1, "one bad key does not disable the channel");
    let disabled = &info(&c)["disabled_keys"];
    assert_eq!(disabled.as_array().map(Vec::len), Some(1), "{c}");
    assert_eq!(disabled[0]["index"], 0);
    assert!(!c.to_string().contains("sk-bad-key"), "no key in the view");

    let second = test_channel(&server, root, id).await;
    assert_eq!(
        second["success"], true,
        "the next test uses the good key: {second}"
    );
    for _ in 0..3 {
        assert_eq!(test_channel(&server, root, id).await["success"], true);
    }
    assert_eq!(mock.last_key().as_deref(), Some("sk-good-key"));

    let (status, resp) = server
        .put_as(
            root,
            "/api/channel/",
            json!({"id": id, "key": "sk-good-key\nsk-bad-key\nsk-new-key"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{resp}");
    let c = channel(&server, root, id).await;
    assert_eq!(
        info(&c)["disabled_keys"][0]["index"],
        1,
        "a kept key's record follows its new line: {c}"
    );
    let (status, _) = server
        .put_as(
            root,
            "/api/channel/",
            json!({"id": id, "key": "sk-good-key\nsk-new-key"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let c = channel(&server, root, id).await;
    assert!(
        info(&c)["disabled_keys"].is_null(),
        "a removed key's record goes: {c}"
    );

    mock.accept_keys(&["nothing"]);
    assert_eq!(test_channel(&server, root, id).await["success"], false);
    assert_eq!(
        channel(&server, root, id).await["status"],
        1,
        "one key left"
    );
    let last = test_channel(&server, root, id).await;
    assert_eq!(last["success"], false);
    let c = channel(&server, root, id).await;
    assert_eq!(c["status"], 3, "the last key took the channel with it: {c}");
    assert!(
        info(&c)["status_reason"]
            .as_str()
            .expect("reason")
            .starts_with("all keys are disabled")
    );

    mock.accept_keys(&["sk-good-key", "sk-new-key"]);
    server
        .set_option_as(root, "AutomaticEnableChannelEnabled", "true")
        .await;
    let summary = server.pool().retest_now().await.expect("retest");
    assert_eq!(summary.enabled, 1);
    let c = channel(&server, root, id).await;
    assert_eq!(c["status"], 1);
    assert!(
        info(&c)["disabled_keys"].is_null(),
        "every key usable again: {c}"
    );
}

#[tokio::test]
async fn the_relay_skips_a_disabled_key() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server
        .client_for(common::ROOT_USER, common::ROOT_PASS)
        .await;
    server
        .set_option(&root, "AutomaticDisableChannelEnabled", json!("true"))
        .await;
    server.set_option(&root, "RetryTimes", json!("0")).await;
    let mock = MockUpstream::start().await;
    mock.accept_keys(&["sk-relay-good"]);
    let (status, resp) = root
        .post(
            "/api/channel/",
            json!({"name": "multi", "key": "sk-relay-good\nsk-relay-bad", "models": "gpt-4o",
                "base_url": mock.base}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{resp}");
    let (_, token) = root
        .post("/api/token/", json!({"name": "k", "unlimited_quota": true}))
        .await;
    let token_id = token["data"]["id"].as_i64().expect("token id");
    let (_, full) = root
        .post(&format!("/api/token/{token_id}/key"), json!({}))
        .await;
    let key = full["data"]["key"].as_str().expect("key").to_owned();
    let chat = || async {
        server
            .send(
                server
                    .client
                    .post(server.url("/v1/chat/completions"))
                    .bearer_auth(&key)
                    .json(&json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]})),
            )
            .await
            .0
    };
    let mut statuses = Vec::new();
    for _ in 0..2 {
        statuses.push(chat().await);
    }
    assert!(
        statuses.contains(&StatusCode::UNAUTHORIZED) && statuses.contains(&StatusCode::OK),
        "the two keys were used in turn: {statuses:?}"
    );
    // The relay casts the 401 to the pool before answering; a call queued after it returns
    // once the cast was applied.
    server.pool().reload().await.expect("pool");
    let (_, channels) = root.get("/api/channel/?p=1&page_size=10").await;
    let id = channels["data"]["items"][0]["id"].as_i64().expect("id");
    let (_, c) = root.get(&format!("/api/channel/{id}")).await;
    assert_eq!(
        info(&c["data"])["disabled_keys"][0]["index"],
        1,
        "the bad key was disabled: {c}"
    );
    for _ in 0..6 {
        assert_eq!(
            chat().await,
            StatusCode::OK,
            "only the good key is used now"
        );
    }
    assert_eq!(mock.last_key().as_deref(), Some("sk-relay-good"));
}
