//! GitHub and LinuxDO (authorization-code flow against mock providers on loopback), the
//! Telegram login widget and the WeChat server.
#![expect(clippy::expect_used, reason = "test helpers fail the test loudly")]

mod common;

use std::collections::BTreeMap;

use common::mock_json::MockJson;
use common::oauth_browser::{Browser, urlencode};
use common::{ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::json;
use tollgate::console::service::oauth::telegram;

/// A server whose GitHub and LinuxDO addresses point at `mock`.
async fn server_with(mock: &MockJson) -> (TestServer, i64) {
    let base = mock.base.clone();
    let server = TestServer::start_with(tempfile::tempdir().expect("dir"), move |c| {
        c.github_url = base.clone();
        c.github_api_url = format!("{base}/api");
        c.linuxdo_url = base;
    })
    .await;
    let root = server.root().await;
    server
        .set_option_as(root, "ServerAddress", &server.base)
        .await;
    (server, root)
}

fn github_answers(mock: &MockJson, id: i64, login: &str) {
    mock.answer(
        "/login/oauth/access_token",
        200,
        json!({"access_token": format!("gho_{id}"), "token_type": "bearer"}),
    );
    mock.answer(
        "/api/user",
        200,
        json!({"id": id, "login": login, "name": "Mona Lisa"}),
    );
    mock.answer(
        "/api/user/emails",
        200,
        json!([
            {"email": "old@example.com", "primary": false, "verified": true},
            {"email": format!("{login}@example.com"), "primary": true, "verified": true},
        ]),
    );
}

#[tokio::test]
async fn github_signs_up_then_in_and_generates_a_name_when_the_login_is_taken() {
    let mock = MockJson::start().await;
    let (server, root) = server_with(&mock).await;
    server
        .set_option_as(root, "GitHubOAuthEnabled", "true")
        .await;
    server
        .set_option_as(root, "GitHubClientId", "gh-client")
        .await;
    server
        .set_option_as(root, "GitHubClientSecret", "gh-secret")
        .await;
    github_answers(&mock, 583_231, "octocat");

    let browser = Browser::guest(&server);
    let url = browser.start("github", "").await;
    let parsed = reqwest::Url::parse(&url).expect("url");
    assert_eq!(parsed.path(), "/login/oauth/authorize");
    let q: BTreeMap<String, String> = parsed.query_pairs().into_owned().collect();
    assert_eq!(q["client_id"], "gh-client");
    assert_eq!(q["redirect_uri"], format!("{}/oauth/github", server.base));
    assert_eq!(q["code_challenge_method"], "S256");
    let query = [
        ("code".to_owned(), "c1".to_owned()),
        ("state".to_owned(), q["state"].clone()),
    ]
    .into_iter()
    .collect();
    let (status, body) = browser.callback("github", &query).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["username"], "octocat");
    assert_eq!(body["data"]["github_id"], "583231", "the stable numeric id");
    assert_eq!(
        body["data"]["email"], "octocat@example.com",
        "primary and verified"
    );
    let first = body["data"]["id"].clone();
    let token_call = mock
        .calls()
        .into_iter()
        .find(|c| c.uri.starts_with("/login/oauth/access_token"))
        .expect("token request");
    assert!(
        token_call.auth.is_none(),
        "GitHub takes the secret in the form"
    );

    // Same GitHub account: same user.
    let mut again = Browser::guest(&server);
    let (status, body) = again.sign_in_via("github").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["id"], first);

    // Another GitHub account whose login is now a taken username.
    github_answers(&mock, 9, "octocat");
    let mut other = Browser::guest(&server);
    let (status, body) = other.sign_in_via("github").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_ne!(body["data"]["id"], first);
    let name = body["data"]["username"].as_str().expect("name");
    assert!(name.starts_with("github_"), "{name}");
    assert_eq!(body["data"]["email"], "", "that address is taken");

    // GitHub turning the code down (200 with an error field).
    mock.answer(
        "/login/oauth/access_token",
        200,
        json!({"error": "bad_verification_code"}),
    );
    let (status, body) = Browser::guest(&server).sign_in_via("github").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["message"]
            .as_str()
            .expect("m")
            .contains("bad_verification_code")
    );
}

