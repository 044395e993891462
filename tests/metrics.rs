//! `GET /metrics` through the public HTTP API: a relayed request is counted under its channel
//! and model, a model nobody configured is "other" (whatever the client calls it), errors are
//! counted by code and upstream failures by class, the log writer's queue and commits are
//! exposed; the separate `--metrics-listen` listener serves it to anyone, the main listener only
//! to root's system access token.

#![expect(
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers: a failed call fails the test"
)]

mod common;

use std::collections::HashMap;

use common::mock_upstream::MockUpstream;
use common::relay_fixture::chat;
use common::{Actor, ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::json;

/// A server with the separate metrics listener and one OpenAI channel on `mock` serving gpt-4o;
/// returns (server, root, the channel id, a paying user's key).
async fn fixture(mock: &MockUpstream) -> (TestServer, Actor, i64, String) {
    let server = TestServer::start_with(tempfile::tempdir().expect("tempdir"), |c| {
        c.metrics_listen = Some("127.0.0.1:0".parse().expect("addr"));
    })
    .await;
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let (status, body) = root
        .post(
            "/api/channel/",
            json!({"name": "mock", "type": 1, "key": "upstream-key-1",
            "base_url": mock.base, "models": "gpt-4o,gpt-4o-mini", "group": "default"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "channel: {body}");
    let (_, list) = root.get("/api/channel/?p=0&page_size=10").await;
    let channel = list["data"]["items"][0]["id"].as_i64().expect("channel id");
    let payer_id = server.create_user(&root, "payer", "password1").await;
    let (status, body) = root
        .put("/api/user/", json!({"id": payer_id, "quota": 50_000_000}))
        .await;
    assert_eq!(status, StatusCode::OK, "quota: {body}");
    let payer = server.client_for("payer", "password1").await;
    let (_, token) = payer
        .post(
            "/api/token/",
            json!({"name": "k", "remain_quota": 50_000_000}),
        )
        .await;
    let id = token["data"]["id"].as_i64().expect("token id");
    let (_, full) = payer.post(&format!("/api/token/{id}/key"), json!({})).await;
    let key = full["data"]["key"].as_str().expect("key").to_owned();
    (server, root, channel, key)
}

/// The exposition from the separate listener, checked for its content type.
async fn scrape(server: &TestServer) -> String {
    let base = server.metrics_base.as_ref().expect("metrics listener");
    let resp = server
        .client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .expect("scraped");
    assert_eq!(resp.status(), StatusCode::OK);
    let content_type = resp.headers()["content-type"].to_str().expect("ascii");
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    resp.text().await.expect("text")
}

/// `name{labels}` → value, for every sample line.
fn samples(text: &str) -> HashMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            Some((series.to_owned(), value.parse().ok()?))
        })
        .collect()
}

fn sample(all: &HashMap<String, f64>, series: &str) -> f64 {
    *all.get(series)
        .unwrap_or_else(|| panic!("no {series} in {all:#?}"))
}

