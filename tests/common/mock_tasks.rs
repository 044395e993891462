//! A task upstream (Midjourney-proxy, Suno, OpenAI videos) answering scripted documents by
//! path, recording every call's method, path, headers and body, so tests can see what a
//! submit sent (the switches' shaping, the key header) and what the poller asked.
#![expect(
    clippy::expect_used,
    reason = "a broken mock must fail the test loudly"
)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// One recorded call.
#[derive(Debug, Clone)]
pub struct Call {
    /// Method.
    pub method: String,
    /// Path (no query).
    pub path: String,
    /// Headers, names lower case.
    pub headers: HashMap<String, String>,
    /// The body.
    pub body: Bytes,
}

impl Call {
    /// The body as JSON (`Null` when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

#[derive(Default)]
struct Shared {
    answers: Mutex<HashMap<String, (u16, String, Bytes)>>,
    calls: Mutex<Vec<Call>>,
}

/// A running mock on 127.0.0.1.
pub struct MockTasks {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// The port.
    pub port: u16,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl MockTasks {
    /// Starts a mock answering 404 until told otherwise.
    pub async fn start() -> MockTasks {
        let shared = Arc::new(Shared::default());
        let app = Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&shared));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        MockTasks {
            base: format!("http://127.0.0.1:{port}"),
            port,
            shared,
            task,
        }
    }

    /// Answers `status` with JSON `body` on `path` (any method).
    pub fn json(&self, path: &str, status: u16, body: Value) {
        self.bytes(
            path,
            status,
            "application/json",
            Bytes::from(body.to_string()),
        );
    }

    /// Answers `status` with `body` of `content_type` on `path`.
    pub fn bytes(&self, path: &str, status: u16, content_type: &str, body: Bytes) {
        self.shared
            .answers
            .lock()
            .expect("lock")
            .insert(path.to_owned(), (status, content_type.to_owned(), body));
    }

    /// Every call so far.
    pub fn calls(&self) -> Vec<Call> {
        self.shared.calls.lock().expect("lock").clone()
    }

    /// The calls to `path`.
    pub fn calls_to(&self, path: &str) -> Vec<Call> {
        self.calls()
            .into_iter()
            .filter(|c| c.path == path)
            .collect()
    }
}

impl Drop for MockTasks {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(State(shared): State<Arc<Shared>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let body = axum::body::to_bytes(body, 64 << 20)
        .await
        .unwrap_or_default();
    let path = parts.uri.path().to_owned();
    shared.calls.lock().expect("lock").push(Call {
        method: parts.method.to_string(),
        path: path.clone(),
        headers: parts
            .headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    v.to_str().unwrap_or_default().to_owned(),
                )
            })
            .collect(),
        body,
    });
    let answer = shared.answers.lock().expect("lock").get(&path).cloned();
    match answer {
        Some((status, content_type, body)) => (
            StatusCode::from_u16(status).expect("status"),
            [(header::CONTENT_TYPE, content_type)],
            body,
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no answer scripted").into_response(),
    }
}
