//! Registration through the HTTP API: switches, rules, invite rewards.

mod common;

use common::{ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::json;

fn reg(username: &str, password: &str) -> serde_json::Value {
    json!({"username": username, "password": password, "password2": password})
}

#[tokio::test]
async fn registration_rules() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let cases = [
        (reg("", "password1"), "username is required"),
        (reg("thirteenchars", "password1"), "at most 12"),
        (reg("bob", "short"), "8 to 20"),
        (reg("bob", "123456789012345678901"), "8 to 20"),
        (
            json!({"username": "bob", "password": "password1", "password2": "password2"}),
            "do not match",
        ),
        (reg(ROOT_USER, "password1"), "already exists"),
    ];
    for (body, expected) in cases {
        let (status, answer) = server.post("/api/user/register", body.clone()).await;
        assert!(status.is_client_error(), "{body}: {status}");
        let message = answer["message"].as_str().expect("message");
        assert!(
            message.contains(expected),
            "{body}: {message:?} should contain {expected:?}"
        );
    }
    let (status, body) = server
        .post("/api/user/register", reg("bob", "password1"))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let bob = server.client_for("bob", "password1").await;
    let (_, me) = bob.get("/api/user/self").await;
    assert_eq!(me["data"]["role"], 1);
    assert_eq!(me["data"]["group"], "default");
    assert_eq!(
        me["data"]["aff_code"].as_str().expect("code").len(),
        8,
        "every user gets an invite code"
    );
}

#[tokio::test]
async fn switches_and_self_use_mode_refuse_registration() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    for (key, message) in [
        ("RegisterEnabled", "closed new registrations"),
        ("PasswordRegisterEnabled", "registration with a password"),
    ] {
        server.set_option(&root, key, json!("false")).await;
        let (status, body) = server
            .post("/api/user/register", reg("carol", "password1"))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{key}: {body}");
        assert!(
            body["message"].as_str().expect("m").contains(message),
            "{body}"
        );
        server.set_option(&root, key, json!("true")).await;
    }
    server
        .set_option(&root, "SelfUseModeEnabled", json!("true"))
        .await;
    let (status, body) = server
        .post("/api/user/register", reg("carol", "password1"))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["message"].as_str().expect("m").contains("self-use"),
        "{body}"
    );
}

#[tokio::test]
async fn invites_reward_both_sides() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    server
        .set_option(&root, "QuotaForNewUser", json!("100"))
        .await;
    server
        .set_option(&root, "QuotaForInvitee", json!("50"))
        .await;
    server
        .set_option(&root, "QuotaForInviter", json!("700000"))
        .await;
    server
        .post("/api/user/register", reg("inviter", "password1"))
        .await;
    let inviter = server.client_for("inviter", "password1").await;
    let (_, code) = inviter.get("/api/user/aff").await;
    let code = code["data"].as_str().expect("code").to_owned();

    let mut body = reg("invitee", "password1");
    body["aff_code"] = json!(code);
    let (status, answer) = server.post("/api/user/register", body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let invitee = server.client_for("invitee", "password1").await;
    let (_, me) = invitee.get("/api/user/self").await;
    assert_eq!(
        me["data"]["quota"], 150,
        "QuotaForNewUser + QuotaForInvitee"
    );
    assert_eq!(me["data"]["inviter_id"], inviter.id);

    let mut stranger = reg("stranger", "password1");
    stranger["aff_code"] = json!("no-such-code");
    assert_eq!(
        server.post("/api/user/register", stranger).await.0,
        StatusCode::OK,
        "unknown codes are ignored"
    );

    let (_, me) = inviter.get("/api/user/self").await;
    assert_eq!(me["data"]["aff_count"], 1);
    assert_eq!(me["data"]["aff_quota"], 700_000);
    assert_eq!(me["data"]["aff_history_quota"], 700_000);
    assert_eq!(me["data"]["quota"], 100);

    let (status, body) = inviter
        .post("/api/user/aff_transfer", json!({"quota": 499_999}))
        .await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "below one QuotaPerUnit: {body}"
    );
    assert!(body["message"].as_str().expect("m").contains("500000"));
    let (status, _) = inviter
        .post("/api/user/aff_transfer", json!({"quota": 800_000}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "more than earned");
    let (status, body) = inviter
        .post("/api/user/aff_transfer", json!({"quota": 600_000}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, me) = inviter.get("/api/user/self").await;
    assert_eq!(me["data"]["aff_quota"], 100_000);
    assert_eq!(me["data"]["quota"], 600_100);
    assert_eq!(
        me["data"]["aff_history_quota"], 700_000,
        "history is not reduced by transfers"
    );
}
