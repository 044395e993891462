//! `kill -9` under load: the restarted server's database is consistent — every committed charge
//! has its log row and the balances agree with the logs — and at most the last batch is lost.

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::mock_upstream::MockUpstream;
use common::{ROOT_PASS, ROOT_USER, TestServer, new_client};
use reqwest::StatusCode;
use serde_json::json;
use tollgate_actors::log_writer::LOG_BATCH_MAX;
use tollgate_storage::{StorageError, TokenId, UserId, logs, tokens, users};

const QUOTA: i64 = 10_000_000;
const TOKEN_QUOTA: i64 = 5_000_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_load_never_breaks_the_books() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((100, 20, 0)));
    let dir = tempfile::tempdir().expect("tempdir");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("port")
        .local_addr()
        .expect("addr")
        .port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .args(["--listen", &format!("127.0.0.1:{port}"), "--data-dir"])
        .arg(dir.path())
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

    // Setup, a channel, a funded user and a key — all over HTTP.
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
    let (token_id, key) = {
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
        let id = t["data"]["id"].as_i64().expect("id");
        let k: serde_json::Value = post(&format!("/api/token/{id}/key"), json!({}), root_id)
            .await
            .expect("key")
            .json()
            .await
            .expect("json");
        (id, k["data"]["key"].as_str().expect("key").to_owned())
    };
    api.put(format!("{base}/api/user/"))
        .header("New-Api-User", root_id.to_string())
        .json(&json!({"id": root_id, "quota": QUOTA}))
        .send()
        .await
        .expect("quota");

    // Load from 16 workers; kill -9 once 300 answers arrived.
    let ok = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut workers = Vec::new();
    for _ in 0..16 {
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

    // Restart on the same file and audit.
    let server = TestServer::start_in(dir).await;
    let (quota, used, count, token_remain, token_used, logged, rows) = server
        .store()
        .read_blocking(|rtx| {
            let u = users::get(rtx, UserId(root_id))?.expect("root");
            let t = tokens::get(rtx, TokenId(token_id))?.expect("token");
            let all = logs::recent_for_user(rtx, UserId(root_id), 1_000_000)?;
            let logged: i64 = all.iter().map(|l| l.quota).sum();
            Ok::<_, StorageError>((
                u.quota.0,
                u.used_quota.0,
                u.request_count,
                t.remain_quota.0,
                t.used_quota.0,
                logged,
                all.len(),
            ))
        })
        .expect("audit");
    assert_eq!(
        quota + logged,
        QUOTA,
        "balance + logged charges == initial (no charge without its log)"
    );
    assert_eq!(used, logged, "used quota == logged charges");
    assert_eq!(
        token_remain + logged,
        TOKEN_QUOTA,
        "the key's balance agrees with the logs"
    );
    assert_eq!(token_used, logged);
    assert_eq!(
        usize::try_from(count).expect("count"),
        rows,
        "one request counted per log row"
    );
    assert!(
        rows + LOG_BATCH_MAX >= seen_ok,
        "lost more than a batch: {rows} committed, {seen_ok} answered"
    );
    assert!(rows > 0, "something was committed before the kill");
}
