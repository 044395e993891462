//! The audit log (issue #22 item 10) through the public HTTP API: every admin action that moves
//! money or touches a secret appends a row with actor, target, before/after and client address;
//! secret values never appear in it; log deletion leaves it alone; only root reads it.

#![expect(
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers: a failed call fails the test"
)]

mod common;

use std::collections::BTreeMap;

use common::{Actor, ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate::console::service::epay;

const EPAY_KEY: &str = "merchant-secret-9f3";
const CHANNEL_KEY: &str = "sk-audit-channel-key-1";
const NEW_CHANNEL_KEY: &str = "sk-audit-channel-key-2";
const SMTP_TOKEN: &str = "smtp-password-7c1";

/// Every audit row (newest first), read by root.
async fn audit(root: &Actor, query: &str) -> Vec<Value> {
    let (status, body) = root
        .get(&format!("/api/audit?p=1&page_size=100{query}"))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["data"]["items"].as_array().expect("items").clone()
}

fn find<'a>(rows: &'a [Value], action: &str, target: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["action"] == action && r["target"] == target)
        .unwrap_or_else(|| panic!("no {action} on {target} in {rows:#?}"))
}

fn json_of(text: &Value) -> Value {
    serde_json::from_str(text.as_str().expect("text")).expect("JSON")
}

