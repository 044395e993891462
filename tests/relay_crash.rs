//! `kill -9` then restart: the restarted server's database is consistent — every charge has its
//! log row and the balances agree with the logs — and no charge is lost: every answer the client
//! received has its row (the crash journal is replayed at start), nothing is applied twice, and
//! a stream cut by the crash is charged what it had produced (`partial`, reason `crash`).

mod common;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::mock_upstream::MockUpstream;
use common::{ROOT_PASS, ROOT_USER, TestServer, new_client};
use futures_util::StreamExt;
use reqwest::StatusCode;
use serde_json::json;
use tollgate_storage::logs::{self, LOG_CONSUME};
use tollgate_storage::{StorageError, TokenId, UserId, tokens, users};

const QUOTA: i64 = 10_000_000;
const TOKEN_QUOTA: i64 = 5_000_000;
/// Concurrent clients of the load test (each has at most one request in flight).
const WORKERS: usize = 16;

/// The release binary on `dir`, serving on a free port; returns it and its base URL once it
/// answers.
#[expect(clippy::expect_used, reason = "test helper: a failure fails the test")]
async fn spawn_server(dir: &std::path::Path) -> (Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("port")
        .local_addr()
        .expect("addr")
        .port();
    let child = Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .args(["--listen", &format!("127.0.0.1:{port}"), "--data-dir"])
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn tollgate");
    let base = format!("http://127.0.0.1:{port}");
    let api = new_client();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while api.get(format!("{base}/api/status")).send().await.is_err() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server did not start"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    (child, base)
}

/// Setup, a channel to `mock`, root funded with [`QUOTA`] and a key with [`TOKEN_QUOTA`] — all
/// over HTTP. Returns (root id, token id, key).
#[expect(clippy::expect_used, reason = "test helper: a failure fails the test")]
async fn provision(base: &str, mock: &MockUpstream) -> (i64, i64, String) {
    let api = new_client();
    let post = |path: &str, body: serde_json::Value, user: i64| {
        api.post(format!("{base}{path}"))
            .header("New-Api-User", user.to_string())
            .json(&body)
            .send()
    };
    post(
        "/api/setup",
        json!({"username": ROOT_USER, "password": ROOT_PASS, "confirmPassword": ROOT_PASS}),
        0,
    )
    .await
    .expect("setup");
    let root: serde_json::Value = post(
        "/api/user/login",
        json!({"username": ROOT_USER, "password": ROOT_PASS}),
        0,
    )
    .await
    .expect("login")
    .json()
    .await
    .expect("json");
    let root_id = root["data"]["id"].as_i64().expect("id");
    post("/api/channel/", json!({"name": "m", "type": 1, "key": "k", "base_url": mock.base, "models": "gpt-4o", "group": "default"}), root_id)
        .await.expect("channel");
    let t: serde_json::Value = post(
        "/api/token/",
        json!({"name": "load", "remain_quota": TOKEN_QUOTA}),
        root_id,
    )
    .await
    .expect("token")
    .json()
    .await
    .expect("json");
    let token_id = t["data"]["id"].as_i64().expect("id");
    let k: serde_json::Value = post(&format!("/api/token/{token_id}/key"), json!({}), root_id)
        .await
        .expect("key")
        .json()
        .await
        .expect("json");
    let key = k["data"]["key"].as_str().expect("key").to_owned();
    api.put(format!("{base}/api/user/"))
        .header("New-Api-User", root_id.to_string())
        .json(&json!({"id": root_id, "quota": QUOTA}))
        .send()
        .await
        .expect("quota");
    (root_id, token_id, key)
}

/// What the restarted server's database holds for root and its key.
struct Books {
    quota: i64,
    used: i64,
    count: i64,
    token_remain: i64,
    token_used: i64,
    /// Consume rows, newest first.
    rows: Vec<logs::LogEntry>,
}

impl Books {
    #[expect(clippy::expect_used, reason = "test helper: a failure fails the test")]
    fn read(server: &TestServer, root_id: i64, token_id: i64) -> Books {
        server
            .store()
            .read_blocking(|rtx| {
                let u = users::get(rtx, UserId(root_id))?.expect("root");
                let t = tokens::get(rtx, TokenId(token_id))?.expect("token");
                let rows = logs::recent_for_user(rtx, UserId(root_id), 1_000_000)?
                    .into_iter()
                    .filter(|l| l.log_type == LOG_CONSUME)
                    .collect();
                Ok::<_, StorageError>(Books {
                    quota: u.quota.0,
                    used: u.used_quota.0,
                    count: u.request_count,
                    token_remain: t.remain_quota.0,
                    token_used: t.used_quota.0,
                    rows,
                })
            })
            .expect("audit")
    }

    /// Every charge has its row, and the counters agree with the rows.
    #[expect(clippy::expect_used, reason = "test helper: a failure fails the test")]
    fn assert_consistent(&self) {
        let logged: i64 = self.rows.iter().map(|l| l.quota).sum();
        assert_eq!(
            self.quota + logged,
            QUOTA,
            "balance + logged charges == credited (no charge without its log)"
        );
        assert_eq!(self.used, logged, "used quota == logged charges");
        assert_eq!(
            self.token_remain + logged,
            TOKEN_QUOTA,
            "the key's balance agrees with the logs"
        );
        assert_eq!(self.token_used, logged);
        assert_eq!(
            usize::try_from(self.count).expect("count"),
            self.rows.len(),
            "one request counted per log row"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_load_loses_no_charge() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((100, 20, 0)));
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut child, base) = spawn_server(dir.path()).await;
    let (root_id, token_id, key) = provision(&base, &mock).await;

