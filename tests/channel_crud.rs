//! /api/channel/ administration: create (single, batch), validation, write-only keys, the
//! audited key reveal, update, copy, delete, search and paging, the ability index, groups,
//! and who may call what.

#![expect(clippy::expect_used, reason = "test helpers fail the test loudly")]

mod common;

use common::{ROOT_PASS, TestServer, create_user, new_client, two_factor};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate_storage::channels::abilities;
use tollgate_storage::users::ROLE_COMMON;

async fn admin() -> (TestServer, i64) {
    let server = TestServer::start().await;
    let root = server.root().await;
    (server, root)
}

async fn create(server: &TestServer, root: i64, body: Value) -> Vec<i64> {
    let (status, resp) = server.post_as(root, "/api/channel/", body).await;
    assert_eq!(status, StatusCode::OK, "create: {resp}");
    assert_eq!(resp["success"], true, "create: {resp}");
    resp["data"]["ids"]
        .as_array()
        .expect("ids")
        .iter()
        .map(|v| v.as_i64().expect("id"))
        .collect()
}

async fn assert_index_consistent(server: &TestServer, when: &str) {
    let wrong = server
        .store()
        .read(abilities::verify)
        .await
        .expect("verify");
    assert_eq!(
        wrong, 0,
        "ability index disagrees with the channels after {when}"
    );
}

async fn enabled_models(server: &TestServer, root: i64) -> Vec<String> {
    let (_, body) = server.get_as(root, "/api/channel/models_enabled").await;
    serde_json::from_value(body["data"].clone()).expect("models")
}

#[tokio::test]
async fn create_single_and_batch_and_keys_are_never_returned() {
    let (server, root) = admin().await;
    let ids = create(
        &server,
        root,
        json!({"mode": "single", "channel": {"name": "one", "key": "sk-single-1\nsk-single-2",
            "models": "gpt-4o,gpt-4o-mini", "base_url": "https://api.example.com/"}}),
    )
    .await;
    assert_eq!(
        ids.len(),
        1,
        "single mode: one channel whatever the key lines"
    );
    let batch = create(
        &server,
        root,
        json!({"mode": "batch", "channel": {"name": "many", "key": "sk-b1\nsk-b2\n\nsk-b3", "models": "o3"}}),
    )
    .await;
    assert_eq!(batch.len(), 3, "batch: one channel per key line");
    let bare = create(
        &server,
        root,
        json!({"name": "bare", "key": "sk-bare", "models": ["m"]}),
    )
    .await;
    assert_eq!(bare.len(), 1, "a bare channel object is accepted");
    assert_index_consistent(&server, "creates").await;

    let (status, got) = server
        .get_as(root, &format!("/api/channel/{}", ids[0]))
        .await;
    assert_eq!(status, StatusCode::OK, "{got}");
    let ch = &got["data"];
    assert_eq!(ch["key"], "", "get never returns the key");
    assert_eq!(
        (ch["key_set"].clone(), ch["key_count"].clone()),
        (json!(true), json!(2))
    );
    assert_eq!(
        ch["base_url"], "https://api.example.com",
        "trailing slash removed"
    );
    assert_eq!(
        (
            ch["type"].clone(),
            ch["auto_ban"].clone(),
            ch["group"].clone()
        ),
        (json!(1), json!(1), json!("default"))
    );
    assert_eq!(
        (
            ch["priority"].clone(),
            ch["weight"].clone(),
            ch["status"].clone()
        ),
        (json!(0), json!(0), json!(1))
    );

    let (_, list) = server.get_as(root, "/api/channel/?p=1&page_size=100").await;
    let (_, search) = server
        .get_as(root, "/api/channel/search?keyword=many")
        .await;
    for body in [&got, &list, &search] {
        let text = body.to_string();
        assert!(
            !text.contains("sk-single") && !text.contains("sk-b") && !text.contains("sk-bare"),
            "{text}"
        );
    }
    assert_eq!(search["data"]["total"], 3);
    let mut models = enabled_models(&server, root).await;
    models.sort();
    assert_eq!(models, vec!["gpt-4o", "gpt-4o-mini", "m", "o3"]);
}