#[tokio::test]
async fn linuxdo_applies_the_minimum_trust_level_and_binds() {
    let mock = MockJson::start().await;
    let (server, root) = server_with(&mock).await;
    server
        .set_option_as(root, "LinuxDOOAuthEnabled", "true")
        .await;
    server
        .set_option_as(root, "LinuxDOClientId", "ld-client")
        .await;
    server
        .set_option_as(root, "LinuxDOClientSecret", "ld-secret")
        .await;
    server
        .set_option_as(root, "LinuxDOMinimumTrustLevel", "2")
        .await;
    mock.answer("/oauth2/token", 200, json!({"access_token": "ld-token"}));
    mock.answer(
        "/api/user",
        200,
        json!({"id": 77, "username": "tux", "name": "Tux", "trust_level": 1, "active": true, "silenced": false}),
    );
    let (status, body) = Browser::guest(&server).sign_in_via("linuxdo").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["message"]
            .as_str()
            .expect("m")
            .contains("trust level 2"),
        "{body}"
    );
    let token_call = mock
        .calls()
        .into_iter()
        .find(|c| c.uri.starts_with("/oauth2/token"))
        .expect("token request");
    assert!(
        token_call.auth.is_some_and(|a| a.starts_with("Basic ")),
        "client credentials by HTTP Basic"
    );

    server
        .set_option_as(root, "LinuxDOMinimumTrustLevel", "1")
        .await;
    let admin = server.client_for(ROOT_USER, ROOT_PASS).await;
    let id = server.create_user(&admin, "penguin", "password123").await;
    let mut penguin = Browser::signed_in(&server, "penguin", "password123").await;
    let (status, body) = penguin.sign_in_via("linuxdo").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["message"], "bind");
    assert_eq!(body["data"]["id"], id);
    assert_eq!(body["data"]["linux_do_id"], "77");
    let (status, body) = Browser::guest(&server).sign_in_via("linuxdo").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["id"], id);
}

const BOT: &str = "123456:bot-token";

