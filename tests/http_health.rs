//! GET /api/health (issue #22 item 11): ready when the database takes a write, the log writer
//! commits and the actors run; not ready (503, saying which check failed) when the disk fails;
//! GET /api/health/live answers whenever the process does.

mod common;

use common::TestServer;
use common::faulty_disk::FaultSwitch;
use reqwest::StatusCode;

#[tokio::test]
async fn a_healthy_server_is_live_and_ready() {
    let server = TestServer::start().await;
    let (status, body) = server.get("/api/health").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let data = &body["data"];
    assert_eq!(data["ready"], true, "{body}");
    assert_eq!(data["live"], true);
    for check in ["database", "log_writer", "channel_pool"] {
        assert_eq!(data["checks"][check]["ok"], true, "{check}: {body}");
    }
    let (status, body) = server.get("/api/health/live").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["live"], true);
    let (status, again) = server.get("/api/health").await;
    assert_eq!(status, StatusCode::OK, "a reused probe: {again}");
}

#[tokio::test]
async fn a_disk_that_takes_no_write_makes_the_server_not_ready() {
    let switch = FaultSwitch::new();
    let server = TestServer::start_on(
        tempfile::tempdir().expect("tempdir"),
        |_| {},
        Some(switch.wrap()),
    )
    .await;
    switch.fill_at_write(1);
    let (status, body) = server.get("/api/health").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["success"], false);
    assert_eq!(body["data"]["ready"], false);
    assert_eq!(body["data"]["checks"]["database"]["ok"], false, "{body}");
    assert!(
        body["data"]["checks"]["database"]["error"]
            .as_str()
            .is_some_and(|e| !e.is_empty()),
        "says why: {body}"
    );
    // In a fixed sentence: the OS error and the file's path are for the server log only.
    let dir = server.data_dir().display().to_string();
    for leak in ["os error", "No space left", dir.as_str()] {
        assert!(!body.to_string().contains(leak), "{leak:?} shown: {body}");
    }
    assert!(switch.was_hit(), "the probe reached the disk");
    let (status, _) = server.get("/api/health/live").await;
    assert_eq!(status, StatusCode::OK, "still live");
    switch.heal();
}
