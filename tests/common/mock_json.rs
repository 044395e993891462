//! A tiny upstream that answers fixed JSON documents on GET paths (provider billing APIs and
//! the like), recording each call's path, query and Authorization header.
#![expect(
    clippy::expect_used,
    reason = "a broken mock must fail the test loudly"
)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// One recorded call.
#[derive(Debug, Clone)]
pub struct Call {
    /// Path and query, e.g. `/v1/dashboard/billing/usage?start_date=…`.
    pub uri: String,
    /// The Authorization header, if any.
    pub auth: Option<String>,
}

#[derive(Default)]
struct Shared {
    answers: Mutex<HashMap<String, (u16, Value)>>,
    calls: Mutex<Vec<Call>>,
}

/// A running mock on 127.0.0.1.
pub struct MockJson {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl MockJson {
    /// Starts a mock that answers 404 everywhere until [`MockJson::answer`] is called.
    pub async fn start() -> MockJson {
        let shared = Arc::new(Shared::default());
        let app = Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&shared));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        MockJson { base, shared, task }
    }

    /// Answers `status` with `body` on `path` (any method, any query).
    pub fn answer(&self, path: &str, status: u16, body: Value) {
        self.shared
            .answers
            .lock()
            .expect("lock")
            .insert(path.to_owned(), (status, body));
    }

    /// Every call so far.
    pub fn calls(&self) -> Vec<Call> {
        self.shared.calls.lock().expect("lock").clone()
    }
}

impl Drop for MockJson {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(State(shared): State<Arc<Shared>>, req: Request) -> Response {
    let uri = req.uri();
    shared.calls.lock().expect("lock").push(Call {
        uri: uri
            .path_and_query()
            .map(ToString::to_string)
            .unwrap_or_default(),
        auth: req
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
    });
    let answer = shared
        .answers
        .lock()
        .expect("lock")
        .get(uri.path())
        .cloned();
    match answer {
        Some((status, body)) => (
            StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            axum::Json(body),
        )
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
