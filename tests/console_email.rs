//! Mail flows against a real SMTP server on loopback, the Turnstile bot check against a local
//! verify endpoint, and the per-IP limit of the public account routes.

mod common;

use axum::routing::post;
use axum::{Form, Json, Router};
use common::smtp::SmtpServer;
use common::{Actor, ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// Setup + SMTP options pointing at `smtp`; returns root.
async fn with_smtp(server: &TestServer, smtp: &SmtpServer) -> Actor {
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    server
        .set_option(&root, "SMTPServer", json!("127.0.0.1"))
        .await;
    server
        .set_option(&root, "SMTPPort", json!(smtp.port.to_string()))
        .await;
    server
        .set_option(&root, "SMTPFrom", json!("gate@tollgate.test"))
        .await;
    // The test server speaks no TLS.
    server
        .set_option(&root, "SMTPAllowPlaintext", json!("true"))
        .await;
    root
}

/// The text between `start` and the next `end` in `body`.
#[expect(
    clippy::panic,
    clippy::expect_used,
    reason = "test helper: a malformed mail fails the test"
)]
fn between<'a>(body: &'a str, start: &str, end: &str) -> &'a str {
    let from = body
        .find(start)
        .unwrap_or_else(|| panic!("{start:?} not in mail:\n{body}"))
        + start.len();
    let len = body[from..].find(end).expect("end marker");
    &body[from..from + len]
}

#[tokio::test]
async fn email_verification_gates_registration() {
    let mut smtp = SmtpServer::start();
    let server = TestServer::start().await;
    let root = with_smtp(&server, &smtp).await;
    server
        .set_option(&root, "EmailVerificationEnabled", json!("true"))
        .await;

    let (status, body) = server.get("/api/verification?email=new%40user.test").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mail = smtp.next_mail().await;
    assert_eq!(mail.to, vec!["new@user.test".to_owned()]);
    let code = between(&mail.body, "<strong>", "</strong>").to_owned();
    assert_eq!(code.len(), 6, "a 6-character code: {code}");

    let (status, body) = server.get("/api/verification?email=new%40user.test").await;
    assert_eq!(
        status,
        StatusCode::TOO_MANY_REQUESTS,
        "one mail per 30 s per address: {body}"
    );

    let base = json!({"username": "newbie", "password": "password1", "password2": "password1", "email": "new@user.test"});
    let (status, body) = server.post("/api/user/register", base.clone()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "code required: {body}");
    let mut wrong = base.clone();
    wrong["verification_code"] = json!("ZZZZZZ");
    let (status, body) = server.post("/api/user/register", wrong).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("code_invalid"))
    );
    let mut right = base.clone();
    right["verification_code"] = json!(code.to_lowercase());
    let (status, body) = server.post("/api/user/register", right.clone()).await;
    assert_eq!(status, StatusCode::OK, "codes are case-insensitive: {body}");
    let newbie = server.client_for("newbie", "password1").await;
    assert_eq!(
        newbie.get("/api/user/self").await.1["data"]["email"],
        "new@user.test"
    );

    right["username"] = json!("again");
    let (status, _) = server.post("/api/user/register", right).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "a code works once");
    let (status, body) = server.get("/api/verification?email=NEW%40user.test").await;
    assert_eq!(status, StatusCode::CONFLICT, "the address is taken: {body}");
}

