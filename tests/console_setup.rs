//! First-run setup and the status object, through the public HTTP API.

mod common;

use common::{ROOT_PASS, ROOT_USER, TestServer, log_capture, new_client};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn fresh_server_reports_setup_not_done() {
    let server = TestServer::start().await;
    let (status, body) = server.get("/api/status").await;
    assert_eq!(status, StatusCode::OK);
    let data = &body["data"];
    assert_eq!(data["setup"], false);
    assert_eq!(data["root_init"], false);
    assert_eq!(data["database_type"], "redb");
    assert_eq!(data["quota_per_unit"], 500_000);
    assert_eq!(data["price"], 7.3);
    for field in [
        "system_name",
        "logo",
        "footer_html",
        "display_in_currency",
        "enable_drawing",
        "enable_task",
        "enable_data_export",
        "chats",
        "data_export_default_time",
        "default_collapse_sidebar",
        "mj_notify_enabled",
        "chat_link",
        "chat_link2",
        "docs_link",
        "email_verification",
        "turnstile_check",
        "turnstile_site_key",
        "github_oauth",
        "github_client_id",
        "oidc_enabled",
        "oidc_client_id",
        "oidc_authorization_endpoint",
        "wechat_login",
        "wechat_qrcode",
        "telegram_oauth",
        "telegram_bot_name",
        "linuxdo_oauth",
        "linuxdo_client_id",
        "self_use_mode_enabled",
        "demo_site_enabled",
    ] {
        assert!(
            !data[field].is_null(),
            "status field {field} missing: {data}"
        );
    }
    let (_, setup) = server.get("/api/setup").await;
    assert_eq!(setup["data"]["status"], false);
    let dir = server.data_dir().display().to_string();
    assert!(
        setup["data"].get("data_file").is_none() && !setup.to_string().contains(&dir),
        "the public setup state names no path: {setup}"
    );
}

#[tokio::test]
async fn setup_validates_the_root_form() {
    let server = TestServer::start().await;
    let cases = [
        (
            json!({"username": "", "password": "password1", "confirmPassword": "password1"}),
            "username",
        ),
        (
            json!({"username": "root", "password": "short", "confirmPassword": "short"}),
            "8 characters",
        ),
        (
            json!({"username": "root", "password": "password1", "confirmPassword": "password2"}),
            "do not match",
        ),
        (
            json!({"username": "root", "password": "password1", "confirmPassword": "password1",
                   "SelfUseModeEnabled": true, "DemoSiteEnabled": true}),
            "usage mode",
        ),
    ];
    for (body, expected) in cases {
        let (status, answer) = server.post("/api/setup", body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body} → {answer}");
        assert_eq!(answer["success"], false);
        let message = answer["message"].as_str().expect("message");
        assert!(
            message.contains(expected),
            "{body}: message {message:?} should mention {expected}"
        );
    }
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/api/setup"))
                .header("content-type", "application/json")
                .body("{not json"),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "malformed JSON is a 400 in our shape: {answer}"
    );
    assert_eq!(answer["success"], false);
    let (_, status_body) = server.get("/api/status").await;
    assert_eq!(
        status_body["data"]["setup"], false,
        "failed attempts change nothing"
    );
}

