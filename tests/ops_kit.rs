//! The operations kit through the real binary (issue P12 item 13): `tollgate backup` asks a
//! running server for a consistent copy (a backup token root made with a two-factor code; a
//! root access token alone is refused) and copies a stopped server's file
//! itself; `tollgate restore` and `tollgate admin reset-password` refuse while a server holds
//! the file, and work once it is stopped.

mod common;

use std::path::Path;

use common::two_factor::{actor_of, turn_on};
use common::{ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::json;

/// Runs the binary with `args` on `data_dir`: (success, what it printed).
async fn tollgate(data_dir: &Path, args: &[&str]) -> (bool, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .env_remove("TOLLGATE_ADMIN_TOKEN")
        .output()
        .await
        .unwrap_or_else(|e| unreachable!("the binary runs: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[tokio::test]
async fn backup_restore_and_password_reset_through_the_binary() {
    let server = TestServer::start().await;
    let root = server.root().await;
    let (status, body) = server.get_as(root, "/api/user/token").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let token = body["data"].as_str().unwrap_or_default().to_owned();
    let (status, body) = server
        .send(
            server
                .client
                .put(server.url("/api/option/"))
                .header("New-Api-User", root.to_string())
                .json(&json!({"key": "SystemName", "value": "Before backup"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let dir = server.data_dir().to_path_buf();
    let out = tempfile::tempdir().unwrap_or_else(|e| unreachable!("{e}"));
    let copy = out.path().join("copy.redb");
    let copy_arg = copy.to_string_lossy().into_owned();

    // A running server holds the file: without a token the backup says how to ask it.
    let (ok, said) = tollgate(&dir, &["backup", &copy_arg, "--server", &server.base]).await;
    assert!(!ok && said.contains("--token"), "{said}");
    // A non-root token is refused by the server.
    let (ok, said) = tollgate(
        &dir,
        &[
            "backup",
            &copy_arg,
            "--server",
            &server.base,
            "--token",
            "wrong",
            "--user-id",
            "1",
        ],
    )
    .await;
    assert!(!ok && said.contains("401"), "{said}");
    // Root's system access token alone is not enough: a backup needs a two-factor check.
    let (ok, said) = tollgate(
        &dir,
        &[
            "backup",
            &copy_arg,
            "--server",
            &server.base,
            "--token",
            &token,
            "--user-id",
            &root.to_string(),
        ],
    )
    .await;
    assert!(!ok && said.contains("403"), "{said}");
    // A backup token, made by root with a code, is.
    let root_actor = actor_of(&server, root);
    let (mut app, _codes) = turn_on(&root_actor).await;
    let (status, body) = root_actor
        .post(
            "/api/user/backup_tokens",
            json!({"name": "ops kit", "code": app.code()}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let backup_token = body["data"]["token"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let (ok, said) = tollgate(
        &dir,
        &[
            "backup",
            &copy_arg,
            "--server",
            &server.base,
            "--token",
            &backup_token,
        ],
    )
    .await;
    assert!(ok, "{said}");
    assert!(copy.exists());
    let (status, body) = root_actor.get("/api/audit?action=backup.download").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let rows = body["data"]["items"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(rows.len(), 1, "the backup is on record: {body}");
    assert!(
        rows[0]["after"]
            .as_str()
            .unwrap_or_default()
            .contains("ops kit"),
        "{body}"
    );

    // Restore and password reset refuse while the server runs.
    let (ok, said) = tollgate(&dir, &["restore", &copy_arg]).await;
    assert!(!ok && said.contains("already in use"), "{said}");
    let (ok, said) = tollgate(&dir, &["admin", "reset-password", ROOT_USER]).await;
    assert!(!ok && said.contains("already in use"), "{said}");

    // After the backup the name changes; restoring the backup brings the old one back.
    server
        .send(
            server
                .client
                .put(server.url("/api/option/"))
                .header("New-Api-User", root.to_string())
                .json(&json!({"key": "SystemName", "value": "After backup"})),
        )
        .await;
    let dir = server.stop().await;
    // A stopped server's file is copied directly.
    let direct = out.path().join("direct.redb");
    let (ok, said) = tollgate(dir.path(), &["backup", &direct.to_string_lossy()]).await;
    assert!(ok, "{said}");
    let (ok, said) = tollgate(
        dir.path(),
        &["restore", &out.path().join("nope").to_string_lossy()],
    )
    .await;
    assert!(!ok, "a missing backup is refused: {said}");
    let (ok, said) = tollgate(dir.path(), &["restore", &copy_arg]).await;
    assert!(ok, "{said}");
    let (ok, said) = tollgate(dir.path(), &["admin", "reset-password", "nobody"]).await;
    assert!(!ok && said.contains("no user named nobody"), "{said}");
    let (ok, said) = tollgate(
        dir.path(),
        &[
            "admin",
            "reset-password",
            ROOT_USER,
            "--password",
            "s3cret-new",
        ],
    )
    .await;
    assert!(ok, "{said}");
    assert!(
        !said.contains("s3cret-new"),
        "a given password is not echoed: {said}"
    );

    let server = TestServer::start_in(dir).await;
    let (_, status) = server.get("/api/status").await;
    assert_eq!(status["data"]["system_name"], "Before backup", "{status}");
    // The new password is accepted (the restored root has two-factor on: a code follows).
    let (status, body) = server
        .post(
            "/api/user/login",
            json!({"username": ROOT_USER, "password": "s3cret-new"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["require_2fa"], true, "{body}");
}
