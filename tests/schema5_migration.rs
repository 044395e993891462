//! A real schema-5 database (written by Tollgate at commit 02c60e0, before secrets at rest:
//! tests/fixtures/schema5/, made by its make.sh) is migrated by today's server: with a secret
//! key every secret it held (channel key, API key, redemption code, SMTP password, OAuth client
//! secret, session secret) is sealed and gone from the raw file; without one the file is
//! migrated and keeps them in plain text, as the README says. Either way root signs in with
//! the old password, the channel key reveals, the API key authenticates at the relay and the
//! old code redeems.

#![expect(clippy::expect_used, reason = "test helpers fail the test loudly")]

mod common;

use std::path::{Path, PathBuf};

use common::{ROOT_PASS, ROOT_USER, TestServer};
use redb::ReadableDatabase;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate_storage::store::DB_FILE_NAME;
use tollgate_storage::tables::META;

const KEY: &str = "schema5-migration-secret-key-0123456789abcdef";
const CHANNEL_KEY: &str = "sk-schema5-CHANNEL-key-3b9e";
const SMTP_PASSWORD: &str = "schema5-SMTP-password-7d1";
const OAUTH_SECRET: &str = "schema5-GITHUB-secret-c40";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/schema5")
        .join(name)
}

/// What the fixture holds besides the fixed values above.
struct Values {
    /// The API key without `sk-`.
    api_key: String,
    token_id: i64,
    redemption_code: String,
    /// The session secret's bytes as schema 5 stored them.
    session_secret: Vec<u8>,
}

/// A fresh copy of the fixture in a data directory, and what it holds.
fn copy_of_fixture() -> (tempfile::TempDir, Values) {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::copy(fixture("tollgate.redb"), dir.path().join(DB_FILE_NAME)).expect("copy");
    let values: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("values.json")).expect("values.json"),
    )
    .expect("JSON");
    let key = values["api_key"].as_str().expect("api_key");
    let (schema, session_secret) = {
        let db = redb::Database::open(dir.path().join(DB_FILE_NAME)).expect("open the copy");
        let rtx = db.begin_read().expect("read");
        let meta = rtx.open_table(META).expect("meta");
        // postcard: the version a one-byte varint, the secret a length byte (64) and bytes.
        let schema = meta
            .get("schema_version")
            .expect("get")
            .expect("schema_version")
            .value()
            .to_vec();
        let secret = meta
            .get("session_secret")
            .expect("get")
            .expect("a schema-5 session secret")
            .value()
            .to_vec();
        let (len, secret) = secret.split_first().expect("a length byte");
        assert_eq!(*len, 64, "a 64-byte secret");
        (schema, secret.to_vec())
    };
    assert_eq!(schema, [5], "the fixture is a schema-5 file");
    let values = Values {
        api_key: key.strip_prefix("sk-").unwrap_or(key).to_owned(),
        token_id: values["token_id"].as_i64().expect("token_id"),
        redemption_code: values["redemption_code"]
            .as_str()
            .expect("redemption_code")
            .to_owned(),
        session_secret,
    };
    (dir, values)
}

/// Every secret of the fixture, as bytes to look for in the raw file (the session secret both
/// as schema 5 stored it and as hex, the way schema 6 keeps it).
fn secrets(values: &Values) -> Vec<(String, Vec<u8>)> {
    let hex: String = values
        .session_secret
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    vec![
        ("channel key".into(), CHANNEL_KEY.into()),
        ("API key".into(), values.api_key.clone().into_bytes()),
        (
            "redemption code".into(),
            values.redemption_code.clone().into_bytes(),
        ),
        ("SMTP password".into(), SMTP_PASSWORD.into()),
        ("OAuth secret".into(), OAUTH_SECRET.into()),
        ("session secret".into(), values.session_secret.clone()),
        ("session secret (hex)".into(), hex.into_bytes()),
    ]
}

