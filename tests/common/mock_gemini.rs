//! A real Gemini-speaking HTTP server on 127.0.0.1:0 for tests:
//! `POST /{version}/models/{model}:generateContent` and `:streamGenerateContent?alt=sse`, with
//! `:countTokens` (the prompt usage as `totalTokens`), `:embedContent` and `:batchEmbedContents`,
//! configurable text pieces and usage and scripted faults. Records the path, query, raw body
//! and headers of the last call; can answer a fixed byte string (to check pass-through).
#![allow(
    dead_code,
    reason = "each test binary uses a different subset of the mock"
)]
#![expect(
    clippy::expect_used,
    reason = "a broken mock must fail the test loudly"
)]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use super::fault::{Calls, Script};

#[derive(Default)]
struct MockState {
    calls: AtomicUsize,
    faults: Mutex<VecDeque<(u16, Value)>>,
    /// (prompt, candidates, thoughts, cached).
    usage: Mutex<(i64, i64, i64, i64)>,
    pieces: Mutex<Vec<String>>,
    raw_answer: Mutex<Option<(String, String)>>,
    last_uri: Mutex<Option<Uri>>,
    last_body: Mutex<Option<Bytes>>,
    last_headers: Mutex<HeaderMap>,
    embed_usage: Mutex<Option<i64>>,
    scripts: Mutex<VecDeque<Script>>,
    signal: Calls,
}

/// The running mock; stops when dropped.
pub struct MockGemini {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    state: Arc<MockState>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MockGemini {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn usage_json((prompt, candidates, thoughts, cached): (i64, i64, i64, i64)) -> Value {
    json!({"promptTokenCount": prompt, "candidatesTokenCount": candidates,
        "thoughtsTokenCount": thoughts, "cachedContentTokenCount": cached,
        "totalTokenCount": prompt + candidates + thoughts})
}

async fn generate(
    State(s): State<Arc<MockState>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    s.calls.fetch_add(1, Ordering::SeqCst);
    *s.last_uri.lock().expect("lock") = Some(uri.clone());
    *s.last_headers.lock().expect("lock") = headers;
    *s.last_body.lock().expect("lock") = Some(body.clone());
    s.signal.hit();
    let script = s.scripts.lock().expect("lock").pop_front();
    if let Some(script) = script {
        return script.respond().await;
    }
    if let Some((status, body)) = s.faults.lock().expect("lock").pop_front() {
        return (StatusCode::from_u16(status).expect("status"), Json(body)).into_response();
    }
    let _: Value = serde_json::from_slice(&body).expect("the relay sends JSON");
    if let Some((content_type, raw)) = s.raw_answer.lock().expect("lock").clone() {
        let mut response = Response::new(Body::from(raw));
        response.headers_mut().insert(
            "content-type",
            HeaderValue::from_str(&content_type).expect("ascii"),
        );
        return response;
    }
    let path = uri.path();
    if path.ends_with(":countTokens") {
        return Json(json!({"totalTokens": s.usage.lock().expect("lock").0})).into_response();
    }
    if path.ends_with(":embedContent") || path.ends_with(":batchEmbedContents") {
        return Json(embed_answer(
            &s,
            &body,
            path.ends_with(":batchEmbedContents"),
        ))
        .into_response();
    }
    let model = path
        .rsplit('/')
        .next()
        .and_then(|t| t.split(':').next())
        .unwrap_or("gemini")
        .to_owned();
    let usage = *s.usage.lock().expect("lock");
    let pieces = s.pieces.lock().expect("lock").clone();
    if path.ends_with(":streamGenerateContent") {
        let mut out = String::new();
        let last = pieces.len().saturating_sub(1);
        for (i, piece) in pieces.iter().enumerate() {
            let mut chunk = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": piece}]}, "index": 0}],
                "modelVersion": model, "responseId": "resp-mock",
                "usageMetadata": {"promptTokenCount": usage.0, "totalTokenCount": usage.0}});
            if i == last {
                chunk["candidates"][0]["finishReason"] = json!("STOP");
                chunk["usageMetadata"] = usage_json(usage);
            }
            out.push_str(&format!("data: {chunk}\r\n\r\n"));
        }
        let mut response = Response::new(Body::from(out));
        response.headers_mut().insert(
            "content-type",
            HeaderValue::from_static("text/event-stream"),
        );
        return response;
    }
    Json(
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": pieces.concat()}]},
        "finishReason": "STOP", "index": 0}],
        "usageMetadata": usage_json(usage), "modelVersion": model, "responseId": "resp-mock"}),
    )
    .into_response()
}

