//! Redemption codes through the HTTP API: admin management and its validation, and redeeming
//! exactly once (also under 20 concurrent redemptions), with the top-up log row and the
//! in-memory balance the relay spends from.

mod common;

use common::mock_upstream::MockUpstream;
use common::{Actor, ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate_storage::logs::{self, LOG_TOPUP};
use tollgate_storage::{StorageError, UserId, users};

async fn root_and_user(server: &TestServer) -> (Actor, Actor) {
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    server.create_user(&root, "alice", "password1").await;
    let alice = server.client_for("alice", "password1").await;
    (root, alice)
}

#[expect(
    clippy::expect_used,
    reason = "test helper: a failed call fails the test"
)]
async fn create_codes(root: &Actor, body: Value) -> Vec<String> {
    let (status, answer) = root.post("/api/redemption/", body.clone()).await;
    assert_eq!(status, StatusCode::OK, "{body}: {answer}");
    answer["data"]
        .as_array()
        .expect("codes")
        .iter()
        .map(|k| k.as_str().expect("code").to_owned())
        .collect()
}

#[expect(
    clippy::expect_used,
    reason = "test helper: a failed call fails the test"
)]
async fn code_id(root: &Actor, name: &str) -> i64 {
    let (_, found) = root
        .get(&format!("/api/redemption/search?keyword={name}"))
        .await;
    found["data"]["items"][0]["id"].as_i64().expect("id")
}

#[expect(
    clippy::expect_used,
    reason = "test helper: a failed read fails the test"
)]
async fn stored_quota_and_topup_logs(server: &TestServer, user: i64) -> (i64, Vec<logs::LogEntry>) {
    server.flush().await;
    server
        .store()
        .read_blocking(|rtx| {
            let u = users::get(rtx, UserId(user))?.expect("user");
            let topups = logs::recent_for_user(rtx, UserId(user), 100)?
                .into_iter()
                .filter(|l| l.log_type == LOG_TOPUP)
                .collect();
            Ok::<_, StorageError>((u.quota.0, topups))
        })
        .expect("read")
}

