//! Console errors carry stable codes through the HTTP API: each area's refusal answers its
//! general `code` and its own `detail` (with `args` for what its text quotes), every code is
//! snake_case and in the list the web console keeps a zh and an en text for
//! (`web/src/api/error-codes.json`). The two-factor lock's codes are checked in
//! `console_two_factor.rs`.

mod common;

use common::{ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The codes the web console has texts for (written from the server's enum by its unit test).
fn web_codes() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/web/src/api/error-codes.json");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let codes: Vec<String> = serde_json::from_str(&text).unwrap_or_default();
    assert!(codes.len() > 100, "the web's list of codes is readable");
    codes
}

/// Checks `body` is a refusal with `code` and `detail`, both stable snake_case codes the web
/// console knows.
#[track_caller]
fn refused(body: &Value, code: &str, detail: Option<&str>, known: &[String]) {
    assert_eq!(body["success"], false, "{body}");
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["detail"].as_str(), detail, "{body}");
    for name in [body["code"].as_str(), body["detail"].as_str()]
        .into_iter()
        .flatten()
    {
        assert!(
            name.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                && !name.starts_with('_')
                && !name.ends_with('_'),
            "{name} is not snake_case"
        );
        assert!(
            known.iter().any(|k| k == name),
            "{name} is not in the web's list"
        );
    }
}

#[tokio::test]
async fn each_console_area_answers_its_own_stable_code() {
    let known = web_codes();
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let mut admins = Vec::new();
    for name in ["admin", "admin2"] {
        let id = server.create_user(&root, name, "password1").await;
        let (status, body) = root
            .post("/api/user/manage", json!({"id": id, "action": "promote"}))
            .await;
        assert_eq!(status, StatusCode::OK, "promote: {body}");
        admins.push(id);
    }
    let admin = server.client_for("admin", "password1").await;

    // Users: a permission rule.
    let (status, body) = admin
        .post(
            "/api/user/manage",
            json!({"id": admins[1], "action": "disable"}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    refused(&body, "forbidden", Some("cannot_manage_peer"), &known);
    assert!(body.get("args").is_none(), "{body}");

    // Options: validation with the arguments its text quotes.
    let (status, body) = root
        .put(
            "/api/option/",
            json!({"key": "Logo", "value": "data:image/png;base64,iVBORw0KGgo="}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    refused(
        &body,
        "invalid_request",
        Some("option_refused_scheme"),
        &known,
    );
    assert_eq!(body["args"], json!(["Logo", "data:"]), "{body}");
    assert_eq!(body["message"], "Logo may not use the data: scheme");

    // Tokens: validation.
    let (status, body) = admin
        .post(
            "/api/token/",
            json!({"name": "  ", "remain_quota": 1, "expired_time": -1}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    refused(
        &body,
        "invalid_request",
        Some("token_name_required"),
        &known,
    );

    // Channels: a record that does not exist.
    let (status, body) = root.get("/api/channel/987654").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    refused(&body, "not_found", Some("channel_not_found"), &known);

    // Channels: the key reveal needs two-factor authentication first.
    let (status, body) = root.post("/api/channel/987654/key", json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    refused(
        &body,
        "two_factor_not_enabled",
        Some("key_reveal_needs_two_factor"),
        &known,
    );

    // Personal: re-verification without two-factor on.
    let (status, body) = admin.post("/api/verify", json!({"code": "123456"})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    refused(
        &body,
        "two_factor_not_enabled",
        Some("two_factor_off"),
        &known,
    );

    // A body that does not parse: its own code, the parser's message as the argument.
    let (status, body) = admin.post("/api/token/", json!("not an object")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    refused(&body, "invalid_request", Some("body_invalid"), &known);
    assert!(
        body["args"][0].as_str().is_some_and(|a| !a.is_empty()),
        "{body}"
    );

    // Channels: a proxy address no outbound client speaks, and one without a host.
    for (proxy, detail, args) in [
        ("ftp://proxy.example:21", "proxy_scheme", json!(["ftp"])),
        ("socks5:///", "proxy_no_host", Value::Null),
    ] {
        let (status, body) = root
            .post(
                "/api/channel/",
                json!({"name": "p", "type": 1, "key": "sk-p", "models": "m", "proxy": proxy}),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{proxy}: {body}");
        refused(&body, "invalid_request", Some(detail), &known);
        assert_eq!(
            body.get("args").cloned().unwrap_or(Value::Null),
            args,
            "{body}"
        );
    }

    // Not logged in.
    let (status, body) = server.get("/api/user/self").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(
        known.iter().any(|k| body["code"] == k.as_str()),
        "{body} has a known code"
    );
}
