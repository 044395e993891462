//! System access tokens and backup tokens (P16 item 6), through the public API: a system
//! access token ends with every event that ends the user's sessions (password change or reset,
//! "log out everywhere", two-factor on or off, a role change); a key reveal or a backup made
//! with one needs a two-factor verification through that same token; backup tokens are made by
//! root with a code, shown once, good for `GET /api/backup` only, audited on each use, listed
//! and revocable.

#![expect(
    clippy::expect_used,
    reason = "test helpers: a failed call fails the test"
)]

mod common;

use common::two_factor::{turn_on, verify};
use common::{Actor, ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};

const PASS: &str = "alicepass1";

/// A new system access token of `actor`.
async fn access_token(actor: &Actor) -> String {
    let (status, body) = actor.get("/api/user/token").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["data"].as_str().expect("token").to_owned()
}

/// `method path` with `token` as `Authorization: Bearer` (and `New-Api-User: id`).
async fn with_token(
    server: &TestServer,
    method: reqwest::Method,
    path: &str,
    token: &str,
    id: Option<i64>,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut req = reqwest::Client::new()
        .request(method, server.url(path))
        .bearer_auth(token);
    if let Some(id) = id {
        req = req.header("New-Api-User", id.to_string());
    }
    if let Some(body) = body {
        req = req.json(&body);
    }
    server.send(req).await
}

/// GET /api/user/self with `token`.
async fn self_by_token(server: &TestServer, token: &str, id: i64) -> StatusCode {
    with_token(
        server,
        reqwest::Method::GET,
        "/api/user/self",
        token,
        Some(id),
        None,
    )
    .await
    .0
}

/// GET /api/backup with `token`: the status, and the body's length or its JSON.
async fn backup_with(server: &TestServer, token: &str, id: Option<i64>) -> (StatusCode, String) {
    let mut req = reqwest::Client::new()
        .get(server.url("/api/backup"))
        .bearer_auth(token);
    if let Some(id) = id {
        req = req.header("New-Api-User", id.to_string());
    }
    let resp = req.send().await.expect("sent");
    let status = resp.status();
    let bytes = resp.bytes().await.expect("body");
    let text = if status.is_success() {
        format!("{} bytes", bytes.len())
    } else {
        String::from_utf8_lossy(&bytes).into_owned()
    };
    (status, text)
}

