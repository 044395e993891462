//! User administration through the HTTP API: the authorization matrix (guest / user / admin /
//! root, admin acting on root and on another admin), paging and search, and that bans,
//! demotions and deletions take effect on the very next request.

mod common;

use common::{Actor, ROOT_PASS, ROOT_USER, TestServer, new_client};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// Root, an admin, a second admin and an ordinary user, each logged in on their own client.
struct Cast {
    root: Actor,
    admin: Actor,
    admin2: Actor,
    user: Actor,
}

async fn cast(server: &TestServer) -> Cast {
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let mut ids = Vec::new();
    for name in ["admin", "admin2", "alice"] {
        ids.push(server.create_user(&root, name, "password1").await);
    }
    for id in &ids[..2] {
        let (status, body) = root
            .post("/api/user/manage", json!({"id": id, "action": "promote"}))
            .await;
        assert_eq!(status, StatusCode::OK, "promote: {body}");
        assert_eq!(body["data"]["role"], 10);
    }
    Cast {
        root,
        admin: server.client_for("admin", "password1").await,
        admin2: server.client_for("admin2", "password1").await,
        user: server.client_for("alice", "password1").await,
    }
}

#[tokio::test]
async fn authorization_matrix() {
    let server = TestServer::start().await;
    let c = cast(&server).await;
    let (root_id, admin2_id, user_id) = (c.root.id, c.admin2.id, c.user.id);
    let guest = Actor::guest(&server);

    // (method, path, body, [guest, user, admin, root])
    let ok = StatusCode::OK;
    let (un, fb) = (StatusCode::UNAUTHORIZED, StatusCode::FORBIDDEN);
    let cases: Vec<(Method, String, Option<Value>, [StatusCode; 4])> = vec![
        (Method::GET, "/api/user/?p=1".into(), None, [un, fb, ok, ok]),
        (
            Method::GET,
            "/api/user/search?keyword=a".into(),
            None,
            [un, fb, ok, ok],
        ),
        (
            Method::GET,
            format!("/api/user/{user_id}"),
            None,
            [un, fb, ok, ok],
        ),
        (
            Method::GET,
            format!("/api/user/{root_id}"),
            None,
            [un, fb, fb, ok],
        ),
        (
            Method::GET,
            format!("/api/user/{admin2_id}"),
            None,
            [un, fb, fb, ok],
        ),
        (
            Method::PUT,
            "/api/user/".into(),
            Some(json!({"id": user_id, "display_name": "A"})),
            [un, fb, ok, ok],
        ),
        (
            Method::PUT,
            "/api/user/".into(),
            Some(json!({"id": root_id, "display_name": "R"})),
            [un, fb, fb, ok],
        ),
        (
            Method::PUT,
            "/api/user/".into(),
            Some(json!({"id": admin2_id, "quota": 5})),
            [un, fb, fb, ok],
        ),
        (
            Method::POST,
            "/api/user/manage".into(),
            Some(json!({"id": root_id, "action": "disable"})),
            [un, fb, fb, fb],
        ),
        (
            Method::POST,
            "/api/user/manage".into(),
            Some(json!({"id": root_id, "action": "delete"})),
            [un, fb, fb, fb],
        ),
        (
            Method::POST,
            "/api/user/manage".into(),
            Some(json!({"id": root_id, "action": "demote"})),
            [un, fb, fb, fb],
        ),
        (
            Method::POST,
            "/api/user/manage".into(),
            Some(json!({"id": admin2_id, "action": "disable"})),
            [un, fb, fb, ok],
        ),
        (
            Method::POST,
            "/api/user/manage".into(),
            Some(json!({"id": admin2_id, "action": "enable"})),
            [un, fb, fb, ok],
        ),
        (
            Method::POST,
            "/api/user/manage".into(),
            Some(json!({"id": user_id, "action": "promote"})),
            [un, fb, fb, ok],
        ),
        (
            Method::POST,
            "/api/user/manage".into(),
            Some(json!({"id": user_id, "action": "demote"})),
            [un, fb, fb, ok],
        ),
        (
            Method::POST,
            "/api/user/".into(),
            Some(json!({"username": "mk", "password": "password1", "role": 10})),
            [un, fb, fb, ok],
        ),
        (Method::GET, "/api/option/".into(), None, [un, fb, ok, ok]),
        (Method::GET, "/api/user/self".into(), None, [un, ok, ok, ok]),
        (Method::GET, "/api/user/aff".into(), None, [un, ok, ok, ok]),
        (
            Method::GET,
            "/api/user/self/groups".into(),
            None,
            [un, ok, ok, ok],
        ),
        (
            Method::PUT,
            "/api/user/setting".into(),
            Some(json!({"notify_type": "email"})),
            [un, ok, ok, ok],
        ),
        (
            Method::GET,
            "/api/user/token".into(),
            None,
            [un, ok, ok, ok],
        ),
    ];
    let mut user = c.user;
    for (method, path, body, expected) in cases {
        // A role change ends the user's sessions: she signs in again after such a row.
        let ends_sessions = body.as_ref().is_some_and(|b| {
            b["id"] == user_id && (b["action"] == "promote" || b["action"] == "demote")
        });
        let actors = [&guest, &user, &c.admin, &c.root];
        for (who, (actor, want)) in ["guest", "user", "admin", "root"]
            .iter()
            .zip(actors.iter().zip(expected))
        {
            // The root row must not be consumed by state changes of an earlier row: each
            // promote/demote pair above leaves the user as it was.
            let (status, answer) = actor.call(method.clone(), &path, body.clone()).await;
            assert_eq!(status, want, "{who} {method} {path}: {answer}");
        }
        if ends_sessions {
            user = server.client_for("alice", "password1").await;
        }
    }
}