/// The names of the secrets found in the raw database file of `dir`.
fn found_in_file(dir: &Path, secrets: &[(String, Vec<u8>)]) -> Vec<String> {
    let bytes = std::fs::read(dir.join(DB_FILE_NAME)).expect("read the database file");
    secrets
        .iter()
        .filter(|(_, s)| bytes.windows(s.len()).any(|w| w == s.as_slice()))
        .map(|(name, _)| name.clone())
        .collect()
}

/// Checks, through the API, that the migrated server serves what the old one stored.
async fn serves_the_old_data(server: &TestServer, values: &Values) {
    let root = server.login(ROOT_USER, ROOT_PASS).await;
    // A key reveal needs root's second factor and a fresh verification.
    common::two_factor::turn_on_and_verify(&common::two_factor::actor_of(server, root)).await;
    let (status, body) = server.post_as(root, "/api/channel/1/key", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["key"], CHANNEL_KEY);
    let (status, body) = server
        .post_as(
            root,
            &format!("/api/token/{}/key", values.token_id),
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["key"], format!("sk-{}", values.api_key));
    let status = server
        .client
        .get(server.url("/v1/models"))
        .bearer_auth(format!("sk-{}", values.api_key))
        .send()
        .await
        .expect("sent")
        .status();
    assert_eq!(status, StatusCode::OK, "the old API key authenticates");
    let options = server
        .store()
        .read(tollgate_storage::options::load_all)
        .await
        .expect("options");
    assert_eq!(
        options.get("SMTPToken").map(String::as_str),
        Some(SMTP_PASSWORD)
    );
    assert_eq!(
        options.get("GitHubClientSecret").map(String::as_str),
        Some(OAUTH_SECRET)
    );
    let (status, body) = server
        .post_as(
            root,
            "/api/user/topup",
            json!({"key": values.redemption_code}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["success"], true, "the old code redeems: {body}");
}

#[tokio::test]
async fn a_schema_5_file_is_migrated_and_sealed_on_its_first_start_with_a_key() {
    let (dir, values) = copy_of_fixture();
    let secrets = secrets(&values);
    let mut before = found_in_file(dir.path(), &secrets);
    before.retain(|name| name != "session secret (hex)");
    assert_eq!(
        before.len(),
        secrets.len() - 1,
        "the fixture holds every secret in clear"
    );

    let server = TestServer::start_with(dir, |c| c.secret_key = Some(KEY.to_owned())).await;
    assert_eq!(
        found_in_file(server.data_dir(), &secrets),
        Vec::<String>::new(),
        "no secret is left in the migrated file"
    );
    serves_the_old_data(&server, &values).await;
    let dir = server.stop().await;
    assert_eq!(found_in_file(dir.path(), &secrets), Vec::<String>::new());
    // The migrated file is sealed: it no longer opens without the key.
    let mut config = tollgate::config::Config::for_data_dir(dir.path());
    config.secret_key = None;
    let refused = tollgate::app::App::build(config)
        .await
        .err()
        .map(|e| e.to_string());
    assert!(
        refused.as_deref().is_some_and(|m| m.contains("secret key")),
        "{refused:?}"
    );
}

#[tokio::test]
async fn a_schema_5_file_is_migrated_without_a_key_and_keeps_its_secrets_in_plain_text() {
    let (dir, values) = copy_of_fixture();
    let secrets = secrets(&values);
    let server = TestServer::start_in(dir).await;
    serves_the_old_data(&server, &values).await;
    let dir = server.stop().await;
    // Plain text without a key (the start-up log says so): the session secret moved to its
    // schema-6 entry as hex, and the other secrets are where they were.
    let found = found_in_file(dir.path(), &secrets);
    for name in [
        "channel key",
        "API key",
        "redemption code",
        "SMTP password",
        "OAuth secret",
        "session secret (hex)",
    ] {
        assert!(found.iter().any(|f| f == name), "{name} not in {found:?}");
    }
    // And a later start with a key seals it like any plain file.
    let server = TestServer::start_with(dir, |c| c.secret_key = Some(KEY.to_owned())).await;
    let dir = server.stop().await;
    assert_eq!(found_in_file(dir.path(), &secrets), Vec::<String>::new());
}