#[tokio::test]
async fn codes_are_validated_listed_searched_edited_and_deleted() {
    let server = TestServer::start().await;
    let (root, alice) = root_and_user(&server).await;
    for (body, expected) in [
        (
            json!({"name": "x", "quota": 100, "count": 0}),
            "between 1 and 100",
        ),
        (
            json!({"name": "x", "quota": 100, "count": 101}),
            "between 1 and 100",
        ),
        (
            json!({"name": "码".repeat(21), "quota": 100, "count": 1}),
            "1 to 20",
        ),
        (json!({"name": "x", "quota": 0, "count": 1}), "positive"),
        (json!({"name": "x", "quota": "lots", "count": 1}), "quota"),
    ] {
        let (status, answer) = root.post("/api/redemption/", body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        assert!(
            answer["message"]
                .as_str()
                .expect("message")
                .contains(expected),
            "{body}: {answer}"
        );
    }
    let (status, _) = alice
        .post(
            "/api/redemption/",
            json!({"name": "x", "quota": 1, "count": 1}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "admins only");
    let (status, _) = alice.get("/api/redemption/").await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    let promo = create_codes(&root, json!({"name": "promo", "quota": 500000, "count": 3})).await;
    assert_eq!(promo.len(), 3);
    for key in &promo {
        assert_eq!(key.len(), 32, "{key}");
        assert!(key.chars().all(|c| c.is_ascii_hexdigit()), "{key}");
    }
    let unnamed = create_codes(&root, json!({"quota": 100000, "count": 1})).await;
    assert_eq!(unnamed.len(), 1);

    let (_, page) = root.get("/api/redemption/?p=1&page_size=2").await;
    assert_eq!(page["data"]["total"], 4, "{page}");
    assert_eq!(page["data"]["page_size"], 2);
    assert_eq!(page["data"]["items"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        page["data"]["items"][0]["name"], "$0.20",
        "newest first; an empty name defaults to the formatted quota"
    );
    let (_, page2) = root.get("/api/redemption/?p=2&page_size=2").await;
    assert_eq!(page2["data"]["items"].as_array().map(Vec::len), Some(2));
    assert_eq!(page2["data"]["page"], 2);

    let (_, found) = root.get("/api/redemption/search?keyword=PROMO").await;
    assert_eq!(found["data"]["total"], 3, "case-insensitive name search");
    let id = code_id(&root, "promo").await;
    let (_, by_id) = root
        .get(&format!("/api/redemption/search?keyword={id}"))
        .await;
    assert_eq!(by_id["data"]["total"], 1, "search by id");

    let (status, one) = root.get(&format!("/api/redemption/{id}")).await;
    assert_eq!(status, StatusCode::OK, "{one}");
    assert_eq!(one["data"]["status"], 1);
    assert_eq!(one["data"]["used_user_id"], 0);

    let (status, edited) = root
        .put(
            "/api/redemption/",
            json!({"id": id, "name": "spring", "quota": 250000}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{edited}");
    assert_eq!(
        (
            edited["data"]["name"].clone(),
            edited["data"]["quota"].clone()
        ),
        (json!("spring"), json!(250000))
    );
    let (status, bad) = root
        .put("/api/redemption/", json!({"id": id, "name": ""}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");

    let (status, disabled) = root
        .put(
            "/api/redemption/?status_only=true",
            json!({"id": id, "status": 2}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{disabled}");
    assert_eq!(disabled["data"]["status"], 2);
    let (status, refused) = root
        .put("/api/redemption/", json!({"id": id, "name": "again"}))
        .await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "only unused codes are edited"
    );
    assert!(refused["message"].as_str().expect("m").contains("unused"));
    let (status, _) = root
        .put(
            "/api/redemption/?status_only=true",
            json!({"id": id, "status": 3}),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "nobody sets 'used' by hand"
    );

    let (status, _) = root.delete(&format!("/api/redemption/{id}/")).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = root.get(&format!("/api/redemption/{id}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = root.delete(&format!("/api/redemption/{id}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = root.get("/api/redemption/abc").await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "a non-numeric id is a client error"
    );
}

#[tokio::test]
async fn redeeming_credits_once_writes_the_log_and_refuses_bad_codes() {
    let server = TestServer::start().await;
    let (root, alice) = root_and_user(&server).await;
    let keys = create_codes(&root, json!({"name": "gift", "quota": 700000, "count": 2})).await;
    let (status, answer) = alice.post("/api/user/topup", json!({"key": ""})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let (status, answer) = alice
        .post(
            "/api/user/topup",
            json!({"key": "0123456789abcdef0123456789abcdef"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(answer["code"], "redemption_invalid", "{answer}");

    let (status, answer) = alice
        .post("/api/user/topup", json!({"key": keys[0].to_uppercase()}))
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["data"], 700000, "data is the quota added");
    let (status, again) = alice.post("/api/user/topup", json!({"key": keys[0]})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(again["code"], "redemption_used", "{again}");
    assert!(
        again["message"]
            .as_str()
            .expect("m")
            .contains("already been used")
    );

    // A disabled code cannot be redeemed (and reads like an unknown one).
    let id = code_id(&root, "gift").await;
    let (_, listed) = root.get(&format!("/api/redemption/{id}")).await;
    let other_id = if listed["data"]["key"] == keys[1] {
        id
    } else {
        let (_, all) = root.get("/api/redemption/search?keyword=gift").await;
        all["data"]["items"]
            .as_array()
            .expect("items")
            .iter()
            .find(|c| c["key"] == keys[1])
            .and_then(|c| c["id"].as_i64())
            .expect("second code")
    };
    root.put(
        "/api/redemption/?status_only=true",
        json!({"id": other_id, "status": 2}),
    )
    .await;
    let (_, answer) = alice.post("/api/user/topup", json!({"key": keys[1]})).await;
    assert_eq!(answer["code"], "redemption_invalid", "{answer}");

    let (quota, topups) = stored_quota_and_topup_logs(&server, alice.id).await;
    assert_eq!(quota, 700000);
    assert_eq!(topups.len(), 1, "one top-up log row");
    assert_eq!(topups[0].quota, 700000);
    assert_eq!(topups[0].username, "alice");
    let (_, me) = alice.get("/api/user/self").await;
    assert_eq!(me["data"]["quota"], 700000);

    // The used code shows who used it, cannot be edited or re-enabled, and is "invalid".
    let (_, all) = root.get("/api/redemption/search?keyword=gift").await;
    let used = all["data"]["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|c| c["key"] == keys[0])
        .cloned()
        .expect("used code");
    assert_eq!(used["status"], 3);
    assert_eq!(used["used_user_id"], alice.id);
    assert!(used["redeemed_time"].as_i64().expect("time") > 0);
    let used_id = used["id"].as_i64().expect("id");
    let (status, _) = root
        .put("/api/redemption/", json!({"id": used_id, "quota": 1}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = root
        .put(
            "/api/redemption/?status_only=true",
            json!({"id": used_id, "status": 1}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "a used code stays used");
    create_codes(&root, json!({"name": "keep", "quota": 1, "count": 1})).await;
    let (status, deleted) = root.delete("/api/redemption/invalid").await;
    assert_eq!(status, StatusCode::OK, "{deleted}");
    assert_eq!(deleted["data"], 2, "the used and the disabled code");
    let (_, left) = root.get("/api/redemption/").await;
    assert_eq!(left["data"]["total"], 1);
    assert_eq!(left["data"]["items"][0]["name"], "keep");
}

#[tokio::test]
async fn twenty_concurrent_redemptions_of_one_code_credit_it_once() {
    let server = TestServer::start().await;
    let (root, _) = root_and_user(&server).await;
    let keys = create_codes(&root, json!({"name": "race", "quota": 123456, "count": 1})).await;
    let alice = std::sync::Arc::new(server.client_for("alice", "password1").await);
    let mut tasks = Vec::new();
    for _ in 0..20 {
        let (alice, key) = (alice.clone(), keys[0].clone());
        tasks.push(tokio::spawn(async move {
            alice.post("/api/user/topup", json!({"key": key})).await
        }));
    }
    let mut credited = 0;
    let mut used = 0;
    for task in tasks {
        let (status, body) = task.await.expect("task");
        match status {
            StatusCode::OK => {
                assert_eq!(body["data"], 123456);
                credited += 1;
            }
            _ => {
                assert_eq!(body["code"], "redemption_used", "{body}");
                used += 1;
            }
        }
    }
    assert_eq!((credited, used), (1, 19));
    let (quota, topups) = stored_quota_and_topup_logs(&server, alice.id).await;
    assert_eq!(quota, 123456, "credited exactly once");
    assert_eq!(topups.len(), 1, "exactly one top-up log row");
}

#[tokio::test]
async fn a_redeemed_balance_is_spendable_at_once() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((100, 10, 0)));
    let server = TestServer::start().await;
    let (root, alice) = root_and_user(&server).await;
    let (status, body) = root
        .post(
            "/api/channel/",
            json!({"name": "mock", "type": 1, "key": "k", "base_url": mock.base,
                   "models": "gpt-4o", "group": "default"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, token) = alice
        .post("/api/token/", json!({"name": "t", "unlimited_quota": true}))
        .await;
    let id = token["data"]["id"].as_i64().expect("token id");
    let (_, full) = alice.post(&format!("/api/token/{id}/key"), json!({})).await;
    let key = full["data"]["key"].as_str().expect("key").to_owned();
    let chat = || async {
        server
            .send(
                server
                    .client
                    .post(server.url("/v1/chat/completions"))
                    .bearer_auth(&key)
                    .json(&json!({"model": "gpt-4o", "max_tokens": 10,
                                  "messages": [{"role": "user", "content": "hi"}]})),
            )
            .await
    };
    let (status, body) = chat().await;
    assert_eq!(status, StatusCode::FORBIDDEN, "no balance yet: {body}");
    let keys = create_codes(&root, json!({"name": "fund", "quota": 500000, "count": 1})).await;
    let (status, _) = alice.post("/api/user/topup", json!({"key": keys[0]})).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = chat().await;
    assert_eq!(
        status,
        StatusCode::OK,
        "the credit reached the in-memory ledger: {body}"
    );
    let (quota, _) = stored_quota_and_topup_logs(&server, alice.id).await;
    // gpt-4o: 1.25 × (100 + 10 × 4) = 175
    assert_eq!(quota, 500000 - 175);
}
