//! Usage logs through the public API: every filter combination of GET /api/log/ and
//! /api/log/self/ against a seeded database (items, paging, totals), stats against sums computed
//! here, deletion by time while the relay keeps writing, the dashboard aggregates against the
//! raw logs, and the attempt timeline shown to admins only.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::mock_upstream::MockUpstream;
use common::relay_fixture::{chat, hi};
use common::{Actor, ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate::clock::now_unix;
use tollgate_storage::UserId;
use tollgate_storage::logs::{self, LOG_CONSUME, LOG_ERROR, LOG_TOPUP, LogEntry};

/// An hour boundary plus a bit, so time ranges cut hours in the middle.
const BASE: i64 = 1_700_000_000 + 1234;

/// The seeded rows: three users, three models, two token names, four channels, two groups,
/// three types, spread over ~16 hours; plus four rows of the last minutes (for rpm / tpm).
fn seed_rows(users: [(i64, &str); 3]) -> Vec<LogEntry> {
    let mut x: u64 = 42;
    let mut next = move |n: u64| {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) % n
    };
    let mut rows = Vec::new();
    for i in 0..600i64 {
        let (uid, uname) = users[next(3) as usize];
        let log_type = match next(10) {
            0 => LOG_ERROR,
            1 => LOG_TOPUP,
            _ => LOG_CONSUME,
        };
        rows.push(LogEntry {
            created_at: BASE + i * 97,
            log_type,
            user_id: UserId(uid),
            username: uname.to_owned(),
            token_name: ["default", "k2"][next(2) as usize].to_owned(),
            model_name: ["gpt-4o", "gpt-4o-mini", "claude"][next(3) as usize].to_owned(),
            channel_id: 1 + next(4) as i64,
            group: ["default", "vip"][next(2) as usize].to_owned(),
            prompt_tokens: 10 + next(100) as i64,
            completion_tokens: next(50) as i64,
            quota: 1 + next(1000) as i64,
            other: r#"{"admin_info":{"use_channel":[1]},"frt":5}"#.to_owned(),
            ..LogEntry::default()
        });
    }
    let now = now_unix();
    for (k, age) in [5, 10, 20, 300].into_iter().enumerate() {
        let (uid, uname) = users[k % 2 + 1];
        rows.push(LogEntry {
            created_at: now - age,
            log_type: LOG_CONSUME,
            user_id: UserId(uid),
            username: uname.to_owned(),
            token_name: "default".into(),
            model_name: "gpt-4o".into(),
            channel_id: 2,
            group: "vip".into(),
            prompt_tokens: 100 + age,
            completion_tokens: 7,
            quota: 1000 + age,
            other: r#"{"admin_info":{"use_channel":[2]},"frt":5}"#.to_owned(),
            ..LogEntry::default()
        });
    }
    rows
}

/// One filter combination: the query string and the rule it stands for.
#[derive(Debug, Clone, Default)]
struct Combo {
    log_type: Option<i32>,
    user: Option<(i64, String)>,
    token: Option<&'static str>,
    model: Option<&'static str>,
    channel: Option<i64>,
    group: Option<&'static str>,
    range: Option<(i64, i64)>,
}

impl Combo {
    fn query(&self, admin: bool) -> String {
        let mut q = vec![format!("type={}", self.log_type.unwrap_or(0))];
        if let Some((_, name)) = &self.user {
            q.push(format!("username={name}"));
        }
        q.push(format!("token_name={}", self.token.unwrap_or("")));
        q.push(format!("model_name={}", self.model.unwrap_or("")));
        if admin {
            q.push(format!(
                "channel={}",
                self.channel.map(|c| c.to_string()).unwrap_or_default()
            ));
        }
        q.push(format!("group={}", self.group.unwrap_or("")));
        if let Some((s, e)) = self.range {
            q.push(format!("start_timestamp={s}&end_timestamp={e}"));
        }
        q.join("&")
    }