/// An embedding answer: `[0.25, 0.5]` per input; `usageMetadata` when `set_embed_usage` set it.
fn embed_answer(s: &MockState, body: &Bytes, batch: bool) -> Value {
    let request: Value = serde_json::from_slice(body).expect("the relay sends JSON");
    let values = json!({"values": [0.25, 0.5]});
    let mut answer = if batch {
        let n = request["requests"].as_array().map_or(0, Vec::len);
        json!({"embeddings": vec![values; n]})
    } else {
        json!({"embedding": values})
    };
    if let Some(prompt) = *s.embed_usage.lock().expect("lock") {
        answer["usageMetadata"] = json!({"promptTokenCount": prompt, "totalTokenCount": prompt});
    }
    answer
}

/// `GET /v1beta/models` (https://ai.google.dev/api/rest/v1beta/models/list): names prefixed
/// `models/`; only with the key the channel tests use.
async fn list_models(headers: HeaderMap) -> Response {
    if headers.get("x-goog-api-key").and_then(|v| v.to_str().ok()) != Some("gemini-list-key") {
        return (
            StatusCode::FORBIDDEN,
            Json(json!({"error": {"code": 403, "message": "API key not valid", "status": "PERMISSION_DENIED"}})),
        )
            .into_response();
    }
    Json(json!({"models": [
        {"name": "models/gemini-test", "displayName": "Gemini Test"},
        {"name": "models/text-embedding-004"},
    ]}))
    .into_response()
}

impl MockGemini {
    /// Makes embedding answers report `promptTokenCount` (none by default, as Gemini's
    /// embedContent usually answers).
    pub fn set_embed_usage(&self, prompt: Option<i64>) {
        *self.state.embed_usage.lock().expect("lock") = prompt;
    }

    /// Starts a mock answering "Hello" with 10 prompt and 2 candidate tokens.
    pub async fn start() -> MockGemini {
        let state = Arc::new(MockState::default());
        *state.usage.lock().expect("lock") = (10, 2, 0, 0);
        *state.pieces.lock().expect("lock") = vec!["Hel".into(), "lo".into()];
        let app = Router::new()
            .route("/{version}/models/{target}", post(generate))
            .route("/{version}/models", get(list_models))
            .with_state(Arc::clone(&state));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        MockGemini {
            base: format!("http://{addr}"),
            state,
            task,
        }
    }

    /// Sets the usage reported: (prompt, candidates, thoughts, cached).
    pub fn set_usage(&self, usage: (i64, i64, i64, i64)) {
        *self.state.usage.lock().expect("lock") = usage;
    }

    /// Sets the text pieces (one per streamed chunk; joined in whole answers).
    pub fn set_pieces(&self, pieces: &[&str]) {
        *self.state.pieces.lock().expect("lock") = pieces.iter().map(|p| (*p).to_owned()).collect();
    }

    /// Answers exactly these bytes with this content type.
    pub fn set_raw_answer(&self, content_type: &str, raw: &str) {
        *self.state.raw_answer.lock().expect("lock") =
            Some((content_type.to_owned(), raw.to_owned()));
    }

    /// Scripts the next answer.
    pub fn push_fault(&self, status: u16, body: Value) {
        self.state
            .faults
            .lock()
            .expect("lock")
            .push_back((status, body));
    }

    /// Scripts the answer of the next call (before any fault).
    pub fn push_script(&self, script: Script) {
        self.state.scripts.lock().expect("lock").push_back(script);
    }

    /// Waits until the mock got `n` calls in all.
    pub async fn wait_calls(&self, n: usize) {
        self.state.signal.wait(n).await;
    }

    /// Calls so far.
    pub fn calls(&self) -> usize {
        self.state.calls.load(Ordering::SeqCst)
    }

    /// Path and query of the last call.
    pub fn last_uri(&self) -> Option<String> {
        self.state
            .last_uri
            .lock()
            .expect("lock")
            .as_ref()
            .map(ToString::to_string)
    }

    /// The raw body of the last call.
    pub fn last_raw_body(&self) -> Option<Bytes> {
        self.state.last_body.lock().expect("lock").clone()
    }

    /// The JSON body of the last call.
    pub fn last_body(&self) -> Option<Value> {
        self.last_raw_body()
            .and_then(|b| serde_json::from_slice(&b).ok())
    }

    /// A header of the last call.
    pub fn last_header(&self, name: &str) -> Option<String> {
        self.state
            .last_headers
            .lock()
            .expect("lock")
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }
}