#[tokio::test]
async fn admins_create_only_lower_roles_and_only_root_promotes() {
    let server = TestServer::start().await;
    let c = cast(&server).await;
    let (status, body) = c
        .admin
        .post(
            "/api/user/",
            json!({"username": "x", "password": "password1", "role": 10}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(
        body["message"]
            .as_str()
            .expect("msg")
            .contains("equal to or higher")
    );
    let (status, body) = c
        .admin
        .post("/api/user/", json!({"username": "", "password": ""}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["message"]
            .as_str()
            .expect("msg")
            .contains("must not be empty")
    );
    let (status, body) = c
        .admin
        .post(
            "/api/user/manage",
            json!({"id": c.user.id, "action": "promote"}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(
        body["message"]
            .as_str()
            .expect("msg")
            .contains("only the super admin")
    );
    let (status, _) = c
        .admin
        .post(
            "/api/user/",
            json!({"username": "bob", "password": "password1"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = c
        .admin
        .post(
            "/api/user/",
            json!({"username": "BOB", "password": "password1"}),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::CONFLICT,
        "usernames are unique case-insensitively: {body}"
    );
}

#[tokio::test]
async fn list_pages_and_search() {
    let server = TestServer::start().await;
    let c = cast(&server).await;
    for i in 0..12 {
        server
            .create_user(&c.root, &format!("user{i:02}"), "password1")
            .await;
    }
    let (_, page1) = c.admin.get("/api/user/?p=1&page_size=5").await;
    assert_eq!(page1["data"]["total"], 16);
    assert_eq!(page1["data"]["page"], 1);
    assert_eq!(page1["data"]["page_size"], 5);
    let items = page1["data"]["items"].as_array().expect("items");
    assert_eq!(items.len(), 5);
    assert_eq!(items[0]["username"], "user11", "newest first");
    assert!(
        items
            .iter()
            .all(|u| u.get("password_hash").is_none() && u.get("password").is_none())
    );
    let (_, page4) = c.admin.get("/api/user/?p=4&page_size=5").await;
    assert_eq!(page4["data"]["items"].as_array().expect("items").len(), 1);

    let (_, found) = c
        .admin
        .get("/api/user/search?keyword=USER0&page_size=100")
        .await;
    assert_eq!(found["data"]["total"], 10, "user00..user09");
    let (_, by_id) = c
        .admin
        .get(&format!("/api/user/search?keyword={}", c.user.id))
        .await;
    assert!(
        by_id["data"]["items"]
            .as_array()
            .expect("items")
            .iter()
            .any(|u| u["id"] == c.user.id)
    );
    let (_, by_group) = c.admin.get("/api/user/search?group=vip").await;
    assert_eq!(by_group["data"]["total"], 0);
}

#[tokio::test]
async fn update_validates_and_applies() {
    let server = TestServer::start().await;
    let c = cast(&server).await;
    let (status, body) = c
        .admin
        .put("/api/user/", json!({"id": c.user.id, "quota": -1}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "negative quota: {body}");
    let (status, _) = c
        .admin
        .put("/api/user/", json!({"id": c.user.id, "group": "nope"}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "unknown group");
    let (status, _) = c
        .admin
        .put("/api/user/", json!({"id": c.user.id, "password": "short"}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "short password");
    let (status, body) = c
        .admin
        .put("/api/user/", json!({"id": c.user.id, "quota": 777, "group": "vip", "display_name": "Alice", "password": "newpass123"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["quota"], 777);
    assert_eq!(body["data"]["group"], "vip");
    server.client_for("alice", "newpass123").await;
}

#[tokio::test]
async fn bans_demotions_and_deletions_apply_on_the_next_request() {
    let server = TestServer::start().await;
    let c = cast(&server).await;
    let (status, _) = c.user.get("/api/user/self").await;
    assert_eq!(status, StatusCode::OK);

    c.root
        .post(
            "/api/user/manage",
            json!({"id": c.user.id, "action": "disable"}),
        )
        .await;
    let (status, body) = c.user.get("/api/user/self").await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "banned at once, same cookie: {body}"
    );
    assert_eq!(body["code"], "user_disabled");
    let (status, body) = server
        .post(
            "/api/user/login",
            json!({"username": "alice", "password": "password1"}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "a banned user cannot log in");
    assert_eq!(body["code"], "user_disabled", "{body}");
    c.root
        .post(
            "/api/user/manage",
            json!({"id": c.user.id, "action": "enable"}),
        )
        .await;
    assert_eq!(
        c.user.get("/api/user/self").await.0,
        StatusCode::UNAUTHORIZED,
        "lifting the ban does not bring the old session back"
    );
    let user = server.client_for("alice", "password1").await;
    assert_eq!(
        user.get("/api/user/self").await.0,
        StatusCode::OK,
        "re-enabled: a new sign-in works"
    );

    let (status, _) = c.admin2.get("/api/user/?p=1").await;
    assert_eq!(status, StatusCode::OK);
    c.root
        .post(
            "/api/user/manage",
            json!({"id": c.admin2.id, "action": "demote"}),
        )
        .await;
    let (status, _) = c.admin2.get("/api/user/?p=1").await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "demoted at once: the role change ended the session"
    );
    let admin2 = server.client_for("admin2", "password1").await;
    let (status, _) = admin2.get("/api/user/?p=1").await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "signed in again, no longer an admin"
    );

    let (_, token) = user.get("/api/user/token").await;
    let token = token["data"].as_str().expect("token").to_owned();
    let (status, body) = c
        .admin
        .post(
            "/api/user/manage",
            json!({"id": c.user.id, "action": "delete"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(body["data"]["DeletedAt"].is_i64(), "{body}");
    assert_eq!(
        user.get("/api/user/self").await.0,
        StatusCode::UNAUTHORIZED,
        "session gone"
    );
    let (status, _) = server
        .send(
            new_client()
                .get(server.url("/api/user/self"))
                .header("Authorization", &token)
                .header("New-Api-User", c.user.id.to_string()),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "access token gone");
    let (status, _) = server
        .post(
            "/api/user/login",
            json!({"username": "alice", "password": "password1"}),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "a deleted user cannot log in"
    );
    let (_, shown) = c.admin.get(&format!("/api/user/{}", c.user.id)).await;
    assert!(
        shown["data"]["DeletedAt"].is_i64(),
        "the record remains, marked deregistered"
    );
}
