//! Budgets on the prepaid wallet (P15 item 2): a key's or a user's daily / weekly / monthly
//! window, calendar-aligned in BudgetTimeZone or rolling, refuses with a 429 naming the window
//! and when it resets once its spend reaches the limit; the spend is stored with the charges,
//! so a restart keeps it; a temporary override applies until its expiry; the OpenAI-dashboard
//! routes and /api/usage/token/ report the incumbent's values and the windows. The server's
//! clock is injected (a stopped clock moved by the test), never slept on.

#![expect(clippy::expect_used, reason = "test helpers fail the test loudly")]

mod common;

use common::mock_upstream::MockUpstream;
use common::relay_fixture::{balances, chat, chat_request, fixture, hi_max, raw};
use common::{Actor, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate::clock::Clock;

const MODEL: &str = "claude-test";

/// A time zone in which it is now between 01:00 and 21:00, so that moving the clock by two
/// hours stays inside today and a charge made now is never on the other side of midnight.
fn quiet_zone(now: i64) -> &'static str {
    let utc_hour = now.rem_euclid(86_400) / 3600;
    if (1..21).contains(&utc_hour) {
        "UTC"
    } else {
        // UTC+8: 21:00–01:00 UTC is 05:00–09:00 there.
        "Asia/Shanghai"
    }
}

async fn key_id(owner: &Actor) -> i64 {
    let (_, list) = owner.get("/api/token/?p=1&page_size=10").await;
    list["data"]["items"][0]["id"].as_i64().expect("token id")
}

async fn start(clock: &Clock, dir: tempfile::TempDir) -> TestServer {
    let clock = clock.clone();
    TestServer::start_with(dir, move |c| c.clock = clock).await
}

fn channel(mock: &MockUpstream) -> Value {
    json!({"name": "budget-ch", "type": 1, "key": "upstream-key-1",
           "base_url": mock.base, "models": MODEL, "group": "default"})
}

