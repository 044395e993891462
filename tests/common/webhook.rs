//! A webhook receiver on loopback for tests: every POST's headers and body go to the test.
#![allow(
    dead_code,
    reason = "each test binary uses a different subset of the helpers"
)]

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;
use tokio::sync::mpsc;

/// A webhook receiver on loopback: hands every POST's headers and body to the test.
#[expect(
    clippy::expect_used,
    reason = "test helper: a failed bind fails the test"
)]
pub async fn receiver() -> (String, mpsc::UnboundedReceiver<(HeaderMap, Bytes)>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let app = Router::new()
        .route(
            "/hook",
            post(
                |State(tx): State<mpsc::UnboundedSender<(HeaderMap, Bytes)>>,
                 headers: HeaderMap,
                 body: Bytes| async move {
                    let _ = tx.send((headers, body));
                    "ok"
                },
            ),
        )
        .with_state(tx);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/hook"), rx)
}
