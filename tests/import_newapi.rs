//! `tollgate import new-api` on a new-api database in each of its three engines — SQLite
//! (tests/fixtures/newapi/newapi.db, made by its make.py from the incumbent's models, quirks
//! included), MariaDB and PostgreSQL (the same rows under the DDL GORM makes there: mysql.sql and
//! postgres.sql, made by make_sql.py; the servers are started by the test, see
//! common/sql_servers.rs, reached through the operator's `SQL_DSN` in a file and in
//! `TOLLGATE_IMPORT_FROM`): the imported users sign in over the
//! HTTP API with their old passwords (the bcrypt hash is then replaced by argon2id) and the TOTP
//! user with the same authenticator, the old `sk-` keys authenticate, the codes redeem once, the
//! balances read back with quota + used == credited and one opening row each, the options went
//! through the catalog's validation, the logs are shown by the console, and the source file is
//! untouched. A second import into the same directory is refused; a dry run writes nothing.

#![expect(clippy::expect_used, reason = "test helpers fail the test loudly")]

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::TestServer;
use common::books::assert_books;
use common::import_fixture::{args, fixture, import, source_copy, values};
use common::sql_servers::{self, Engine, SqlServer};
use common::two_factor::Authenticator;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate::config::ImportArgs;
use tollgate::console::service::epay;
use tollgate::import::ImportError;
use tollgate_storage::audit::{self, AuditFilter};
use tollgate_storage::logs::{self, LOG_SYSTEM};
use tollgate_storage::{StorageError, UserId, channels, users};

fn key(values: &Value, who: &str) -> String {
    format!("sk-{}", values["keys"][who].as_str().expect("key"))
}

async fn models_status(server: &TestServer, key: &str) -> StatusCode {
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
async fn a_new_api_sqlite_installation_moves_over_with_every_key_and_password() {
    let (_src, source) = source_copy();
    let before = std::fs::read(&source).expect("read");

    // A dry run reads and validates everything and writes nothing.
    let dry = tempfile::tempdir().expect("dir");
    let report = import(
        dry.path(),
        ImportArgs {
            dry_run: true,
            ..args(&source)
        },
    )
    .await
    .expect("dry run");
    assert!(report.starts_with("DRY RUN"), "{report}");
    let store = tollgate_storage::Store::open_dir(dry.path()).expect("open");
    assert!(tollgate_storage::import::store_is_empty(&store).expect("read"));
    drop(store);

    let dir = tempfile::tempdir().expect("dir");
    let report = import(dir.path(), args(&source)).await.expect("imports");
    assert_eq!(
        std::fs::read(&source).expect("read"),
        before,
        "the source is only read"
    );
    moved_over(dir, &report, "sqlite", args(&source)).await;
}

/// Starts `engine`'s server with its fixture (`None`: not installed, outside CI).
async fn server_with_fixture(engine: Engine, fixture_name: &str) -> Option<SqlServer> {
    let path = fixture(fixture_name);
    tokio::task::spawn_blocking(move || sql_servers::start(engine, &path))
        .await
        .expect("joined")
}

/// The import's arguments with the DSN in a file (`--from-file`), as an operator keeps it.
fn file_args(dsn: &str) -> (tempfile::TempDir, ImportArgs) {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("newapi.dsn");
    std::fs::write(&path, format!("{dsn}\n")).expect("write");
    let args = ImportArgs {
        from: None,
        from_file: Some(path),
        dry_run: false,
        with_logs: true,
        resume: false,
    };
    (dir, args)
}

#[tokio::test]
async fn a_new_api_mariadb_installation_moves_over_from_its_sql_dsn() {
    let Some(db) = server_with_fixture(Engine::MariaDb, "mysql.sql").await else {
        return;
    };
    assert!(db.dsn.contains("@tcp(127.0.0.1:"), "the Go form");
    let (_dsn_dir, args) = file_args(&db.dsn);
    let dry = tempfile::tempdir().expect("dir");
    let report = import(
        dry.path(),
        ImportArgs {
            dry_run: true,
            ..args.clone()
        },
    )
    .await
    .expect("dry run");
    assert!(report.starts_with("DRY RUN"), "{report}");
    let dir = tempfile::tempdir().expect("dir");
    let report = import(dir.path(), args.clone()).await.expect("imports");
    moved_over(dir, &report, "mysql", args).await;
    drop(db);
}

#[tokio::test]
async fn a_new_api_postgres_installation_moves_over_from_tollgate_import_from() {
    let Some(db) = server_with_fixture(Engine::Postgres, "postgres.sql").await else {
        return;
    };
    // The command as an operator runs it: the URL (with its password) in the environment.
    let dir = tempfile::tempdir().expect("dir");
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .arg("--data-dir")
        .arg(dir.path())
        .args(["import", "new-api", "--with-logs"])
        .env("TOLLGATE_IMPORT_FROM", &db.dsn)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("tollgate import");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        !stdout.contains(sql_servers::PASSWORD) && !stderr.contains(sql_servers::PASSWORD),
        "the password is never printed"
    );
    assert!(stderr.contains("logs:"), "one line per table: {stderr}");
    let (_dsn_dir, args) = file_args(&db.dsn);
    moved_over(dir, &stdout, "postgres", args).await;
    drop(db);
}

