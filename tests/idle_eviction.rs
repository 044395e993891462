//! What is kept in memory per key and per user follows use, not the installation (P17 item 3):
//! an API key's entry unused for a sweep period is dropped and read back on the key's next
//! request; a key that was never stored is refused without a storage read; a user's ledger
//! idle for a period is dropped and rebuilt exactly (balance, the key's remaining quota, the
//! budget windows' spend) on the next request. The sweep period is injected
//! (`idle_evict_ms`); the reads and evictions are read from `/metrics`.

#![expect(
    clippy::expect_used,
    clippy::panic,
    reason = "integration test: a failed call fails the test"
)]

mod common;

use std::time::Duration;

use common::TestServer;
use common::mock_upstream::MockUpstream;
use common::relay_fixture::{balances, chat, fixture, hi_max};
use futures_util::StreamExt;
use rand::distr::{Alphanumeric, SampleString};
use reqwest::StatusCode;
use serde_json::json;

/// A server sweeping idle entries every `idle_ms`, with `/metrics` on its own listener.
async fn server(idle_ms: u64) -> TestServer {
    TestServer::start_with(tempfile::tempdir().expect("tempdir"), |c| {
        c.idle_evict_ms = idle_ms;
        c.metrics_listen = Some("127.0.0.1:0".parse().expect("addr"));
    })
    .await
}

/// The value of the metric line `name` (no labels).
async fn metric(server: &TestServer, name: &str) -> u64 {
    let base = server.metrics_base.as_ref().expect("metrics listener");
    let text = server
        .client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .expect("scraped")
        .text()
        .await
        .expect("text");
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("{name} not in the exposition"))
        .trim()
        .parse()
        .expect("a number")
}

/// Polls `name` every 20 ms until it is `want` (at most 10 s).
async fn wait_for(server: &TestServer, name: &str, want: u64) {
    for _ in 0..500 {
        if metric(server, name).await == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{name} never became {want}");
}

/// GET /v1/models with `key`: the status.
async fn models(server: &TestServer, key: &str) -> StatusCode {
    server
        .client
        .get(server.url("/v1/models"))
        .bearer_auth(key)
        .send()
        .await
        .expect("sent")
        .status()
}

#[tokio::test]
async fn a_key_evicted_while_idle_authenticates_on_its_next_request() {
    let server = server(50).await;
    let (_root, _payer, key) = fixture(&server, &[], 1_000_000, 500_000).await;
    assert_eq!(models(&server, &key).await, StatusCode::OK);
    // Unused for a whole period: dropped (the key's digest stays).
    wait_for(&server, "tollgate_token_entries", 0).await;
    assert!(metric(&server, "tollgate_token_evictions_total").await >= 1);
    let loads = metric(&server, "tollgate_token_loads_total").await;
    assert_eq!(models(&server, &key).await, StatusCode::OK);
    assert_eq!(
        metric(&server, "tollgate_token_loads_total").await,
        loads + 1,
        "the entry was read back once"
    );
    // A wrong key next to it is still refused.
    assert_eq!(
        models(&server, &format!("{key}x")).await,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn ten_thousand_random_keys_cause_no_storage_read() {
    let server = server(600_000).await;
    let (_root, _payer, key) = fixture(&server, &[], 1_000_000, 500_000).await;
    assert_eq!(models(&server, &key).await, StatusCode::OK);
    let loads = metric(&server, "tollgate_token_loads_total").await;
    let refused = futures_util::stream::iter(0..10_000)
        .map(|_| {
            let random = format!("sk-{}", Alphanumeric.sample_string(&mut rand::rng(), 48));
            let server = &server;
            async move { models(server, &random).await }
        })
        .buffer_unordered(32)
        .filter(|status| std::future::ready(*status == StatusCode::UNAUTHORIZED))
        .count()
        .await;
    assert_eq!(refused, 10_000);
    assert_eq!(
        metric(&server, "tollgate_token_loads_total").await,
        loads,
        "no storage read for an unknown key"
    );
    assert!(metric(&server, "tollgate_token_digests").await >= 1);
}

#[tokio::test]
async fn an_evicted_users_next_request_is_billed_exactly_and_its_budget_still_holds() {
    const MODEL: &str = "claude-test";
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((10_000, 0, 0)));
    let server = server(50).await;
    let channel = json!({"name": "c", "type": 1, "key": "upstream-key-1", "base_url": mock.base,
                         "models": MODEL, "group": "default"});
    let (root, payer, key) = fixture(&server, &[channel], 100_000_000, 50_000_000).await;
    assert_eq!(
        chat(&server, &key, hi_max(MODEL, 5)).await.0,
        StatusCode::OK
    );
    let (start, cost, _, _) = balances(&server, payer.id).await;
    assert!(cost > 100, "a request costs something: {cost}");
    // A rolling month of 2.5 requests, one spent already.
    let limit = cost * 5 / 2;
    let (status, body) = root
        .put(
            &format!("/api/user/{}/budget", payer.id),
            json!({"windows": [{"period": "month", "rolling": true, "limit": limit}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // Each request after the ledgers were dropped: read back, admitted while the window has
    // anything left, billed the same cost, the spend carried over.
    for n in 2..=3 {
        wait_for(&server, "tollgate_ledgers", 0).await;
        let loads = metric(&server, "tollgate_ledger_loads_total").await;
        assert_eq!(
            chat(&server, &key, hi_max(MODEL, 5)).await.0,
            StatusCode::OK,
            "request {n}"
        );
        assert!(metric(&server, "tollgate_ledger_loads_total").await > loads);
        let (quota, used, _, logs) = balances(&server, payer.id).await;
        assert_eq!(quota, start + cost - n * cost, "request {n} billed exactly");
        assert_eq!(used, n * cost);
        assert_eq!(logs[0].quota, cost);
    }
    wait_for(&server, "tollgate_ledgers", 0).await;
    let (status, body) = chat(&server, &key, hi_max(MODEL, 5)).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"]["code"], "budget_exceeded", "{body}");
    assert!(metric(&server, "tollgate_ledger_evictions_total").await >= 3);
    // What the rebuilt ledger holds is storage's figure: the key's remaining quota and the
    // window's spend (read from the ledger by the dashboard route).
    wait_for(&server, "tollgate_ledgers", 0).await;
    let usage: serde_json::Value = server
        .client
        .get(server.url("/api/usage/token/"))
        .bearer_auth(&key)
        .send()
        .await
        .expect("sent")
        .json()
        .await
        .expect("json");
    assert_eq!(
        usage["data"]["total_available"],
        json!(50_000_000 - 3 * cost),
        "{usage}"
    );
    let window = &usage["data"]["budget_windows"][0];
    assert_eq!(window["owner"], "user", "{usage}");
    assert_eq!(window["spent"].as_i64(), Some(3 * cost), "{usage}");
    drop(payer);
}
