//! The password hashing queue (P16 item 8e), through the public API: argon2 runs on one thread
//! behind a bounded queue, so a flood of sign-ins from many addresses is refused at once (429)
//! beyond it rather than queued without end; the sign-ins inside it still succeed.

mod common;

use common::{ROOT_PASS, ROOT_USER, TestServer, new_client};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn a_flood_of_sign_ins_beyond_the_hash_queue_is_refused_at_once() {
    let server = TestServer::start_with(tempfile::tempdir().expect("tempdir"), |c| {
        c.password_hash_queue = 1;
    })
    .await;
    server.root().await;
    let logins = (0..16).map(|_| {
        let (client, url) = (new_client(), server.url("/api/user/login"));
        async move {
            client
                .post(url)
                .json(&json!({"username": ROOT_USER, "password": ROOT_PASS}))
                .send()
                .await
                .expect("sent")
                .status()
        }
    });
    let statuses = futures_util::future::join_all(logins).await;
    let refused = statuses
        .iter()
        .filter(|s| **s == StatusCode::TOO_MANY_REQUESTS)
        .count();
    let signed_in = statuses.iter().filter(|s| **s == StatusCode::OK).count();
    assert_eq!(refused + signed_in, statuses.len(), "{statuses:?}");
    assert!(refused >= 1, "beyond the queue: refused {statuses:?}");
    assert!(signed_in >= 1, "inside it: signed in {statuses:?}");
    // The queue drains: a sign-in afterwards works.
    let (status, body) = server
        .post(
            "/api/user/login",
            json!({"username": ROOT_USER, "password": ROOT_PASS}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}
