//! A real full filesystem (P13 item 9): the data directory on a small tmpfs the test mounts,
//! filled up by a filler file. Paid requests are refused while nothing can be written; once the
//! filler is deleted the gateway recovers by itself and every answer it served is billed once.
//! Skipped (with the reason printed) where mounting is not permitted.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::TestServer;
use common::mock_upstream::MockUpstream;
use common::relay_fixture::{chat, fixture, hi_max};
use reqwest::StatusCode;
use serde_json::json;
use tollgate_storage::logs::{self, LOG_CONSUME};
use tollgate_storage::{StorageError, UserId, users};

const QUOTA: i64 = 50_000_000;

/// Mounts a tmpfs of `size` at `dir`; the reason when that is not possible.
fn mount_tmpfs(dir: &Path, size: &str) -> Result<(), String> {
    let out = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(dir)
        .output()
        .map_err(|e| format!("cannot run mount: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

/// Unmounts `dir` when dropped (also when the test fails).
struct Mounted<'a>(&'a Path);

impl Drop for Mounted<'_> {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0).status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_filesystem_stops_paid_requests_until_space_returns() {
    let outer = tempfile::tempdir().expect("tempdir");
    let data = tempfile::tempdir_in(outer.path()).expect("mount point");
    let mount_point = data.path().to_path_buf();
    if let Err(reason) = mount_tmpfs(&mount_point, "64m") {
        println!("skipped: cannot mount a tmpfs ({reason})");
        return;
    }
    let _mounted = Mounted(&mount_point);
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((100, 20, 0)));
    let server = TestServer::start_with(data, |c| c.commit_interval_ms = 0).await;
    let channel = json!({"name": "mock", "type": 1, "key": "k", "base_url": mock.base,
                         "models": "gpt-4o", "group": "default"});
    let (_root, payer, key) = fixture(&server, &[channel], QUOTA, QUOTA).await;
    let mut answered = 0_usize;
    for _ in 0..3 {
        let (status, body) = chat(&server, &key, hi_max("gpt-4o", 30)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        answered += 1;
    }
    server.flush().await;

    // Fill the filesystem.
    let filler_path = mount_point.join("filler");
    let mut filler = std::fs::File::create(&filler_path).expect("filler");
    let block = vec![7_u8; 64 * 1024];
    while filler.write_all(&block).is_ok() {}
    drop(filler);

    // The next request is admitted (nothing failed yet) and answered; writing its reservation
    // and settlement fails, and paid requests are refused from then on.
    let (status, body) = chat(&server, &key, hi_max("gpt-4o", 30)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    answered += 1;
    let (status, body) = chat(&server, &key, hi_max("gpt-4o", 30)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"]["code"], "storage_unavailable", "{body}");
    let (_, status_body) = server.get("/api/status").await;
    assert!(
        !status_body["data"]["storage_fault"].is_null(),
        "{status_body}"
    );

    // Space returns: recovery without anyone's help.
    std::fs::remove_file(&filler_path).expect("free space");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (status, body) = chat(&server, &key, hi_max("gpt-4o", 30)).await;
        if status == StatusCode::OK {
            answered += 1;
            break;
        }
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert!(
            tokio::time::Instant::now() < deadline,
            "never recovered: {body}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while server.try_flush().await.is_err() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "commits never recovered"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let (quota, used, rows) = server
        .store()
        .read_blocking(|rtx| {
            let u = users::get(rtx, UserId(payer.id))?.expect("payer");
            let rows: Vec<logs::LogEntry> = logs::recent_for_user(rtx, UserId(payer.id), 10_000)?
                .into_iter()
                .filter(|l| l.log_type == LOG_CONSUME)
                .collect();
            Ok::<_, StorageError>((u.quota.0, u.used_quota.0, rows))
        })
        .expect("read");
    let logged: i64 = rows.iter().map(|l| l.quota).sum();
    assert_eq!(rows.len(), answered, "one row per answer, none twice");
    assert_eq!(
        quota + logged,
        QUOTA,
        "balance + logged charges == credited"
    );
    assert_eq!(used, logged);
    let dir = server.stop().await;
    drop(dir);
}
