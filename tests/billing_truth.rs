//! Billing truth through the public HTTP API (issue P13): unpriced models are never free,
//! charges are never capped (a debt refuses further requests), the reservation bounds what
//! concurrent requests can take, and every balance change has its log row while
//! `balance + used == credited` holds in storage.

mod common;

use std::time::Duration;

use common::books::assert_books;
use common::mock_upstream::MockUpstream;
use common::relay_fixture::{balances, chat, fixture, new_key, openai_channel, other};
use common::{ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate_storage::UserId;
use tollgate_storage::logs::{self, LOG_MANAGE, LOG_SYSTEM};

fn ask(model: &str, max_tokens: Option<i64>) -> Value {
    let mut body = json!({"model": model, "messages": [{"role": "user", "content": "hi"}]});
    if let Some(m) = max_tokens {
        body["max_tokens"] = json!(m);
    }
    body
}

#[tokio::test]
async fn unpriced_models_are_billed_at_the_default_ratio_never_free() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((100, 20, 0)));
    let server = TestServer::start().await;
    let (root, payer, key) = fixture(
        &server,
        &[openai_channel(&mock.base, "my-unpriced")],
        1_000_000,
        1_000_000,
    )
    .await;

    let (status, body) = chat(&server, &key, ask("my-unpriced", Some(50))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .expect("message")
            .contains("model price not configured"),
        "{body}"
    );
    assert_eq!(mock.chat_calls(), 0, "refused before anything is sent");

    let accept = json!({"accept_unset_model_ratio_model": true});
    assert_eq!(
        payer.put("/api/user/setting", accept).await.0,
        StatusCode::OK
    );
    let (status, body) = chat(&server, &key, ask("my-unpriced", Some(50))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, _, _, rows) = balances(&server, payer.id).await;
    let row = &rows[0];
    // 37.5 × (100 + 20 × 1) = 4500
    assert_eq!(row.quota, 4_500, "billed at DefaultModelRatio 37.5");
    let other = other(row);
    assert_eq!(other["model_ratio"], 37.5);
    assert_eq!(other["default_model_ratio"], true);

    server
        .set_option(&root, "DefaultModelRatio", json!("2"))
        .await;
    let (status, _) = chat(&server, &key, ask("my-unpriced", Some(50))).await;
    assert_eq!(status, StatusCode::OK);
    let (_, _, _, rows) = balances(&server, payer.id).await;
    assert_eq!(rows[0].quota, 240, "2 × 120: the option applies at once");
    assert_books(&server, payer.id).await;
}