#[tokio::test]
#[expect(
    clippy::too_many_lines,
    reason = "one walk through every audited action"
)]
async fn every_money_or_secret_action_leaves_a_row_without_secrets() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let alice_id = server.create_user(&root, "alice", "password1").await;

    // Quota edit.
    let (status, body) = root
        .put("/api/user/", json!({"id": alice_id, "quota": 5_000}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Role and status changes.
    for action in ["promote", "demote", "disable", "enable"] {
        let (status, body) = root
            .post(
                "/api/user/manage",
                json!({"id": alice_id, "action": action}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{action}: {body}");
    }
    // An option in clear and a secret one.
    server
        .set_option(&root, "QuotaForNewUser", json!("123"))
        .await;
    server
        .set_option(&root, "SMTPToken", json!(SMTP_TOKEN))
        .await;
    // Redemption codes.
    let (status, codes) = root
        .post(
            "/api/redemption/",
            json!({"name": "gift", "count": 2, "quota": 700}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{codes}");
    // A channel: its base URL and key changed, then its key revealed.
    let (status, body) = root
        .post(
            "/api/channel/",
            json!({"name": "c", "type": 1, "key": CHANNEL_KEY, "models": "m",
                   "base_url": "https://one.example.com", "group": "default"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, list) = root.get("/api/channel/?p=1&page_size=10").await;
    let channel = list["data"]["items"][0]["id"].as_i64().expect("channel id");
    let (status, body) = root
        .put(
            "/api/channel/",
            json!({"id": channel, "base_url": "https://two.example.com", "key": NEW_CHANNEL_KEY}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = root
        .put("/api/channel/", json!({"id": channel, "name": "renamed"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    common::two_factor::turn_on_and_verify(&root).await;
    let (status, body) = root
        .post(&format!("/api/channel/{channel}/key"), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Top-ups: one completed by hand, one by the gateway's notification.
    for (key, value) in [
        ("PayAddress", "https://pay.example.com/"),
        ("EpayId", "1001"),
        ("EpayKey", EPAY_KEY),
        ("Price", "7.3"),
        ("MinTopUp", "2"),
    ] {
        server.set_option(&root, key, json!(value)).await;
    }
    // (The role changes ended alice's sessions.)
    let alice = server.client_for("alice", "password1").await;
    let order = |amount: i64| {
        let alice = &alice;
        async move {
            let (status, answer) = alice
                .post(
                    "/api/user/pay",
                    json!({"amount": amount, "payment_method": "zfb", "top_up_code": ""}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{answer}");
            serde_json::from_value::<BTreeMap<String, String>>(answer["data"].clone())
                .expect("form")
        }
    };
    let by_hand = order(2).await;
    let (status, body) = root
        .post(
            "/api/user/topup/complete",
            json!({"trade_no": by_hand["out_trade_no"]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let paid = order(10).await;
    let mut params: BTreeMap<String, String> = [
        ("pid", paid["pid"].as_str()),
        ("trade_no", "GW1"),
        ("out_trade_no", paid["out_trade_no"].as_str()),
        ("type", "alipay"),
        ("name", paid["name"].as_str()),
        ("money", "73.00"),
        ("trade_status", "TRADE_SUCCESS"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let sign = epay::sign(&params, EPAY_KEY);
    params.insert("sign".into(), sign);
    params.insert("sign_type".into(), "MD5".into());
    let resp = server
        .client
        .get(server.url("/api/user/epay/notify"))
        .query(&params)
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.text().await.expect("body"), "success");

    let rows = audit(&root, "").await;
    let user = format!("user:{alice_id}");
    let quota = find(&rows, "user.quota", &user);
    assert_eq!(quota["actor_name"], ROOT_USER);
    assert_eq!(quota["ip"], "127.0.0.1", "the client address");
    assert_eq!(json_of(&quota["after"])["quota"], 5_000);
    assert!(quota["created_at"].as_i64().expect("time") > 0);
    let promote = find(&rows, "user.promote", &user);
    assert_eq!(json_of(&promote["before"])["role"], 1);
    assert_eq!(json_of(&promote["after"])["role"], 10);
    find(&rows, "user.demote", &user);
    let disable = find(&rows, "user.disable", &user);
    assert_eq!(json_of(&disable["after"])["status"], 2);
    find(&rows, "user.enable", &user);
    let clear = find(&rows, "option.update", "option:QuotaForNewUser");
    assert_eq!(json_of(&clear["after"])["QuotaForNewUser"], "123");
    let secret = find(&rows, "option.update", "option:SMTPToken");
    assert_eq!(json_of(&secret["before"])["SMTPToken"], "");
    assert_eq!(json_of(&secret["after"])["SMTPToken"], "[redacted]");
    let created = rows
        .iter()
        .find(|r| r["action"] == "redemption.create")
        .expect("redemption row");
    assert_eq!(json_of(&created["after"])["count"], 2);
    assert_eq!(json_of(&created["after"])["quota"], 700);
    let target = format!("channel:{channel}");
    let changed = find(&rows, "channel.update", &target);
    assert_eq!(
        json_of(&changed["before"])["base_url"],
        "https://one.example.com"
    );
    assert_eq!(
        json_of(&changed["after"])["base_url"],
        "https://two.example.com"
    );
    assert_eq!(json_of(&changed["after"])["key"], "[redacted]");
    assert_eq!(
        rows.iter()
            .filter(|r| r["action"] == "channel.update")
            .count(),
        1,
        "a rename changes neither URL nor key"
    );
    find(&rows, "channel.key.reveal", &target);
    let manual = find(
        &rows,
        "topup.complete.manual",
        &format!("topup:{}", by_hand["out_trade_no"]),
    );
    assert_eq!(json_of(&manual["after"])["user_id"], alice_id);
    let notified = find(
        &rows,
        "topup.complete.notify",
        &format!("topup:{}", paid["out_trade_no"]),
    );
    assert_eq!(notified["actor_id"], 0, "the gateway, not a user");

    // No secret value anywhere in the log.
    let text = serde_json::to_string(&rows).expect("text");
    let mut secrets = vec![
        CHANNEL_KEY.to_owned(),
        NEW_CHANNEL_KEY.to_owned(),
        SMTP_TOKEN.to_owned(),
        EPAY_KEY.to_owned(),
        ROOT_PASS.to_owned(),
    ];
    secrets.extend(
        codes["data"]
            .as_array()
            .expect("codes")
            .iter()
            .map(|c| c.as_str().expect("code").to_owned()),
    );
    for secret in &secrets {
        assert!(!text.contains(secret.as_str()), "{secret} in the audit log");
    }

    // Filters.
    let only_users = audit(&root, "&action=user.").await;
    assert!(
        only_users
            .iter()
            .all(|r| r["action"].as_str().expect("a").starts_with("user."))
    );
    assert_eq!(
        only_users.len(),
        6,
        "created, quota, promote, demote, disable, enable"
    );
    let on_channel = audit(&root, &format!("&target=channel:{channel}")).await;
    assert_eq!(on_channel.len(), 3, "created, updated, key revealed");

    // Log deletion leaves the audit log alone (and adds its own row).
    let before = rows.len();
    let (status, body) = root.delete("/api/log/?target_timestamp=9999999999").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        audit(&root, "").await.len(),
        before + 1,
        "the audit log survives"
    );
}

#[tokio::test]
async fn only_root_reads_the_audit_log() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let admin_id = server.create_user(&root, "admin", "password1").await;
    let (status, body) = root
        .post(
            "/api/user/manage",
            json!({"id": admin_id, "action": "promote"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let admin = server.client_for("admin", "password1").await;
    let (status, _) = admin.get("/api/audit").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "an admin who is not root");
    let (status, _) = Actor::guest(&server).get("/api/audit").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(!audit(&root, "").await.is_empty(), "root reads it");
}

#[tokio::test]
#[expect(
    clippy::too_many_lines,
    reason = "one walk through channel creation and code edits"
)]
async fn channel_creation_and_redemption_edits_leave_rows_without_secrets() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let proxy = "http://user:proxy-PASSWORD-4d2@127.0.0.1:3128";

    // One channel with a key and a proxy, two by batch (one key a line).
    let (status, body) = root
        .post(
            "/api/channel/",
            json!({"mode": "single", "channel": {"name": "one", "type": 1, "key": CHANNEL_KEY,
                   "models": "m", "base_url": "https://one.example.com", "proxy": proxy}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let one = body["data"]["ids"][0].as_i64().expect("id");
    let (status, body) = root
        .post(
            "/api/channel/",
            json!({"mode": "batch", "channel": {"name": "many", "type": 1,
                   "key": format!("{NEW_CHANNEL_KEY}\nsk-audit-channel-key-3"), "models": "m"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let batch: Vec<i64> = body["data"]["ids"]
        .as_array()
        .expect("ids")
        .iter()
        .map(|id| id.as_i64().expect("id"))
        .collect();
    assert_eq!(batch.len(), 2, "{body}");
    // A copy carries the key over: it is a creation too.
    let (status, body) = root
        .post(&format!("/api/channel/copy/{one}"), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let copy = body["data"]["id"].as_i64().expect("id");

    // Redemption codes: an edit, a status change, and an edit refused on a used code.
    let (status, codes) = root
        .post(
            "/api/redemption/",
            json!({"name": "gift", "count": 2, "quota": 700}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{codes}");
    let code_of = |i: usize| codes["data"][i].as_str().expect("code").to_owned();
    let (_, list) = root.get("/api/redemption/?p=1&page_size=10").await;
    let id_of = |code: &str| {
        list["data"]["items"]
            .as_array()
            .expect("items")
            .iter()
            .find(|c| c["key"] == code)
            .and_then(|c| c["id"].as_i64())
            .expect("listed")
    };
    let (edited, used) = (id_of(&code_of(0)), id_of(&code_of(1)));
    let (status, body) = root
        .put(
            "/api/redemption/",
            json!({"id": edited, "name": "bigger", "quota": 900}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = root
        .put(
            "/api/redemption/?status_only=true",
            json!({"id": edited, "status": 2}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = root
        .post("/api/user/topup", json!({"key": code_of(1)}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, body) = root
        .put("/api/redemption/", json!({"id": used, "quota": 5}))
        .await;
    assert_eq!(
        body["success"], false,
        "a used code cannot be edited: {body}"
    );

    let rows = audit(&root, "").await;
    let created = find(&rows, "channel.create", &format!("channel:{one}"));
    assert_eq!(created["actor_name"], ROOT_USER);
    assert_eq!(created["ip"], "127.0.0.1");
    assert_eq!(created["before"], "");
    let after = json_of(&created["after"]);
    assert_eq!(after["name"], "one");
    assert_eq!(after["type"], 1);
    assert_eq!(after["base_url"], "https://one.example.com");
    assert_eq!(after["key"], "[redacted]");
    assert_eq!(after["proxy"], "[redacted]");
    for id in &batch {
        let row = find(&rows, "channel.create", &format!("channel:{id}"));
        assert_eq!(json_of(&row["after"])["key"], "[redacted]");
    }
    let row = find(&rows, "channel.create", &format!("channel:{copy}"));
    let after = json_of(&row["after"]);
    assert_eq!(after["copied_from"], one);
    assert_eq!(after["key"], "[redacted]");

    let on_code = audit(
        &root,
        &format!("&action=redemption.update&target=redemption:{edited}"),
    )
    .await;
    assert_eq!(on_code.len(), 2, "{on_code:#?}");
    let status_row = &on_code[0];
    assert_eq!(status_row["action"], "redemption.update");
    assert_eq!(json_of(&status_row["before"])["status"], 1);
    assert_eq!(json_of(&status_row["after"])["status"], 2);
    let edit_row = &on_code[1];
    assert_eq!(
        json_of(&edit_row["before"]),
        json!({"name": "gift", "quota": 700, "status": 1})
    );
    assert_eq!(
        json_of(&edit_row["after"]),
        json!({"name": "bigger", "quota": 900, "status": 1})
    );
    assert!(
        audit(
            &root,
            &format!("&action=redemption.update&target=redemption:{used}"),
        )
        .await
        .is_empty(),
        "a refused edit leaves no row"
    );

    let text = serde_json::to_string(&rows).expect("text");
    for secret in [
        CHANNEL_KEY.to_owned(),
        NEW_CHANNEL_KEY.to_owned(),
        "sk-audit-channel-key-3".to_owned(),
        "proxy-PASSWORD-4d2".to_owned(),
        code_of(0),
        code_of(1),
    ] {
        assert!(!text.contains(secret.as_str()), "{secret} in the audit log");
    }
}

#[tokio::test]
async fn price_reset_log_deletion_backup_channel_deletion_and_user_creation_leave_rows() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;

    // An admin made by root.
    let (status, body) = root
        .post(
            "/api/user/",
            json!({"username": "clerk", "password": "password1", "role": 10}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let clerk = body["data"]["id"].as_i64().expect("id");
    // A price table edited, then the tables reset.
    server
        .set_option(&root, "ModelRatio", json!(r#"{"gpt-audit": 3}"#))
        .await;
    let (status, body) = root.post("/api/option/rest_model_ratio", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Logs deleted.
    let (status, body) = root.delete("/api/log/?target_timestamp=1000").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // A backup taken.
    let (status, _) = root.get("/api/backup").await;
    assert_eq!(status, StatusCode::OK);
    // Channels deleted: one by id, two by batch.
    let mut ids = Vec::new();
    for name in ["a", "b", "c"] {
        let (status, body) = root
            .post(
                "/api/channel/",
                json!({"mode": "single", "channel": {"name": name, "type": 1,
                       "key": CHANNEL_KEY, "models": "m", "base_url": "https://x.example.com"}}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        ids.push(body["data"]["ids"][0].as_i64().expect("id"));
    }
    let (status, body) = root.delete(&format!("/api/channel/{}", ids[0])).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = root
        .post("/api/channel/batch", json!({"ids": [ids[1], ids[2]]}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let rows = audit(&root, "").await;
    let created = find(&rows, "user.create", &format!("user:{clerk}"));
    assert_eq!(json_of(&created["after"])["username"], "clerk");
    assert_eq!(json_of(&created["after"])["role"], 10);
    assert_eq!(created["actor_name"], ROOT_USER);
    let reset = find(&rows, "pricing.reset", "option:prices");
    assert_eq!(
        json_of(&reset["before"])["ModelRatio"],
        r#"{"gpt-audit": 3}"#,
        "{reset}"
    );
    assert_eq!(json_of(&reset["after"])["ModelRatio"], "{}");
    let deleted = find(&rows, "log.delete", "logs");
    assert_eq!(json_of(&deleted["after"])["target_timestamp"], 1000);
    let backup = find(&rows, "backup.download", "database");
    assert!(json_of(&backup["after"])["bytes"].as_u64().expect("bytes") > 0);
    assert_eq!(backup["ip"], "127.0.0.1");
    for id in &ids {
        let gone = find(&rows, "channel.delete", &format!("channel:{id}"));
        assert_eq!(
            json_of(&gone["before"])["base_url"],
            "https://x.example.com"
        );
        assert_eq!(json_of(&gone["before"])["key"], "[redacted]");
    }
    let text = serde_json::to_string(&rows).expect("text");
    assert!(!text.contains(CHANNEL_KEY), "no key in the audit log");
}

#[tokio::test]
async fn a_quota_edit_records_the_stored_balance_as_before() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let alice_id = server.create_user(&root, "alice", "password1").await;
    let (status, body) = root
        .put("/api/user/", json!({"id": alice_id, "quota": 5_000}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Alice redeems 700 while the editor still shows 5,000.
    let (status, codes) = root
        .post(
            "/api/redemption/",
            json!({"name": "gift", "count": 1, "quota": 700}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{codes}");
    let alice = server.client_for("alice", "password1").await;
    let (status, body) = alice
        .post("/api/user/topup", json!({"key": codes["data"][0]}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The editor's stale view: 5,000 → 9,000 adds 4,000 to the 5,700 held.
    let (status, body) = root
        .put(
            "/api/user/",
            json!({"id": alice_id, "quota": 9_000, "quota_before": 5_000}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let rows = audit(&root, "&action=user.quota").await;
    let last = &rows[0];
    assert_eq!(json_of(&last["before"])["quota"], 5_700, "{last}");
    assert_eq!(json_of(&last["after"])["quota"], 9_700, "{last}");
    assert_eq!(json_of(&last["after"])["delta"], 4_000, "{last}");
    // A made-up quota_before does not write a made-up "before" either.
    let (status, body) = root
        .put(
            "/api/user/",
            json!({"id": alice_id, "quota": 1, "quota_before": 0}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let rows = audit(&root, "&action=user.quota").await;
    assert_eq!(json_of(&rows[0]["before"])["quota"], 9_700, "{}", rows[0]);
    assert_eq!(json_of(&rows[0]["after"])["quota"], 9_701, "{}", rows[0]);
}
