//! Secrets at rest (issue #22 item 5): with a secret key configured, channel keys, API keys,
//! redemption codes, secret options, TOTP secrets and the session secret are encrypted in the database file; a plain file is
//! encrypted and compacted on its first start with a key (the raw bytes of the file hold none of
//! the secrets afterwards); keys can still be revealed and used; an encrypted file refuses to
//! start without its key or with another one; `Store::rekey` (`tollgate rekey`) changes the key.

#![expect(clippy::expect_used, reason = "test helpers fail the test loudly")]

mod common;

use common::{ROOT_PASS, TestServer, two_factor};
use reqwest::StatusCode;
use serde_json::json;
use tollgate::app::App;
use tollgate::config::Config;
use tollgate_storage::Keyring;
use tollgate_storage::store::{DB_FILE_NAME, Store};

const KEY: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a6978";
const NEW_KEY: &str = "a-brand-new-secret-key-for-the-rotation-0123456789";
const CHANNEL_KEY: &str = "sk-upstream-CHANNEL-secret-7f3a9c";
const SMTP_PASSWORD: &str = "smtp-password-SECRET-51b2";
const OAUTH_SECRET: &str = "github-client-SECRET-a8e4d1";

fn with_key(key: &str) -> impl FnOnce(&mut Config) + '_ {
    move |config| config.secret_key = Some(key.to_owned())
}

/// Where each secret is in the raw bytes of the database file (empty: nowhere).
fn found_in_file(dir: &std::path::Path, secrets: &[&str]) -> Vec<String> {
    let bytes = std::fs::read(dir.join(DB_FILE_NAME)).expect("read the database file");
    secrets
        .iter()
        .filter(|s| bytes.windows(s.len()).any(|w| w == s.as_bytes()))
        .map(|s| (*s).to_owned())
        .collect()
}

/// The secrets [`store_secrets`] stored.
struct Stored {
    channel: i64,
    token: i64,
    /// The API key without `sk-`.
    key: String,
    /// Two unused redemption codes.
    codes: Vec<String>,
    /// Root's TOTP secret (two-factor on).
    totp: String,
    /// Root's recovery codes (one per sign-in or key reveal after a restart).
    recovery: Vec<String>,
}

impl Stored {
    /// Every secret value, to look for in the raw file.
    fn secrets(&self) -> Vec<&str> {
        let mut all = vec![CHANNEL_KEY, self.key.as_str(), SMTP_PASSWORD, OAUTH_SECRET];
        all.extend(self.codes.iter().map(String::as_str));
        all.push(self.totp.as_str());
        all
    }
}

