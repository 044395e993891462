//! Two-factor (TOTP) sign-in (issue #22 item 2), through the public API: turning it on needs
//! a code from the new secret and ends the user's other sessions; then a password alone issues
//! no session, and the pending sign-in completes once, with a current code (never a replayed
//! one) or a recovery code (each good once); turning it off needs a code; revealing a channel
//! key needs it on and a verification of the session within 5 minutes; an admin can reset it
//! (audited).

mod common;

use common::two_factor::{Authenticator, second_step, sign_in, turn_on, verify};
use common::{Actor, ROOT_PASS, ROOT_USER, TestServer, new_client};
use reqwest::StatusCode;
use serde_json::{Value, json};

const PASS: &str = "alicepass1";

/// A server with root signed in and alice created; returns root and alice (signed in).
async fn with_alice() -> (TestServer, Actor, Actor) {
    with_alice_on(tollgate::clock::Clock::default()).await
}

/// [`with_alice`] on a server whose clock is `clock`.
async fn with_alice_on(clock: tollgate::clock::Clock) -> (TestServer, Actor, Actor) {
    let server = TestServer::start_with(
        tempfile::tempdir().unwrap_or_else(|e| unreachable!("tempdir: {e}")),
        |c| c.clock = clock,
    )
    .await;
    server.root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    server.create_user(&root, "alice", PASS).await;
    let alice = server.client_for("alice", PASS).await;
    (server, root, alice)
}