    // Load from WORKERS clients; kill -9 once 300 answers arrived. An answer counts once its
    // whole body has arrived.
    let ok = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut workers = Vec::new();
    for _ in 0..WORKERS {
        let (client, url, key, ok) = (
            new_client(),
            format!("{base}/v1/chat/completions"),
            key.clone(),
            ok.clone(),
        );
        workers.push(tokio::spawn(async move {
            loop {
                let sent = client
                    .post(&url)
                    .bearer_auth(&key)
                    .json(&json!({"model": "gpt-4o", "max_tokens": 30, "messages": []}))
                    .send()
                    .await;
                match sent {
                    Ok(resp) if resp.status() == StatusCode::OK => {
                        if resp.bytes().await.is_err() {
                            return;
                        }
                        ok.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                    Ok(_) => {}
                    Err(_) => return,
                }
            }
        }));
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while ok.load(std::sync::atomic::Ordering::SeqCst) < 300 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the load did not get going"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    child.kill().expect("kill -9");
    child.wait().expect("reaped");
    for w in workers {
        let _ = w.await;
    }
    let seen_ok = ok.load(std::sync::atomic::Ordering::SeqCst);

    // Restart on the same directory (the journal is replayed) and audit.
    let server = TestServer::start_in(dir).await;
    let books = Books::read(&server, root_id, token_id);
    books.assert_consistent();
    let rows = books.rows.len();
    assert!(
        rows >= seen_ok,
        "an answer the client received has no charge: {rows} rows, {seen_ok} answers"
    );
    assert!(
        rows <= seen_ok + WORKERS,
        "more rows than answers plus requests in flight: {rows} rows, {seen_ok} answers"
    );
    // A second restart replays nothing again.
    let dir = server.stop().await;
    let server = TestServer::start_in(dir).await;
    let again = Books::read(&server, root_id, token_id);
    again.assert_consistent();
    assert_eq!(again.rows.len(), rows, "a replay applies nothing twice");
}

/// Streams an answer of 80 pieces 100 ms apart, kills the server with `kill -9` once `events`
/// events reached the client, restarts it on the same data and returns the cut stream's row
/// (the books checked consistent, that row the only one).
#[expect(clippy::expect_used, reason = "test helper: a failure fails the test")]
async fn kill_9_after_stream_events(events: usize) -> logs::LogEntry {
    let mock = MockUpstream::start().await;
    mock.set_usage(None);
    let pieces: Vec<String> = (0..80).map(|i| format!("word{i} ")).collect();
    let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
    mock.set_pieces(&pieces);
    mock.set_chunk_delay(Duration::from_millis(100));
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut child, base) = spawn_server(dir.path()).await;
    let (root_id, token_id, key) = provision(&base, &mock).await;

    let resp = new_client()
        .post(format!("{base}/v1/chat/completions"))
        .bearer_auth(&key)
        .json(&json!({"model": "gpt-4o", "stream": true,
                       "messages": [{"role": "user", "content": "count"}]}))
        .send()
        .await
        .expect("stream");
    assert_eq!(resp.status(), StatusCode::OK);
    let mut body = resp.bytes_stream();
    let mut seen = 0;
    while seen < events {
        let chunk = body.next().await.expect("more").expect("bytes");
        seen += chunk.windows(5).filter(|w| w == b"data:").count();
    }
    child.kill().expect("kill -9");
    child.wait().expect("reaped");

    let server = TestServer::start_in(dir).await;
    let books = Books::read(&server, root_id, token_id);
    books.assert_consistent();
    assert_eq!(books.rows.len(), 1, "the cut stream has its row");
    let row = books.rows.into_iter().next().expect("one row");
    let other: serde_json::Value = serde_json::from_str(&row.other).expect("other");
    assert_eq!(other["usage_source"], "partial", "{other}");
    assert_eq!(other["partial_reason"], "crash", "{other}");
    assert_eq!(row.model_name, "gpt-4o");
    row
}

/// A stream's reservation is in the journal before its first event reaches the client, though
/// its record is written lazily (with the journal's next append): killed before any progress
/// record or other request's append, the restart still charges the prompt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_at_a_streams_first_event_charges_its_prompt() {
    // The first event only: long before the first progress record (2 s).
    let row = kill_9_after_stream_events(1).await;
    assert!(row.prompt_tokens > 0, "{row:?}");
    assert!(row.quota > 0, "the prompt is charged: {row:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_stream_charges_what_the_stream_produced() {
    // Past the first progress record (every 2 s; the pieces come 100 ms apart).
    let row = kill_9_after_stream_events(30).await;
    assert!(
        row.completion_tokens > 0,
        "the output of the last progress record is charged: {row:?}"
    );
    assert!(row.quota > 0, "{row:?}");
}
