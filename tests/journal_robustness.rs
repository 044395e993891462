//! Crash journal robustness (P16 item 9) through the public surface: an upstream's error body is
//! read only up to 64 KiB (so an endless one neither hangs the request nor grows the row and
//! its journal record), and `tollgate restore` moves the crash journal aside so the next start
//! does not replay the replaced database's charges into the backup. (The journal's own rules —
//! a torn append cut back, no record larger than recovery reads, a dead idle committer's batch
//! kept — are unit tests in `actors/src/journal.rs` and `actors/src/log_writer.rs`.)

mod common;

use std::time::Duration;

use common::fault::{Script, Tail};
use common::mock_scripted::MockScripted;
use common::relay_fixture::fixture;
use common::{ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::json;
use tollgate::config::Command;
use tollgate_actors::journal::Journal;
use tollgate_storage::usage::BalanceChange;
use tollgate_storage::{StorageError, users};

#[tokio::test]
async fn an_endless_upstream_error_body_is_read_up_to_64_kib_and_answered() {
    let mock = MockScripted::start().await;
    let server = TestServer::start().await;
    let channel = json!({"name": "scripted", "type": 1, "key": "upstream-key-1",
        "base_url": mock.base, "models": "gpt-4o", "group": "default"});
    let (_root, _payer, key) = fixture(&server, &[channel], 1_000_000, 1_000_000).await;
    mock.push(Script {
        status: 400,
        content_type: "application/json",
        first_delay: Duration::ZERO,
        parts: vec!["x".repeat(70 * 1024)],
        gap: Duration::ZERO,
        tail: Tail::Stall,
    });
    let request = server
        .client
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(&key)
        .json(&json!({"model": "gpt-4o", "max_tokens": 5,
            "messages": [{"role": "user", "content": "hi"}]}));
    let (status, body) = tokio::time::timeout(Duration::from_secs(5), server.send(request))
        .await
        .expect("answered without waiting for the rest of the error body");
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.len() < 1024),
        "{body}"
    );
}

#[tokio::test]
async fn restore_moves_the_crash_journal_aside() {
    let server = TestServer::start().await;
    server.setup_root().await;
    server.flush().await;
    let read_root = |server: &TestServer| {
        server
            .store()
            .read_blocking(|rtx| {
                let id = users::find_by_username(rtx, ROOT_USER)?
                    .map(|u| u.id)
                    .ok_or(StorageError::NotFound { what: "root" })?;
                Ok::<_, StorageError>((id, users::get(rtx, id)?.map(|u| u.quota.0)))
            })
            .expect("read")
    };
    let (root_id, quota) = read_root(&server);
    let dir = server.stop().await;
    let backup = dir.path().join("backup.redb");
    std::fs::copy(
        dir.path().join(tollgate_storage::store::DB_FILE_NAME),
        &backup,
    )
    .expect("backup copy");

    // The replaced database's process crashed with a charge only its journal holds.
    let mut journal = Journal::create(dir.path(), 9).expect("journal");
    journal
        .settled(
            1_000_000,
            None,
            Some(BalanceChange {
                user_id: root_id,
                token_id: None,
                charged: 12_345,
                is_request: true,
                at: 1,
            }),
            None,
        )
        .expect("journalled");
    drop(journal);

    let config = tollgate::Config::for_data_dir(dir.path());
    let said = tollgate::ops::run(Command::Restore { file: backup }, &config)
        .await
        .expect("restored");
    assert!(said.contains("tollgate.journal.9.before-restore"), "{said}");
    assert!(
        dir.path()
            .join("tollgate.journal.9.before-restore")
            .exists()
    );

    let server = TestServer::start_in(dir).await;
    let (_, after) = read_root(&server);
    assert_eq!(
        after, quota,
        "the backup's balance, no journal replayed into it"
    );
}