#[tokio::test]
async fn self_use_mode_bills_unpriced_models_and_prices_follow_the_asked_name() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((100, 20, 0)));
    let server = TestServer::start().await;
    let mapped = json!({"name": "mapped", "type": 1, "key": "upstream-key-1", "base_url": mock.base,
        "models": "gpt-4o,self-model", "group": "default",
        "model_mapping": r#"{"gpt-4o": "cheap-upstream-name"}"#});
    let (root, payer, key) = fixture(&server, &[mapped], 1_000_000, 1_000_000).await;
    server
        .set_option(&root, "SelfUseModeEnabled", json!("true"))
        .await;
    let (status, _) = chat(&server, &key, ask("self-model", Some(50))).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = chat(&server, &key, ask("gpt-4o", Some(50))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        mock.last_body().expect("sent")["model"],
        "cheap-upstream-name",
        "the channel maps the name upstream"
    );
    let (_, _, _, rows) = balances(&server, payer.id).await;
    // gpt-4o: 1.25 × (100 + 20 × 4) = 225, by the name the client asked for.
    assert_eq!(rows[0].quota, 225);
    assert_eq!(rows[0].model_name, "gpt-4o");
    assert_eq!(
        rows[1].quota, 4_500,
        "self-use mode: DefaultModelRatio, not free"
    );
    assert_books(&server, payer.id).await;
}

#[tokio::test]
async fn charges_are_never_capped_and_a_debt_refuses_until_topped_up() {
    let mock = MockUpstream::start().await;
    let server = TestServer::start().await;
    let (root, payer, key) = fixture(
        &server,
        &[openai_channel(&mock.base, "gpt-4o")],
        3_000,
        1_000_000,
    )
    .await;
    // The upstream reports far more output than max_tokens allowed.
    mock.set_usage(Some((1_000, 5_000, 0)));
    let (status, body) = chat(&server, &key, ask("gpt-4o", Some(100))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (quota, used, _, rows) = balances(&server, payer.id).await;
    // 1.25 × (1000 + 5000 × 4) = 26250, charged in full.
    assert_eq!(
        rows[0].quota, 26_250,
        "the row is the formula, never capped"
    );
    assert_eq!((quota, used), (3_000 - 26_250, 26_250));
    assert_eq!(
        other(&rows[0])["debt"]["balance"],
        3_000 - 26_250,
        "the row says so"
    );

    mock.set_usage(Some((1, 1, 0)));
    let (status, body) = chat(&server, &key, ask("gpt-4o", Some(1))).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "insufficient_user_quota");
    assert_eq!(body["error"]["type"], "insufficient_quota");

    // The admin's editor showed the debt; saving other fields with it unchanged is accepted.
    let (status, body) = root
        .put(
            "/api/user/",
            json!({"id": payer.id, "quota": quota, "quota_before": quota, "display_name": "P"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = root
        .put("/api/user/", json!({"id": payer.id, "quota": -5}))
        .await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "another negative balance is refused"
    );
    // Top up by the difference: back above zero.
    let (status, body) = root
        .put(
            "/api/user/",
            json!({"id": payer.id, "quota": 100_000, "quota_before": quota}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = chat(&server, &key, ask("gpt-4o", Some(1))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_books(&server, payer.id).await;
}

#[tokio::test]
async fn a_key_in_debt_is_refused_with_its_own_code() {
    let mock = MockUpstream::start().await;
    let server = TestServer::start().await;
    let (_root, payer, key) = fixture(
        &server,
        &[openai_channel(&mock.base, "gpt-4o")],
        1_000_000,
        3_000,
    )
    .await;
    mock.set_usage(Some((1_000, 5_000, 0)));
    let (status, _) = chat(&server, &key, ask("gpt-4o", Some(100))).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = chat(&server, &key, ask("gpt-4o", Some(1))).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "insufficient_token_quota");
    server.flush().await;
    let (_, tokens) = payer.get("/api/token/?p=1&size=10").await;
    let items = tokens["data"]["items"].as_array().expect("tokens");
    assert_eq!(
        items[0]["remain_quota"],
        3_000 - 26_250,
        "the key shows its debt"
    );
    let other_key = new_key(&payer, 1_000_000, json!({})).await;
    let (status, _) = chat(&server, &other_key, ask("gpt-4o", Some(1))).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "the user is not in debt, only that key"
    );
    assert_books(&server, payer.id).await;
}

#[tokio::test]
async fn a_request_without_max_tokens_reserves_output_and_concurrency_cannot_overdraw() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((10, 10, 0)));
    let server = TestServer::start().await;
    let (_root, payer, key) = fixture(
        &server,
        &[openai_channel(&mock.base, "gpt-4o")],
        21_000,
        1_000_000,
    )
    .await;
    // Without max_tokens admission needs max(prompt, 500) + DefaultOutputReserve (4096) output
    // tokens: 1.25 × (500 + 4096 × 4) = 21105 > 21000.
    let (status, body) = chat(&server, &key, ask("gpt-4o", None)).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "insufficient_user_quota");
    let message = body["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("21105") && message.contains("max_tokens"),
        "{message}"
    );
    assert_eq!(mock.chat_calls(), 0);
    // max_tokens 4000 needs 1.25 × (500 + 16000) = 20625: one such request at a time.
    mock.set_delay(Duration::from_millis(400));
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let client = server.client.clone();
        let url = server.url("/v1/chat/completions");
        let key = key.clone();
        tasks.push(tokio::spawn(async move {
            client
                .post(url)
                .bearer_auth(key)
                .json(&ask("gpt-4o", Some(4_000)))
                .send()
                .await
                .expect("sent")
                .status()
        }));
    }
    let mut ok = 0;
    for task in tasks {
        let status = task.await.expect("task");
        if status == StatusCode::OK {
            ok += 1;
        } else {
            assert_eq!(status, StatusCode::FORBIDDEN);
        }
    }
    assert_eq!(ok, 1, "one balance admits one bounded request at a time");
    mock.set_delay(Duration::ZERO);
    let (status, _) = chat(&server, &key, ask("gpt-4o", Some(100))).await;
    assert_eq!(status, StatusCode::OK, "a small max_tokens needs less");
    assert_eq!(
        mock.last_body().expect("sent").get("max_tokens"),
        Some(&json!(100)),
        "max_tokens is never injected or changed"
    );
    let (status, _) = chat(&server, &key, ask("gpt-4o", None)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_books(&server, payer.id).await;
}

#[tokio::test]
async fn every_answer_of_n_is_reserved() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((10, 10, 0)));
    let server = TestServer::start().await;
    let (_root, payer, key) = fixture(
        &server,
        &[openai_channel(&mock.base, "gpt-4o")],
        21_000,
        1_000_000,
    )
    .await;
    // One answer of at most 1000 tokens needs 1.25 × (500 + 1000 × 4) = 5625.
    let (status, body) = chat(&server, &key, ask("gpt-4o", Some(1_000))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Five such answers may be 5000 tokens: admission needs the default reserve's 4096 of
    // them, 1.25 × (500 + 4096 × 4) = 21105, more than the 21000 - 25 left.
    let mut five = ask("gpt-4o", Some(1_000));
    five["n"] = json!(5);
    let (status, body) = chat(&server, &key, five).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "insufficient_user_quota");
    assert_eq!(
        mock.chat_calls(),
        1,
        "the five answers were never asked for"
    );
    // Legacy completions generate (and bill) `best_of` answers.
    let (status, body) = server
        .send(
            server
                .client
                .post(server.url("/v1/completions"))
                .bearer_auth(&key)
                .json(
                    &json!({"model": "gpt-4o", "prompt": "hi", "max_tokens": 1000, "best_of": 5}),
                ),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_books(&server, payer.id).await;
}