/// What every engine's import must have brought: checked over the HTTP API and the storage
/// reads of the data directory `dir` the import wrote (`report` is what it printed; `again`
/// imports the same source once more).
async fn moved_over(dir: tempfile::TempDir, report: &str, engine: &str, again: ImportArgs) {
    let values = values();
    for expected in [
        &format!("imported from new-api ({engine})") as &str,
        "users: 5",
        "tokens: 3",
        "channels: 3",
        "channel 2 (midjourney): type 2",
        "GroupRatio",
        "TopUpLink",
        "StripeApiSecret",
        "user 2 (alice): alice-gh",
        "user 2: 2 unused",
        "STRIPE-PENDING-3",
        "code 3 (promo)",
        "user 4 (carol): shared with user 3",
        "3000 log rows imported",
        "user 1: 1 passkeys",
        "user 3: 1 passkeys",
        "drawing tasks: 3",
        "music and video tasks: 3",
        "user 3: drawing 1700000000002 (midjourney, 50000 quota)",
        "user 3: task task_kling1 (50, 3000 quota): Tollgate does not poll platform 50",
        "user 2: subscription 1 (Pro monthly) until unix 2075360000: gpt-4o 750000 quota left, \
         gpt-4o-mini 60 requests left",
    ] {
        assert!(
            report.contains(expected),
            "{expected:?} missing in:\n{report}"
        );
    }
    assert!(
        !report.contains("sk-upstream") && !report.contains("sk-private-upstream-key"),
        "no channel key in the report"
    );
    assert!(
        !report.contains("subscription 2"),
        "an expired one is not listed"
    );

    // Into a directory that holds data: refused, nothing written.
    let again = import(dir.path(), again).await;
    assert!(matches!(again, Err(ImportError::NotEmpty(_))), "{again:?}");

    let server = TestServer::start_in(dir).await;
    // The billing suite's conservation check holds for every imported user (the logs copied
    // with --with-logs are history the opening row already counts).
    for user in 1..=5 {
        assert_books(&server, user).await;
    }
    // Balances, credited totals and the opening rows, through the storage reads.
    let (root, credited, opening, channel1, channel2, channel3, audit_rows) = server
        .store()
        .read_blocking(|rtx| {
            let root = users::get(rtx, UserId(1))?.expect("root");
            let credited = users::credited(rtx, UserId(1))?;
            let opening: Vec<_> = logs::recent_for_user(rtx, UserId(1), 100)?
                .into_iter()
                .filter(|l| l.log_type == LOG_SYSTEM)
                .collect();
            let c1 = channels::get(rtx, tollgate_storage::ChannelId(1))?.expect("c1");
            let c2 = channels::get(rtx, tollgate_storage::ChannelId(2))?.expect("c2");
            let c3 = channels::get(rtx, tollgate_storage::ChannelId(3))?.expect("c3");
            let audit = audit::list(
                rtx,
                &AuditFilter {
                    action: Some("import.new-api".into()),
                    ..AuditFilter::default()
                },
                0,
                10,
            )?
            .0;
            Ok::<_, StorageError>((root, credited, opening, c1, c2, c3, audit))
        })
        .expect("read");
    assert!(root.password_hash.starts_with("$2a$"), "kept as it was");
    assert_eq!((root.quota.0, root.used_quota.0), (1_000_000, 250_000));
    assert_eq!(credited, 1_250_000, "quota + used == credited");
    assert_eq!(opening.len(), 1, "{opening:?}");
    assert_eq!(
        opening[0].quota, 250_000,
        "the opening row records the used quota"
    );
    assert!(
        opening[0].other.contains("\"import\""),
        "{}",
        opening[0].other
    );
    assert_eq!(channel1.key_lines().len(), 3);
    assert_eq!(
        channels::other_info::disabled_keys(&channel1.other_info).len(),
        1,
        "the key new-api had disabled stays disabled"
    );
    assert_eq!(channel1.base_url, "https://api.openai.com");
    assert_eq!(channel2.status, channels::STATUS_MANUALLY_DISABLED);
    assert_eq!(channel3.status, channels::STATUS_AUTO_DISABLED);
    assert_eq!(channel3.proxy, "socks5://127.0.0.1:1080");
    assert_eq!(audit_rows.len(), 1);
    assert!(
        audit_rows[0].after.contains("\"users\":5"),
        "{:?}",
        audit_rows[0]
    );
    assert!(
        !audit_rows[0].after.contains("one-api.db")
            && !audit_rows[0].after.contains(sql_servers::PASSWORD),
        "no DSN in the audit row"
    );

    // Old passwords sign in; the bcrypt hash is then argon2id.
    let root_name = values["root"]["username"].as_str().expect("name");
    let root_pass = values["root"]["password"].as_str().expect("pass");
    let root_id = server.login(root_name, root_pass).await;
    assert_eq!(root_id, 1);
    let (status, body) = server
        .post(
            "/api/user/login",
            json!({"username": root_name, "password": "wrong-password"}),
        )
        .await;
    assert_ne!(body["success"], true, "{status} {body}");
    let hash = server
        .store()
        .read_blocking(|rtx| users::get(rtx, UserId(1)))
        .expect("read")
        .expect("root")
        .password_hash;
    assert!(hash.starts_with("$argon2id$"), "rehashed: {hash}");
    assert_eq!(
        server.login(root_name, root_pass).await,
        1,
        "and still signs in"
    );
    let bob = server
        .client_for("bob", values["bob"]["password"].as_str().expect("pass"))
        .await;
    assert_eq!(bob.id, 3);

    // Alice has two-factor on: the same authenticator completes her sign-in.
    let mut app = Authenticator::new(values["alice_totp_secret"].as_str().expect("secret"));
    let client = common::new_client();
    let (status, body) = server
        .send(client.post(server.url("/api/user/login")).json(&json!({
            "username": "alice",
            "password": values["alice"]["password"],
        })))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["require_2fa"], true, "{body}");
    let (status, body) = server
        .send(
            client
                .post(server.url("/api/user/login/2fa"))
                .json(&json!({"code": app.code()})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["username"], "alice");

    // The old keys authenticate byte for byte; a deleted one does not.
    for who in ["alice", "bob", "root"] {
        assert_eq!(
            models_status(&server, &key(&values, who)).await,
            StatusCode::OK,
            "{who}'s key"
        );
    }
    assert_eq!(
        models_status(&server, &key(&values, "deleted")).await,
        StatusCode::UNAUTHORIZED
    );

    // Codes: the unused one redeems once; the used and the expired one do not.
    let code = |name: &str| values["codes"][name].as_str().expect("code").to_owned();
    let (_, body) = bob
        .post("/api/user/topup", json!({"key": code("unused")}))
        .await;
    assert_eq!(body["success"], true, "{body}");
    for name in ["unused", "used", "expired"] {
        let (_, body) = bob
            .post("/api/user/topup", json!({"key": code(name)}))
            .await;
        assert_eq!(body["success"], false, "{name}: {body}");
    }
    assert_books(&server, 3).await;

    // Options came through the catalog: kept, refused and unknown ones.
    let (_, body) = server.get("/api/status").await;
    assert_eq!(body["data"]["system_name"], "Old Gateway", "{body}");
    let stored = server
        .store()
        .read_blocking(tollgate_storage::options::load_all)
        .expect("options");
    assert_eq!(
        stored.get("QuotaForNewUser").map(String::as_str),
        Some("100")
    );
    assert!(!stored.contains_key("GroupRatio"), "invalid JSON refused");
    assert!(
        !stored.contains_key("TopUpLink"),
        "a javascript: link refused"
    );
    assert!(!stored.contains_key("StripeApiSecret"));

    // Bob's drawing still in flight at the snapshot (2025) is past TaskTimeoutMinutes: the
    // poller ends it as failed and refunds it once (a negative consume row).
    let mut drawing = Value::Null;
    for _ in 0..250 {
        let (_, list) = server.get_as(root_id, "/api/mj/?mj_id=1700000000002").await;
        drawing = list["data"]["items"][0].clone();
        if drawing["status"] == "FAILURE" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        drawing["fail_reason"], "timed out after 1440 minutes",
        "{drawing}"
    );
    assert_eq!(drawing["refunded"], true);
    assert_books(&server, 3).await;

    // The console shows the imported logs (3000) beside the five opening rows, the
    // redemption's top-up row and the drawing's refund.
    let (status, body) = server.get_as(root_id, "/api/log/?p=1&page_size=10").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["total"], 3007, "{}", body["data"]["total"]);
}

