//! A provider-agnostic upstream on 127.0.0.1:0 for wire tests (Cohere, Responses-only
//! channels): every POST, whatever its path, is recorded (path and query, headers, body) and
//! answered with the next scripted answer ([`Script`]); with none left it answers 500.
#![allow(
    dead_code,
    reason = "each test binary uses a different subset of the mock"
)]
#![expect(
    clippy::expect_used,
    reason = "a broken mock must fail the test loudly"
)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::fault::{Calls, Script};

/// One recorded call.
#[derive(Debug, Clone)]
pub struct Call {
    /// Path and query.
    pub uri: String,
    /// The request headers.
    pub headers: HeaderMap,
    /// The raw body.
    pub body: Bytes,
}

impl Call {
    /// The body as JSON (`Null` when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }
}

#[derive(Default)]
struct Shared {
    scripts: Mutex<VecDeque<Script>>,
    calls: Mutex<Vec<Call>>,
    signal: Calls,
}

/// The running mock; stops when dropped.
pub struct MockScripted {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MockScripted {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    shared.calls.lock().expect("lock").push(Call {
        uri: uri.to_string(),
        headers,
        body,
    });
    shared.signal.hit();
    let script = shared.scripts.lock().expect("lock").pop_front();
    match script {
        Some(script) => script.respond().await,
        None => (StatusCode::INTERNAL_SERVER_ERROR, "no scripted answer left").into_response(),
    }
}

impl MockScripted {
    /// Starts a mock with no answers scripted.
    pub async fn start() -> MockScripted {
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
        MockScripted { base, shared, task }
    }

    /// Answers the next call so.
    pub fn push(&self, script: Script) {
        self.shared.scripts.lock().expect("lock").push_back(script);
    }

    /// Answers the next call with `status` and the JSON `body`.
    pub fn push_json(&self, status: u16, body: &Value) {
        let mut script = Script::ok("application/json", vec![body.to_string()]);
        script.status = status;
        self.push(script);
    }

    /// Answers the next call with these SSE events (`event:` line and JSON data each).
    pub fn push_events(&self, events: &[(&str, Value)]) {
        let parts = events
            .iter()
            .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
            .collect();
        self.push(Script::ok("text/event-stream", parts));
    }

    /// Every call so far.
    pub fn calls(&self) -> Vec<Call> {
        self.shared.calls.lock().expect("lock").clone()
    }

    /// The last call.
    pub fn last(&self) -> Call {
        self.calls().pop().expect("a call was made")
    }

    /// Waits until the mock got `n` calls in all.
    pub async fn wait_calls(&self, n: usize) {
        self.shared.signal.wait(n).await;
    }
}