/// Creates `count` redemption codes worth 1000 each; returns them.
async fn create_codes(server: &TestServer, root: i64, name: &str, count: i64) -> Vec<String> {
    let (status, body) = server
        .post_as(
            root,
            "/api/redemption/",
            json!({"name": name, "quota": 1000, "count": count}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["data"]
        .as_array()
        .expect("codes")
        .iter()
        .map(|c| c.as_str().expect("code").to_owned())
        .collect()
}

/// The codes the console lists (it shows them in full, for the admin to copy).
async fn listed_codes(server: &TestServer, root: i64) -> Vec<String> {
    let (status, body) = server
        .get_as(root, "/api/redemption/?p=1&page_size=100")
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["data"]["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|c| c["key"].as_str().expect("key").to_owned())
        .collect()
}

/// Redeems `code` as `user`: the answer's status and success flag.
async fn redeem(server: &TestServer, user: i64, code: &str) -> (StatusCode, bool) {
    let (status, body) = server
        .post_as(user, "/api/user/topup", json!({"key": code}))
        .await;
    (status, body["success"].as_bool().unwrap_or(false))
}

/// Stores a channel key, an API key, two redemption codes, the SMTP password and an OAuth
/// client secret.
async fn store_secrets(server: &TestServer, root: i64) -> Stored {
    let (status, body) = server
        .post_as(
            root,
            "/api/channel/",
            json!({"mode": "single", "channel": {"name": "up", "key": CHANNEL_KEY, "models": "gpt-4o"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let channel = body["data"]["ids"][0].as_i64().expect("channel id");
    let (status, body) = server
        .post_as(
            root,
            "/api/token/",
            json!({"name": "ci", "remain_quota": 1000, "expired_time": -1}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let token = body["data"]["id"].as_i64().expect("token id");
    let key = reveal_token(server, root, token).await;
    server.set_option_as(root, "SMTPToken", SMTP_PASSWORD).await;
    server
        .set_option_as(root, "GitHubClientSecret", OAUTH_SECRET)
        .await;
    let codes = create_codes(server, root, "gift", 2).await;
    let (app, recovery) = two_factor::turn_on(&two_factor::actor_of(server, root)).await;
    Stored {
        channel,
        token,
        key,
        codes,
        totp: app.secret,
        recovery,
    }
}

/// Signs root in with the password and `code` (server's own client); returns root's id.
async fn sign_in_root(server: &TestServer, code: &str) -> i64 {
    let (status, body) = server
        .post(
            "/api/user/login",
            json!({"username": common::ROOT_USER, "password": ROOT_PASS}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["require_2fa"], true, "{body}");
    let (status, body) = two_factor::second_step(server, &server.client, code).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["data"]["id"].as_i64().expect("id")
}

async fn reveal_token(server: &TestServer, root: i64, token: i64) -> String {
    let (status, body) = server
        .post_as(root, &format!("/api/token/{token}/key"), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let key = body["data"]["key"].as_str().expect("key");
    key.strip_prefix("sk-").expect("sk- prefix").to_owned()
}

/// Verifies root's session with `code` (two-factor), then reveals the channel's key.
async fn reveal_channel(server: &TestServer, root: i64, channel: i64, code: &str) -> String {
    two_factor::verify(&two_factor::actor_of(server, root), code).await;
    let (status, body) = server
        .post_as(root, &format!("/api/channel/{channel}/key"), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["data"]["key"].as_str().expect("key").to_owned()
}

/// The API key authenticates at the relay (the in-memory index was built from the file).
async fn key_works(server: &TestServer, key: &str) -> StatusCode {
    server
        .client
        .get(server.url("/v1/models"))
        .bearer_auth(format!("sk-{key}"))
        .send()
        .await
        .expect("sent")
        .status()
}

async fn refused(dir: &std::path::Path, key: Option<&str>) -> String {
    let mut config = Config::for_data_dir(dir);
    config.secret_key = key.map(str::to_owned);
    App::build(config)
        .await
        .err()
        .map(|e| e.to_string())
        .expect("an encrypted database does not start without its key")
}

#[tokio::test]
async fn a_plain_database_is_encrypted_and_compacted_on_the_first_start_with_a_key() {
    let server = TestServer::start().await;
    let root = server.root().await;
    let stored = store_secrets(&server, root).await;
    let (channel, token, key) = (stored.channel, stored.token, stored.key.clone());
    let secrets = stored.secrets();
    let dir = server.stop().await;
    assert_eq!(
        found_in_file(dir.path(), &secrets).len(),
        secrets.len(),
        "without a key every secret is in the file in plain text"
    );

    let server = TestServer::start_with(dir, with_key(KEY)).await;
    let root = sign_in_root(&server, &stored.recovery[0]).await;
    assert_eq!(
        found_in_file(server.data_dir(), &secrets),
        Vec::<String>::new(),
        "after the first start with a key no secret is left in the file"
    );
    assert_eq!(
        reveal_channel(&server, root, channel, &stored.recovery[1]).await,
        CHANNEL_KEY
    );
    assert_eq!(reveal_token(&server, root, token).await, key);
    assert_eq!(key_works(&server, &key).await, StatusCode::OK);
    assert_eq!(
        key_works(&server, "not-a-key").await,
        StatusCode::UNAUTHORIZED
    );
    // The console still lists the codes in full, and a code is found through its HMAC index:
    // redeemed once, refused the second time.
    let mut listed = listed_codes(&server, root).await;
    listed.sort();
    let mut codes = stored.codes.clone();
    codes.sort();
    assert_eq!(listed, codes);
    assert_eq!(
        redeem(&server, root, &codes[0]).await,
        (StatusCode::OK, true)
    );
    assert!(!redeem(&server, root, &codes[0]).await.1, "used already");
    assert!(
        !redeem(&server, root, "0123456789abcdef0123456789abcdef")
            .await
            .1
    );
    let fresh_codes = create_codes(&server, root, "later", 1).await;
    // A key created under encryption is written encrypted, and found through the HMAC index.
    let (status, body) = server
        .post_as(
            root,
            "/api/token/",
            json!({"name": "new", "remain_quota": 10, "expired_time": -1}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let fresh = reveal_token(&server, root, body["data"]["id"].as_i64().expect("id")).await;
    let found = server
        .store()
        .read(move |rtx| tollgate_storage::tokens::find_by_key(rtx, &fresh))
        .await
        .expect("lookup");
    assert!(found.is_some(), "the key index finds the new key");
    server
        .set_option_as(root, "SMTPToken", "smtp-password-LATER-93c1")
        .await;
    let dir = server.stop().await;
    assert_eq!(
        found_in_file(
            dir.path(),
            &[
                CHANNEL_KEY,
                key.as_str(),
                "smtp-password-LATER-93c1",
                &codes[1],
                &fresh_codes[0]
            ]
        ),
        Vec::<String>::new()
    );

    // The sessions survive: the session secret was carried over.
    let server = TestServer::start_with(dir, with_key(KEY)).await;
    assert_eq!(key_works(&server, &key).await, StatusCode::OK);
    let root = sign_in_root(&server, &stored.recovery[2]).await;
    assert_eq!(
        redeem(&server, root, &fresh_codes[0]).await,
        (StatusCode::OK, true),
        "a code created under the key is redeemable after a restart"
    );
    let dir = server.stop().await;

    // Without its key, or with another, the file does not open.
    let message = refused(dir.path(), None).await;
    assert!(message.contains("secret key"), "{message}");
    assert!(message.contains("TOLLGATE_SECRET_KEY"), "{message}");
    let message = refused(dir.path(), Some(NEW_KEY)).await;
    assert!(message.contains("does not open"), "{message}");
}

#[tokio::test]
async fn rekey_moves_the_secrets_to_a_new_key_and_back_to_plain_text() {
    let server = TestServer::start_with(tempfile::tempdir().expect("dir"), with_key(KEY)).await;
    let root = server.root().await;
    let stored = store_secrets(&server, root).await;
    let (channel, key) = (stored.channel, stored.key.clone());
    let secrets = stored.secrets();
    let dir = server.stop().await;
    assert_eq!(found_in_file(dir.path(), &secrets), Vec::<String>::new());

    let path = dir.path().join(DB_FILE_NAME);
    let old = Keyring::from_secret(KEY).expect("key");
    let new = Keyring::from_secret(NEW_KEY).expect("key");
    Store::rekey(&path, old.clone(), &new).expect("rekey");
    assert!(
        refused(dir.path(), Some(KEY))
            .await
            .contains("does not open")
    );
    let server = TestServer::start_with(dir, with_key(NEW_KEY)).await;
    let root = sign_in_root(&server, &stored.recovery[0]).await;
    assert_eq!(
        reveal_channel(&server, root, channel, &stored.recovery[1]).await,
        CHANNEL_KEY
    );
    assert_eq!(key_works(&server, &key).await, StatusCode::OK);
    assert_eq!(
        redeem(&server, root, &stored.codes[0]).await,
        (StatusCode::OK, true),
        "the code index was rebuilt under the new key"
    );
    let dir = server.stop().await;
    assert_eq!(found_in_file(dir.path(), &secrets), Vec::<String>::new());

    Store::rekey(&path, new, &Keyring::plaintext()).expect("decrypt");
    let server = TestServer::start_in(dir).await;
    let root = sign_in_root(&server, &stored.recovery[2]).await;
    assert_eq!(key_works(&server, &key).await, StatusCode::OK);
    assert_eq!(
        redeem(&server, root, &stored.codes[1]).await,
        (StatusCode::OK, true)
    );
    let dir = server.stop().await;
    assert_eq!(found_in_file(dir.path(), &secrets).len(), secrets.len());
}

/// Runs the built binary on `data_dir` with `args`: (success, what it printed).
async fn tollgate(data_dir: &std::path::Path, args: &[&str]) -> (bool, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .env_remove("TOLLGATE_SECRET_KEY")
        .env_remove("TOLLGATE_SECRET_KEY_FILE")
        .output()
        .await
        .expect("the binary runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[tokio::test]
async fn tollgate_rekey_through_the_binary_rotates_the_key_of_a_stopped_database() {
    let keys = tempfile::tempdir().expect("dir");
    let old_file = keys.path().join("old.key");
    let new_file = keys.path().join("new.key");
    // Key files end with a newline, as `openssl rand -hex 32 > file` writes them.
    std::fs::write(&old_file, format!("{KEY}\n")).expect("write");
    std::fs::write(&new_file, format!("{NEW_KEY}\n")).expect("write");
    let (old_arg, new_arg) = (
        old_file.to_string_lossy().into_owned(),
        new_file.to_string_lossy().into_owned(),
    );
    let server = TestServer::start_with(tempfile::tempdir().expect("dir"), |c| {
        c.secret_key_file = Some(old_file.clone());
    })
    .await;
    let root = server.root().await;
    let stored = store_secrets(&server, root).await;
    let secrets = stored.secrets();

    // Refused while a server holds the file.
    let data = server.data_dir().to_path_buf();
    let (ok, said) = tollgate(
        &data,
        &[
            "--secret-key-file",
            &old_arg,
            "rekey",
            "--new-key-file",
            &new_arg,
        ],
    )
    .await;
    assert!(!ok, "rekey must not run beside a server: {said}");
    let dir = server.stop().await;
    let data = dir.path().to_path_buf();

    // Refused with a key the file was not sealed with, and without one; the file is unchanged.
    let (ok, said) = tollgate(
        &data,
        &[
            "--secret-key-file",
            &new_arg,
            "rekey",
            "--new-key-file",
            &old_arg,
        ],
    )
    .await;
    assert!(!ok && said.contains("does not open"), "{said}");
    let (ok, said) = tollgate(&data, &["rekey", "--new-key-file", &new_arg]).await;
    assert!(!ok && said.contains("secret key"), "{said}");

    let (ok, said) = tollgate(
        &data,
        &[
            "--secret-key-file",
            &old_arg,
            "rekey",
            "--new-key-file",
            &new_arg,
        ],
    )
    .await;
    assert!(ok, "{said}");
    assert!(said.contains("new key"), "{said}");
    assert_eq!(found_in_file(&data, &secrets), Vec::<String>::new());

    // The old key no longer opens the file; the new one does and every secret reads back.
    let message = refused(&data, Some(KEY)).await;
    assert!(message.contains("does not open"), "{message}");
    let server = TestServer::start_with(dir, |c| c.secret_key_file = Some(new_file.clone())).await;
    let root = sign_in_root(&server, &stored.recovery[0]).await;
    assert_eq!(
        reveal_channel(&server, root, stored.channel, &stored.recovery[1]).await,
        CHANNEL_KEY
    );
    assert_eq!(reveal_token(&server, root, stored.token).await, stored.key);
    assert_eq!(key_works(&server, &stored.key).await, StatusCode::OK);
    assert_eq!(
        redeem(&server, root, &stored.codes[0]).await,
        (StatusCode::OK, true)
    );
    let dir = server.stop().await;

    // `rekey --decrypt` goes back to plain text: the file starts without a key.
    let (ok, said) = tollgate(
        dir.path(),
        &["--secret-key-file", &new_arg, "rekey", "--decrypt"],
    )
    .await;
    assert!(ok && said.contains("plain text"), "{said}");
    let server = TestServer::start_in(dir).await;
    assert_eq!(key_works(&server, &stored.key).await, StatusCode::OK);
    let dir = server.stop().await;
    assert_eq!(found_in_file(dir.path(), &secrets).len(), secrets.len());
}
