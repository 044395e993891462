//! Storage faults stop the money, not the truth (P13 item 9): with the database on a file
//! backend that fails on command, answers served while healthy are billed exactly once after the
//! disk recovers, paid requests are refused (503, OpenAI-shaped) while it fails, `/api/status`
//! says so, and the books balance afterwards.

mod common;

use std::time::Duration;

use common::faulty_disk::FaultSwitch;
use common::log_capture;
use common::mock_upstream::MockUpstream;
use common::relay_fixture::{chat, fixture, hi_max};
use common::{Actor, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate_storage::logs::{self, LOG_CONSUME};
use tollgate_storage::{StorageError, UserId, users};

const QUOTA: i64 = 50_000_000;
const TOKEN_QUOTA: i64 = 20_000_000;

fn channel(mock: &MockUpstream) -> Value {
    json!({"name": "mock", "type": 1, "key": "upstream-key-1", "base_url": mock.base,
           "models": "gpt-4o", "group": "default"})
}

/// Waits (bounded) until `/api/status` reports the fault as `faulted`.
async fn wait_status(server: &TestServer, faulted: bool) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (status, body) = server.get("/api/status").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let fault = body["data"]["storage_fault"].clone();
        if fault.is_null() != faulted {
            return fault;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "status never became faulted={faulted}: {body}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// While faulted, the public `/api/status` and `/api/health` say that settlements cannot be
/// saved, never the OS error's text or a path (those are in the server log).
async fn public_answers_tell_no_error_text(server: &TestServer) {
    let (_, status) = server.get("/api/status").await;
    let (code, health) = server.get("/api/health").await;
    assert_eq!(code, StatusCode::SERVICE_UNAVAILABLE, "{health}");
    assert_eq!(
        health["data"]["checks"]["log_writer"]["ok"], false,
        "{health}"
    );
    let dir = server.data_dir().display().to_string();
    for body in [status.to_string(), health.to_string()] {
        for leak in ["os error", "No space left", "panic", dir.as_str()] {
            assert!(!body.contains(leak), "{leak:?} in a public answer: {body}");
        }
    }
}

/// Runs the scenario with the fault `arm` injects; asserts everything.
#[expect(
    clippy::expect_used,
    reason = "test helper: a failed call fails the test"
)]
async fn scenario(arm: impl Fn(&FaultSwitch)) {
    log_capture::install();
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((100, 20, 0)));
    let switch = FaultSwitch::new();
    let server = TestServer::start_on(
        tempfile::tempdir().expect("tempdir"),
        |c| c.commit_interval_ms = 0,
        Some(switch.wrap()),
    )
    .await;
    let (_root, payer, key) = fixture(&server, &[channel(&mock)], QUOTA, TOKEN_QUOTA).await;

    let mut answered = 0_usize;
    for _ in 0..3 {
        let (status, body) = chat(&server, &key, hi_max("gpt-4o", 30)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        answered += 1;
    }
    server.flush().await;

    // The disk fails. A request admitted before the writer notices is answered (and must be
    // billed later); once its commit has failed, paid requests are refused.
    arm(&switch);
    let (status, body) = chat(&server, &key, hi_max("gpt-4o", 30)).await;
    assert_eq!(status, StatusCode::OK, "not known yet: {body}");
    answered += 1;
    // The flush is answered once the commit holding that answer has failed (the fault set).
    assert!(
        server.try_flush().await.is_err(),
        "flush reports the failure"
    );
    assert!(switch.was_hit(), "the injected fault was reached");
    let fault = wait_status(&server, true).await;
    public_answers_tell_no_error_text(&server).await;
    let refused = chat(&server, &key, hi_max("gpt-4o", 30)).await;
    let (status, body) = refused;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"]["code"], "storage_unavailable", "{body}");
    assert_eq!(body["error"]["type"], "server_error", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("cannot record charges")),
        "{body}"
    );
    let (status, body) = chat(&server, &key, hi_max("gpt-4o", 30)).await;
    assert_eq!(
        status,
        StatusCode::SERVICE_UNAVAILABLE,
        "still refused: {body}"
    );
    assert!(
        fault["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{fault}"
    );
    assert!(fault["since"].as_i64().is_some_and(|t| t > 0), "{fault}");

    // Space comes back: the writer recovers by itself.
    switch.heal();
    wait_status(&server, false).await;
    let (status, body) = chat(&server, &key, hi_max("gpt-4o", 30)).await;
    assert_eq!(status, StatusCode::OK, "served again: {body}");
    answered += 1;

    audit(&server, &payer, answered).await;
    let logs = log_capture::logs();
    assert!(
        logs.contains("storage fault: settlements cannot be committed"),
        "the server log says so"
    );
    assert!(
        logs.contains("storage recovered"),
        "and says when it is over"
    );
}

/// Every answered request has exactly one consume row and charge; the books balance.
#[expect(
    clippy::expect_used,
    reason = "test helper: a failed read fails the test"
)]
async fn audit(server: &TestServer, payer: &Actor, answered: usize) {
    server.flush().await;
    let (quota, used, count, rows) = server
        .store()
        .read_blocking(|rtx| {
            let u = users::get(rtx, UserId(payer.id))?.expect("payer");
            let rows: Vec<logs::LogEntry> = logs::recent_for_user(rtx, UserId(payer.id), 10_000)?
                .into_iter()
                .filter(|l| l.log_type == LOG_CONSUME)
                .collect();
            Ok::<_, StorageError>((u.quota.0, u.used_quota.0, u.request_count, rows))
        })
        .expect("read");
    let logged: i64 = rows.iter().map(|l| l.quota).sum();
    assert_eq!(rows.len(), answered, "one row per answer, none twice");
    assert!(rows.iter().all(|l| l.quota > 0), "every answer charged");
    assert_eq!(
        quota + logged,
        QUOTA,
        "balance + logged charges == credited"
    );
    assert_eq!(used, logged, "used == logged");
    assert_eq!(usize::try_from(count).expect("count"), answered);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_paid_requests_and_bills_every_answer_once_after_recovery() {
    scenario(|switch| switch.fill_at_write(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_sync_is_retried_without_applying_anything_twice() {
    scenario(|switch| switch.fail_syncs()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_inside_the_commit_keeps_the_batch() {
    scenario(|switch| switch.panic_on_write()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fault_can_start_at_a_later_write() {
    // The third write from now: part of a commit may reach the file before the failure.
    scenario(|switch| switch.fill_at_write(3)).await;
}