#[tokio::test]
async fn a_relayed_chat_is_counted_under_its_channel_and_model() {
    let mock = MockUpstream::start().await;
    let (server, root, channel, key) = fixture(&mock).await;
    let (status, body) = chat(
        &server,
        &key,
        json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = chat(
        &server,
        &key,
        json!({"model": "gpt-4o", "stream": true,
               "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // An upstream failure: counted as failed on the channel, by class.
    mock.push_fault(429, json!({"error": {"message": "slow down"}}));
    let (status, _) = chat(
        &server,
        &key,
        json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    // A model nobody configured, admitted at the default ratio: no channel serves it.
    server
        .set_option(&root, "SelfUseModeEnabled", json!("true"))
        .await;
    let odd = "made-up-model\"}\nx";
    let (status, _) = chat(
        &server,
        &key,
        json!({"model": odd, "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    // A key nobody issued.
    let (status, _) = chat(&server, "sk-nobody", json!({"model": "gpt-4o"})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    server.flush().await;

    let text = scrape(&server).await;
    let all = samples(&text);
    let on = |name: &str, extra: &str| {
        sample(
            &all,
            &format!("{name}{{channel=\"{channel}\",model=\"gpt-4o\"{extra}}}"),
        )
    };
    assert_eq!(
        on("tollgate_relay_requests_total", ",outcome=\"answered\""),
        2.0
    );
    assert_eq!(
        on("tollgate_relay_requests_total", ",outcome=\"failed\""),
        1.0
    );
    assert_eq!(on("tollgate_relay_request_duration_seconds_count", ""), 2.0);
    assert_eq!(
        on("tollgate_relay_time_to_first_token_seconds_count", ""),
        1.0,
        "the streamed answer"
    );
    assert_eq!(
        sample(
            &all,
            &format!(
                "tollgate_relay_request_duration_seconds_bucket{{channel=\"{channel}\",model=\"gpt-4o\",le=\"+Inf\"}}"
            )
        ),
        2.0
    );
    // The quota counter is what the payer was charged.
    let charged = on("tollgate_relay_quota_consumed_total", "");
    assert!(charged > 0.0, "quota counted: {charged}");
    let (_, users) = root.get("/api/user/?p=0&page_size=10").await;
    let used: i64 = users["data"]["items"]
        .as_array()
        .expect("users")
        .iter()
        .filter(|u| u["username"] == "payer")
        .filter_map(|u| u["used_quota"].as_i64())
        .sum();
    assert_eq!(charged, used as f64, "the counter is the charge");
    assert_eq!(
        sample(
            &all,
            "tollgate_relay_requests_total{channel=\"none\",model=\"other\",outcome=\"failed\"}"
        ),
        1.0,
        "an unconfigured model is other"
    );
    assert!(
        !text.contains("made-up-model"),
        "a client's model name never becomes a label"
    );
    assert_eq!(
        sample(
            &all,
            "tollgate_relay_upstream_errors_total{class=\"rate_limit\"}"
        ),
        1.0
    );
    assert_eq!(
        sample(
            &all,
            "tollgate_relay_errors_total{code=\"invalid_api_key\"}"
        ),
        1.0
    );
    assert_eq!(
        sample(
            &all,
            "tollgate_relay_errors_total{code=\"model_not_available\"}"
        ),
        1.0
    );
    assert_eq!(on("tollgate_relay_active_streams", ""), 0.0);
    assert!(sample(&all, "tollgate_log_writer_commit_seconds_count") >= 1.0);
    assert_eq!(
        sample(&all, "tollgate_log_writer_queue_depth"),
        0.0,
        "everything flushed is committed"
    );
}

/// A new system access token of `actor`.
async fn token_of(actor: &Actor) -> String {
    let (status, body) = actor.get("/api/user/token").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["data"].as_str().expect("token").to_owned()
}

#[tokio::test]
async fn metrics_on_the_main_listener_need_roots_access_token() {
    let mock = MockUpstream::start().await;
    let (server, root, _, _) = fixture(&mock).await;
    let get = |auth: Option<String>| {
        let mut req = server.client.get(server.url("/metrics"));
        if let Some(auth) = auth {
            req = req.header("Authorization", auth);
        }
        async move {
            let resp = req.send().await.expect("sent");
            let status = resp.status();
            (status, resp.text().await.expect("body"))
        }
    };
    assert_eq!(get(None).await.0, StatusCode::UNAUTHORIZED, "no token");
    assert_eq!(
        get(Some("Bearer not-a-token".into())).await.0,
        StatusCode::UNAUTHORIZED,
        "unknown token"
    );
    let payer = server.client_for("payer", "password1").await;
    let (status, body) = get(Some(format!("Bearer {}", token_of(&payer).await))).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "a user: {body}");
    assert!(!body.contains("tollgate_relay"), "{body}");
    let admin_id = server.create_user(&root, "admin", "password1").await;
    let (status, body) = root
        .post(
            "/api/user/manage",
            json!({"id": admin_id, "action": "promote"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "promote: {body}");
    let admin = server.client_for("admin", "password1").await;
    let (status, _) = get(Some(format!("Bearer {}", token_of(&admin).await))).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "an admin who is not root");
    let (status, body) = get(Some(format!("Bearer {}", token_of(&root).await))).await;
    assert_eq!(status, StatusCode::OK, "root: {body}");
    assert!(
        body.contains("# TYPE tollgate_log_writer_queue_depth gauge"),
        "{body}"
    );
    // The separate listener serves the same exposition without a token, and nothing else.
    let base = server.metrics_base.clone().expect("metrics listener");
    let other = server
        .client
        .get(format!("{base}/api/status"))
        .send()
        .await
        .expect("sent");
    assert_eq!(other.status(), StatusCode::NOT_FOUND);
    assert!(
        scrape(&server)
            .await
            .contains("# TYPE tollgate_relay_requests_total counter")
    );
}