/// The audit rows of `action`.
async fn audit_rows(root: &Actor, action: &str) -> Vec<Value> {
    let (status, body) = root.get(&format!("/api/audit?action={action}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["data"]["items"].as_array().expect("rows").clone()
}

#[tokio::test]
async fn a_system_access_token_ends_with_every_event_that_ends_the_sessions() {
    let server = TestServer::start().await;
    server.root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let id = server.create_user(&root, "alice", PASS).await;
    let alice = server.client_for("alice", PASS).await;

    // A password change (the browser that made it keeps a fresh session).
    let token = access_token(&alice).await;
    assert_eq!(self_by_token(&server, &token, id).await, StatusCode::OK);
    let (status, body) = alice
        .put(
            "/api/user/self",
            json!({"original_password": PASS, "password": "alicepass2"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        self_by_token(&server, &token, id).await,
        StatusCode::UNAUTHORIZED,
        "password change"
    );

    // A password reset by an admin.
    let token = access_token(&alice).await;
    let (status, body) = root
        .put("/api/user/", json!({"id": id, "password": PASS}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        self_by_token(&server, &token, id).await,
        StatusCode::UNAUTHORIZED,
        "password reset"
    );

    // Log out everywhere.
    let alice = server.client_for("alice", PASS).await;
    let token = access_token(&alice).await;
    let (status, _) = alice.get("/api/user/logout").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        self_by_token(&server, &token, id).await,
        StatusCode::UNAUTHORIZED,
        "logout"
    );

    // Two-factor on, then off.
    let alice = server.client_for("alice", PASS).await;
    let token = access_token(&alice).await;
    let (_app, codes) = turn_on(&alice).await;
    assert_eq!(
        self_by_token(&server, &token, id).await,
        StatusCode::UNAUTHORIZED,
        "two-factor on"
    );
    let token = access_token(&alice).await;
    let (status, body) = alice
        .post("/api/user/2fa/disable", json!({"code": codes[0]}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        self_by_token(&server, &token, id).await,
        StatusCode::UNAUTHORIZED,
        "two-factor off"
    );

    // A role change.
    let token = access_token(&alice).await;
    let (status, _) = root
        .post("/api/user/manage", json!({"id": id, "action": "promote"}))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        self_by_token(&server, &token, id).await,
        StatusCode::UNAUTHORIZED,
        "role change"
    );

    // A harmless edit keeps it.
    let alice = server.client_for("alice", PASS).await;
    let token = access_token(&alice).await;
    let (status, _) = root
        .put("/api/user/", json!({"id": id, "display_name": "A"}))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(self_by_token(&server, &token, id).await, StatusCode::OK);
}

#[tokio::test]
async fn a_backup_or_key_reveal_with_an_access_token_needs_a_code_through_that_token() {
    let server = TestServer::start().await;
    server.root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let (status, body) = root
        .post(
            "/api/channel/",
            json!({"mode": "single", "channel": {"name": "up", "key": "sk-reveal-me", "models": "m"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let reveal = format!("/api/channel/{}/key", body["data"]["ids"][0]);
    let (mut app, codes) = turn_on(&root).await;
    let token = access_token(&root).await;

    let (status, said) = backup_with(&server, &token, Some(root.id)).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{said}");
    assert!(said.contains("two_factor_required"), "{said}");
    let (status, body) = with_token(
        &server,
        reqwest::Method::POST,
        &reveal,
        &token,
        Some(root.id),
        Some(json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["code"], "two_factor_required");

    // A verification of the browser's session does not verify the token.
    verify(&root, &codes[0]).await;
    let (status, said) = backup_with(&server, &token, Some(root.id)).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{said}");

    // Through the token itself, it does.
    let (status, body) = with_token(
        &server,
        reqwest::Method::POST,
        "/api/verify",
        &token,
        Some(root.id),
        Some(json!({"code": app.code()})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, said) = backup_with(&server, &token, Some(root.id)).await;
    assert_eq!(status, StatusCode::OK, "{said}");
    let (status, body) = with_token(
        &server,
        reqwest::Method::POST,
        &reveal,
        &token,
        Some(root.id),
        Some(json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["key"], "sk-reveal-me");

    let rows = audit_rows(&root, "backup.download").await;
    assert_eq!(rows.len(), 1, "one backup, one row: {rows:?}");
    assert!(
        rows[0]["after"]
            .as_str()
            .unwrap_or_default()
            .contains("access_token"),
        "{rows:?}"
    );
}

#[tokio::test]
async fn backup_tokens_are_made_with_a_code_shown_once_good_for_backups_only_and_revocable() {
    let server = TestServer::start().await;
    server.root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let create = |code: String| {
        root.post(
            "/api/user/backup_tokens",
            json!({"name": "nightly", "code": code}),
        )
    };
    let (status, body) = create("123456".into()).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(
        body["code"], "two_factor_not_enabled",
        "a backup token needs two-factor on"
    );
    let (mut app, _codes) = turn_on(&root).await;
    let (status, body) = create(app.stale_code()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "a wrong code: {body}");
    let (status, body) = create(app.code()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let token = body["data"]["token"].as_str().expect("token").to_owned();
    let token_id = body["data"]["id"].as_i64().expect("id");
    assert!(token.starts_with("tgb-"), "{token}");

    let (status, body) = root.get("/api/user/backup_tokens").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let items = body["data"].as_array().expect("list");
    assert_eq!(items.len(), 1, "{body}");
    assert_eq!(items[0]["name"], "nightly");
    assert_eq!(items[0]["last_used_at"], 0);
    assert!(
        !body.to_string().contains(&token),
        "shown once, never listed"
    );

    // Good for nothing but the backup.
    assert_eq!(
        self_by_token(&server, &token, root.id).await,
        StatusCode::UNAUTHORIZED
    );
    let (status, said) = backup_with(&server, &token, None).await;
    assert_eq!(status, StatusCode::OK, "{said}");
    let rows = audit_rows(&root, "backup.download").await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    let after = rows[0]["after"].as_str().unwrap_or_default();
    assert!(
        after.contains("backup_token") && after.contains("nightly"),
        "{after}"
    );
    assert_eq!(rows[0]["actor_name"], ROOT_USER);
    let (_, body) = root.get("/api/user/backup_tokens").await;
    assert!(
        body["data"][0]["last_used_at"].as_i64().unwrap_or(0) > 0,
        "{body}"
    );
    assert_eq!(audit_rows(&root, "backup_token.create").await.len(), 1);

    // Revoked, it stops working.
    let (status, body) = root
        .delete(&format!("/api/user/backup_tokens/{token_id}"))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, said) = backup_with(&server, &token, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{said}");
    let (_, body) = root.get("/api/user/backup_tokens").await;
    assert_eq!(body["data"].as_array().map(Vec::len), Some(0), "{body}");
    assert_eq!(audit_rows(&root, "backup_token.revoke").await.len(), 1);
}