#[tokio::test]
async fn a_password_dsn_is_refused_on_the_command_line_and_a_missing_file_is_named() {
    let dir = tempfile::tempdir().expect("dir");
    let refused = import(
        dir.path(),
        ImportArgs {
            from: Some("root:hunter2@tcp(127.0.0.1:1)/newapi".into()),
            from_file: None,
            dry_run: true,
            with_logs: false,
            resume: false,
        },
    )
    .await
    .expect_err("refused");
    assert!(!refused.to_string().contains("hunter2"), "{refused}");
    let missing = import(
        dir.path(),
        ImportArgs {
            from: Some("/nonexistent/one-api.db".into()),
            from_file: None,
            dry_run: true,
            with_logs: false,
            resume: false,
        },
    )
    .await
    .expect_err("no file");
    assert!(
        missing.to_string().contains("/nonexistent/one-api.db"),
        "{missing}"
    );
}

/// GitHub answers for account `id` with `login`, made at `created_at`.
fn github_answers(mock: &common::mock_json::MockJson, id: i64, login: &str, created_at: &str) {
    mock.answer(
        "/login/oauth/access_token",
        200,
        json!({"access_token": format!("gho_{id}"), "token_type": "bearer"}),
    );
    mock.answer(
        "/api/user",
        200,
        json!({"id": id, "login": login, "created_at": created_at}),
    );
    mock.answer("/api/user/emails", 200, json!([]));
}

