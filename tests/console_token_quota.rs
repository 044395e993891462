//! An owner's edit of a token's remaining quota reaches the relay at once (the quota book holds
//! token balances in memory) and is stored consistently with the settlements around it.

mod common;

use common::mock_upstream::MockUpstream;
use common::{ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::json;
use tollgate_storage::{TokenId, tokens};

#[tokio::test]
async fn raising_a_tokens_quota_lets_the_next_request_through() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((100, 10, 0)));
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let (status, body) = root
        .post(
            "/api/channel/",
            json!({"name": "mock", "type": 1, "key": "k", "base_url": mock.base,
                   "models": "gpt-4o", "group": "default"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let user = server.create_user(&root, "owner", "password1").await;
    root.put("/api/user/", json!({"id": user, "quota": 1_000_000}))
        .await;
    let owner = server.client_for("owner", "password1").await;
    let (_, token) = owner
        .post("/api/token/", json!({"name": "t", "remain_quota": 10}))
        .await;
    let id = token["data"]["id"].as_i64().expect("token id");
    let (_, full) = owner.post(&format!("/api/token/{id}/key"), json!({})).await;
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
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "the token's 10 units are too few: {body}"
    );

    let (status, edited) = owner
        .put("/api/token/", json!({"id": id, "remain_quota": 500_000}))
        .await;
    assert_eq!(status, StatusCode::OK, "{edited}");
    assert_eq!(edited["data"]["remain_quota"], 500_000);
    let (status, body) = chat().await;
    assert_eq!(
        status,
        StatusCode::OK,
        "the new limit applies at once: {body}"
    );

    // gpt-4o: 1.25 × (100 + 10 × 4) = 175, charged to the token as well.
    server.flush().await;
    let stored = server
        .store()
        .read_blocking(|rtx| tokens::get(rtx, TokenId(id)))
        .expect("read")
        .expect("token");
    assert_eq!(stored.remain_quota.0, 500_000 - 175);
    assert_eq!(stored.used_quota.0, 175);

    // Renaming keeps the balance the settlements left.
    let (status, renamed) = owner
        .put("/api/token/", json!({"id": id, "name": "renamed"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{renamed}");
    assert_eq!(renamed["data"]["remain_quota"], 500_000 - 175);
    assert_eq!(renamed["data"]["used_quota"], 175);

    // Lowering it to zero stops the key (exhausted), in memory too.
    owner
        .put("/api/token/", json!({"id": id, "remain_quota": 0}))
        .await;
    let (status, _) = chat().await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    server.flush().await;
    let stored = server
        .store()
        .read_blocking(|rtx| tokens::get(rtx, TokenId(id)))
        .expect("read")
        .expect("token");
    assert_eq!(stored.remain_quota.0, 0);
}