#[tokio::test]
async fn setup_runs_once_and_records_the_usage_mode() {
    let server = TestServer::start().await;
    let (status, body) = server
        .post(
            "/api/setup",
            json!({"username": ROOT_USER, "password": ROOT_PASS, "confirmPassword": ROOT_PASS,
                   "SelfUseModeEnabled": true, "DemoSiteEnabled": false}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, st) = server.get("/api/status").await;
    assert_eq!(st["data"]["setup"], true);
    assert_eq!(st["data"]["root_init"], true);
    assert_eq!(st["data"]["self_use_mode_enabled"], true);
    assert_eq!(st["data"]["demo_site_enabled"], false);

    let (status, again) = server
        .post(
            "/api/setup",
            json!({"username": "other", "password": "password999", "confirmPassword": "password999"}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");
    assert!(
        again["message"]
            .as_str()
            .expect("message")
            .contains("already initialized")
    );
    let (_, setup) = server.get("/api/setup").await;
    assert!(
        setup["data"].get("data_file").is_none(),
        "the path is not shown after setup"
    );

    let id = server.login(ROOT_USER, ROOT_PASS).await;
    let (_, me) = server.get_as(id, "/api/user/self").await;
    assert_eq!(me["data"]["role"], 100, "the setup user is root");
    assert!(me["data"].get("password_hash").is_none() && me["data"].get("password").is_none());
}

#[tokio::test]
async fn setup_stores_the_server_address_the_page_sends() {
    let server = TestServer::start().await;
    let base = json!({"username": ROOT_USER, "password": ROOT_PASS, "confirmPassword": ROOT_PASS,
                      "SelfUseModeEnabled": false, "DemoSiteEnabled": false});
    let mut bad = base.clone();
    bad["ServerAddress"] = json!("javascript:alert(1)");
    let (status, body) = server.post("/api/setup", bad).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (_, st) = server.get("/api/status").await;
    assert_eq!(
        st["data"]["setup"], false,
        "a refused address changes nothing"
    );

    let mut good = base;
    good["ServerAddress"] = json!("https://gw.example.com/");
    let (status, body) = server.post("/api/setup", good).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, st) = server.get("/api/status").await;
    assert_eq!(
        st["data"]["server_address"], "https://gw.example.com",
        "chat links and OAuth callbacks use the address setup was given"
    );
}

#[tokio::test]
async fn setup_without_a_server_address_keeps_the_default() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let (_, st) = server.get("/api/status").await;
    assert_eq!(st["data"]["server_address"], "http://localhost:3000");
}

#[tokio::test]
async fn concurrent_setups_create_exactly_one_root() {
    let server = TestServer::start().await;
    let attempts = (0..8).map(|i| {
        let client = server.client.clone();
        let url = server.url("/api/setup");
        async move {
            let name = format!("root{i}");
            let resp = client
                .post(url)
                .json(
                    &json!({"username": name, "password": ROOT_PASS, "confirmPassword": ROOT_PASS}),
                )
                .send()
                .await
                .expect("sent");
            (name, resp.status())
        }
    });
    let results = futures_util::future::join_all(attempts).await;
    let winners: Vec<_> = results
        .iter()
        .filter(|(_, s)| *s == StatusCode::OK)
        .collect();
    assert_eq!(winners.len(), 1, "exactly one setup succeeds: {results:?}");
    assert!(
        results
            .iter()
            .all(|(_, s)| *s == StatusCode::OK || *s == StatusCode::CONFLICT),
        "the others are refused as already initialized: {results:?}"
    );
    let mut logins = 0;
    for (name, _) in &results {
        let (status, _) = server
            .send(
                new_client()
                    .post(server.url("/api/user/login"))
                    .json(&json!({"username": name, "password": ROOT_PASS})),
            )
            .await;
        if status == StatusCode::OK {
            logins += 1;
        }
    }
    assert_eq!(logins, 1, "only one root account exists");
}

#[tokio::test]
async fn setup_survives_a_restart() {
    let server = TestServer::start().await;
    server.root().await;
    let dir = server.stop().await;
    let server = TestServer::start_in(dir).await;
    let (_, st) = server.get("/api/status").await;
    assert_eq!(st["data"]["setup"], true, "setup state is persisted");
    let id = server.login(ROOT_USER, ROOT_PASS).await;
    assert_eq!(id, 1);
}

#[tokio::test]
async fn setup_creates_root_even_when_other_users_exist() {
    let dir = tempfile::tempdir().expect("tempdir");
    common::create_user(dir.path(), "early", "password1", 1).await;
    let server = TestServer::start_in(dir).await;
    let (_, st) = server.get("/api/status").await;
    assert_eq!(
        st["data"]["root_init"], false,
        "an ordinary user is not a root"
    );
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let (_, me) = root.get("/api/user/self").await;
    assert_eq!(me["data"]["role"], 100);
}

/// Every setup token the servers of this test binary printed, newest first.
fn tokens_in_the_log() -> Vec<String> {
    let mut tokens: Vec<String> = log_capture::logs()
        .lines()
        .filter_map(|line| line.split("setup_token=").nth(1))
        .filter_map(|rest| rest.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    tokens.reverse();
    tokens.dedup();
    tokens
}

/// Sets up `server` with a token from the log, sending `header` (a proxy's) on each call; the
/// tokens of other servers in this binary are refused on the way. False when none worked.
async fn set_up_with_the_logged_token(server: &TestServer, header: (&str, &str)) -> bool {
    let root = json!({"username": ROOT_USER, "password": ROOT_PASS, "confirmPassword": ROOT_PASS});
    for token in tokens_in_the_log() {
        let mut body = root.clone();
        body["token"] = json!(token);
        let (status, answer) = server
            .send(
                server
                    .client
                    .post(server.url("/api/setup"))
                    .header(header.0, header.1)
                    .json(&body),
            )
            .await;
        if status == StatusCode::OK {
            return true;
        }
        assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    }
    false
}

#[tokio::test]
async fn a_loopback_listener_behind_a_proxy_needs_the_setup_token() {
    log_capture::install();
    let root = json!({"username": ROOT_USER, "password": ROOT_PASS, "confirmPassword": ROOT_PASS});
    // The proxy headers a loopback listener may see when a reverse proxy nobody configured
    // forwards strangers to it.
    for (name, value) in [
        ("forwarded", "for=203.0.113.9;proto=https"),
        ("x-forwarded-for", "203.0.113.9"),
        ("x-real-ip", "203.0.113.9"),
    ] {
        let server = TestServer::start().await;
        let (_, plain) = server.get("/api/setup").await;
        assert_eq!(plain["data"]["token_required"], false, "{plain}");
        let (_, proxied) = server
            .send(
                server
                    .client
                    .get(server.url("/api/setup"))
                    .header(name, value),
            )
            .await;
        assert_eq!(proxied["data"]["token_required"], true, "{name}: {proxied}");
        let (status, body) = server
            .send(
                server
                    .client
                    .post(server.url("/api/setup"))
                    .header(name, value)
                    .json(&root),
            )
            .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{name}: {body}");
        let (_, st) = server.get("/api/setup").await;
        assert_eq!(st["data"]["status"], false, "{name}: still not set up");
        assert!(set_up_with_the_logged_token(&server, (name, value)).await);
        let (_, st) = server.get("/api/setup").await;
        assert_eq!(st["data"]["status"], true, "{name}");
    }
}

#[tokio::test]
async fn trusted_proxies_make_the_setup_token_required_on_loopback() {
    log_capture::install();
    let server = TestServer::start_with(tempfile::tempdir().expect("tempdir"), |config| {
        config.trusted_proxies = vec!["127.0.0.1/32".parse().expect("net")];
    })
    .await;
    let (_, info) = server.get("/api/setup").await;
    assert_eq!(info["data"]["token_required"], true, "{info}");
    let root = json!({"username": ROOT_USER, "password": ROOT_PASS, "confirmPassword": ROOT_PASS});
    let (status, body) = server.post("/api/setup", root).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "no token: {body}");
    assert!(set_up_with_the_logged_token(&server, ("accept", "application/json")).await);
    let (_, st) = server.get("/api/setup").await;
    assert_eq!(st["data"]["status"], true);
}