/// The GitHub sign-in flow against the mock (it does not redirect); the callback's answer.
async fn github_sign_in(server: &TestServer) -> (StatusCode, Value) {
    let browser = common::oauth_browser::Browser::guest(server);
    let url = browser.start("github", "").await;
    let state = reqwest::Url::parse(&url)
        .expect("url")
        .query_pairs()
        .find(|(k, _)| k == "state")
        .map(|(_, v)| v.into_owned())
        .expect("state");
    let query = [
        ("code".to_owned(), "mock-code".to_owned()),
        ("state".to_owned(), state),
    ]
    .into_iter()
    .collect();
    browser.callback("github", &query).await
}

fn github_id_of(server: &TestServer, user: i64) -> String {
    server
        .store()
        .read_blocking(|rtx| users::get(rtx, UserId(user)))
        .expect("read")
        .expect("user")
        .github_id
}

#[tokio::test]
async fn a_github_login_binding_goes_only_to_an_account_made_before_the_import() {
    let values = values();
    let (_src, source) = source_copy();
    let dir = tempfile::tempdir().expect("dir");
    import(
        dir.path(),
        ImportArgs {
            with_logs: false,
            ..args(&source)
        },
    )
    .await
    .expect("imports");
    let mock = common::mock_json::MockJson::start().await;
    let base = mock.base.clone();
    let server = TestServer::start_with(dir, move |c| {
        c.github_url = base.clone();
        c.github_api_url = format!("{base}/api");
    })
    .await;
    let root = server
        .login(
            values["root"]["username"].as_str().expect("name"),
            values["root"]["password"].as_str().expect("pass"),
        )
        .await;
    for (key, value) in [
        ("ServerAddress", server.base.as_str()),
        ("GitHubOAuthEnabled", "true"),
        ("GitHubClientId", "gh-client"),
        ("GitHubClientSecret", "gh-secret"),
    ] {
        server.set_option_as(root, key, value).await;
    }
    assert_eq!(github_id_of(&server, 2), "login:alice-gh", "pending");

    // Someone registered the login after the import: not alice.
    github_answers(&mock, 777_001, "alice-gh", "2099-01-01T00:00:00Z");
    let (_, body) = github_sign_in(&server).await;
    assert_ne!(body["data"]["id"], 2, "{body}");
    assert_ne!(body["data"]["require_2fa"], true, "{body}");
    assert_eq!(github_id_of(&server, 2), "login:alice-gh", "still pending");

    // The account that held the login before the import: alice's (her second factor follows).
    github_answers(&mock, 4242, "alice-gh", "2015-03-04T05:06:07Z");
    let (status, body) = github_sign_in(&server).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["require_2fa"], true, "alice's sign-in: {body}");
    assert_eq!(github_id_of(&server, 2), "4242", "bound to the numeric id");
}

