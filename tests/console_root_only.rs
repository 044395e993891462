//! What only root may do (issue #22 item 1): write options, read more than the named operation
//! subset, delete logs, and change where a channel's stored key is sent; and the address
//! options an admin saves can never carry script.

#![expect(clippy::expect_used, reason = "test helpers fail the test loudly")]

mod common;

use common::{Actor, ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// A server with root and an admin who is not root.
async fn root_and_admin() -> (TestServer, Actor, Actor) {
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let (status, body) = root
        .post(
            "/api/user/",
            json!({"username": "ops", "password": "opspass12", "role": 10}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let admin = server.client_for("ops", "opspass12").await;
    (server, root, admin)
}

fn keys(list: &Value) -> Vec<String> {
    list["data"]
        .as_array()
        .expect("option list")
        .iter()
        .map(|item| item["key"].as_str().expect("key").to_owned())
        .collect()
}

fn value(list: &Value, key: &str) -> Option<String> {
    list["data"]
        .as_array()
        .expect("option list")
        .iter()
        .find(|item| item["key"] == key)
        .map(|item| item["value"].as_str().expect("value").to_owned())
}

#[tokio::test]
async fn an_admin_who_is_not_root_reads_the_operation_subset_and_writes_nothing() {
    let (server, root, admin) = root_and_admin().await;
    let (status, list) = admin.get("/api/option/").await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let seen = keys(&list);
    assert!(seen.iter().any(|k| k == "QuotaPerUnit"), "{seen:?}");
    assert!(seen.iter().any(|k| k == "ModelRatio"), "{seen:?}");
    for hidden in [
        "SMTPServer",
        "SMTPAccount",
        "ServerAddress",
        "PayAddress",
        "EpayId",
        "GitHubClientId",
        "oidc.well_known",
        "Footer",
        "HomePageContent",
        "Notice",
        "Chats",
        "WorkerUrl",
    ] {
        assert!(
            !seen.iter().any(|k| k == hidden),
            "{hidden} shown to an admin"
        );
    }
    let (_, all) = root.get("/api/option/").await;
    assert!(
        keys(&all).iter().any(|k| k == "SMTPServer"),
        "root reads all"
    );

    for (key, value) in [
        ("Footer", "<img src=x onerror=alert(document.cookie)>"),
        ("SMTPServer", "smtp.attacker.example"),
        ("PayAddress", "https://pay.attacker.example"),
        ("QuotaPerUnit", "1"),
    ] {
        let (status, body) = admin
            .put("/api/option/", json!({"key": key, "value": value}))
            .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{key}: {body}");
    }
    let (_, after) = root.get("/api/option/").await;
    assert_eq!(value(&after, "Footer").as_deref(), Some(""));
    assert_eq!(value(&after, "SMTPServer").as_deref(), Some(""));
    assert_eq!(value(&after, "QuotaPerUnit").as_deref(), Some("500000"));

    server
        .set_option(&root, "Footer", json!("<b>hello</b>"))
        .await;
    let (status, _) = Actor::guest(&server)
        .get("/api/option/getCustomNavLinks")
        .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "the public option routes stay public"
    );
}

#[tokio::test]
async fn addresses_refuse_script_and_local_schemes_and_pay_address_is_http() {
    let (_server, root, _admin) = root_and_admin().await;
    for (key, value) in [
        ("PayAddress", "javascript:alert(1)"),
        ("PayAddress", "ftp://pay.example.com"),
        ("ServerAddress", " JavaScript:alert(1)"),
        ("CustomCallbackAddress", "vbscript:msgbox(1)"),
        ("Logo", "data:text/html,<script>alert(1)</script>"),
        ("TopUpLink", "file:///etc/passwd"),
        ("general_setting.docs_link", "java\tscript:alert(1)"),
        (
            "Chats",
            r#"[{"Chat":"javascript:fetch('/api/user/token')"}]"#,
        ),
        (
            "CustemNavLinks",
            r#"[{"text":"x","item_key":"x","url":"javascript:alert(1)"}]"#,
        ),
    ] {
        let (status, body) = root
            .put("/api/option/", json!({"key": key, "value": value}))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{key}={value:?}: {body}");
    }
    let (_, list) = root.get("/api/option/").await;
    assert_eq!(value(&list, "PayAddress").as_deref(), Some(""));
    assert_eq!(value(&list, "Logo").as_deref(), Some(""));
    for (key, value) in [
        ("PayAddress", "https://pay.example.com/"),
        ("Logo", "https://cdn.example.com/logo.png"),
        ("general_setting.docs_link", "https://docs.example.com"),
    ] {
        let (status, body) = root
            .put("/api/option/", json!({"key": key, "value": value}))
            .await;
        assert_eq!(status, StatusCode::OK, "{key}: {body}");
    }
}

#[tokio::test]
async fn only_root_deletes_logs() {
    let (_server, root, admin) = root_and_admin().await;
    let (status, body) = admin.delete("/api/log/?target_timestamp=1").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (status, body) = root.delete("/api/log/?target_timestamp=1").await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn an_admin_cannot_send_a_stored_key_elsewhere_without_entering_it() {
    let (_server, root, admin) = root_and_admin().await;
    let (status, body) = root
        .post(
            "/api/channel/",
            json!({"name": "c", "key": "sk-stored-secret", "models": "gpt-4o",
                   "base_url": "https://api.openai.example"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let id = body["data"]["ids"][0].as_i64().expect("id");

    for change in [
        json!({"id": id, "base_url": "https://collector.attacker.example"}),
        json!({"id": id, "proxy": "http://proxy.attacker.example:8080"}),
        json!({"id": id, "type": 8, "base_url": "https://collector.attacker.example"}),
        json!({"id": id, "base_url": "https://collector.attacker.example", "key": "  "}),
    ] {
        let (status, body) = admin.put("/api/channel/", change.clone()).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{change}: {body}");
        assert!(!body.to_string().contains("sk-stored-secret"));
    }
    let (_, stored) = root.get(&format!("/api/channel/{id}")).await;
    assert_eq!(stored["data"]["base_url"], "https://api.openai.example");
    assert_eq!(stored["data"]["proxy"], "");

    let (status, body) = admin
        .put(
            "/api/channel/",
            json!({"id": id, "priority": 3, "name": "renamed"}),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "other fields stay an admin's: {body}"
    );
    let (status, body) = admin
        .put(
            "/api/channel/",
            json!({"id": id, "base_url": "https://mirror.example", "key": "sk-admins-own"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "with the key entered again: {body}");
    let (status, body) = root
        .put(
            "/api/channel/",
            json!({"id": id, "base_url": "https://api2.openai.example"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "root may: {body}");
    let (_, stored) = root.get(&format!("/api/channel/{id}")).await;
    assert_eq!(stored["data"]["base_url"], "https://api2.openai.example");
}
