//! API tokens through the HTTP API: validation, masking, ownership, status rules, search, and
//! an update racing a delete (the deleted key never authenticates again).

mod common;

use std::time::Duration;

use common::faulty_disk::FaultSwitch;
use common::{Actor, ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::json;

async fn two_users(server: &TestServer) -> (Actor, Actor) {
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    server.create_user(&root, "owner", "password1").await;
    server.create_user(&root, "other", "password1").await;
    (
        server.client_for("owner", "password1").await,
        server.client_for("other", "password1").await,
    )
}

#[tokio::test]
async fn tokens_are_validated_masked_and_private() {
    let server = TestServer::start().await;
    let (owner, other) = two_users(&server).await;
    for (body, expected) in [
        (json!({"name": ""}), "name is required"),
        (json!({"name": "x".repeat(51)}), "at most 50"),
        (json!({"name": "t", "remain_quota": -5}), "negative"),
        (json!({"name": "t", "expired_time": 0}), "-1 (never)"),
        (
            json!({"name": "t", "allow_ips": "10.0.0.1\nnot-an-ip"}),
            "not-an-ip is not an IP",
        ),
        (
            json!({"name": "t", "group": "svip"}),
            "cannot use the group svip",
        ),
    ] {
        let (status, answer) = owner.post("/api/token/", body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        assert!(
            answer["message"].as_str().expect("m").contains(expected),
            "{answer}"
        );
    }
    let (status, created) = owner
        .post("/api/token/", json!({"name": "ci", "remain_quota": 500000, "expired_time": -1,
                                     "allow_ips": "127.0.0.1\n10.0.0.0/8", "group": "vip",
                                     "model_limits_enabled": true, "model_limits": "gpt-4o, gpt-4o-mini,"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{created}");
    let id = created["data"]["id"].as_i64().expect("id");
    let masked = created["data"]["key"].as_str().expect("key");
    assert_eq!(masked.len(), 18, "4 + 10 asterisks + 4: {masked}");
    assert!(masked.contains("**********"));
    assert_eq!(created["data"]["model_limits"], "gpt-4o,gpt-4o-mini");
    assert_eq!(created["data"]["status"], 1);

    let (status, full) = owner.post(&format!("/api/token/{id}/key"), json!({})).await;
    assert_eq!(status, StatusCode::OK);
    let key = full["data"]["key"].as_str().expect("key");
    assert!(
        key.starts_with("sk-") && key.len() == 51,
        "sk- + 48 characters: {key}"
    );
    assert!(key[3..].chars().all(|c| c.is_ascii_alphanumeric()));
    assert!(key.starts_with(&format!("sk-{}", &masked[..4])) && key.ends_with(&masked[14..]));

    let (_, list) = owner.get("/api/token/?p=1&size=10").await;
    assert_eq!(list["data"]["total"], 1);
    assert!(
        !list.to_string().contains(&key[3..]),
        "list never shows the full key"
    );
    for path in [format!("/api/token/{id}"), format!("/api/token/{id}/key")] {
        let (status, _) = if path.ends_with("key") {
            other.post(&path, json!({})).await
        } else {
            other.get(&path).await
        };
        assert_eq!(
            status,
            StatusCode::NOT_FOUND,
            "another user's token is invisible: {path}"
        );
    }
    assert_eq!(other.get("/api/token/").await.1["data"]["total"], 0);
    let (status, _) = other
        .put(
            "/api/token/?status_only=true",
            json!({"id": id, "status": 2}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        other.delete(&format!("/api/token/{id}/")).await.0,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn status_rules_and_derived_states() {
    let server = TestServer::start().await;
    let (owner, _) = two_users(&server).await;
    let (_, t) = owner
        .post("/api/token/", json!({"name": "a", "remain_quota": 10}))
        .await;
    let id = t["data"]["id"].as_i64().expect("id");
    let (status, body) = owner
        .put(
            "/api/token/?status_only=true",
            json!({"id": id, "status": 2}),
        )
        .await;
    assert_eq!(
        (status, body["data"]["status"].as_i64()),
        (StatusCode::OK, Some(2)),
        "{body}"
    );
    let (_, body) = owner
        .put(
            "/api/token/?status_only=true",
            json!({"id": id, "status": 1}),
        )
        .await;
    assert_eq!(body["data"]["status"], 1);
    let (status, _) = owner
        .put(
            "/api/token/?status_only=true",
            json!({"id": id, "status": 3}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "only enable/disable");

    let (_, expired) = owner
        .post(
            "/api/token/",
            json!({"name": "old", "remain_quota": 10, "expired_time": 1_000_000}),
        )
        .await;
    assert_eq!(
        expired["data"]["status"], 3,
        "a past expiry reads as expired"
    );
    let eid = expired["data"]["id"].as_i64().expect("id");
    owner
        .put(
            "/api/token/?status_only=true",
            json!({"id": eid, "status": 2}),
        )
        .await;
    let (status, body) = owner
        .put(
            "/api/token/?status_only=true",
            json!({"id": eid, "status": 1}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["message"].as_str().expect("m").contains("expired"),
        "{body}"
    );
    let (_, body) = owner
        .put("/api/token/", json!({"id": eid, "expired_time": -1}))
        .await;
    assert_eq!(body["data"]["status"], 2, "still disabled until enabled");
    let (status, _) = owner
        .put(
            "/api/token/?status_only=true",
            json!({"id": eid, "status": 1}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "enabled after fixing the expiry");

    let (_, empty) = owner
        .post("/api/token/", json!({"name": "empty", "remain_quota": 0}))
        .await;
    assert_eq!(
        empty["data"]["status"], 4,
        "no quota left reads as exhausted"
    );
    let (_, unlimited) = owner
        .post(
            "/api/token/",
            json!({"name": "free", "remain_quota": 0, "unlimited_quota": true}),
        )
        .await;
    assert_eq!(unlimited["data"]["status"], 1);
}

#[tokio::test]
async fn search_update_and_delete() {
    let server = TestServer::start().await;
    let (owner, _) = two_users(&server).await;
    for name in ["alpha", "beta", "alphabet"] {
        owner
            .post("/api/token/", json!({"name": name, "remain_quota": 1}))
            .await;
    }
    let (_, found) = owner.get("/api/token/search?keyword=ALPHA").await;
    assert_eq!(found["data"]["total"], 2);
    let beta = owner.get("/api/token/search?keyword=beta").await.1["data"]["items"][0]["id"]
        .as_i64()
        .expect("id");
    let key = owner
        .post(&format!("/api/token/{beta}/key"), json!({}))
        .await
        .1["data"]["key"]
        .as_str()
        .expect("key")
        .to_owned();
    let (_, by_key) = owner.get(&format!("/api/token/search?token={key}")).await;
    assert_eq!(
        by_key["data"]["total"], 1,
        "search by the full key, sk- included"
    );
    assert_eq!(by_key["data"]["items"][0]["name"], "beta");

    let (_, updated) = owner
        .put(
            "/api/token/",
            json!({"id": beta, "name": "gamma", "remain_quota": 99}),
        )
        .await;
    assert_eq!(updated["data"]["name"], "gamma");
    assert_eq!(updated["data"]["remain_quota"], 99);
    assert_eq!(
        owner.delete(&format!("/api/token/{beta}/")).await.0,
        StatusCode::OK
    );
    assert_eq!(
        owner.get(&format!("/api/token/{beta}")).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(owner.get("/api/token/").await.1["data"]["total"], 2);
}

/// The status `GET /v1/models` answers `key`.
#[expect(
    clippy::expect_used,
    reason = "test helper: a failed call fails the test"
)]
async fn models_status(server: &TestServer, key: &str) -> StatusCode {
    server
        .client
        .get(server.url("/v1/models"))
        .bearer_auth(key)
        .send()
        .await
        .expect("sent")
        .status()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_deleted_while_an_update_commits_never_comes_back() {
    let switch = FaultSwitch::new();
    let server = TestServer::start_on(
        tempfile::tempdir().expect("tempdir"),
        |_| {},
        Some(switch.wrap()),
    )
    .await;
    let (owner, _) = two_users(&server).await;
    let (status, created) = owner
        .post(
            "/api/token/",
            json!({"name": "raced", "unlimited_quota": true}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{created}");
    let id = created["data"]["id"].as_i64().expect("id");
    let (_, full) = owner.post(&format!("/api/token/{id}/key"), json!({})).await;
    let key = full["data"]["key"].as_str().expect("key").to_owned();
    assert_eq!(models_status(&server, &key).await, StatusCode::OK);

    // The update's commit is held with the write lock taken...
    switch.hold_next_sync();
    let update = tokio::spawn({
        let owner = owner.clone();
        async move {
            owner
                .put("/api/token/", json!({"id": id, "name": "renamed"}))
                .await
        }
    });
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !switch.holding() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the update never committed"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // ...the delete arrives meanwhile and waits for it...
    let delete = tokio::spawn({
        let owner = owner.clone();
        async move { owner.delete(&format!("/api/token/{id}/")).await }
    });
    // ...(an index patched out of commit order lets the key go here: give it the chance)...
    let window = tokio::time::Instant::now() + Duration::from_millis(500);
    while tokio::time::Instant::now() < window
        && models_status(&server, &key).await == StatusCode::OK
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // ...then the update's commit completes, and the delete's after it.
    switch.release();
    let (status, body) = update.await.expect("update task");
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = delete.await.expect("delete task");
    assert_eq!(status, StatusCode::OK, "{body}");

    assert_eq!(
        owner.get(&format!("/api/token/{id}")).await.0,
        StatusCode::NOT_FOUND,
        "deleted in storage"
    );
    assert_eq!(
        models_status(&server, &key).await,
        StatusCode::UNAUTHORIZED,
        "the deleted key does not authenticate"
    );
}
