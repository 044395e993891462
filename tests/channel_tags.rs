//! Bulk operations by tag: edit, enable, disable, batch tag, and tag-mode listing; the ability
//! index stays consistent after each.
#![expect(clippy::expect_used, reason = "test helpers fail the test loudly")]

mod common;

use common::TestServer;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate_storage::channels::abilities;

async fn consistent(server: &TestServer, when: &str) {
    let wrong = server
        .store()
        .read(abilities::verify)
        .await
        .expect("verify");
    assert_eq!(wrong, 0, "ability index after {when}");
}

async fn channel(server: &TestServer, root: i64, id: i64) -> Value {
    let (_, body) = server.get_as(root, &format!("/api/channel/{id}")).await;
    body["data"].clone()
}

#[tokio::test]
async fn tag_edit_enable_disable_and_batch_tag() {
    let server = TestServer::start().await;
    let root = server.root().await;
    let (_, created) = server
        .post_as(
            root,
            "/api/channel/",
            json!({"mode": "batch", "channel": {"name": "t", "key": "a\nb\nc", "models": "m"}}),
        )
        .await;
    let ids: Vec<i64> = serde_json::from_value(created["data"]["ids"].clone()).expect("ids");

    let (status, resp) = server
        .post_as(
            root,
            "/api/channel/batch/tag",
            json!({"ids": [ids[0], ids[1]], "tag": "team"}),
        )
        .await;
    assert_eq!(
        (status, resp["data"].clone()),
        (StatusCode::OK, json!(2)),
        "{resp}"
    );
    let (status, resp) = server
        .post_as(
            root,
            "/api/channel/batch/tag",
            json!({"ids": [], "tag": "x"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{resp}");
    let (status, resp) = server
        .post_as(
            root,
            "/api/channel/batch/tag",
            json!({"ids": [ids[0]], "tag": " "}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{resp}");
    assert!(
        resp["message"]
            .as_str()
            .expect("message")
            .contains("tag cannot be empty")
    );
    consistent(&server, "batch tag").await;

    let (status, resp) = server
        .put_as(root, "/api/channel/tag", json!({"tag": "team"}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "no change: {resp}");
    let (status, resp) = server
        .put_as(
            root,
            "/api/channel/tag",
            json!({"tag": "team", "model_mapping": "{bad"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{resp}");
    let (status, resp) = server
        .put_as(
            root,
            "/api/channel/tag",
            json!({"tag": "team", "new_tag": "crew", "models": "m2,m3",
            "groups": ["vip"], "priority": 4, "weight": 2, "model_mapping": {"m2": "up-m2"}}),
        )
        .await;
    assert_eq!(
        (status, resp["data"].clone()),
        (StatusCode::OK, json!(2)),
        "{resp}"
    );
    let edited = channel(&server, root, ids[0]).await;
    assert_eq!(
        (
            edited["tag"].clone(),
            edited["models"].clone(),
            edited["group"].clone()
        ),
        (json!("crew"), json!("m2,m3"), json!("vip"))
    );
    assert_eq!(
        (edited["priority"].clone(), edited["weight"].clone()),
        (json!(4), json!(2))
    );
    assert_eq!(
        channel(&server, root, ids[2]).await["models"],
        "m",
        "untagged channel untouched"
    );
    consistent(&server, "tag edit").await;

    let (_, page) = server.get_as(root, "/api/channel/?tag_mode=true").await;
    assert_eq!(
        page["data"]["total"], 2,
        "tag crew + one untagged channel: {page}"
    );
    assert_eq!(page["data"]["items"].as_array().expect("items").len(), 3);

    let (_, resp) = server
        .post_as(root, "/api/channel/tag/disabled", json!({"tag": "crew"}))
        .await;
    assert_eq!(resp["data"], 2, "{resp}");
    assert_eq!(channel(&server, root, ids[1]).await["status"], 2);
    assert!(
        server.pool().table().load().route("vip", "m2").is_none(),
        "disabled tag is not routed"
    );
    consistent(&server, "tag disable").await;
    let (_, resp) = server
        .post_as(root, "/api/channel/tag/enabled", json!({"tag": "crew"}))
        .await;
    assert_eq!(resp["data"], 2, "{resp}");
    let table = server.pool().table().load_full();
    let route = table.route("vip", "m2").expect("routed again");
    assert_eq!(
        (
            route.tiers.len(),
            route.tiers[0].priority,
            route.tiers[0].channels.len()
        ),
        (1, 4, 2)
    );
    consistent(&server, "tag enable").await;
    let (status, _) = server
        .post_as(root, "/api/channel/tag/enabled", json!({}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}
