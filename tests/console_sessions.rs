//! Server-side sessions (issue #22 item 2): logout, a password change or reset by an admin, a
//! ban, a deletion and a role change end every session of the user at once, including copies
//! of the cookie taken before; `Secure` cookies once ServerAddress is https; first-run setup
//! beyond loopback needs the one-time token from the server log.

#![expect(clippy::expect_used, reason = "test helpers fail the test loudly")]

mod common;

use common::{Actor, ROOT_PASS, ROOT_USER, TestServer, log_capture};
use reqwest::StatusCode;
use reqwest::header::{COOKIE, SET_COOKIE};
use serde_json::{Value, json};

/// A session taken as a raw cookie, as a thief holding a copy would use it.
struct Copied {
    cookie: String,
    id: i64,
}

/// Signs in with a client that keeps no cookies and returns the session cookie it was given.
async fn sign_in(server: &TestServer, username: &str, password: &str) -> Copied {
    let resp = reqwest::Client::new()
        .post(server.url("/api/user/login"))
        .json(&json!({"username": username, "password": password}))
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status(), StatusCode::OK, "login {username}");
    let cookie = session_cookie(&resp).expect("a session cookie");
    let body: Value = resp.json().await.expect("json");
    Copied {
        cookie,
        id: body["data"]["id"].as_i64().expect("id"),
    }
}

/// `session=…` from a response's Set-Cookie headers.
fn session_cookie(resp: &reqwest::Response) -> Option<String> {
    resp.headers()
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("session=") && !v.starts_with("session=;"))
        .map(|v| v.split(';').next().unwrap_or_default().to_owned())
}