    fn matches(&self, e: &LogEntry, ignore_type_and_time: bool) -> bool {
        (ignore_type_and_time || self.log_type.is_none_or(|t| e.log_type == t))
            && self.user.as_ref().is_none_or(|(u, _)| e.user_id.0 == *u)
            && self.token.is_none_or(|t| e.token_name == t)
            && self.model.is_none_or(|m| e.model_name == m)
            && self.channel.is_none_or(|c| e.channel_id == c)
            && self.group.is_none_or(|g| e.group == g)
            && (ignore_type_and_time
                || self
                    .range
                    .is_none_or(|(s, t)| e.created_at >= s && e.created_at <= t))
    }
}

/// Every combination of the given choices.
fn combos(users: &[Option<(i64, String)>], channels: &[Option<i64>]) -> Vec<Combo> {
    let mut out = Vec::new();
    for log_type in [None, Some(LOG_CONSUME), Some(LOG_ERROR)] {
        for user in users {
            for token in [None, Some("k2")] {
                for model in [None, Some("gpt-4o")] {
                    for channel in channels {
                        for group in [None, Some("vip")] {
                            for range in [None, Some((BASE + 5000, BASE + 40_000))] {
                                out.push(Combo {
                                    log_type,
                                    user: user.clone(),
                                    token,
                                    model,
                                    channel: *channel,
                                    group,
                                    range,
                                });
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

struct Seeded {
    /// Kept alive for the test's duration.
    _server: TestServer,
    root: Actor,
    alice: Actor,
    rows: Vec<LogEntry>,
}

#[expect(clippy::expect_used, reason = "test fixture")]
async fn seeded() -> Seeded {
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let alice_id = server.create_user(&root, "alice", "password1").await;
    let bob_id = server.create_user(&root, "bob", "password1").await;
    let alice = server.client_for("alice", "password1").await;
    let rows = seed_rows([(root.id, "root"), (alice_id, "alice"), (bob_id, "bob")]);
    let to_insert = rows.clone();
    let ids = server
        .store()
        .write_blocking(move |wtx| logs::insert_batch(wtx, to_insert, true))
        .expect("seed");
    let rows = rows
        .into_iter()
        .zip(ids)
        .map(|(mut r, id)| {
            r.id = id;
            r
        })
        .collect();
    Seeded {
        _server: server,
        root,
        alice,
        rows,
    }
}

fn ids(body: &Value) -> Vec<i64> {
    body["data"]["items"]
        .as_array()
        .map(|items| items.iter().filter_map(|i| i["id"].as_i64()).collect())
        .unwrap_or_default()
}

/// Checks pages 1 and 2 (7 rows each), the total and the stat of `combo` on `base` for `actor`.
async fn check(actor: &Actor, base: &str, combo: &Combo, rows: &[LogEntry], admin: bool) {
    let q = combo.query(admin);
    let mut expected: Vec<&LogEntry> = rows.iter().filter(|e| combo.matches(e, false)).collect();
    expected.sort_by_key(|e| std::cmp::Reverse((e.created_at, e.id)));
    for page in [1usize, 2] {
        let (status, body) = actor.get(&format!("{base}?p={page}&page_size=7&{q}")).await;
        assert_eq!(status, StatusCode::OK, "{q}: {body}");
        let want: Vec<i64> = expected
            .iter()
            .skip((page - 1) * 7)
            .take(7)
            .map(|e| e.id)
            .collect();
        assert_eq!(ids(&body), want, "page {page} of {base}?{q}");
        assert_eq!(
            body["data"]["total"].as_u64(),
            Some(expected.len() as u64),
            "total of {base}?{q}"
        );
        assert_eq!(body["data"]["total_exact"], true);
        assert_eq!(body["data"]["page"], page);
        assert_eq!(body["data"]["page_size"], 7);
    }
    // Stat: consume quota of the filter (any type); rpm / tpm: the last minute, time range aside.
    let quota: i64 = rows
        .iter()
        .filter(|e| e.log_type == LOG_CONSUME && combo.matches(e, true))
        .filter(|e| {
            combo
                .range
                .is_none_or(|(s, t)| e.created_at >= s && e.created_at <= t)
        })
        .map(|e| e.quota)
        .sum();
    let recent: Vec<&LogEntry> = rows
        .iter()
        .filter(|e| e.log_type == LOG_CONSUME && combo.matches(e, true))
        .filter(|e| e.created_at >= now_unix() - 60)
        .collect();
    let stat_path = format!("{}stat?{q}", base.trim_end_matches('/').to_owned() + "/");
    let (status, body) = actor.get(&stat_path).await;
    assert_eq!(status, StatusCode::OK, "{stat_path}: {body}");
    assert_eq!(body["data"]["quota"].as_i64(), Some(quota), "quota of {q}");
    assert_eq!(
        body["data"]["rpm"].as_i64(),
        Some(recent.len() as i64),
        "rpm of {q}"
    );
    let tpm: i64 = recent
        .iter()
        .map(|e| e.prompt_tokens + e.completion_tokens)
        .sum();
    assert_eq!(body["data"]["tpm"].as_i64(), Some(tpm), "tpm of {q}");
}

#[tokio::test]
async fn every_admin_filter_combination_pages_counts_and_sums_right() {
    let s = seeded().await;
    let users = [None, Some((s.alice.id, "alice".to_owned()))];
    let all = combos(&users, &[None, Some(2)]);
    assert_eq!(all.len(), 192);
    for combo in &all {
        check(&s.root, "/api/log/", combo, &s.rows, true).await;
    }
}

#[tokio::test]
async fn every_self_filter_combination_sees_only_own_rows_without_admin_info() {
    let s = seeded().await;
    let me = Some((s.alice.id, "alice".to_owned()));
    for mut combo in combos(&[None], &[None]) {
        // The self call ignores username and channel: the filter is always "me".
        let q = combo.query(false);
        combo.user = me.clone();
        check(&s.alice, "/api/log/self/", &combo, &s.rows, false).await;
        let (_, body) = s
            .alice
            .get(&format!(
                "/api/log/self/?p=1&page_size=7&{q}&username=bob&channel=3"
            ))
            .await;
        for item in body["data"]["items"].as_array().into_iter().flatten() {
            assert_eq!(item["user_id"], s.alice.id, "{q}");
            let other: Value =
                serde_json::from_str(item["other"].as_str().unwrap_or("{}")).unwrap_or_default();
            assert!(
                other.get("admin_info").is_none(),
                "admin_info leaked: {item}"
            );
            assert_eq!(other["frt"], 5, "the rest of other is kept");
        }
    }
    // Admin-only calls refuse users.
    let (status, _) = s.alice.get("/api/log/").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = s.alice.get("/api/log/stat").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = s.alice.delete("/api/log/?target_timestamp=1").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // An unknown username matches nothing; a malformed number is a clear 400.
    let (_, body) = s.root.get("/api/log/?username=nobody").await;
    assert_eq!(body["data"]["total"], 0);
    let (status, body) = s.root.get("/api/log/?channel=abc").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

/// A server with one mock channel serving gpt-4o and gpt-4o-mini, and users with keys.
#[expect(clippy::expect_used, reason = "test fixture")]
async fn relay_fixture(
    server: &TestServer,
    mock: &MockUpstream,
    names: &[&str],
) -> (Actor, Vec<(Actor, String)>) {
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
    let mut users = Vec::new();
    for name in names {
        let id = server.create_user(&root, name, "password1").await;
        root.put("/api/user/", json!({"id": id, "quota": 100_000_000}))
            .await;
        let actor = server.client_for(name, "password1").await;
        let (_, token) = actor
            .post(
                "/api/token/",
                json!({"name": "k", "unlimited_quota": true, "remain_quota": 0}),
            )
            .await;
        let tid = token["data"]["id"].as_i64().expect("token id");
        let (_, full) = actor
            .post(&format!("/api/token/{tid}/key"), json!({}))
            .await;
        let key = full["data"]["key"].as_str().expect("key").to_owned();
        users.push((actor, key));
    }
    (root, users)
}

#[tokio::test]
async fn deleting_by_time_removes_exactly_the_older_rows_while_the_relay_writes() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((30, 10, 0)));
    let server = TestServer::start().await;
    let (root, users) = relay_fixture(&server, &mock, &["payer"]).await;
    let (payer, key) = &users[0];
    // 3000 old rows (about 12 deletion batches) from 40 days ago on.
    let now = now_unix();
    let old: Vec<LogEntry> = (0..3000)
        .map(|i| LogEntry {
            created_at: now - 40 * 86_400 + i * 600,
            log_type: LOG_CONSUME,
            user_id: UserId(payer.id),
            username: "payer".into(),
            model_name: ["gpt-4o", "gpt-4o-mini"][(i % 2) as usize].into(),
            quota: 3,
            ..LogEntry::default()
        })
        .collect();
    let target = now - 30 * 86_400;
    let older = old.iter().filter(|e| e.created_at < target).count() as u64;
    let store = server.store().clone();
    let seeded = store
        .write_blocking(move |wtx| logs::insert_batch(wtx, old, true))
        .unwrap_or_default();
    assert_eq!(seeded.len(), 3000);

    // The relay writes while the deletion runs.
    let load = {
        let (server_url, key) = (server.url("/v1/chat/completions"), key.clone());
        tokio::spawn(async move {
            let client = reqwest::Client::new();
            let mut ok = 0;
            for i in 0..60 {
                let model = if i % 2 == 0 { "gpt-4o" } else { "gpt-4o-mini" };
                let resp = client
                    .post(&server_url)
                    .bearer_auth(&key)
                    .json(&json!({"model": model, "messages": [{"role": "user", "content": "x"}]}))
                    .send()
                    .await;
                if resp.is_ok_and(|r| r.status().is_success()) {
                    ok += 1;
                }
            }
            ok
        })
    };
    let (status, body) = root
        .delete(&format!("/api/log/?target_timestamp={target}"))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"].as_u64(), Some(older), "the count to delete");
    let progress = loop {
        let (_, p) = root.get("/api/log/delete_progress").await;
        if p["data"]["running"] == false {
            break p;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(
        progress["data"]["deleted"].as_u64(),
        Some(older),
        "{progress}"
    );
    assert_eq!(progress["data"]["total"].as_u64(), Some(older));
    assert_eq!(progress["data"]["error"], "");
    let relayed: i64 = load.await.unwrap_or_default();
    assert_eq!(relayed, 60, "every request succeeded during the deletion");
    server.flush().await;

    // Exactly the older rows are gone; every new row is there; counters agree with the rows.
    let all = store.read_blocking(logs::all).unwrap_or_default();
    assert!(all.iter().all(|e| e.created_at >= target));
    let consumed = all.iter().filter(|e| e.log_type == LOG_CONSUME).count() as u64;
    assert_eq!(
        consumed,
        3000 - older + 60,
        "plus the set-up's balance rows"
    );
    let (_, body) = root.get("/api/log/?page_size=1").await;
    assert_eq!(body["data"]["total"].as_u64(), Some(all.len() as u64));
    for model in ["gpt-4o", "gpt-4o-mini"] {
        let (_, body) = root
            .get(&format!("/api/log/?model_name={model}&username=payer"))
            .await;
        let want = all.iter().filter(|e| e.model_name == model).count() as u64;
        assert_eq!(body["data"]["total"].as_u64(), Some(want), "{model}");
        let (_, stat) = root.get(&format!("/api/log/stat?model_name={model}")).await;
        let quota: i64 = all
            .iter()
            .filter(|e| e.model_name == model)
            .map(|e| e.quota)
            .sum();
        assert_eq!(stat["data"]["quota"].as_i64(), Some(quota), "{model}");
    }
    // Nothing older is left: a second deletion finds nothing.
    let (_, body) = root
        .delete(&format!("/api/log/?target_timestamp={target}"))
        .await;
    assert_eq!(body["data"], 0, "{body}");
    let (status, body) = root.delete("/api/log/").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[tokio::test]
async fn dashboard_aggregates_equal_the_sums_of_the_raw_logs() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((120, 45, 0)));
    let server = TestServer::start().await;
    let (root, users) = relay_fixture(&server, &mock, &["ann", "ben"]).await;
    let mut tasks = Vec::new();
    for (u, (_, key)) in users.iter().enumerate() {
        for i in 0..20 {
            let (url, key) = (server.url("/v1/chat/completions"), key.clone());
            let model = if (i + u) % 3 == 0 {
                "gpt-4o-mini"
            } else {
                "gpt-4o"
            };
            tasks.push(tokio::spawn(async move {
                reqwest::Client::new()
                    .post(url)
                    .bearer_auth(key)
                    .json(&json!({"model": model, "messages": [{"role": "user", "content": "x"}]}))
                    .send()
                    .await
                    .is_ok_and(|r| r.status().is_success())
            }));
        }
    }
    for t in tasks {
        assert!(t.await.unwrap_or(false), "request failed");
    }
    server.flush().await;
    let raw: Vec<LogEntry> = server
        .store()
        .read_blocking(logs::all)
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.log_type == LOG_CONSUME)
        .collect();
    assert_eq!(
        raw.len(),
        40,
        "consume rows (the set-up's balance rows aside)"
    );

    // Sums of the raw logs per (user, model), per model and per user.
    let mut want: BTreeMap<(i64, String), (i64, i64, i64)> = BTreeMap::new();
    for e in &raw {
        let w = want.entry((e.user_id.0, e.model_name.clone())).or_default();
        w.0 += 1;
        w.1 += e.quota;
        w.2 += e.prompt_tokens + e.completion_tokens;
    }
    let sum = |rows: &Value, key: &dyn Fn(&Value) -> bool| -> (i64, i64, i64) {
        rows.as_array()
            .into_iter()
            .flatten()
            .filter(|r| key(r))
            .fold((0, 0, 0), |a, r| {
                (
                    a.0 + r["count"].as_i64().unwrap_or(0),
                    a.1 + r["quota"].as_i64().unwrap_or(0),
                    a.2 + r["token_used"].as_i64().unwrap_or(0),
                )
            })
    };
    let now = now_unix();
    let range = format!("start_timestamp={}&end_timestamp={}", now - 7200, now + 60);
    let (_, by_model) = root.get(&format!("/api/data/?{range}")).await;
    let (_, by_user) = root.get(&format!("/api/data/users?{range}")).await;
    for model in ["gpt-4o", "gpt-4o-mini"] {
        let expect = want
            .iter()
            .filter(|((_, m), _)| m == model)
            .fold((0, 0, 0), |a, (_, w)| (a.0 + w.0, a.1 + w.1, a.2 + w.2));
        assert_eq!(
            sum(&by_model["data"], &|r| r["model_name"] == model),
            expect,
            "{model}: {by_model}"
        );
    }
    for (actor, _) in &users {
        let expect = want
            .iter()
            .filter(|((u, _), _)| *u == actor.id)
            .fold((0, 0, 0), |a, (_, w)| (a.0 + w.0, a.1 + w.1, a.2 + w.2));
        assert_eq!(sum(&by_user["data"], &|r| r["user_id"] == actor.id), expect);
        // Their own view, per model; and the admin's view of that user.
        let (_, own) = actor.get(&format!("/api/data/self?{range}")).await;
        let (_, named) = root
            .get(&format!(
                "/api/data/?{range}&username={}",
                own["data"][0]["username"].as_str().unwrap_or("")
            ))
            .await;
        for model in ["gpt-4o", "gpt-4o-mini"] {
            let w = want
                .get(&(actor.id, model.to_owned()))
                .copied()
                .unwrap_or_default();
            assert_eq!(sum(&own["data"], &|r| r["model_name"] == model), w, "{own}");
            assert_eq!(sum(&named["data"], &|r| r["model_name"] == model), w);
        }
    }
    // A user may not ask for more than a month at once; the admin-only calls refuse users.
    let (_, own) = users[0]
        .0
        .get(&format!(
            "/api/data/self?start_timestamp={}&end_timestamp={now}",
            now - 40 * 86_400
        ))
        .await;
    assert_eq!(own["success"], false, "{own}");
    let (status, _) = users[0].0.get("/api/data/").await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // DataExportEnabled off: requests are still logged, the dashboard no longer grows.
    server
        .set_option(&root, "DataExportEnabled", json!("false"))
        .await;
    assert_eq!(
        chat(&server, &users[0].1, hi("gpt-4o")).await.0,
        StatusCode::OK
    );
    server.flush().await;
    let (_, after) = root.get(&format!("/api/data/?{range}")).await;
    assert_eq!(sum(&after["data"], &|_| true).0, 40);
    let (_, logs_now) = root.get("/api/log/?page_size=1&type=2").await;
    assert_eq!(logs_now["data"]["total"], 41);
}

#[tokio::test]
async fn the_attempt_timeline_is_logged_for_admins_only() {
    let primary = MockUpstream::start().await;
    let backup = MockUpstream::start().await;
    backup.set_usage(Some((5, 5, 0)));
    let server = TestServer::start().await;
    let (root, users) = relay_fixture(&server, &primary, &["carol"]).await;
    let (carol, key) = &users[0];
    root.put("/api/channel/", json!({"id": 1, "priority": 10}))
        .await;
    let (status, body) = root
        .post(
            "/api/channel/",
            json!({"name": "backup", "type": 1, "key": "backup-key",
            "base_url": backup.base, "models": "gpt-4o", "group": "default", "priority": 0}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    server.set_option(&root, "RetryTimes", json!("2")).await;
    primary.push_fault(503, json!({"error": {"message": "overloaded"}}));
    assert_eq!(chat(&server, key, hi("gpt-4o")).await.0, StatusCode::OK);
    server.flush().await;

    let (_, admin_view) = root.get("/api/log/").await;
    let row = &admin_view["data"]["items"][0];
    assert_eq!(row["channel"], 2, "the backup answered");
    assert_eq!(row["channel_name"], "backup");
    let other: Value =
        serde_json::from_str(row["other"].as_str().unwrap_or("")).unwrap_or_default();
    let attempts = &other["admin_info"]["attempts"];
    assert_eq!(other["admin_info"]["use_channel"], json!([1, 2]));
    assert_eq!(attempts[0]["c"], 1);
    assert_eq!(attempts[0]["s"], 503);
    assert_eq!(attempts[0]["e"], "server");
    assert_eq!(attempts[1]["c"], 2);
    assert_eq!(attempts[1]["s"], 200);
    assert_eq!(attempts[1]["e"], "");
    assert!(attempts[1]["ms"].is_u64());

    let (_, own) = carol.get("/api/log/self/").await;
    let row = &own["data"]["items"][0];
    assert_eq!(row["channel_name"], "");
    let other: Value =
        serde_json::from_str(row["other"].as_str().unwrap_or("")).unwrap_or_default();
    assert!(other.get("admin_info").is_none(), "{row}");
    assert_eq!(other["usage_source"], "upstream");

    // The admin's user popover: username, quota, used_quota, request_count.
    let (_, user) = root.get(&format!("/api/user/{}", carol.id)).await;
    assert_eq!(user["data"]["username"], "carol");
    assert_eq!(user["data"]["request_count"], 1);
    assert!(user["data"]["quota"].is_i64() && user["data"]["used_quota"].is_i64());
}

#[tokio::test]
async fn a_second_deletion_while_one_runs_is_refused() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    // Enough rows that the job (32 rows per transaction) outlives both requests' arrival.
    let rows: Vec<LogEntry> = (0..6_000)
        .map(|i| LogEntry {
            created_at: BASE + i,
            log_type: LOG_CONSUME,
            user_id: UserId(root.id),
            model_name: "gpt-4o".into(),
            quota: 1,
            ..LogEntry::default()
        })
        .collect();
    let seeded = server
        .store()
        .write_blocking(move |wtx| logs::insert_batch(wtx, rows, true));
    assert!(seeded.is_ok(), "seed: {seeded:?}");
    let target = format!("/api/log/?target_timestamp={}", BASE + 10_000);
    let (a, b) = tokio::join!(root.delete(&target), root.delete(&target));
    let (ok, refused) = if a.0 == StatusCode::OK {
        (a, b)
    } else {
        (b, a)
    };
    assert_eq!(ok.0, StatusCode::OK, "{}", ok.1);
    assert_eq!(ok.1["data"], 6_000, "{}", ok.1);
    assert_eq!(refused.0, StatusCode::BAD_REQUEST, "{}", refused.1);
    assert_eq!(refused.1["success"], false);
    assert!(
        refused.1["message"]
            .as_str()
            .is_some_and(|m| m.contains("already running")),
        "{}",
        refused.1
    );
    // Once the job is done, a new deletion is accepted again.
    loop {
        let (_, p) = root.get("/api/log/delete_progress").await;
        if p["data"]["running"] == false {
            assert_eq!(p["data"]["deleted"], 6_000, "{p}");
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (status, body) = root.delete(&target).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"], 0, "{body}");
}
