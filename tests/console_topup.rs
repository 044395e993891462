//! Online top-up through the HTTP API: the quote, the pending order and its signed form, the
//! Epay notification (valid, replayed, forged, tampered, wrong amount, unknown order, other
//! merchant, not-a-success, concurrent), the order history and the admin's manual completion.

mod common;

use std::collections::BTreeMap;

use common::{Actor, ROOT_PASS, ROOT_USER, TestServer, log_capture};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate::console::service::epay;
use tollgate_storage::logs::{self, LOG_TOPUP};
use tollgate_storage::{StorageError, UserId, users};

const KEY: &str = "merchant-secret";

async fn root_and_user(server: &TestServer) -> (Actor, Actor) {
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    server.create_user(&root, "alice", "password1").await;
    let alice = server.client_for("alice", "password1").await;
    (root, alice)
}

async fn configure_epay(server: &TestServer, root: &Actor) {
    for (key, value) in [
        ("PayAddress", "https://pay.example.com/"),
        ("EpayId", "1001"),
        ("EpayKey", KEY),
        ("Price", "7.3"),
        ("MinTopUp", "2"),
        ("TopupGroupRatio", r#"{"default": 1, "vip": 0.5}"#),
    ] {
        server.set_option(root, key, json!(value)).await;
    }
}

#[expect(
    clippy::expect_used,
    reason = "test helper: a failed call fails the test"
)]
async fn new_order(alice: &Actor, amount: i64) -> BTreeMap<String, String> {
    let (status, answer) = alice
        .post(
            "/api/user/pay",
            json!({"amount": amount, "payment_method": "zfb", "top_up_code": ""}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    serde_json::from_value(answer["data"].clone()).expect("form fields")
}

/// The gateway's success notification for `order`, signed with `key`.
fn notification(
    order: &BTreeMap<String, String>,
    money: &str,
    key: &str,
) -> BTreeMap<String, String> {
    let mut params: BTreeMap<String, String> = [
        ("pid", order["pid"].as_str()),
        ("trade_no", "GW20260101"),
        ("out_trade_no", order["out_trade_no"].as_str()),
        ("type", "alipay"),
        ("name", order["name"].as_str()),
        ("money", money),
        ("trade_status", "TRADE_SUCCESS"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let sign = epay::sign(&params, key);
    params.insert("sign".into(), sign);
    params.insert("sign_type".into(), "MD5".into());
    params
}

#[expect(
    clippy::expect_used,
    reason = "test helper: a failed call fails the test"
)]
async fn notify_get(server: &TestServer, params: &BTreeMap<String, String>) -> String {
    let resp = server
        .client
        .get(server.url("/api/user/epay/notify"))
        .query(params)
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status(), StatusCode::OK);
    resp.text().await.expect("body")
}

#[expect(
    clippy::expect_used,
    reason = "test helper: a failed call fails the test"
)]
async fn notify_post(server: &TestServer, params: &BTreeMap<String, String>) -> String {
    let resp = server
        .client
        .post(server.url("/api/user/epay/notify"))
        .form(params)
        .send()
        .await
        .expect("sent");
    resp.text().await.expect("body")
}

#[expect(
    clippy::expect_used,
    reason = "test helper: a failed read fails the test"
)]
async fn stored_quota_and_topup_logs(server: &TestServer, user: i64) -> (i64, usize) {
    server.flush().await;
    server
        .store()
        .read_blocking(|rtx| {
            let u = users::get(rtx, UserId(user))?.expect("user");
            let n = logs::recent_for_user(rtx, UserId(user), 100)?
                .into_iter()
                .filter(|l| l.log_type == LOG_TOPUP)
                .count();
            Ok::<_, StorageError>((u.quota.0, n))
        })
        .expect("read")
}

