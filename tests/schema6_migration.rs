//! A real schema-6 database (written by Tollgate at commit 8ea6bcc, the end of wave 2:
//! tests/fixtures/schema6/, made by its make.sh) is migrated through today's whole chain, and
//! the migrated server answers what the old one answered: every log row field for field, the
//! total and the rows of each log filter the console offers, the statistics' quota under each
//! filter, and every user's balance, used quota and request count (`expected.json`, written by
//! make.sh from the old server's own answers). Then the old passwords sign in, the old API keys
//! authenticate at the relay and the unused code redeems once.
//!
//! A migration that changes a stored format adds what it must keep to `serves_the_old_data`.
//! Schema 7 (log postings) adds `the_log_index_answers_every_filter`: on the migrated file,
//! every filter of one or two dimensions (each value the rows hold) with and without a time
//! window pages, totals and sums exactly what a count over the rows gives, and the schema-6
//! filter index and recent counters are gone.

#![expect(clippy::expect_used, reason = "test helpers fail the test loudly")]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{ROOT_PASS, ROOT_USER, TestServer};
use redb::{ReadableDatabase, TableHandle};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate_storage::logs::query::{self, LogFilter};
use tollgate_storage::logs::{self, LOG_CONSUME, LogEntry};
use tollgate_storage::migrate::CURRENT_SCHEMA;
use tollgate_storage::store::DB_FILE_NAME;
use tollgate_storage::tables::META;
use tollgate_storage::{Store, UserId};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/schema6")
        .join(name)
}

fn read_json(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture(name)).expect(name)).expect("JSON")
}

/// A fresh copy of the fixture in a data directory, checked to be a schema-6 file.
fn copy_of_fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::copy(fixture("tollgate.redb"), dir.path().join(DB_FILE_NAME)).expect("copy");
    let db = redb::Database::open(dir.path().join(DB_FILE_NAME)).expect("open the copy");
    let rtx = db.begin_read().expect("read");
    let meta = rtx.open_table(META).expect("meta");
    let schema = meta
        .get("schema_version")
        .expect("get")
        .expect("schema_version")
        .value()
        .to_vec();
    assert_eq!(schema, [6], "the fixture is a schema-6 file");
    dir
}

/// Every row of `GET /api/log/?{filter}`, over all pages.
async fn all_rows(server: &TestServer, root: i64, filter: &str) -> (i64, Vec<Value>) {
    let mut rows = Vec::new();
    let mut page = 1;
    loop {
        let path = format!("/api/log/?{filter}&p={page}&page_size=100");
        let (status, body) = server.get_as(root, &path).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        let items = body["data"]["items"].as_array().expect("items").clone();
        let total = body["data"]["total"].as_i64().expect("total");
        let last = items.len() < 100;
        rows.extend(items);
        if last {
            return (total, rows);
        }
        page += 1;
    }
}

/// Asserts that every field `expected` has is in `actual` with the same value (a later
/// schema may add fields, never change or drop one).
fn assert_fields_kept(expected: &Value, actual: &Value, what: &str) {
    let expected = expected.as_object().expect("an object");
    for (key, value) in expected {
        assert_eq!(
            actual.get(key),
            Some(value),
            "{what}: field {key} of {actual}"
        );
    }
}

