//! GET/PUT /api/option/: admin only, validated, secrets write-only, published at once.

mod common;

use common::{TestServer, new_client};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate_storage::users::{self, NewUser};
use tollgate_storage::{Quota, Store};

#[expect(
    clippy::expect_used,
    reason = "test helper: a malformed list fails the test"
)]
fn option<'a>(list: &'a Value, key: &str) -> Option<&'a str> {
    list["data"]
        .as_array()
        .expect("list")
        .iter()
        .find(|item| item["key"] == key)
        .and_then(|item| item["value"].as_str())
}

#[tokio::test]
async fn options_need_an_admin_session_with_the_user_header() {
    let server = TestServer::start().await;
    let (status, _) = server.get("/api/option/").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "guest");
    let (status, _) = server
        .send(
            new_client()
                .put(server.url("/api/option/"))
                .json(&json!({"key": "SystemName", "value": "x"})),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "guest PUT");

    let root = server.root().await;
    let (status, body) = server.get("/api/option/").await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "cookie without New-Api-User: {body}"
    );
    let (status, _) = server.get_as(root + 1, "/api/option/").await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "header naming another user"
    );
    let (status, _) = server
        .send(
            server
                .client
                .get(server.url("/api/option/"))
                .header("New-Api-User", "abc"),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "malformed header");
    let (status, body) = server.get_as(root, "/api/option/").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(option(&body, "QuotaPerUnit"), Some("500000"));
    assert_eq!(option(&body, "Price"), Some("7.3"));
    assert_eq!(option(&body, "MinTopUp"), Some("1"));
}

#[tokio::test]
async fn ordinary_users_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let store = Store::open_dir(dir.path()).expect("open");
        let hash = tollgate::console::service::password::Hasher::spawn()
            .expect("hashing thread")
            .hash("alicepass1".into())
            .await
            .expect("hash");
        store
            .write_blocking(move |wtx| {
                users::insert(
                    wtx,
                    NewUser {
                        username: "alice".into(),
                        display_name: String::new(),
                        password_hash: hash,
                        email: String::new(),
                        role: users::ROLE_COMMON,
                        group: "default".into(),
                        quota: Quota(0),
                        aff_code: String::new(),
                        inviter_id: 0,
                        created_at: 0,
                    },
                )
            })
            .expect("insert");
    }
    let server = TestServer::start_in(dir).await;
    let (status, body) = server
        .post(
            "/api/user/login",
            json!({"username": "alice", "password": "alicepass1"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let id = body["data"]["id"].as_i64().expect("id");
    let (status, body) = server.get_as(id, "/api/option/").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (status, _) = server
        .put_as(
            id,
            "/api/option/",
            json!({"key": "SystemName", "value": "pwned"}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (_, st) = server.get("/api/status").await;
    assert_eq!(st["data"]["system_name"], "Tollgate");
}

#[tokio::test]
async fn updates_are_validated_and_published() {
    let server = TestServer::start().await;
    let root = server.root().await;
    let refused = [
        (
            json!({"key": "GroupRatio", "value": "{oops"}),
            "not a valid JSON string",
        ),
        (
            json!({"key": "RegisterEnabled", "value": "maybe"}),
            "true or false",
        ),
        (json!({"key": "RetryTimes", "value": "-1"}), "at least 0"),
        (json!({"key": "QuotaPerUnit", "value": "lots"}), "integer"),
        (json!({"key": "MinTopUp", "value": 0}), "at least 1"),
        (
            json!({"key": "oidc.well_known", "value": "ftp://x"}),
            "http://",
        ),
        (
            json!({"key": "NoSuchOption", "value": "1"}),
            "unknown option",
        ),
    ];
    for (body, expected) in refused {
        let (status, answer) = server.put_as(root, "/api/option/", body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body} → {answer}");
        let message = answer["message"].as_str().expect("message");
        assert!(
            message.contains(expected),
            "{body}: {message:?} should contain {expected:?}"
        );
    }

    for (key, value) in [
        ("SystemName", json!("My Gate")),
        ("ServerAddress", json!("https://gw.example.com/")),
        ("RegisterEnabled", json!(false)),
        ("Price", json!(8.5)),
        ("GroupRatio", json!(r#"{"default":1,"vip":2}"#)),
        ("SMTPToken", json!("smtp-password-123")),
        ("EpayKey", json!("epay-key-456")),
    ] {
        let (status, answer) = server
            .put_as(root, "/api/option/", json!({"key": key, "value": value}))
            .await;
        assert_eq!(status, StatusCode::OK, "{key}: {answer}");
    }
    let (_, list) = server.get_as(root, "/api/option/").await;
    assert_eq!(
        option(&list, "ServerAddress"),
        Some("https://gw.example.com"),
        "trailing slash stripped"
    );
    assert_eq!(option(&list, "RegisterEnabled"), Some("false"));
    assert_eq!(
        option(&list, "GroupRatio"),
        Some(r#"{"default":1,"vip":2}"#)
    );
    let text = list.to_string();
    assert!(
        !text.contains("smtp-password-123") && !text.contains("epay-key-456"),
        "secrets leak: {text}"
    );
    assert!(option(&list, "SMTPToken").is_none() && option(&list, "EpayKey").is_none());

    let (_, st) = server.get("/api/status").await;
    assert_eq!(
        st["data"]["system_name"], "My Gate",
        "published immediately"
    );
    assert_eq!(st["data"]["price"], 8.5);
    assert_eq!(st["data"]["register_enabled"], false);

    let dir = server.stop().await;
    let server = TestServer::start_in(dir).await;
    let (_, st) = server.get("/api/status").await;
    assert_eq!(
        st["data"]["system_name"], "My Gate",
        "options survive a restart"
    );
}