#[tokio::test]
async fn quote_and_order_follow_the_options() {
    let server = TestServer::start().await;
    let (root, alice) = root_and_user(&server).await;
    let (status, answer) = alice
        .post(
            "/api/user/pay",
            json!({"amount": 10, "payment_method": "zfb"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(
        answer["code"], "feature_disabled",
        "not configured: {answer}"
    );

    configure_epay(&server, &root).await;
    let (status, answer) = alice.post("/api/user/amount", json!({"amount": 1})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(
        answer["message"]
            .as_str()
            .expect("m")
            .contains("less than 2"),
        "MinTopUp: {answer}"
    );
    let (status, answer) = alice.post("/api/user/amount", json!({"amount": 10})).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["message"], "success");
    assert_eq!(answer["data"], "73.00", "10 × 7.3 × 1");

    // The group's top-up ratio applies.
    let (status, _) = root
        .put("/api/user/", json!({"id": alice.id, "group": "vip"}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, answer) = alice.post("/api/user/amount", json!({"amount": 10})).await;
    assert_eq!(answer["data"], "36.50", "10 × 7.3 × 0.5");
    root.put("/api/user/", json!({"id": alice.id, "group": "default"}))
        .await;

    for (body, expected) in [
        (
            json!({"amount": 10, "payment_method": "paypal"}),
            "zfb or wx",
        ),
        (json!({"amount": 1, "payment_method": "wx"}), "less than 2"),
        (json!({"amount": "ten", "payment_method": "wx"}), "amount"),
    ] {
        let (status, answer) = alice.post("/api/user/pay", body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        assert!(
            answer["message"].as_str().expect("m").contains(expected),
            "{body}: {answer}"
        );
    }

    let (status, answer) = alice
        .post(
            "/api/user/pay",
            json!({"amount": 10, "payment_method": "wx"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["message"], "success");
    assert_eq!(answer["url"], "https://pay.example.com/submit.php");
    let form: BTreeMap<String, String> =
        serde_json::from_value(answer["data"].clone()).expect("fields");
    assert_eq!(form["pid"], "1001");
    assert_eq!(form["type"], "wxpay");
    assert_eq!(form["money"], "73.00");
    assert_eq!(form["name"], "TUC10");
    assert_eq!(form["sign_type"], "MD5");
    assert_eq!(
        form["notify_url"],
        "http://localhost:3000/api/user/epay/notify"
    );
    assert!(form["out_trade_no"].starts_with(&format!("USR{}NO", alice.id)));
    assert_eq!(form["sign"], epay::sign(&form, KEY), "the form is signed");
    assert!(!answer.to_string().contains(KEY), "the key never leaves");

    // A second order gets another trade number; CustomCallbackAddress wins over ServerAddress.
    server
        .set_option(
            &root,
            "CustomCallbackAddress",
            json!("https://cb.example.com/"),
        )
        .await;
    let second = new_order(&alice, 3).await;
    assert_ne!(second["out_trade_no"], form["out_trade_no"]);
    assert_eq!(
        second["notify_url"],
        "https://cb.example.com/api/user/epay/notify"
    );

    let (status, mine) = alice.get("/api/user/topup/self?p=1&page_size=10").await;
    assert_eq!(status, StatusCode::OK, "{mine}");
    assert_eq!(mine["data"]["total"], 2);
    let newest = &mine["data"]["items"][0];
    assert_eq!(newest["trade_no"], second["out_trade_no"].as_str());
    assert_eq!(newest["status"], "pending");
    assert_eq!(newest["amount"], 3);
    assert_eq!(newest["money"], 21.9);
    assert_eq!(newest["quota"], 1_500_000);
}

#[tokio::test]
async fn notifications_credit_exactly_once_and_refuse_forgeries() {
    log_capture::install();
    let server = TestServer::start().await;
    let (root, alice) = root_and_user(&server).await;
    configure_epay(&server, &root).await;
    let order = new_order(&alice, 10).await;
    let trade_no = order["out_trade_no"].clone();

    // Forged: signed with another key.
    assert_eq!(
        notify_get(&server, &notification(&order, "73.00", "guess")).await,
        "fail"
    );
    // Tampered: the amount changed after signing.
    let mut tampered = notification(&order, "73.00", KEY);
    tampered.insert("money".into(), "0.01".into());
    assert_eq!(notify_get(&server, &tampered).await, "fail");
    // Validly signed but the amount is not the order's.
    assert_eq!(
        notify_get(&server, &notification(&order, "0.73", KEY)).await,
        "fail"
    );
    // Unknown order.
    let mut unknown = order.clone();
    unknown.insert("out_trade_no".into(), "USR1NOnope".into());
    assert_eq!(
        notify_get(&server, &notification(&unknown, "73.00", KEY)).await,
        "fail"
    );
    // Another merchant's notification.
    let mut foreign = order.clone();
    foreign.insert("pid".into(), "2002".into());
    assert_eq!(
        notify_get(&server, &notification(&foreign, "73.00", KEY)).await,
        "fail"
    );
    // No signature at all.
    let mut unsigned = notification(&order, "73.00", KEY);
    unsigned.remove("sign");
    assert_eq!(notify_post(&server, &unsigned).await, "fail");
    // A verified non-success status is acknowledged but credits nothing.
    let mut waiting = notification(&order, "73.00", KEY);
    waiting.insert("trade_status".into(), "WAIT_BUYER_PAY".into());
    let sign = epay::sign(&waiting, KEY);
    waiting.insert("sign".into(), sign);
    assert_eq!(notify_get(&server, &waiting).await, "success");
    assert_eq!(stored_quota_and_topup_logs(&server, alice.id).await, (0, 0));

    // The real one (GET), then replays (GET and POST form): credited once.
    let paid = notification(&order, "73.0", KEY);
    assert_eq!(notify_get(&server, &paid).await, "success");
    assert_eq!(
        notify_get(&server, &paid).await,
        "success",
        "replay acknowledged"
    );
    assert_eq!(
        notify_post(&server, &paid).await,
        "success",
        "replay acknowledged"
    );
    assert_eq!(
        stored_quota_and_topup_logs(&server, alice.id).await,
        (5_000_000, 1),
        "10 × QuotaPerUnit credited once, one top-up log row"
    );
    let (_, me) = alice.get("/api/user/self").await;
    assert_eq!(me["data"]["quota"], 5_000_000);
    let (_, mine) = alice.get("/api/user/topup/self").await;
    assert_eq!(mine["data"]["items"][0]["status"], "success");
    assert!(
        mine["data"]["items"][0]["complete_time"]
            .as_i64()
            .expect("t")
            > 0
    );

    let logs = log_capture::logs();
    for expected in [
        "bad signature",
        "does not match the order",
        "unknown order",
        "pid is not this merchant",
        "not a success",
        "already credited (replay)",
    ] {
        assert!(logs.contains(expected), "'{expected}' is logged");
    }
    assert!(!logs.contains(KEY), "the merchant key is never logged");
    assert!(
        logs.contains(&format!("trade_no={trade_no}")),
        "the credit names the order"
    );
}

#[tokio::test]
async fn concurrent_notifications_of_one_order_credit_once() {
    let server = TestServer::start().await;
    let (root, alice) = root_and_user(&server).await;
    configure_epay(&server, &root).await;
    let order = new_order(&alice, 4).await;
    let paid = notification(&order, "29.20", KEY);
    let base = server.url("/api/user/epay/notify");
    let mut tasks = Vec::new();
    for i in 0..10 {
        let (client, base, paid) = (server.client.clone(), base.clone(), paid.clone());
        tasks.push(tokio::spawn(async move {
            let req = if i % 2 == 0 {
                client.get(&base).query(&paid)
            } else {
                client.post(&base).form(&paid)
            };
            req.send().await.expect("sent").text().await.expect("body")
        }));
    }
    for task in tasks {
        assert_eq!(task.await.expect("task"), "success");
    }
    assert_eq!(
        stored_quota_and_topup_logs(&server, alice.id).await,
        (2_000_000, 1)
    );
}

#[tokio::test]
async fn admins_list_every_order_and_complete_one_by_hand() {
    let server = TestServer::start().await;
    let (root, alice) = root_and_user(&server).await;
    configure_epay(&server, &root).await;
    let order = new_order(&alice, 2).await;
    let (status, _) = alice.get("/api/user/topup").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "all orders are for admins");
    let (status, _) = alice
        .post(
            "/api/user/topup/complete",
            json!({"trade_no": order["out_trade_no"]}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, all) = root.get("/api/user/topup?p=1&page_size=5").await;
    assert_eq!(status, StatusCode::OK, "{all}");
    assert_eq!(all["data"]["total"], 1);
    assert_eq!(all["data"]["items"][0]["user_id"], alice.id);
    let (status, _) = root
        .post("/api/user/topup/complete", json!({"trade_no": "nope"}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, done) = root
        .post(
            "/api/user/topup/complete",
            json!({"trade_no": order["out_trade_no"]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{done}");
    let (status, again): (StatusCode, Value) = root
        .post(
            "/api/user/topup/complete",
            json!({"trade_no": order["out_trade_no"]}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{again}");
    // The gateway's late notification does not credit it again.
    assert_eq!(
        notify_get(&server, &notification(&order, "14.60", KEY)).await,
        "success"
    );
    assert_eq!(
        stored_quota_and_topup_logs(&server, alice.id).await,
        (1_000_000, 1)
    );
}

#[tokio::test]
async fn only_root_completes_orders_and_never_one_of_its_own() {
    let server = TestServer::start().await;
    let (root, alice) = root_and_user(&server).await;
    configure_epay(&server, &root).await;
    let (status, body) = root
        .post(
            "/api/user/",
            json!({"username": "clerk", "password": "password1", "role": 10}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let clerk = server.client_for("clerk", "password1").await;
    let theirs = new_order(&alice, 2).await;
    let own = new_order(&clerk, 2).await;

    // An admin completes nothing by hand: neither another user's order nor their own.
    for order in [&theirs, &own] {
        let (status, body) = clerk
            .post(
                "/api/user/topup/complete",
                json!({"trade_no": order["out_trade_no"]}),
            )
            .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    }
    assert_eq!(stored_quota_and_topup_logs(&server, clerk.id).await.1, 0);

    // Root does not complete its own order either.
    let root_order = new_order(&root, 2).await;
    let (status, body) = root
        .post(
            "/api/user/topup/complete",
            json!({"trade_no": root_order["out_trade_no"]}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(stored_quota_and_topup_logs(&server, root.id).await.1, 0);

    // Root completes another user's order.
    let (status, body) = root
        .post(
            "/api/user/topup/complete",
            json!({"trade_no": theirs["out_trade_no"]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        stored_quota_and_topup_logs(&server, alice.id).await,
        (1_000_000, 1)
    );
}