async fn serves_the_old_data(server: &TestServer) {
    let expected = read_json("expected.json");
    let root = server.login(ROOT_USER, ROOT_PASS).await;

    // Every row, field for field.
    let (_, rows) = all_rows(server, root, "").await;
    let by_id: BTreeMap<i64, &Value> = rows
        .iter()
        .map(|r| (r["id"].as_i64().expect("id"), r))
        .collect();
    let old_rows = expected["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), old_rows.len(), "the same number of rows");
    for old in old_rows {
        let id = old["id"].as_i64().expect("id");
        assert!(by_id.contains_key(&id), "row {id} is gone");
        let new = by_id.get(&id).expect("checked above");
        assert_fields_kept(old, new, &format!("log row {id}"));
    }

    // Each filter: the same total and the same rows in the same order; the same statistics.
    for (filter, old) in expected["logs"].as_object().expect("logs") {
        let (total, rows) = all_rows(server, root, filter).await;
        assert_eq!(Some(total), old["total"].as_i64(), "total of ?{filter}");
        let ids: Vec<Value> = rows.iter().map(|r| r["id"].clone()).collect();
        assert_eq!(&Value::from(ids), &old["ids"], "rows of ?{filter}");
    }
    for (filter, old) in expected["stats"].as_object().expect("stats") {
        let (status, body) = server
            .get_as(root, &format!("/api/log/stat?{filter}"))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(
            body["data"]["quota"], old["quota"],
            "stat quota of ?{filter}"
        );
    }

    // Every user's balance, used quota and request count.
    let (status, body) = server.get_as(root, "/api/user/?p=1&page_size=100").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let users = body["data"]["items"].as_array().expect("users");
    for old in expected["users"].as_array().expect("users") {
        let new = users.iter().find(|u| u["id"] == old["id"]);
        assert!(new.is_some(), "user {old} is gone");
        let new = new.expect("checked above");
        assert_fields_kept(old, new, "user");
    }

    // The old keys authenticate at the relay.
    let values = read_json("values.json");
    for key in values["api_keys"].as_array().expect("api_keys") {
        let key = key.as_str().expect("a key");
        let status = server
            .client
            .get(server.url("/v1/models"))
            .bearer_auth(key)
            .send()
            .await
            .expect("sent")
            .status();
        assert_eq!(status, StatusCode::OK, "an old API key authenticates");
    }

    // A user signs in with the old password and redeems the unused code, once.
    let alice = server.client_for("alice", "password-alice").await;
    let code = json!({"key": values["unused_code"]});
    let (status, body) = alice.post("/api/user/topup", code.clone()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["success"], true, "the old code redeems: {body}");
    let (_, body) = alice.post("/api/user/topup", code).await;
    assert_eq!(body["success"], false, "and only once: {body}");
}

/// Every filter of at most two dimensions, each with every value the rows hold.
fn filters_of(rows: &[LogEntry]) -> Vec<LogFilter> {
    let set = |f: &dyn Fn(&LogEntry) -> LogFilter| {
        let mut v: Vec<LogFilter> = rows.iter().map(f).collect();
        v.dedup();
        v.sort_by_key(|f| format!("{f:?}"));
        v.dedup();
        v
    };
    let dims: Vec<Vec<LogFilter>> = vec![
        set(&|e| LogFilter {
            user: Some(e.user_id),
            ..LogFilter::default()
        }),
        set(&|e| LogFilter {
            model_name: Some(e.model_name.clone()),
            ..LogFilter::default()
        }),
        set(&|e| LogFilter {
            token_name: Some(e.token_name.clone()),
            ..LogFilter::default()
        }),
        set(&|e| LogFilter {
            channel: Some(e.channel_id),
            ..LogFilter::default()
        }),
        set(&|e| LogFilter {
            group: Some(e.group.clone()),
            ..LogFilter::default()
        }),
        set(&|e| LogFilter {
            log_type: Some(e.log_type),
            ..LogFilter::default()
        }),
    ];
    let merge = |a: &LogFilter, b: &LogFilter| LogFilter {
        user: a.user.or(b.user),
        model_name: a.model_name.clone().or_else(|| b.model_name.clone()),
        token_name: a.token_name.clone().or_else(|| b.token_name.clone()),
        channel: a.channel.or(b.channel),
        group: a.group.clone().or_else(|| b.group.clone()),
        log_type: a.log_type.or(b.log_type),
        ..LogFilter::default()
    };
    let mut out = vec![LogFilter::default()];
    for (i, a) in dims.iter().enumerate() {
        out.extend(a.iter().cloned());
        for b in &dims[i + 1..] {
            for x in a {
                out.extend(b.iter().map(|y| merge(x, y)));
            }
        }
    }
    out
}

/// On the migrated file, the postings and counters answer every filter as a count over the
/// rows does, and the schema-6 log tables are gone.
fn the_log_index_answers_every_filter(dir: &Path) {
    {
        let db = redb::Database::open(dir.join(DB_FILE_NAME)).expect("open");
        let rtx = db.begin_read().expect("read");
        let names: Vec<String> = rtx
            .list_tables()
            .expect("tables")
            .map(|t| t.name().to_owned())
            .collect();
        for gone in ["log_by_key.v1", "log_counts_recent.v1"] {
            assert!(
                !names.iter().any(|n| n == gone),
                "{gone} is dropped: {names:?}"
            );
        }
        let meta = rtx.open_table(META).expect("meta");
        let schema = meta.get("schema_version").expect("get").expect("version");
        // A postcard u32 below 128 is its one byte.
        let current = u8::try_from(CURRENT_SCHEMA).expect("a small version");
        assert_eq!(
            schema.value(),
            [current],
            "the file is at the current schema"
        );
    }
    let store = Store::open(&dir.join(DB_FILE_NAME)).expect("open the store");
    let rows = store.read_blocking(logs::all).expect("rows");
    // The fixture's rows and the top-up row of the code redeemed above.
    assert_eq!(rows.len(), 305, "the fixture's rows and the top-up");
    let times: Vec<i64> = rows.iter().map(|e| e.created_at).collect();
    let (lo, hi) = (times.iter().min().copied(), times.iter().max().copied());
    let mid = lo.zip(hi).map(|(a, b)| a + (b - a) / 2);
    let windows = [(None, None), (mid, None), (lo.map(|t| t + 1), mid)];
    let filters = filters_of(&rows);
    assert!(filters.len() > 100, "{} filters", filters.len());
    for base in &filters {
        for (start, end) in windows {
            let f = LogFilter {
                start,
                end,
                ..base.clone()
            };
            let (page, stat, total_page) = store
                .read_blocking(|rtx| {
                    Ok::<_, tollgate_storage::StorageError>((
                        query::page(rtx, &f, 0, 1000)?,
                        query::stat(rtx, &f, 0)?,
                        query::page(rtx, &f, 2, 3)?,
                    ))
                })
                .expect("query");
            let mut want: Vec<&LogEntry> = rows.iter().filter(|e| f.matches(e)).collect();
            want.sort_by_key(|e| std::cmp::Reverse((e.created_at, e.id)));
            let want_ids: Vec<i64> = want.iter().map(|e| e.id).collect();
            let got: Vec<i64> = page.items.iter().map(|e| e.id).collect();
            assert_eq!(got, want_ids, "rows of {f:?}");
            assert_eq!(page.total, want.len() as u64, "total of {f:?}");
            assert!(page.total_exact, "{f:?}");
            let got: Vec<i64> = total_page.items.iter().map(|e| e.id).collect();
            let want3: Vec<i64> = want_ids.iter().skip(2).take(3).copied().collect();
            assert_eq!(got, want3, "a middle page of {f:?}");
            let any_type = LogFilter {
                log_type: None,
                ..f.clone()
            };
            let quota: i64 = rows
                .iter()
                .filter(|e| e.log_type == LOG_CONSUME && any_type.matches(e))
                .map(|e| e.quota)
                .sum();
            assert_eq!(stat.quota, quota, "stat quota of {f:?}");
            assert!(stat.exact, "{f:?}");
        }
    }
    for user in rows
        .iter()
        .map(|e| e.user_id.0)
        .collect::<std::collections::BTreeSet<_>>()
    {
        let got: Vec<i64> = store
            .read_blocking(|rtx| logs::recent_for_user(rtx, UserId(user), 10_000))
            .expect("user rows")
            .iter()
            .map(|e| e.id)
            .collect();
        let mut want: Vec<&LogEntry> = rows.iter().filter(|e| e.user_id.0 == user).collect();
        want.sort_by_key(|e| std::cmp::Reverse((e.created_at, e.id)));
        assert_eq!(
            got,
            want.iter().map(|e| e.id).collect::<Vec<_>>(),
            "user {user}"
        );
    }
}

#[tokio::test]
async fn a_schema_6_file_is_migrated_through_the_whole_chain_and_serves_the_same_data() {
    let server = TestServer::start_in(copy_of_fixture()).await;
    serves_the_old_data(&server).await;
    // And it opens again as it is now.
    let dir = server.stop().await;
    let check = dir.path().to_path_buf();
    tokio::task::spawn_blocking(move || the_log_index_answers_every_filter(&check))
        .await
        .expect("the log index check");
    let server = TestServer::start_in(dir).await;
    let root = server.login(ROOT_USER, ROOT_PASS).await;
    let (status, body) = server.get_as(root, "/api/log/?p=1&page_size=1").await;
    assert_eq!(status, StatusCode::OK, "{body}");
}