fn widget(id: &str, username: &str, auth_date: i64) -> BTreeMap<String, String> {
    let mut fields: BTreeMap<String, String> = [
        ("id", id),
        ("first_name", "Ada"),
        ("username", username),
        ("auth_date", &auth_date.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let hash = telegram::sign(&fields, BOT);
    fields.insert("hash".into(), hash);
    fields.insert("lang".into(), "zh".into());
    fields
}

fn query(fields: &BTreeMap<String, String>) -> String {
    fields
        .iter()
        .map(|(k, v)| format!("{k}={}", urlencode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64
}

#[tokio::test]
async fn telegram_checks_the_hash_and_the_date_then_signs_in_and_binds() {
    let server = TestServer::start().await;
    let root = server.root().await;
    server
        .set_option_as(root, "TelegramOAuthEnabled", "true")
        .await;
    server.set_option_as(root, "TelegramBotToken", BOT).await;
    server.set_option_as(root, "QuotaForNewUser", "500").await;

    let mut wrong = widget("4242", "ada", now());
    wrong.insert("id".into(), "1".into());
    let guest = Browser::guest(&server);
    let (status, body) = guest
        .get(&format!("/api/oauth/telegram/login?{}", query(&wrong)))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["message"].as_str().expect("m").contains("hash"),
        "{body}"
    );
    let stale = widget("4242", "ada", now() - 25 * 3600);
    let (status, body) = guest
        .get(&format!("/api/oauth/telegram/login?{}", query(&stale)))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["message"]
            .as_str()
            .expect("m")
            .contains("older than 5 minutes")
    );

    let (status, body) = guest
        .get(&format!(
            "/api/oauth/telegram/login?{}",
            query(&widget("4242", "ada", now()))
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["username"], "ada");
    assert_eq!(body["data"]["telegram_id"], "4242");
    assert_eq!(body["data"]["quota"], 500, "through the registration path");

    let admin = server.client_for(ROOT_USER, ROOT_PASS).await;
    let id = server.create_user(&admin, "zed", "password123").await;
    let zed = Browser::signed_in(&server, "zed", "password123").await;
    let (status, body) = zed
        .get(&format!(
            "/api/oauth/telegram/bind?{}",
            query(&widget("4242", "x", now()))
        ))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "bound to ada: {body}");
    let (status, body) = zed
        .get(&format!(
            "/api/oauth/telegram/bind?{}",
            query(&widget("5555", "x", now()))
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["message"], "bind");
    assert_eq!(body["data"]["id"], id);
    assert_eq!(body["data"]["telegram_id"], "5555");
}

#[tokio::test]
async fn a_telegram_payload_signs_in_once_and_only_within_five_minutes() {
    let server = TestServer::start().await;
    let root = server.root().await;
    server
        .set_option_as(root, "TelegramOAuthEnabled", "true")
        .await;
    server.set_option_as(root, "TelegramBotToken", BOT).await;
    let server = &server;
    let login = |fields: &BTreeMap<String, String>| {
        let path = format!("/api/oauth/telegram/login?{}", query(fields));
        async move { Browser::guest(server).get(&path).await }
    };

    let six_minutes_old = widget("4242", "ada", now() - 6 * 60);
    let (status, body) = login(&six_minutes_old).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("5 minutes"),
        "{body}"
    );

    let fresh = widget("4242", "ada", now() - 60);
    let (status, body) = login(&fresh).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["telegram_id"], "4242");
    let (status, body) = login(&fresh).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "a captured payload does not sign in again: {body}"
    );
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("used already"),
        "{body}"
    );
}

#[tokio::test]
async fn wechat_looks_the_code_up_on_the_wechat_server() {
    let wechat = MockJson::start().await;
    let server = TestServer::start().await;
    let root = server.root().await;
    server
        .set_option_as(root, "WeChatAuthEnabled", "true")
        .await;
    server
        .set_option_as(root, "WeChatServerAddress", &wechat.base)
        .await;
    server
        .set_option_as(root, "WeChatServerToken", "wx-token")
        .await;

    wechat.answer(
        "/api/wechat/user",
        200,
        json!({"success": true, "message": "", "data": ""}),
    );
    let guest = Browser::guest(&server);
    let (status, body) = guest.get("/api/oauth/wechat?code=000000").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["code"], "code_invalid");

    wechat.answer(
        "/api/wechat/user",
        200,
        json!({"success": true, "message": "", "data": "oWx-openid-1"}),
    );
    let (status, body) = guest.get("/api/oauth/wechat?code=123456").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["wechat_id"], "oWx-openid-1");
    assert!(
        body["data"]["username"]
            .as_str()
            .expect("n")
            .starts_with("wechat_")
    );
    let call = wechat.calls().pop().expect("lookup");
    assert_eq!(call.uri, "/api/wechat/user?code=123456");
    assert_eq!(call.auth.as_deref(), Some("wx-token"));

    let admin = server.client_for(ROOT_USER, ROOT_PASS).await;
    let id = server.create_user(&admin, "wei", "password123").await;
    let wei = Browser::signed_in(&server, "wei", "password123").await;
    let (status, body) = wei.get("/api/oauth/wechat/bind?code=123456").await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    wechat.answer(
        "/api/wechat/user",
        200,
        json!({"success": true, "message": "", "data": "oWx-openid-2"}),
    );
    let (status, body) = wei.get("/api/oauth/wechat/bind?code=654321").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["message"], "bind");
    assert_eq!(body["data"]["id"], id);
}