/// The password step in a new client: the client and the answer.
async fn password_step(
    server: &TestServer,
    username: &str,
    password: &str,
) -> (reqwest::Client, Value) {
    let client = new_client();
    let (status, body) = server
        .send(
            client
                .post(server.url("/api/user/login"))
                .json(&json!({"username": username, "password": password})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    (client, body)
}

/// GET /api/user/self from `client` as `id`.
async fn self_status(server: &TestServer, client: &reqwest::Client, id: i64) -> StatusCode {
    server
        .send(
            client
                .get(server.url("/api/user/self"))
                .header("New-Api-User", id.to_string()),
        )
        .await
        .0
}

#[tokio::test]
async fn turning_on_needs_a_code_and_then_the_password_alone_signs_nobody_in() {
    let (server, _root, alice) = with_alice().await;
    let elsewhere = server.client_for("alice", PASS).await;
    let (status, body) = alice.get("/api/user/2fa/status").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["enabled"], false);

    let (status, body) = alice
        .post("/api/user/2fa/setup", json!({"password": PASS}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let secret = body["data"]["secret"].as_str().expect("secret").to_owned();
    let uri = body["data"]["qr_code_data"].as_str().expect("uri");
    assert!(uri.starts_with("otpauth://totp/"), "{uri}");
    assert!(uri.contains(&format!("secret={secret}")), "{uri}");
    let mut app = Authenticator::new(&secret);

    // Not active before it is confirmed: the password still signs in.
    let (_, body) = password_step(&server, "alice", PASS).await;
    assert_eq!(body["data"]["username"], "alice", "{body}");
    let (status, body) = alice
        .post("/api/user/2fa/enable", json!({"code": app.stale_code()}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["code"], "code_invalid");
    let (_, body) = alice.get("/api/user/2fa/status").await;
    assert_eq!(
        body["data"]["enabled"], false,
        "a wrong code turns nothing on"
    );

    let (status, body) = alice
        .post("/api/user/2fa/enable", json!({"code": app.code()}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let codes = body["data"]["backup_codes"].as_array().expect("codes");
    assert_eq!(codes.len(), 10, "{body}");
    let (_, body) = alice.get("/api/user/2fa/status").await;
    assert_eq!(body["data"]["enabled"], true, "{body}");
    assert_eq!(body["data"]["backup_codes_remaining"], 10);
    assert_eq!(
        self_status(&server, &elsewhere.client, elsewhere.id).await,
        StatusCode::UNAUTHORIZED,
        "turning two-factor on ends the other sessions"
    );
    assert_eq!(
        self_status(&server, &alice.client, alice.id).await,
        StatusCode::OK,
        "the browser that turned it on keeps a session"
    );

    // The password alone: no session, a pending sign-in.
    let (client, body) = password_step(&server, "alice", PASS).await;
    assert_eq!(body["data"]["require_2fa"], true, "{body}");
    assert!(body["data"].get("id").is_none(), "{body}");
    assert_eq!(
        self_status(&server, &client, alice.id).await,
        StatusCode::UNAUTHORIZED,
        "no session before the code"
    );
    let (status, body) = second_step(&server, &client, &app.stale_code()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "wrong code: {body}");
    let (status, body) = second_step(&server, &client, &app.last_code()).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "the code that turned it on is spent: {body}"
    );
    assert_eq!(
        self_status(&server, &client, alice.id).await,
        StatusCode::UNAUTHORIZED
    );
    let (status, body) = second_step(&server, &client, &app.code()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["username"], "alice");
    assert_eq!(
        self_status(&server, &client, alice.id).await,
        StatusCode::OK
    );
    // The pending sign-in is spent, and the same code does not sign in a second browser.
    let (status, _) = second_step(&server, &client, codes[0].as_str().expect("code")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "single use");
    let (other, _) = password_step(&server, "alice", PASS).await;
    let (status, body) = second_step(&server, &other, &app.last_code()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "replayed code: {body}");
    // Without a pending sign-in there is nothing to complete.
    let (status, _) = second_step(&server, &new_client(), &app.last_code()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn recovery_codes_work_once_and_can_be_replaced() {
    let (server, _root, alice) = with_alice().await;
    let (mut app, codes) = turn_on(&alice).await;
    let browser = sign_in(&server, "alice", PASS, &codes[0]).await;
    assert_eq!(
        self_status(&server, &browser.client, alice.id).await,
        StatusCode::OK
    );
    let (client, _) = password_step(&server, "alice", PASS).await;
    let (status, body) = second_step(&server, &client, &codes[0]).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "a recovery code works once: {body}"
    );
    let (_, body) = alice.get("/api/user/2fa/status").await;
    assert_eq!(body["data"]["backup_codes_remaining"], 9);

    let (status, _) = alice
        .post(
            "/api/user/2fa/backup_codes",
            json!({"code": app.stale_code()}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "new codes need a code");
    let (status, body) = alice
        .post("/api/user/2fa/backup_codes", json!({"code": app.code()}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let fresh: Vec<String> = body["data"]["backup_codes"]
        .as_array()
        .expect("codes")
        .iter()
        .map(|c| c.as_str().expect("code").to_owned())
        .collect();
    assert_eq!(fresh.len(), 10);
    let (status, _) = second_step(&server, &client, &codes[1]).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "the old codes stopped working"
    );
    let (status, body) = second_step(&server, &client, &fresh[0].to_uppercase()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn a_pending_sign_in_survives_only_a_few_wrong_codes() {
    let clock = tollgate::clock::Clock::stopped();
    let (server, _root, alice) = with_alice_on(clock.clone()).await;
    let (app, codes) = turn_on(&alice).await;
    let (client, _) = password_step(&server, "alice", PASS).await;
    for _ in 0..5 {
        let (status, _) = second_step(&server, &client, &app.stale_code()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
    }
    let (status, body) = second_step(&server, &client, &codes[0]).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "after five wrong codes even a good one needs a new sign-in: {body}"
    );
    // The account's next code waits a second (the per-account count), then it signs in.
    let (client, _) = password_step(&server, "alice", PASS).await;
    let (status, body) = second_step(&server, &client, &codes[0]).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["code"], "two_factor_wait", "{body}");
    clock.advance(2);
    let browser = sign_in(&server, "alice", PASS, &codes[0]).await;
    assert_eq!(
        self_status(&server, &browser.client, alice.id).await,
        StatusCode::OK
    );
}

#[tokio::test]
async fn turning_off_needs_a_code_and_ends_the_other_sessions() {
    let (server, _root, alice) = with_alice().await;
    let (app, codes) = turn_on(&alice).await;
    let elsewhere = sign_in(&server, "alice", PASS, &codes[0]).await;
    let (status, body) = alice
        .post("/api/user/2fa/disable", json!({"code": app.stale_code()}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = alice.post("/api/user/2fa/disable", json!({})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = alice
        .post("/api/user/2fa/disable", json!({"code": codes[1]}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        self_status(&server, &elsewhere.client, alice.id).await,
        StatusCode::UNAUTHORIZED,
        "turning it off ends the other sessions"
    );
    assert_eq!(
        self_status(&server, &alice.client, alice.id).await,
        StatusCode::OK
    );
    let (_, body) = password_step(&server, "alice", PASS).await;
    assert_eq!(
        body["data"]["username"], "alice",
        "no code asked any more: {body}"
    );
}

#[tokio::test]
async fn revealing_a_channel_key_needs_two_factor_and_a_recent_verification() {
    let (server, root, _alice) = with_alice().await;
    let (status, body) = root
        .post(
            "/api/channel/",
            json!({"mode": "single", "channel": {"name": "up", "key": "sk-reveal-me", "models": "m"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let path = format!("/api/channel/{}/key", body["data"]["ids"][0]);
    let (status, body) = root.post(&path, json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["code"], "two_factor_not_enabled", "{body}");

    let (mut app, codes) = turn_on(&root).await;
    let (status, body) = root.post(&path, json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["code"], "two_factor_required", "{body}");
    assert!(!body.to_string().contains("sk-reveal-me"));
    let (status, _) = root
        .post("/api/verify", json!({"code": app.stale_code()}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = root.post(&path, json!({})).await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "a failed verification verifies nothing"
    );
    verify(&root, &app.code()).await;
    let (status, body) = root.post(&path, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["key"], "sk-reveal-me");

    // The verification belongs to that session, not to root's other sessions.
    let other = sign_in(&server, ROOT_USER, ROOT_PASS, &codes[0]).await;
    let (status, body) = other.post(&path, json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (status, _) = other
        .post("/api/verify", json!({"code": app.last_code()}))
        .await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "a replayed code does not verify"
    );
    verify(&other, &codes[1]).await;
    let (status, _) = other.post(&path, json!({})).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn an_admin_resets_a_users_two_factor_audited_and_cannot_touch_a_higher_role() {
    let (server, root, alice) = with_alice().await;
    let (_app, _codes) = turn_on(&alice).await;
    let (status, body) = root.get("/api/user/2fa/stats").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["enabled_users"], 1);
    assert_eq!(body["data"]["total_users"], 2);

    let (status, body) = root.delete(&format!("/api/user/{}/2fa", alice.id)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        self_status(&server, &alice.client, alice.id).await,
        StatusCode::UNAUTHORIZED,
        "a reset ends the user's sessions"
    );
    let (_, body) = password_step(&server, "alice", PASS).await;
    assert_eq!(body["data"]["username"], "alice", "no code asked: {body}");
    let (status, _) = root.delete(&format!("/api/user/{}/2fa", alice.id)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "nothing left to reset");

    let (status, body) = root.get("/api/audit?action=user.").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let rows = body["data"]["items"].as_array().expect("rows");
    let target = format!("user:{}", alice.id);
    let row = rows
        .iter()
        .find(|r| r["action"] == "user.2fa.reset" && r["target"] == target)
        .unwrap_or_else(|| panic!("no user.2fa.reset row in {body}"));
    assert_eq!(row["actor_name"], ROOT_USER);

    // An admin who is not root cannot reset root's.
    let (status, _) = root
        .post(
            "/api/user/manage",
            json!({"id": alice.id, "action": "promote"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let admin = server.client_for("alice", PASS).await;
    let (status, body) = admin.delete(&format!("/api/user/{}/2fa", root.id)).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
}

/// The password step from `client` at the forwarded address `addr`.
async fn password_step_from(
    server: &TestServer,
    client: &reqwest::Client,
    addr: &str,
) -> (StatusCode, Value) {
    server
        .send(
            client
                .post(server.url("/api/user/login"))
                .header("X-Forwarded-For", addr)
                .json(&json!({"username": "alice", "password": PASS})),
        )
        .await
}

/// The code step from `client` at the forwarded address `addr`.
async fn second_step_from(
    server: &TestServer,
    client: &reqwest::Client,
    addr: &str,
    code: &str,
) -> (StatusCode, Value) {
    server
        .send(
            client
                .post(server.url("/api/user/login/2fa"))
                .header("X-Forwarded-For", addr)
                .json(&json!({"code": code})),
        )
        .await
}

#[tokio::test]
async fn wrong_codes_from_many_addresses_lock_the_accounts_second_step_for_an_hour() {
    let clock = tollgate::clock::Clock::stopped();
    let server_clock = clock.clone();
    // Set up first: behind trusted proxies setup needs the one-time token.
    let server = TestServer::start_with(TestServer::set_up_dir().await, move |c| {
        c.clock = server_clock;
        c.trusted_proxies = vec!["127.0.0.0/8".parse().expect("cidr")];
    })
    .await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    server.create_user(&root, "alice", PASS).await;
    let alice = server.client_for("alice", PASS).await;
    let (mut app, _codes) = turn_on(&alice).await;

    // 30 wrong codes, each from an address of its own (its own pending sign-in).
    let mut answers = Vec::new();
    for i in 1..=30 {
        let addr = format!("198.51.100.{i}");
        let client = new_client();
        let (status, body) = password_step_from(&server, &client, &addr).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["data"]["require_2fa"], true, "{body}");
        let (status, body) = second_step_from(&server, &client, &addr, &app.stale_code()).await;
        assert_ne!(status, StatusCode::OK, "attempt {i}: {body}");
        answers.push(body["code"].as_str().unwrap_or_default().to_owned());
    }
    assert!(
        answers[..5].iter().all(|c| c == "code_invalid"),
        "five wrong codes are just wrong: {answers:?}"
    );
    assert!(
        answers[5..19].iter().all(|c| c == "two_factor_wait"),
        "then the next has to wait (the clock stands still): {answers:?}"
    );
    assert!(
        answers[19..].iter().all(|c| c == "two_factor_locked"),
        "the twentieth within the hour locks: {answers:?}"
    );

    // The right code, from yet another address, is refused naming the lock.
    let client = new_client();
    let addr = "203.0.113.7";
    let (status, _) = password_step_from(&server, &client, addr).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = second_step_from(&server, &client, addr, &app.code()).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["code"], "two_factor_locked", "{body}");
    assert_eq!(body["detail"], "two_factor_locked_for", "{body}");
    assert_eq!(body["args"], json!(["60"]), "the minutes left: {body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("locked"),
        "{body}"
    );
    let (status, body) = alice
        .post("/api/verify", json!({"code": app.last_code()}))
        .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::TOO_MANY_REQUESTS, Some("two_factor_locked")),
        "the lock covers re-verification too: {body}"
    );

    // An hour later it signs in.
    clock.advance(3_601);
    let (status, _) = password_step_from(&server, &client, addr).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = second_step_from(&server, &client, addr, &app.last_code()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["username"], "alice");
}

#[tokio::test]
async fn setting_up_two_factor_asks_for_the_password_again() {
    let (_server, _root, alice) = with_alice().await;
    for body in [json!({}), json!({"password": "not-her-pass"})] {
        let (status, answer) = alice.post("/api/user/2fa/setup", body.clone()).await;
        assert_eq!(
            (status, answer["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some("reauth_required")),
            "a session alone ({body}) starts no setup: {answer}"
        );
    }
    let (status, body) = alice.get("/api/user/2fa/status").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["data"]["pending"], false, "no secret was made: {body}");
    let (status, body) = alice
        .post("/api/user/2fa/setup", json!({"password": PASS}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}
