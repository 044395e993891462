//! The signed-in user's own account through the HTTP API.

mod common;

use common::{ROOT_PASS, ROOT_USER, TestServer, new_client};
use reqwest::StatusCode;
use serde_json::json;

async fn with_user(server: &TestServer) -> common::Actor {
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    server.create_user(&root, "erin", "password1").await;
    server.client_for("erin", "password1").await
}

#[tokio::test]
async fn password_change_rules() {
    let server = TestServer::start().await;
    let erin = with_user(&server).await;
    let cases = [
        (
            json!({"password": "newpass123"}),
            "original password is required",
        ),
        (
            json!({"original_password": "password1", "password": "password1"}),
            "must differ",
        ),
        (
            json!({"original_password": "password1", "password": "short"}),
            "8 to 20",
        ),
        (
            json!({"original_password": "wrongpass1", "password": "newpass123"}),
            "original password is wrong",
        ),
    ];
    for (body, expected) in cases {
        let (status, answer) = erin.put("/api/user/self", body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        assert!(
            answer["message"].as_str().expect("m").contains(expected),
            "{answer}"
        );
    }
    let (status, _) = erin
        .put("/api/user/self", json!({"original_password": "password1", "password": "newpass123", "display_name": "Erin E."}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, me) = erin.get("/api/user/self").await;
    assert_eq!(me["data"]["display_name"], "Erin E.");
    server.client_for("erin", "newpass123").await;
    let (status, _) = server
        .post(
            "/api/user/login",
            json!({"username": "erin", "password": "password1"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn system_access_token_authenticates_scripts() {
    let server = TestServer::start().await;
    let erin = with_user(&server).await;
    let (status, body) = erin.get("/api/user/token").await;
    assert_eq!(status, StatusCode::OK);
    let token = body["data"].as_str().expect("token").to_owned();
    assert!(token.len() >= 32);
    let script = new_client();
    let call = |auth: String, user: String| {
        let req = script
            .get(server.url("/api/user/self"))
            .header("Authorization", auth)
            .header("New-Api-User", user);
        server.send(req)
    };
    let id = erin.id.to_string();
    let (status, me) = call(token.clone(), id.clone()).await;
    assert_eq!(status, StatusCode::OK, "raw token: {me}");
    assert_eq!(me["data"]["username"], "erin");
    assert_eq!(
        call(format!("Bearer {token}"), id.clone()).await.0,
        StatusCode::OK,
        "Bearer prefix"
    );
    assert_eq!(
        call(token.clone(), "1".into()).await.0,
        StatusCode::UNAUTHORIZED,
        "header of another user"
    );
    let (status, body) = call("not-a-token".into(), id.clone()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["message"], "invalid access token");
    let (status, _) = server
        .send(
            script
                .get(server.url("/api/user/self"))
                .header("Authorization", &token),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "New-Api-User is mandatory"
    );

    erin.get("/api/user/token").await;
    assert_eq!(
        call(token, id).await.0,
        StatusCode::UNAUTHORIZED,
        "a new token replaces the old one"
    );
    let (_, me) = erin.get("/api/user/self").await;
    assert!(
        !me.to_string().contains("access_token"),
        "no token (or its hash) in GET answers"
    );
}

#[tokio::test]
async fn notification_settings_are_validated_and_the_secret_is_write_only() {
    let server = TestServer::start().await;
    let erin = with_user(&server).await;
    for (body, expected) in [
        (json!({"notify_type": "sms"}), "email or webhook"),
        (
            json!({"notify_type": "webhook", "webhook_url": "http://plain.example"}),
            "https://",
        ),
        (
            json!({"notify_type": "email", "quota_warning_threshold": -1}),
            "≥ 0",
        ),
        (
            json!({"notify_type": "email", "notification_email": "nope"}),
            "valid email",
        ),
    ] {
        let (status, answer) = erin.put("/api/user/setting", body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        assert!(
            answer["message"].as_str().expect("m").contains(expected),
            "{answer}"
        );
    }
    let good = json!({"notify_type": "webhook", "quota_warning_threshold": 500000, "webhook_url": "https://hooks.example/x",
                      "webhook_secret": "hook-secret-42", "accept_unset_model_ratio_model": true});
    assert_eq!(erin.put("/api/user/setting", good).await.0, StatusCode::OK);
    let (_, me) = erin.get("/api/user/self").await;
    let setting: serde_json::Value =
        serde_json::from_str(me["data"]["setting"].as_str().expect("text")).expect("json");
    assert_eq!(setting["notify_type"], "webhook");
    assert_eq!(setting["quota_warning_threshold"], 500000.0);
    assert_eq!(setting["accept_unset_model_ratio_model"], true);
    assert_eq!(setting["webhook_secret_set"], true);
    assert!(
        !me.to_string().contains("hook-secret-42"),
        "the webhook secret is never returned"
    );
    let keep = json!({"notify_type": "webhook", "webhook_url": "https://hooks.example/y", "webhook_secret": ""});
    assert_eq!(erin.put("/api/user/setting", keep).await.0, StatusCode::OK);
    let (_, me) = erin.get("/api/user/self").await;
    assert!(
        me["data"]["setting"]
            .as_str()
            .expect("text")
            .contains(r#""webhook_secret_set":true"#),
        "kept"
    );
}

#[tokio::test]
async fn deleting_ones_own_account() {
    let server = TestServer::start().await;
    let erin = with_user(&server).await;
    let (status, body) = erin.delete("/api/user/self").await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("reauth_required")),
        "a session alone does not delete the account: {body}"
    );
    let (status, body) = erin
        .call(
            reqwest::Method::DELETE,
            "/api/user/self",
            Some(json!({"password": "wrong-pass1"})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "a wrong password: {body}");
    assert_eq!(erin.get("/api/user/self").await.0, StatusCode::OK);
    let (status, body) = erin
        .call(
            reqwest::Method::DELETE,
            "/api/user/self",
            Some(json!({"password": "password1"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(erin.get("/api/user/self").await.0, StatusCode::UNAUTHORIZED);
    let (status, _) = server
        .post(
            "/api/user/login",
            json!({"username": "erin", "password": "password1"}),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "deregistered users cannot log in"
    );
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let (status, body) = root.delete("/api/user/self").await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "the super admin cannot delete themselves: {body}"
    );
}

#[tokio::test]
async fn usable_groups_come_from_the_options() {
    let server = TestServer::start().await;
    let erin = with_user(&server).await;
    let (_, groups) = erin.get("/api/user/self/groups").await;
    assert_eq!(groups["data"]["default"]["desc"], "默认分组");
    assert_eq!(groups["data"]["default"]["ratio"], 1.0);
    assert_eq!(groups["data"]["vip"]["desc"], "vip分组");
    assert!(
        groups["data"].get("svip").is_none(),
        "svip is not user-selectable by default"
    );
}

#[tokio::test]
async fn no_user_selectable_groups_offers_none_but_keeps_the_users_own_models() {
    let server = TestServer::start().await;
    let erin = with_user(&server).await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    server
        .set_option(&root, "UserUsableGroups", json!("{}"))
        .await;
    let (status, groups) = erin.get("/api/user/self/groups").await;
    assert_eq!(status, StatusCode::OK, "{groups}");
    assert_eq!(
        groups["data"],
        json!({}),
        "nothing to pick: the token editor disables its group selector"
    );
    // The user's own group still works for a key without a group.
    let (status, created) = erin
        .post(
            "/api/token/",
            json!({"name": "k", "remain_quota": 1, "expired_time": -1}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{created}");
    assert_eq!(created["success"], true, "{created}");
}