#[tokio::test]
async fn password_reset_by_mail() {
    let mut smtp = SmtpServer::start();
    let server = TestServer::start().await;
    let root = with_smtp(&server, &smtp).await;
    server.create_user(&root, "dana", "password1").await;
    let dana = server.client_for("dana", "password1").await;
    let (status, _) = server.get("/api/verification?email=dana%40user.test").await;
    assert_eq!(status, StatusCode::OK);
    let code = between(&smtp.next_mail().await.body, "<strong>", "</strong>").to_owned();
    let (status, body) = dana
        .get(&format!(
            "/api/oauth/email/bind?email=dana%40user.test&code={code}"
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "bind: {body}");
    let (_, body) = dana.get("/api/user/token").await;
    let access_token = body["data"].as_str().expect("access token").to_owned();
    let by_token = || {
        server.send(
            reqwest::Client::new()
                .get(server.url("/api/user/self"))
                .bearer_auth(&access_token)
                .header("New-Api-User", dana.id.to_string()),
        )
    };
    assert_eq!(by_token().await.0, StatusCode::OK);

    let (unknown_status, unknown) = server
        .get("/api/reset_password?email=nobody%40user.test")
        .await;
    let (known_status, known) = server
        .get("/api/reset_password?email=dana%40user.test")
        .await;
    assert_eq!(
        (unknown_status, known_status),
        (StatusCode::OK, StatusCode::OK)
    );
    assert_eq!(
        unknown["message"], known["message"],
        "the answer never reveals whether the email exists"
    );
    let mail = smtp.next_mail().await;
    assert_eq!(
        mail.to,
        vec!["dana@user.test".to_owned()],
        "only the real account got a mail"
    );
    let token = between(&mail.body, "token=", "\"").to_owned();

    let (status, _) = server
        .post(
            "/api/user/reset",
            json!({"email": "dana@user.test", "token": "forged"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, body) = server
        .post(
            "/api/user/reset",
            json!({"email": "dana@user.test", "token": token}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let new_password = body["data"].as_str().expect("new password").to_owned();
    assert_eq!(
        by_token().await.0,
        StatusCode::UNAUTHORIZED,
        "a reset by mail ends the system access token too"
    );
    server.client_for("dana", &new_password).await;
    let (status, _) = server
        .post(
            "/api/user/login",
            json!({"username": "dana", "password": "password1"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "the old password is gone");
    let (status, _) = server
        .post(
            "/api/user/reset",
            json!({"email": "dana@user.test", "token": token}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "a reset link works once");
}

#[tokio::test]
async fn mail_without_smtp_is_a_clear_error() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let (status, body) = server.get("/api/verification?email=a%40user.test").await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    assert!(body["message"].as_str().expect("m").contains("SMTP"));
}

/// A Turnstile-compatible verify endpoint that accepts the token "good".
#[expect(
    clippy::expect_used,
    reason = "test helper: failing to bind fails the test"
)]
async fn fake_turnstile() -> String {
    let app = Router::new().route(
        "/siteverify",
        post(
            |Form(form): Form<std::collections::HashMap<String, String>>| async move {
                let ok = form.get("response").map(String::as_str) == Some("good")
                    && form.get("secret").map(String::as_str) == Some("ts-secret");
                Json(json!({ "success": ok }))
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/siteverify")
}

#[tokio::test]
async fn turnstile_is_verified_server_side() {
    let verify_url = fake_turnstile().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let server = TestServer::start_with(dir, |c| c.turnstile_verify_url = verify_url).await;
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    server
        .set_option(&root, "TurnstileSecretKey", json!("ts-secret"))
        .await;
    server
        .set_option(&root, "TurnstileCheckEnabled", json!("true"))
        .await;
    let creds: Value = json!({"username": ROOT_USER, "password": ROOT_PASS});
    let (status, body) = server.post("/api/user/login", creds.clone()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "missing token: {body}");
    let (status, body) = server
        .post("/api/user/login?turnstile=bad", creds.clone())
        .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("turnstile_failed"))
    );
    let (status, body) = server.post("/api/user/login?turnstile=good", creds).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let reg = json!({"username": "tim", "password": "password1"});
    assert_eq!(
        server
            .post("/api/user/register?turnstile=bad", reg.clone())
            .await
            .0,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        server
            .post("/api/user/register?turnstile=good", reg)
            .await
            .0,
        StatusCode::OK
    );
}

#[tokio::test]
async fn public_account_routes_are_limited_per_ip() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = TestServer::start_with(dir, |c| c.critical_rate_limit = 3).await;
    server.setup_root().await;
    let wrong = json!({"username": ROOT_USER, "password": "wrong-password"});
    for _ in 0..3 {
        assert_eq!(
            server.post("/api/user/login", wrong.clone()).await.0,
            StatusCode::BAD_REQUEST
        );
    }
    let (status, body) = server.post("/api/user/login", wrong).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["code"], "too_many_requests");
    let (status, _) = server.get("/api/reset_password?email=x%40y.io").await;
    assert_eq!(
        status,
        StatusCode::TOO_MANY_REQUESTS,
        "the budget is shared by the account routes"
    );
    assert_eq!(
        server.get("/api/status").await.0,
        StatusCode::OK,
        "other routes are not limited"
    );
}