#[tokio::test]
async fn validation_messages() {
    let (server, root) = admin().await;
    let cases = [
        (json!({"key": "k", "models": "m"}), "name is required"),
        (json!({"name": "n", "models": "m"}), "key is required"),
        (
            json!({"name": "n", "key": "k", "models": ""}),
            "at least one model",
        ),
        (
            json!({"name": "n", "key": "k", "models": "m", "model_mapping": "{bad"}),
            "model_mapping is not a valid JSON",
        ),
        (
            json!({"name": "n", "key": "k", "models": "m", "status_code_mapping": "[]"}),
            "status_code_mapping",
        ),
        (
            json!({"name": "n", "key": "k", "models": "m", "param_override": "x"}),
            "param_override",
        ),
        (
            json!({"name": "n", "key": "k", "models": "m", "type": 77}),
            "unknown channel type",
        ),
        (
            json!({"name": "n", "key": "k", "models": "m", "priority": -1000}),
            "at least -999",
        ),
        (
            json!({"name": "n", "key": "k", "models": "m", "weight": -1}),
            "weight must be at least 0",
        ),
        (
            json!({"name": "n", "key": "k", "models": "m", "priority": "soon"}),
            "not an integer",
        ),
        (
            json!({"mode": "sideways", "channel": {"name": "n", "key": "k", "models": "m"}}),
            "unknown mode",
        ),
    ];
    for (body, expected) in cases {
        let (status, resp) = server.post_as(root, "/api/channel/", body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body} → {resp}");
        assert_eq!(resp["success"], false);
        let message = resp["message"].as_str().expect("message");
        assert!(
            message.contains(expected),
            "{body}: {message:?} should contain {expected:?}"
        );
    }
    let (status, resp) = server
        .post_as(
            root,
            "/api/channel/",
            json!({"name": "s", "key": "app，1|secret|key", "models": "m", "type": 18}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{resp}");
    assert!(
        resp["message"].as_str().expect("notice").contains("commas"),
        "{resp}"
    );
    let id = resp["data"]["ids"][0].as_i64().expect("id");
    let (_, got) = server.get_as(root, &format!("/api/channel/{id}")).await;
    assert_eq!(
        got["data"]["other"], "v2.1",
        "type 18 defaults other to v2.1"
    );
    let (_, list) = server.get_as(root, "/api/channel/").await;
    assert_eq!(list["data"]["total"], 1, "refused creates stored nothing");
}

#[tokio::test]
async fn update_full_and_partial_and_an_empty_key_keeps_the_key() {
    let (server, root) = admin().await;
    let id = create(
        &server,
        root,
        json!({"name": "a", "key": "sk-keep-me", "models": "m1"}),
    )
    .await[0];
    let (status, resp) = server
        .put_as(
            root,
            "/api/channel/",
            json!({"id": id, "name": "renamed", "key": "", "models": "m2,m3",
            "group": "vip", "priority": 5, "weight": 3, "tag": "t"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{resp}");
    assert_eq!(resp["data"]["name"], "renamed");
    assert_eq!(resp["data"]["key"], "");
    assert_index_consistent(&server, "a full update").await;
    assert_eq!(enabled_models(&server, root).await, vec!["m2", "m3"]);

    let (status, resp) = server
        .put_as(root, "/api/channel/", json!({"id": id, "status": 2}))
        .await;
    assert_eq!(status, StatusCode::OK, "{resp}");
    let ch = &resp["data"];
    assert_eq!(
        (
            ch["status"].clone(),
            ch["priority"].clone(),
            ch["models"].clone()
        ),
        (json!(2), json!(5), json!("m2,m3"))
    );
    assert!(
        enabled_models(&server, root).await.is_empty(),
        "a disabled channel is not routed"
    );
    assert_index_consistent(&server, "a status update").await;
    let (_, resp) = server
        .put_as(
            root,
            "/api/channel/",
            json!({"id": id, "status": 1, "weight": "7"}),
        )
        .await;
    assert_eq!(resp["data"]["weight"], 7);
    let table = server.pool().table().load_full();
    let routed = table
        .channel(tollgate_storage::ChannelId(id))
        .expect("routed again");
    assert_eq!(
        routed
            .next_key()
            .map(|(_, k)| k.expose().to_owned())
            .as_deref(),
        Some("sk-keep-me"),
        "key kept"
    );

    let (status, resp) = server
        .put_as(root, "/api/channel/", json!({"id": id, "priority": -1000}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{resp}");
    let (status, _) = server
        .put_as(root, "/api/channel/", json!({"id": 999, "status": 1}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn key_reveal_needs_root_and_a_second_factor() {
    let first = TestServer::start().await;
    first.setup_root().await;
    let dir = first.stop().await;
    create_user(dir.path(), "admin2", "adminpass1", 10).await;
    let server = TestServer::start_in(dir).await;
    let root = server.login(common::ROOT_USER, ROOT_PASS).await;
    let id = create(
        &server,
        root,
        json!({"name": "a", "key": "sk-reveal-this", "models": "m"}),
    )
    .await[0];
    let path = format!("/api/channel/{id}/key");
    let (status, resp) = server.post_as(root, &path, json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{resp}");
    assert_eq!(resp["code"], "two_factor_not_enabled");
    assert!(!resp.to_string().contains("sk-reveal"));
    let root_actor = two_factor::actor_of(&server, root);
    let (mut app, _) = two_factor::turn_on(&root_actor).await;
    let (status, resp) = server.post_as(root, &path, json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{resp}");
    assert_eq!(resp["code"], "two_factor_required");
    two_factor::verify(&root_actor, &app.code()).await;
    let (status, resp) = server.post_as(root, &path, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{resp}");
    assert_eq!(resp["data"]["key"], "sk-reveal-this");

    let other = new_client();
    let (_, me) = server
        .send(
            other
                .post(server.url("/api/user/login"))
                .json(&json!({"username": "admin2", "password": "adminpass1"})),
        )
        .await;
    let admin_id = me["data"]["id"].as_i64().expect("admin id");
    let (status, _) = server
        .send(
            other
                .post(server.url(&path))
                .header("New-Api-User", admin_id.to_string())
                .json(&json!({"password": "adminpass1"})),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "an admin who is not root may not reveal keys"
    );
    let (status, list) = server
        .send(
            other
                .get(server.url("/api/channel/"))
                .header("New-Api-User", admin_id.to_string()),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "admins manage channels: {list}");
}

#[tokio::test]
async fn delete_one_disabled_and_batch() {
    let (server, root) = admin().await;
    let ids = create(
        &server,
        root,
        json!({"mode": "batch", "channel": {"name": "x", "key": "a\nb\nc\nd\ne", "models": "m"}}),
    )
    .await;
    let (status, _) = server
        .delete_as(root, &format!("/api/channel/{}/", ids[0]))
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = server
        .delete_as(root, &format!("/api/channel/{}", ids[1]))
        .await;
    assert_eq!(status, StatusCode::OK, "without the trailing slash too");
    let (status, _) = server
        .delete_as(root, &format!("/api/channel/{}", ids[1]))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    server
        .put_as(root, "/api/channel/", json!({"id": ids[2], "status": 2}))
        .await;
    let (_, resp) = server.delete_as(root, "/api/channel/disabled").await;
    assert_eq!(resp["data"], 1, "{resp}");
    let (status, resp) = server
        .post_as(root, "/api/channel/batch", json!({"ids": []}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{resp}");
    let (_, resp) = server
        .post_as(
            root,
            "/api/channel/batch",
            json!({"ids": [ids[3], ids[4], 12345]}),
        )
        .await;
    assert_eq!(resp["data"], 2, "{resp}");
    let (_, list) = server.get_as(root, "/api/channel/").await;
    assert_eq!(list["data"]["total"], 0);
    assert_index_consistent(&server, "deletes").await;
    assert!(
        server
            .store()
            .read(abilities::list)
            .await
            .expect("rows")
            .is_empty()
    );
}

#[tokio::test]
async fn search_paging_copy_and_fix() {
    let (server, root) = admin().await;
    for i in 0..12 {
        let group = if i % 2 == 0 { "default" } else { "vip" };
        create(
            &server,
            root,
            json!({"name": format!("chan-{i:02}"), "key": "k", "models": format!("model-{}", i % 3),
            "group": group, "priority": i}),
        )
        .await;
    }
    let (_, page) = server.get_as(root, "/api/channel/?p=2&page_size=5").await;
    let data = &page["data"];
    assert_eq!(
        (
            data["total"].clone(),
            data["page"].clone(),
            data["page_size"].clone()
        ),
        (json!(12), json!(2), json!(5))
    );
    let names: Vec<&str> = data["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|c| c["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        names,
        vec!["chan-06", "chan-05", "chan-04", "chan-03", "chan-02"],
        "priority order"
    );
    let (_, page) = server
        .get_as(root, "/api/channel/?p=3&page_size=5&id_sort=true")
        .await;
    assert_eq!(page["data"]["items"].as_array().expect("items").len(), 2);
    let (_, found) = server
        .get_as(root, "/api/channel/search?group=vip&model=model-1")
        .await;
    assert_eq!(found["data"]["total"], 2, "{found}");
    let (_, found) = server
        .get_as(root, "/api/channel/search?keyword=CHAN-1")
        .await;
    assert_eq!(found["data"]["total"], 2, "chan-10 and chan-11: {found}");
    let (status, bad) = server.get_as(root, "/api/channel/?p=x").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");

    let (status, copied) = server
        .post_as(root, "/api/channel/copy/1?suffix=-dup", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{copied}");
    let new_id = copied["data"]["id"].as_i64().expect("id");
    let (_, got) = server.get_as(root, &format!("/api/channel/{new_id}")).await;
    assert_eq!(got["data"]["name"], "chan-00-dup");
    let (status, _) = server
        .post_as(root, "/api/channel/copy/999", json!({}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    server
        .store()
        .write(|wtx| -> Result<(), tollgate_storage::StorageError> {
            wtx.open_table(tollgate_storage::tables::ABILITIES)?
                .remove(("default", "model-0", 1))?;
            Ok(())
        })
        .await
        .expect("damage the index");
    let (status, fixed) = server.post_as(root, "/api/channel/fix", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{fixed}");
    assert_eq!(fixed["data"]["channels"], 13);
    assert_eq!(fixed["data"]["repaired"], 1);
    assert_index_consistent(&server, "fix").await;
}

#[tokio::test]
async fn groups_come_from_group_ratio_sorted() {
    let (server, root) = admin().await;
    let (_, resp) = server.get_as(root, "/api/group/").await;
    assert_eq!(resp["data"], json!(["default", "svip", "vip"]));
    server
        .set_option_as(root, "GroupRatio", r#"{"zeta":1,"alpha":2}"#)
        .await;
    let (_, resp) = server.get_as(root, "/api/group/").await;
    assert_eq!(resp["data"], json!(["alpha", "zeta"]));
}

#[tokio::test]
async fn guests_get_401_and_common_users_403() {
    let dir = tempfile::tempdir().expect("tempdir");
    create_user(dir.path(), "alice", "alicepass1", ROLE_COMMON).await;
    let server = TestServer::start_in(dir).await;
    let paths = [
        "/api/channel/",
        "/api/channel/search",
        "/api/channel/1",
        "/api/channel/models",
        "/api/channel/models_enabled",
        "/api/channel/test/1",
        "/api/channel/test",
        "/api/group/",
        "/api/channel/update_balance",
        "/api/channel/fetch_models/1",
        "/api/channel/test_proxy?proxy=http://x",
    ];
    for path in paths {
        let (status, _) = server.get(path).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "guest {path}");
    }
    let (status, _) = server
        .post(
            "/api/channel/",
            json!({"name": "n", "key": "k", "models": "m"}),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let alice = server.login("alice", "alicepass1").await;
    for path in paths {
        let (status, _) = server.get_as(alice, path).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "common user {path}");
    }
    let (status, _) = server
        .post_as(
            alice,
            "/api/channel/",
            json!({"name": "n", "key": "k", "models": "m"}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = server.delete_as(alice, "/api/channel/disabled").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = server
        .post_as(
            alice,
            "/api/channel/1/key",
            json!({"password": "alicepass1"}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}
