//! A real schema-6 database (written by Tollgate at commit 8ea6bcc, the end of wave 2:
//! tests/fixtures/schema6/, made by its make.sh) is migrated through today's whole chain, and
//! the migrated server answers what the old one answered: every log row field for field, the
//! total and the rows of each log filter the console offers, the statistics' quota under each
//! filter, and every user's balance, used quota and request count (`expected.json`, written by
//! make.sh from the old server's own answers). Then the old passwords sign in, the old API keys
//! authenticate at the relay and the unused code redeems once.
//!
//! A migration that changes a stored format adds what it must keep to `serves_the_old_data`.

#![expect(clippy::expect_used, reason = "test helpers fail the test loudly")]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{ROOT_PASS, ROOT_USER, TestServer};
use redb::ReadableDatabase;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate_storage::store::DB_FILE_NAME;
use tollgate_storage::tables::META;

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

#[tokio::test]
async fn a_schema_6_file_is_migrated_through_the_whole_chain_and_serves_the_same_data() {
    let server = TestServer::start_in(copy_of_fixture()).await;
    serves_the_old_data(&server).await;
    // And it opens again as it is now.
    let dir = server.stop().await;
    let server = TestServer::start_in(dir).await;
    let root = server.login(ROOT_USER, ROOT_PASS).await;
    let (status, body) = server.get_as(root, "/api/log/?p=1&page_size=1").await;
    assert_eq!(status, StatusCode::OK, "{body}");
}