#[tokio::test]
async fn a_one_api_installation_is_told_apart_and_moves_over() {
    let values: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/oneapi/values.json"),
        )
        .expect("values"),
    )
    .expect("JSON");
    let dir = tempfile::tempdir().expect("dir");
    let src = tempfile::tempdir().expect("dir");
    let source = src.path().join("one-api.db");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/oneapi/oneapi.db"),
        &source,
    )
    .expect("copy");
    let report = import(dir.path(), args(&source)).await.expect("imports");
    for expected in [
        "imported from one-api (sqlite)",
        "users: 2",
        "tokens: 2",
        "channels: 1",
        "lark_id",
        "200 log rows imported",
    ] {
        assert!(
            report.contains(expected),
            "{expected:?} missing in:\n{report}"
        );
    }
    let server = TestServer::start_in(dir).await;
    let limited = server
        .store()
        .read_blocking(|rtx| tollgate_storage::tokens::get(rtx, tollgate_storage::TokenId(2)))
        .expect("read")
        .expect("token 2");
    assert!(limited.model_limits_enabled, "models → model limits");
    assert_eq!(limited.model_limits, "gpt-4o-mini");
    assert!(
        limited.allow_ips.contains("127.0.0.1/32"),
        "subnet → allowed IPs"
    );
    let credited = server
        .store()
        .read_blocking(|rtx| users::credited(rtx, UserId(2)))
        .expect("read");
    assert_eq!(credited, 320_000, "quota + used == credited");

    let erin = server
        .client_for("erin", values["erin"]["password"].as_str().expect("pass"))
        .await;
    assert_eq!(erin.id, 2);
    for who in ["erin", "limited"] {
        let key = format!("sk-{}", values["keys"][who].as_str().expect("key"));
        assert_eq!(
            models_status(&server, &key).await,
            StatusCode::OK,
            "{who}'s key"
        );
    }
    let code = values["codes"]["unused"].as_str().expect("code");
    let (_, body) = erin.post("/api/user/topup", json!({"key": code})).await;
    assert_eq!(body["success"], true, "{body}");
    let (_, body) = erin.post("/api/user/topup", json!({"key": code})).await;
    assert_eq!(body["success"], false, "once: {body}");
    let root = server
        .login(
            values["root"]["username"].as_str().expect("name"),
            values["root"]["password"].as_str().expect("pass"),
        )
        .await;
    let (_, body) = server.get_as(root, "/api/log/?p=1&page_size=10").await;
    assert_eq!(
        body["data"]["total"], 203,
        "200 logs, 2 opening rows, 1 top-up"
    );
}