async fn call(
    server: &TestServer,
    s: &Copied,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> reqwest::Response {
    let mut req = reqwest::Client::new()
        .request(method, server.url(path))
        .header(COOKIE, &s.cookie)
        .header("New-Api-User", s.id.to_string());
    if let Some(body) = body {
        req = req.json(&body);
    }
    req.send().await.expect("sent")
}

async fn me(server: &TestServer, s: &Copied) -> StatusCode {
    call(server, s, reqwest::Method::GET, "/api/user/self", None)
        .await
        .status()
}

async fn with_alice() -> (TestServer, Actor) {
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    server.create_user(&root, "alice", "alicepass1").await;
    (server, root)
}

#[tokio::test]
async fn logout_ends_every_session_of_the_user_including_copied_cookies() {
    let (server, _root) = with_alice().await;
    let laptop = sign_in(&server, "alice", "alicepass1").await;
    let phone = sign_in(&server, "alice", "alicepass1").await;
    assert_eq!(me(&server, &laptop).await, StatusCode::OK);
    assert_eq!(me(&server, &phone).await, StatusCode::OK);

    let resp = call(
        &server,
        &laptop,
        reqwest::Method::GET,
        "/api/user/logout",
        None,
    )
    .await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(
        me(&server, &laptop).await,
        StatusCode::UNAUTHORIZED,
        "the cookie that logged out, replayed"
    );
    assert_eq!(
        me(&server, &phone).await,
        StatusCode::UNAUTHORIZED,
        "another device"
    );
    let again = sign_in(&server, "alice", "alicepass1").await;
    assert_eq!(
        me(&server, &again).await,
        StatusCode::OK,
        "a new sign-in works"
    );
    let resp = call(
        &server,
        &laptop,
        reqwest::Method::GET,
        "/api/user/logout",
        None,
    )
    .await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(
        me(&server, &again).await,
        StatusCode::OK,
        "logging out with a dead cookie ends nothing"
    );
}

#[tokio::test]
async fn a_password_change_ends_the_other_sessions_and_renews_this_one() {
    let (server, _root) = with_alice().await;
    let here = sign_in(&server, "alice", "alicepass1").await;
    let stolen = sign_in(&server, "alice", "alicepass1").await;
    let resp = call(
        &server,
        &here,
        reqwest::Method::PUT,
        "/api/user/self",
        Some(json!({"original_password": "alicepass1", "password": "alicepass2"})),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::OK);
    let renewed = Copied {
        cookie: session_cookie(&resp).expect("a fresh cookie for this browser"),
        id: here.id,
    };
    assert_eq!(me(&server, &stolen).await, StatusCode::UNAUTHORIZED);
    assert_eq!(me(&server, &here).await, StatusCode::UNAUTHORIZED);
    assert_eq!(me(&server, &renewed).await, StatusCode::OK);

    let resp = call(
        &server,
        &renewed,
        reqwest::Method::PUT,
        "/api/user/self",
        Some(json!({"display_name": "Alice"})),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(
        me(&server, &renewed).await,
        StatusCode::OK,
        "a profile edit ends nothing"
    );
}

#[tokio::test]
async fn admin_actions_end_the_sessions_they_change() {
    let (server, root) = with_alice().await;
    let alice_id = sign_in(&server, "alice", "alicepass1").await.id;
    let manage = |action: &'static str| {
        let root = &root;
        async move {
            let (status, body) = root
                .post(
                    "/api/user/manage",
                    json!({"id": alice_id, "action": action}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{action}: {body}");
        }
    };

    // A ban lifted again does not bring the old cookie back (while it lasts, the old cookie
    // is told about the ban).
    let s = sign_in(&server, "alice", "alicepass1").await;
    manage("disable").await;
    assert_eq!(me(&server, &s).await, StatusCode::FORBIDDEN, "banned");
    manage("enable").await;
    assert_eq!(
        me(&server, &s).await,
        StatusCode::UNAUTHORIZED,
        "ban lifted"
    );

    // Neither does a promotion taken back: a stale admin cookie must not survive either way.
    let s = sign_in(&server, "alice", "alicepass1").await;
    manage("promote").await;
    assert_eq!(me(&server, &s).await, StatusCode::UNAUTHORIZED, "promotion");
    let s = sign_in(&server, "alice", "alicepass1").await;
    manage("demote").await;
    assert_eq!(me(&server, &s).await, StatusCode::UNAUTHORIZED, "demotion");

    // A password set by an admin.
    let s = sign_in(&server, "alice", "alicepass1").await;
    let (status, body) = root
        .put(
            "/api/user/",
            json!({"id": alice_id, "password": "resetpass9"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        me(&server, &s).await,
        StatusCode::UNAUTHORIZED,
        "new password"
    );

    // An edit that changes none of these keeps the session.
    let s = sign_in(&server, "alice", "resetpass9").await;
    let (status, body) = root
        .put("/api/user/", json!({"id": alice_id, "display_name": "A"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(me(&server, &s).await, StatusCode::OK, "a harmless edit");

    manage("delete").await;
    assert_eq!(me(&server, &s).await, StatusCode::UNAUTHORIZED, "deletion");
}

#[tokio::test]
async fn sessions_stay_ended_after_a_restart() {
    let (server, _root) = with_alice().await;
    let s = sign_in(&server, "alice", "alicepass1").await;
    let other = sign_in(&server, "alice", "alicepass1").await;
    call(
        &server,
        &other,
        reqwest::Method::GET,
        "/api/user/logout",
        None,
    )
    .await;
    let dir = server.stop().await;
    let server = TestServer::start_in(dir).await;
    assert_eq!(me(&server, &s).await, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn cookies_are_secure_once_the_server_address_is_https() {
    let (server, root) = with_alice().await;
    let login = |server: &TestServer| {
        reqwest::Client::new()
            .post(server.url("/api/user/login"))
            .json(&json!({"username": "alice", "password": "alicepass1"}))
            .send()
    };
    let resp = login(&server).await.expect("sent");
    let cookie = resp
        .headers()
        .get(SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .expect("cookie")
        .to_owned();
    assert!(!cookie.contains("Secure"), "plain http address: {cookie}");
    server
        .set_option(&root, "ServerAddress", json!("https://gw.example.com"))
        .await;
    let resp = login(&server).await.expect("sent");
    let cookie = resp
        .headers()
        .get(SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .expect("cookie")
        .to_owned();
    assert!(cookie.contains("Secure"), "{cookie}");
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
}

#[tokio::test]
async fn setup_beyond_loopback_needs_the_token_from_the_log() {
    log_capture::install();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = TestServer::start_with(dir, |config| {
        config.listen = "0.0.0.0:0".parse().expect("addr");
    })
    .await;
    let port = server.base.rsplit(':').next().expect("port").to_owned();
    server.base = format!("http://127.0.0.1:{port}");

    let (_, info) = server.get("/api/setup").await;
    assert_eq!(info["data"]["token_required"], true, "{info}");
    let root = json!({"username": ROOT_USER, "password": ROOT_PASS, "confirmPassword": ROOT_PASS});
    let (status, body) = server.post("/api/setup", root.clone()).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "no token: {body}");
    let mut wrong = root.clone();
    wrong["token"] = json!("not-the-token");
    let (status, _) = server.post("/api/setup", wrong).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "a wrong token");
    let (_, st) = server.get("/api/setup").await;
    assert_eq!(st["data"]["status"], false, "still not set up");

    let logs = log_capture::logs();
    // Every server of this binary prints a token; this one's says it listens beyond loopback.
    let token = logs
        .lines()
        .filter(|line| line.contains("listens beyond loopback"))
        .filter_map(|line| line.split("setup_token=").nth(1))
        .filter_map(|rest| rest.split_whitespace().next())
        .next_back()
        .expect("the token is in the log")
        .to_owned();
    let mut right = root;
    right["token"] = json!(token);
    let (status, body) = server.post("/api/setup", right).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, st) = server.get("/api/setup").await;
    assert_eq!(st["data"]["status"], true);
    assert_eq!(st["data"]["token_required"], false);
}

#[tokio::test]
async fn setup_on_loopback_needs_no_token() {
    let server = TestServer::start().await;
    let (_, info) = server.get("/api/setup").await;
    assert_eq!(info["data"]["token_required"], false, "{info}");
    server.setup_root().await;
}
