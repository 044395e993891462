//! The files that hold the data are owner-only (P16 item 8g): the data directory a server
//! creates (0700), its database file and crash journal (0600), a backup written from the live
//! database or received from a running server, and a restored database (0600); a database file
//! an older build left readable by others is made owner-only at start.
#![cfg(unix)]

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::TestServer;
use tollgate_storage::store::DB_FILE_NAME;
use tollgate_storage::{Keyring, backup};

fn mode(path: &Path) -> u32 {
    fs::metadata(path)
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or_else(|e| unreachable!("{}: {e}", path.display()))
}

#[tokio::test]
async fn data_journal_backup_and_restored_files_are_owner_only() {
    let root = tempfile::tempdir().expect("tempdir");
    let data = root.path().join("data");
    let server = TestServer::start_with(tempfile::tempdir().expect("tempdir"), {
        let data = data.clone();
        move |config| config.data_dir = data
    })
    .await;
    assert_eq!(mode(&data), 0o700, "the data directory");
    assert_eq!(mode(&data.join(DB_FILE_NAME)), 0o600, "the database file");
    let journals: Vec<_> = fs::read_dir(&data)
        .expect("read dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("tollgate.journal."))
        })
        .collect();
    assert!(!journals.is_empty(), "a journal file exists");
    for journal in &journals {
        assert_eq!(mode(journal), 0o600, "{}", journal.display());
    }

    // What `GET /api/backup` and `tollgate backup` write: a copy of the live file, and the
    // bytes received from a running server.
    let copy = root.path().join("copy.redb");
    server.store().backup_to(&copy).expect("backup");
    assert_eq!(mode(&copy), 0o600, "a backup copy");
    let received = root.path().join("received.redb");
    backup::write_backup(&received, &fs::read(&copy).expect("read")).expect("write");
    assert_eq!(mode(&received), 0o600, "a backup received from a server");
    let server_dir = server.stop().await;
    drop(server_dir);

    // A backup made readable by others is restored owner-only.
    fs::set_permissions(&copy, fs::Permissions::from_mode(0o644)).expect("chmod");
    backup::restore(&copy, &data, &Keyring::plaintext()).expect("restore");
    assert_eq!(mode(&data.join(DB_FILE_NAME)), 0o600, "the restored file");

    // A database file an older build left at 0644 is owner-only after the next start.
    let live = data.join(DB_FILE_NAME);
    fs::set_permissions(&live, fs::Permissions::from_mode(0o644)).expect("chmod");
    let server = TestServer::start_with(tempfile::tempdir().expect("tempdir"), {
        let data = data.clone();
        move |config| config.data_dir = data
    })
    .await;
    assert_eq!(mode(&live), 0o600, "tightened at start");
    drop(server.stop().await);
}