#[tokio::test]
async fn a_keys_daily_budget_refuses_with_a_429_holds_across_a_restart_and_resets_the_next_day() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((10_000, 0, 0)));
    let clock = Clock::stopped();
    let server = start(&clock, tempfile::tempdir().expect("tempdir")).await;
    let (root, payer, key) = fixture(&server, &[channel(&mock)], 100_000_000, 100_000_000).await;
    server
        .set_option(&root, "BudgetTimeZone", json!(quiet_zone(clock.now_unix())))
        .await;
    let id = key_id(&payer).await;

    // One request before any budget: its spend counts in the window set afterwards.
    assert_eq!(
        chat(&server, &key, hi_max(MODEL, 5)).await.0,
        StatusCode::OK
    );
    let (_, cost, _, _) = balances(&server, payer.id).await;
    assert!(cost > 100, "a request costs something: {cost}");
    let limit = cost * 5 / 2;
    let path = format!("/api/token/{id}/budget");
    let (status, body) = payer
        .put(
            &path,
            json!({"windows": [{"period": "day", "limit": limit},
                               {"period": "month", "rolling": true, "limit": limit * 100}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["windows"][0]["spent"], json!(cost), "{body}");
    assert_eq!(body["data"]["windows"][0]["remaining"], json!(limit - cost));

    // 1.5 and then 0.5 requests' worth left: both admitted (the last overshoots), then refused.
    assert_eq!(
        chat(&server, &key, hi_max(MODEL, 5)).await.0,
        StatusCode::OK
    );
    assert_eq!(
        chat(&server, &key, hi_max(MODEL, 5)).await.0,
        StatusCode::OK
    );
    let (status, headers, text) = raw(chat_request(&server, &key, &hi_max(MODEL, 5))).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    let retry: i64 = headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("Retry-After");
    assert!((1..=86_400).contains(&retry), "until midnight: {retry}");
    let body: Value = serde_json::from_str(&text).expect("json");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(body["error"]["code"], "budget_exceeded", "{body}");
    assert!(
        message.contains("daily budget of this API key") && message.contains("resets at"),
        "{message}"
    );
    let (_, _, count, _) = balances(&server, payer.id).await;
    assert_eq!(count, 3, "the refused request was not billed");

    // A restart keeps the day's spend.
    let dir = server.stop().await;
    let server = start(&clock, dir).await;
    let payer = server.client_for("payer", "password1").await;
    let root = server
        .client_for(common::ROOT_USER, common::ROOT_PASS)
        .await;
    assert_eq!(
        chat(&server, &key, hi_max(MODEL, 5)).await.0,
        StatusCode::TOO_MANY_REQUESTS,
        "the daily spend survives a restart"
    );
    let (_, view) = payer.get(&path).await;
    assert_eq!(
        view["data"]["windows"][0]["spent"],
        json!(cost * 3),
        "{view}"
    );
    assert_eq!(
        view["data"]["windows"][1]["spent"],
        json!(cost * 3),
        "{view}"
    );

    // An override for the next hour lifts the daily limit; when it expires, the limit is back.
    let until = clock.now_unix() + 3600;
    let (status, body) = payer
        .put(
            &path,
            json!({"windows": [{"period": "day", "limit": limit}],
                   "override": {"windows": [{"period": "day", "limit": limit * 10}],
                                "until": until}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        chat(&server, &key, hi_max(MODEL, 5)).await.0,
        StatusCode::OK
    );
    clock.advance(2 * 3600);
    assert_eq!(
        chat(&server, &key, hi_max(MODEL, 5)).await.0,
        StatusCode::TOO_MANY_REQUESTS,
        "the override expired"
    );

    // The next day the window is empty again.
    clock.advance(86_400);
    assert_eq!(
        chat(&server, &key, hi_max(MODEL, 5)).await.0,
        StatusCode::OK
    );

    // Edits are audited.
    let (_, audit) = root.get("/api/audit?action=token.budget").await;
    assert_eq!(audit["data"]["total"], json!(2), "{audit}");
}

#[tokio::test]
async fn a_users_budget_covers_every_key_and_the_dashboard_routes_report_it() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((10_000, 0, 0)));
    let clock = Clock::stopped();
    let server = start(&clock, tempfile::tempdir().expect("tempdir")).await;
    let (root, payer, key) = fixture(&server, &[channel(&mock)], 100_000_000, 10_000_000).await;
    assert_eq!(
        chat(&server, &key, hi_max(MODEL, 5)).await.0,
        StatusCode::OK
    );
    let (quota, cost, _, _) = balances(&server, payer.id).await;

    // The incumbent's values: the key's remaining + used, in dollars; used in cents.
    let sub = |path: &'static str| {
        let (client, url, key) = (server.client.clone(), server.url(path), key.clone());
        async move {
            let r = client.get(url).bearer_auth(key).send().await.expect("sent");
            assert_eq!(r.status(), StatusCode::OK, "{path}");
            r.json::<Value>().await.expect("json")
        }
    };
    for path in [
        "/dashboard/billing/subscription",
        "/v1/dashboard/billing/subscription",
    ] {
        let body = sub(path).await;
        assert_eq!(body["object"], "billing_subscription");
        assert_eq!(
            body["hard_limit_usd"],
            json!(10_000_000.0 / 500_000.0),
            "{body}"
        );
        assert_eq!(body["access_until"], json!(0));
    }
    for path in ["/dashboard/billing/usage", "/v1/dashboard/billing/usage"] {
        let body = sub(path).await;
        let total = body["total_usage"].as_f64().unwrap_or(-1.0);
        #[expect(clippy::cast_precision_loss, reason = "a small test figure")]
        let want = cost as f64 / 500_000.0 * 100.0;
        assert!((total - want).abs() < 1e-9, "{body}");
    }

    // A monthly budget on the user, set by an admin (audited), shows on the key's routes.
    let limit = cost * 3 / 2;
    let (status, body) = root
        .put(
            &format!("/api/user/{}/budget", payer.id),
            json!({"windows": [{"period": "month", "limit": limit}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["windows"][0]["spent"], json!(cost), "{body}");
    let usage = sub("/api/usage/token/").await;
    assert_eq!(usage["data"]["object"], "token_usage", "{usage}");
    assert_eq!(usage["data"]["total_used"], json!(cost), "{usage}");
    assert_eq!(
        usage["data"]["total_available"],
        json!(10_000_000 - cost),
        "{usage}"
    );
    let window = &usage["data"]["budget_windows"][0];
    assert_eq!(window["owner"], "user", "{usage}");
    assert_eq!(window["period"], "month");
    assert_eq!(window["remaining"].as_i64(), Some(limit - cost), "{usage}");

    // Half a request left: admitted; then the user's window refuses, naming it.
    assert_eq!(
        chat(&server, &key, hi_max(MODEL, 5)).await.0,
        StatusCode::OK
    );
    let (status, body) = chat(&server, &key, hi_max(MODEL, 5)).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("monthly budget of this user"), "{message}");

    // The balance is untouched by the refusal and far from empty: a budget, not a 403.
    let (after, _, _, _) = balances(&server, payer.id).await;
    assert_eq!(after, quota - cost, "one more request billed");

    // An unlimited key reports the incumbent's 100,000,000.
    let (status, _) = payer
        .put(
            "/api/token/",
            json!({"id": key_id(&payer).await, "name": "k", "unlimited_quota": true}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let body = sub("/dashboard/billing/subscription").await;
    assert_eq!(body["hard_limit_usd"], json!(100_000_000.0), "{body}");

    let (_, audit) = root.get("/api/audit?action=user.budget").await;
    assert_eq!(audit["data"]["total"], json!(1), "{audit}");
    // A bad budget is refused with a message.
    let (status, body) = root
        .put(
            &format!("/api/user/{}/budget", payer.id),
            json!({"windows": [{"period": "day", "limit": 0}]}),
        )
        .await;
    assert!(
        status == StatusCode::BAD_REQUEST || body["success"] == false,
        "{body}"
    );
}
