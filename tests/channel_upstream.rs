//! Channels against a real mock upstream: fetching models, the channel test (response time,
//! health rules), auto-disable on a bad key, auto-enable through the re-test hook, the proxy
//! test (HTTP and SOCKS), and that keys never reach a log line.
#![expect(clippy::expect_used, reason = "test helpers fail the test loudly")]

mod common;

use common::TestServer;
use common::log_capture;
use common::mock_upstream::MockUpstream;
use common::socks::SocksProxy;
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn setup() -> (TestServer, i64, MockUpstream) {
    log_capture::install();
    let server = TestServer::start().await;
    let root = server.root().await;
    (server, root, MockUpstream::start().await)
}

async fn create(server: &TestServer, root: i64, body: Value) -> i64 {
    let (status, resp) = server.post_as(root, "/api/channel/", body).await;
    assert_eq!(status, StatusCode::OK, "{resp}");
    resp["data"]["ids"][0].as_i64().expect("id")
}

async fn channel(server: &TestServer, root: i64, id: i64) -> Value {
    server.get_as(root, &format!("/api/channel/{id}")).await.1["data"].clone()
}

#[tokio::test]
async fn fetch_models_from_the_upstream() {
    let (server, root, mock) = setup().await;
    mock.set_models(&["b-model", "a-model", "a-model"]);
    let (status, resp) = server
        .post_as(
            root,
            "/api/channel/fetch_models",
            json!({"base_url": mock.base, "type": 1, "key": "sk-fetch-1"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{resp}");
    assert_eq!(resp["data"], json!(["a-model", "b-model"]));
    assert_eq!(mock.last_key().as_deref(), Some("sk-fetch-1"));
    let (status, resp) = server
        .post_as(
            root,
            "/api/channel/fetch_models",
            json!({"base_url": mock.base, "type": 1}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "needs a key: {resp}");

    let id = create(
        &server,
        root,
        json!({"name": "f", "key": "sk-fetch-2", "models": "x", "base_url": mock.base}),
    )
    .await;
    let (status, resp) = server
        .get_as(root, &format!("/api/channel/fetch_models/{id}"))
        .await;
    assert_eq!(status, StatusCode::OK, "{resp}");
    assert_eq!(mock.models_calls(), 2);
    mock.accept_keys(&["other"]);
    let (status, resp) = server
        .get_as(root, &format!("/api/channel/fetch_models/{id}"))
        .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{resp}");
    assert!(
        resp["message"]
            .as_str()
            .expect("message")
            .contains("Incorrect API key"),
        "{resp}"
    );
}

#[tokio::test]
async fn channel_test_records_the_response_time() {
    let (server, root, mock) = setup().await;
    mock.set_delay(std::time::Duration::from_millis(30));
    let id = create(
        &server,
        root,
        json!({"name": "t", "key": "sk-test-ok", "models": "gpt-4o,o3",
        "base_url": mock.base, "model_mapping": {"o3": "o3-upstream"}}),
    )
    .await;
    let (status, resp) = server
        .get_as(root, &format!("/api/channel/test/{id}"))
        .await;
    assert_eq!(status, StatusCode::OK, "{resp}");
    assert_eq!(resp["success"], true, "{resp}");
    let time = resp["time"].as_f64().expect("time");
    assert!(time >= 0.03, "time in seconds: {time}");
    let body = mock.last_body().expect("body");
    assert_eq!(
        (body["model"].clone(), body["max_tokens"].clone()),
        (json!("gpt-4o"), json!(1))
    );
    let ch = channel(&server, root, id).await;
    assert!(ch["response_time"].as_i64().expect("ms") >= 30, "{ch}");
    assert!(ch["test_time"].as_i64().expect("test time") > 0);
    let (_, _) = server
        .get_as(root, &format!("/api/channel/test/{id}?model=o3"))
        .await;
    assert_eq!(
        mock.last_body().expect("body")["model"],
        "o3-upstream",
        "mapping applied"
    );

    mock.push_fault(500, json!({"error": {"message": "upstream exploded"}}));
    let (_, resp) = server
        .get_as(root, &format!("/api/channel/test/{id}"))
        .await;
    assert_eq!(resp["success"], false);
    assert!(
        resp["message"]
            .as_str()
            .expect("message")
            .contains("upstream exploded"),
        "{resp}"
    );
    assert_eq!(
        channel(&server, root, id).await["status"],
        1,
        "one 5xx does not disable"
    );
    let (status, _) = server.get_as(root, "/api/channel/test/999").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_bad_key_auto_disables_only_when_enabled_and_auto_enable_brings_it_back() {
    let (server, root, mock) = setup().await;
    mock.accept_keys(&["sk-good-key"]);
    let id = create(
        &server,
        root,
        json!({"name": "b", "key": "sk-bad-key-123", "models": "m", "base_url": mock.base}),
    )
    .await;
    let no_ban = create(
        &server,
        root,
        json!({"name": "nb", "key": "sk-bad-key-456", "models": "m",
        "base_url": mock.base, "auto_ban": 0}),
    )
    .await;

    let (_, resp) = server
        .get_as(root, &format!("/api/channel/test/{id}"))
        .await;
    assert_eq!(resp["success"], false, "{resp}");
    assert_eq!(
        channel(&server, root, id).await["status"],
        1,
        "AutomaticDisableChannelEnabled is off by default"
    );

    server
        .set_option_as(root, "AutomaticDisableChannelEnabled", "true")
        .await;
    server
        .get_as(root, &format!("/api/channel/test/{no_ban}"))
        .await;
    assert_eq!(
        channel(&server, root, no_ban).await["status"],
        1,
        "auto_ban 0 is never disabled"
    );
    server
        .get_as(root, &format!("/api/channel/test/{id}"))
        .await;
    let ch = channel(&server, root, id).await;
    assert_eq!(ch["status"], 3, "a 401 auto-disables at once: {ch}");
    let info: Value =
        serde_json::from_str(ch["other_info"].as_str().expect("other_info")).expect("json");
    assert!(
        info["status_reason"]
            .as_str()
            .expect("reason")
            .contains("401"),
        "{info}"
    );
    assert!(info["status_time"].as_i64().expect("time") > 0);
    assert!(
        server
            .pool()
            .table()
            .load()
            .channel(tollgate_storage::ChannelId(id))
            .is_none(),
        "not routed"
    );

    let summary = server.pool().retest_now().await.expect("retest");
    assert_eq!(
        (summary.tested, summary.enabled),
        (1, 0),
        "still a bad key, and auto-enable is off"
    );
    mock.accept_keys(&["sk-good-key", "sk-bad-key-123"]);
    let summary = server.pool().retest_now().await.expect("retest");
    assert_eq!(summary.enabled, 0, "AutomaticEnableChannelEnabled is off");
    server
        .set_option_as(root, "AutomaticEnableChannelEnabled", "true")
        .await;
    let summary = server.pool().retest_now().await.expect("retest");
    assert_eq!((summary.tested, summary.enabled), (1, 1));
    assert_eq!(channel(&server, root, id).await["status"], 1);
    assert!(
        server
            .pool()
            .table()
            .load()
            .channel(tollgate_storage::ChannelId(id))
            .is_some(),
        "routed again"
    );

    server
        .put_as(root, "/api/channel/", json!({"id": no_ban, "status": 2}))
        .await;
    let summary = server.pool().retest_now().await.expect("retest");
    assert_eq!(
        summary.tested, 0,
        "manually disabled channels are never re-tested"
    );
}

#[tokio::test]
async fn transient_failures_disable_after_three_in_a_row() {
    let (server, root, mock) = setup().await;
    server
        .set_option_as(root, "AutomaticDisableChannelEnabled", "true")
        .await;
    let id = create(
        &server,
        root,
        json!({"name": "f", "key": "sk-flaky-1", "models": "m", "base_url": mock.base}),
    )
    .await;
    for _ in 0..2 {
        mock.push_fault(502, json!({"error": {"message": "bad gateway"}}));
        server
            .get_as(root, &format!("/api/channel/test/{id}"))
            .await;
    }
    server
        .get_as(root, &format!("/api/channel/test/{id}"))
        .await;
    assert_eq!(
        channel(&server, root, id).await["status"],
        1,
        "a success reset the count"
    );
    for _ in 0..3 {
        mock.push_fault(503, json!({"error": {"message": "overloaded"}}));
        server
            .get_as(root, &format!("/api/channel/test/{id}"))
            .await;
    }
    let ch = channel(&server, root, id).await;
    assert_eq!(ch["status"], 3, "{ch}");
    assert!(
        ch["other_info"]
            .as_str()
            .expect("info")
            .contains("consecutive"),
        "{ch}"
    );
}

#[tokio::test]
async fn proxy_test_and_test_all() {
    let (server, root, mock) = setup().await;
    let (status, resp) = server.get_as(root, "/api/channel/test_proxy").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{resp}");
    assert!(
        resp["message"]
            .as_str()
            .expect("message")
            .contains("proxy address is required")
    );
    let (status, resp) = server
        .get_as(root, "/api/channel/test_proxy?proxy=socks4://127.0.0.1:1")
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{resp}");
    let (status, resp) = server
        .post_as(root, "/api/channel/test_proxy", json!({"proxy": mock.base}))
        .await;
    assert_eq!(status, StatusCode::OK, "POST form: {resp}");
    let (status, resp) = server
        .get_as(
            root,
            &format!("/api/channel/test_proxy?proxy={}", mock.base),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{resp}");
    assert_eq!(resp["data"]["status"], 204);
    assert_eq!(mock.probe_calls(), 2, "both checks went through the proxy");
    let (status, resp) = server
        .get_as(
            root,
            "/api/channel/test_proxy?proxy=http://proxyuser:pr0xy-pa55@127.0.0.1:1",
        )
        .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{resp}");
    assert!(
        resp["message"]
            .as_str()
            .expect("message")
            .contains("proxy connection test failed")
    );
    assert!(
        !log_capture::logs().contains("pr0xy-pa55"),
        "request logs carry no query strings"
    );

    let id = create(
        &server,
        root,
        json!({"name": "p", "key": "sk-proxied-1", "models": "m",
        "base_url": "http://upstream.invalid", "proxy": mock.base}),
    )
    .await;
    let (_, resp) = server
        .get_as(root, &format!("/api/channel/test/{id}"))
        .await;
    assert_eq!(
        resp["success"], true,
        "the channel test used the channel's proxy: {resp}"
    );

    let (status, resp) = server.get_as(root, "/api/channel/test").await;
    assert_eq!(
        (status, resp["data"]["count"].clone()),
        (StatusCode::OK, json!(1)),
        "{resp}"
    );
}

#[tokio::test]
async fn keys_never_appear_in_logs() {
    let (server, root, mock) = setup().await;
    mock.accept_keys(&["nothing"]);
    server
        .set_option_as(root, "AutomaticDisableChannelEnabled", "true")
        .await;
    let secret = "sk-log-canary-7f3a9c";
    let id = create(
        &server,
        root,
        json!({"mode": "batch", "channel": {"name": "l", "key": secret,
        "models": "m", "base_url": mock.base}}),
    )
    .await;
    server
        .put_as(
            root,
            "/api/channel/",
            json!({"id": id, "key": format!("{secret}-2")}),
        )
        .await;
    server
        .post_as(
            root,
            "/api/channel/",
            json!({"name": "", "key": secret, "models": "m"}),
        )
        .await;
    server
        .get_as(root, &format!("/api/channel/test/{id}"))
        .await;
    server
        .post_as(
            root,
            "/api/channel/fetch_models",
            json!({"base_url": mock.base, "key": secret}),
        )
        .await;
    // A key reveal needs root's second factor and a fresh verification.
    common::two_factor::turn_on_and_verify(&common::two_factor::actor_of(&server, root)).await;
    let (status, _) = server
        .post_as(root, &format!("/api/channel/{id}/key"), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "the key is revealed");
    server.pool().retest_now().await.expect("retest");
    assert_eq!(channel(&server, root, id).await["status"], 3);
    let logs = log_capture::logs();
    assert!(
        logs.contains("channel key revealed"),
        "the reveal is audited"
    );
    assert!(logs.contains("channel auto-disabled"), "the ban is logged");
    assert!(!logs.contains("sk-log-canary"), "a key reached the logs");
}

/// A channel's socks5 / socks5h proxy (with credentials) carries its tests and relayed calls.
#[tokio::test]
async fn socks_proxies_carry_channel_traffic() {
    let (server, root, mock) = setup().await;
    let socks = SocksProxy::start(Some(("alice", "s3cret"))).await;
    let id = create(
        &server,
        root,
        json!({"name": "s", "key": "sk-socks-1", "models": "gpt-4o-mini",
        "base_url": mock.base,
        "proxy": format!("socks5h://alice:s3cret@{}", socks.addr)}),
    )
    .await;
    let (_, resp) = server
        .get_as(root, &format!("/api/channel/test/{id}"))
        .await;
    assert_eq!(resp["success"], true, "{resp}");
    assert!(socks.relayed() >= 1, "the test went through the proxy");

    let bad = SocksProxy::start(Some(("alice", "other"))).await;
    let id2 = create(
        &server,
        root,
        json!({"name": "s2", "key": "sk-socks-2", "models": "gpt-4o-mini",
        "base_url": mock.base, "proxy": format!("socks5://alice:s3cret@{}", bad.addr)}),
    )
    .await;
    let (_, resp) = server
        .get_as(root, &format!("/api/channel/test/{id2}"))
        .await;
    assert_eq!(
        resp["success"], false,
        "wrong proxy credentials fail: {resp}"
    );
    assert_eq!(bad.relayed(), 0);
    assert!(
        !resp["message"]
            .as_str()
            .expect("message")
            .contains("s3cret"),
        "the proxy password is not echoed: {resp}"
    );
}