/// The gateway's success notification for an imported order, signed with `key`.
fn epay_notification(trade_no: &str, money: &str, key: &str) -> BTreeMap<String, String> {
    let mut params: BTreeMap<String, String> = [
        ("pid", "1001"),
        ("trade_no", "GW-IMPORTED-1"),
        ("out_trade_no", trade_no),
        ("type", "wxpay"),
        ("name", "TUC20"),
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

#[tokio::test]
async fn an_imported_pending_epay_order_completes_once_on_its_notification() {
    let values = values();
    let (_src, source) = source_copy();
    let dir = tempfile::tempdir().expect("dir");
    import(
        dir.path(),
        ImportArgs {
            with_logs: false,
            ..args(&source)
        },
    )
    .await
    .expect("imports");
    let server = TestServer::start_in(dir).await;
    let root = server
        .login(
            values["root"]["username"].as_str().expect("name"),
            values["root"]["password"].as_str().expect("pass"),
        )
        .await;
    for (key, value) in [
        ("PayAddress", "https://pay.example.com/"),
        ("EpayId", "1001"),
        ("EpayKey", "imported-epay-key"),
    ] {
        server.set_option_as(root, key, value).await;
    }
    let alice_quota = |server: &TestServer| {
        server
            .store()
            .read_blocking(|rtx| users::get(rtx, UserId(2)))
            .expect("read")
            .expect("alice")
            .quota
            .0
    };
    assert_eq!(alice_quota(&server), 500_000);
    // new-api's order: 20 units for 146.00 (money as the incumbent stored it).
    let paid = epay_notification("EPAY-PENDING-2", "146.00", "imported-epay-key");
    for _ in 0..2 {
        let answer = server
            .client
            .get(server.url("/api/user/epay/notify"))
            .query(&paid)
            .send()
            .await
            .expect("sent")
            .text()
            .await
            .expect("body");
        assert_eq!(answer, "success");
    }
    server.flush().await;
    assert_eq!(
        alice_quota(&server),
        500_000 + 20 * 500_000,
        "20 × QuotaPerUnit credited once"
    );
    let order = server
        .store()
        .read_blocking(|rtx| tollgate_storage::topups::find_by_trade_no(rtx, "EPAY-PENDING-2"))
        .expect("read")
        .expect("order");
    assert_eq!(order.status, "success", "{order:?}");
    assert_books(&server, 2).await;
    // The order already paid at the incumbent is not paid again.
    let again = epay_notification("EPAY-PAID-1", "73.00", "imported-epay-key");
    let answer = server
        .client
        .get(server.url("/api/user/epay/notify"))
        .query(&again)
        .send()
        .await
        .expect("sent")
        .text()
        .await
        .expect("body");
    assert_eq!(answer, "success", "acknowledged");
    server.flush().await;
    assert_eq!(alice_quota(&server), 10_500_000, "nothing more");
}