#[tokio::test]
async fn admin_quota_edits_apply_the_difference_with_a_manage_row() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((100, 20, 0)));
    let server = TestServer::start().await;
    let (root, payer, key) = fixture(
        &server,
        &[openai_channel(&mock.base, "gpt-4o")],
        10_000,
        1_000_000,
    )
    .await;
    // The editor loads 10,000; the user spends 225 before the admin saves 20,000.
    let (status, _) = chat(&server, &key, ask("gpt-4o", Some(10))).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = root
        .put(
            "/api/user/",
            json!({"id": payer.id, "quota": 20_000, "quota_before": 10_000}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (quota, _, _, _) = balances(&server, payer.id).await;
    assert_eq!(quota, 20_000 - 225, "the spending is not erased");
    let rows = server
        .store()
        .read_blocking(|rtx| logs::recent_for_user(rtx, UserId(payer.id), 100))
        .expect("rows");
    let manage = rows
        .iter()
        .find(|r| r.log_type == LOG_MANAGE && r.quota == 10_000)
        .expect("a type-3 row");
    assert_eq!(manage.quota, 10_000);
    let o = other(manage);
    assert_eq!(o["quota_before"], 10_000);
    assert_eq!(o["quota_after"], 20_000);
    assert_eq!(o["admin_info"]["admin_username"], ROOT_USER);
    assert_books(&server, payer.id).await;
}

#[tokio::test]
async fn registration_rewards_and_invite_transfers_have_their_rows() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    for (k, v) in [
        ("QuotaForNewUser", "100"),
        ("QuotaForInvitee", "50"),
        ("QuotaForInviter", "700000"),
    ] {
        server.set_option(&root, k, json!(v)).await;
    }
    let reg =
        |name: &str| json!({"username": name, "password": "password1", "password2": "password1"});
    server.post("/api/user/register", reg("inviter")).await;
    let inviter = server.client_for("inviter", "password1").await;
    let (_, code) = inviter.get("/api/user/aff").await;
    let mut body = reg("invitee");
    body["aff_code"] = code["data"].clone();
    let (status, answer) = server.post("/api/user/register", body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let invitee = server.client_for("invitee", "password1").await;
    let (quota, _, _, rows) = balances(&server, invitee.id).await;
    assert_eq!(quota, 150);
    let credits: i64 = rows
        .iter()
        .filter(|r| r.log_type == LOG_SYSTEM)
        .map(|r| r.quota)
        .sum();
    assert_eq!(credits, 150, "one row per reward: {rows:?}");
    assert_books(&server, invitee.id).await;

    let (status, body) = inviter
        .post("/api/user/aff_transfer", json!({"quota": 600_000}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (quota, _, _, rows) = balances(&server, inviter.id).await;
    assert_eq!(quota, 100 + 600_000);
    assert!(
        rows.iter().any(|r| r.log_type == LOG_SYSTEM
            && r.quota == 600_000
            && r.content.contains("invite")),
        "the transfer has its row: {rows:?}"
    );
    assert_books(&server, inviter.id).await;
}

#[tokio::test]
async fn a_keys_group_is_checked_against_what_its_owner_may_use_now() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((10, 10, 0)));
    let server = TestServer::start().await;
    let vip = json!({"name": "vip", "type": 1, "key": "upstream-key-1", "base_url": mock.base,
        "models": "gpt-4o", "group": "default,vip"});
    let (root, payer, _) = fixture(&server, &[vip], 1_000_000, 1_000_000).await;
    let vip_key = new_key(&payer, 1_000_000, json!({"group": "vip"})).await;
    let (status, body) = chat(&server, &vip_key, ask("gpt-4o", Some(10))).await;
    assert_eq!(status, StatusCode::OK, "vip is selectable: {body}");
    // The admin withdraws the vip group from what users may pick.
    server
        .set_option(
            &root,
            "UserUsableGroups",
            json!(r#"{"default":"默认分组"}"#),
        )
        .await;
    let (status, body) = chat(&server, &vip_key, ask("gpt-4o", Some(10))).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .expect("message")
            .contains("vip"),
        "{body}"
    );
}

#[tokio::test]
async fn model_names_are_bounded_and_the_free_count_route_is_rate_limited_per_key() {
    let mock = MockUpstream::start().await;
    let server = TestServer::start().await;
    let (root, payer, key) = fixture(
        &server,
        &[openai_channel(&mock.base, "gpt-4o")],
        1_000_000,
        1_000_000,
    )
    .await;
    let (status, body) = chat(&server, &key, ask(&"m".repeat(300), Some(10))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .expect("message")
            .contains("256 bytes"),
        "refused for its length: {body}"
    );
    assert_eq!(mock.chat_calls(), 0);

    server
        .set_option(&root, "CountTokensRateLimit", json!("2"))
        .await;
    let count = |key: &str| {
        server
            .client
            .post(server.url("/v1/messages/count_tokens"))
            .header("x-api-key", key)
            .header("anthropic-version", "2023-06-01")
            .json(&json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "hello"}]}))
            .send()
    };
    for _ in 0..2 {
        let resp = count(&key).await.expect("sent");
        assert_eq!(resp.status(), StatusCode::OK);
    }
    let resp = count(&key).await.expect("sent");
    assert_eq!(
        resp.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "the third in a minute"
    );
    let other = new_key(&payer, 1_000_000, json!({})).await;
    let resp = count(&other).await.expect("sent");
    assert_eq!(resp.status(), StatusCode::OK, "the budget is per key");
}

#[tokio::test]
async fn relay_bodies_in_flight_share_a_memory_budget() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((10, 10, 0)));
    let server = TestServer::start().await;
    let (root, _payer, key) = fixture(
        &server,
        &[openai_channel(&mock.base, "gpt-4o")],
        1_000_000,
        1_000_000,
    )
    .await;
    server
        .set_option(&root, "RelayBodyBudgetMB", json!("1"))
        .await;
    let mut big = ask("gpt-4o", Some(10));
    big["messages"][0]["content"] = json!("x".repeat(2 * 1024 * 1024));
    let (status, body) = chat(&server, &key, big).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"]["code"], "server_busy");
    assert_eq!(mock.chat_calls(), 0);
    let (status, _) = chat(&server, &key, ask("gpt-4o", Some(10))).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "a small body fits, and the big one gave its share back"
    );
}
