//! A real OpenAI-speaking HTTP server on 127.0.0.1:0 for tests, with injectable faults.
//!
//! - `POST /v1/chat/completions` answers a `chat.completion` with usage;
//! - `GET /v1/models` answers the configured model list;
//! - `GET /generate_204` answers 204 (so the mock doubles as an HTTP forward proxy target for
//!   proxy checks: a proxied `GET http://host/generate_204` arrives here in absolute form).
//!
//! Faults: [`MockUpstream::push_fault`] scripts the next answers (status + JSON body, with an
//! optional delay), consumed one per call; [`MockUpstream::accept_keys`] makes every other key
//! get OpenAI's 401. Counters and the last Authorization header let tests check what was sent.
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
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use super::fault::{Calls, Script};

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Fault {
    /// HTTP status to answer.
    pub status: u16,
    /// JSON body to answer.
    pub body: Value,
    /// Wait this long before answering.
    pub delay: Duration,
}

#[derive(Default)]
struct MockState {
    accepted_keys: Mutex<Option<Vec<String>>>,
    faults: Mutex<VecDeque<Fault>>,
    delay: Mutex<Duration>,
    models: Mutex<Vec<String>>,
    chat_calls: AtomicUsize,
    models_calls: AtomicUsize,
    probe_calls: AtomicUsize,
    last_auth: Mutex<Option<String>>,
    last_body: Mutex<Option<Value>>,
    /// (prompt, completion, cached) reported in usage; None = report no usage.
    usage: Mutex<Option<(i64, i64, i64)>>,
    /// Streamed content pieces.
    pieces: Mutex<Vec<String>>,
    /// Delay between streamed chunks.
    chunk_delay: Mutex<Duration>,
    /// Streams whose body was dropped before the end (the client went away).
    streams_cut: AtomicUsize,
    /// When set, a stream answers exactly these bytes, one body chunk each (`chunk_delay`
    /// apart), instead of events built from `pieces`.
    raw_stream: Mutex<Option<Vec<String>>>,
    /// Scripted answers of the chat, completions and responses routes (one per call).
    scripts: Mutex<VecDeque<Script>>,
    /// Calls of those routes (to wait on).
    calls: Calls,
}

/// Counts a stream as cut when it is dropped before reaching `[DONE]`.
struct CutGuard {
    state: Arc<MockState>,
    finished: bool,
}

impl Drop for CutGuard {
    fn drop(&mut self) {
        if !self.finished {
            self.state.streams_cut.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// The running mock; stops when dropped.
pub struct MockUpstream {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    state: Arc<MockState>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MockUpstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn bearer(headers: &HeaderMap) -> Option<String> {
    headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned)
}

impl MockState {
    /// The scripted fault or the key check, if either answers this call.
    async fn intercept(&self, headers: &HeaderMap) -> Option<Response> {
        let key = bearer(headers);
        *self.last_auth.lock().expect("lock") = key.clone();
        let delay = *self.delay.lock().expect("lock");
        let fault = self.faults.lock().expect("lock").pop_front();
        if let Some(fault) = fault {
            tokio::time::sleep(fault.delay.max(delay)).await;
            let status = StatusCode::from_u16(fault.status).expect("status");
            return Some((status, Json(fault.body)).into_response());
        }
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        let accepted = self.accepted_keys.lock().expect("lock").clone();
        if let Some(accepted) = accepted
            && !key.is_some_and(|k| accepted.contains(&k))
        {
            let body = json!({"error": {"message": "Incorrect API key provided.",
                "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}});
            return Some((StatusCode::UNAUTHORIZED, Json(body)).into_response());
        }
        None
    }
}

async fn chat_completions(
    State(s): State<Arc<MockState>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    s.chat_calls.fetch_add(1, Ordering::SeqCst);
    let model = body["model"].as_str().unwrap_or("mock").to_owned();
    *s.last_body.lock().expect("lock") = Some(body);
    s.calls.hit();
    let script = s.scripts.lock().expect("lock").pop_front();
    if let Some(script) = script {
        return script.respond().await;
    }
    if let Some(answer) = s.intercept(&headers).await {
        return answer;
    }
    let usage = *s.usage.lock().expect("lock");
    let usage_json = usage.map(|(p, c, cached)| {
        json!({"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c,
               "prompt_tokens_details": {"cached_tokens": cached}})
    });
    if s.last_body
        .lock()
        .expect("lock")
        .as_ref()
        .is_some_and(|b| b["stream"] == true)
    {
        return sse(Arc::clone(&s), model, usage_json);
    }
    if let Some(usage_json) = usage_json {
        let content: String = s.pieces.lock().expect("lock").concat();
        return Json(json!({
            "id": "chatcmpl-mock", "object": "chat.completion", "created": 1_700_000_000, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": usage_json
        }))
        .into_response();
    }
    Json(json!({
        "id": "chatcmpl-mock", "object": "chat.completion", "created": 1_700_000_000, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    }))
    .into_response()
}

async fn embeddings(
    State(s): State<Arc<MockState>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    s.chat_calls.fetch_add(1, Ordering::SeqCst);
    *s.last_body.lock().expect("lock") = Some(body.clone());
    if let Some(answer) = s.intercept(&headers).await {
        return answer;
    }
    let prompt = s.usage.lock().expect("lock").map_or(1, |(p, _, _)| p);
    Json(json!({"object": "list", "model": body["model"],
        "data": [{"object": "embedding", "index": 0, "embedding": [0.5, 0.25]}],
        "usage": {"prompt_tokens": prompt, "total_tokens": prompt}}))
    .into_response()
}

/// An SSE answer: one chunk per piece, then the usage chunk (when usage is set and the request
/// asked for it), then `[DONE]`.
fn sse(s: Arc<MockState>, model: String, usage: Option<Value>) -> Response {
    let wants_usage = s
        .last_body
        .lock()
        .expect("lock")
        .as_ref()
        .is_some_and(|b| b["stream_options"]["include_usage"] == true);
    let pieces = s.pieces.lock().expect("lock").clone();
    let delay = *s.chunk_delay.lock().expect("lock");
    if let Some(parts) = s.raw_stream.lock().expect("lock").clone() {
        use futures_util::StreamExt;
        let stream = futures_util::stream::iter(parts).then(move |part| async move {
            tokio::time::sleep(delay).await;
            Ok::<_, std::io::Error>(part)
        });
        let mut response = axum::body::Body::from_stream(stream).into_response();
        response.headers_mut().insert(
            "content-type",
            axum::http::HeaderValue::from_static("text/event-stream"),
        );
        return response;
    }
    let mut events: Vec<String> = pieces
        .iter()
        .map(|p| {
            json!({"id": "c", "object": "chat.completion.chunk", "model": model,
                   "choices": [{"index": 0, "delta": {"content": p}}]})
            .to_string()
        })
        .collect();
    if let (Some(usage), true) = (usage, wants_usage) {
        events.push(json!({"id": "c", "object": "chat.completion.chunk", "model": model, "choices": [], "usage": usage}).to_string());
    }
    events.push("[DONE]".to_owned());
    let guard = CutGuard {
        state: s,
        finished: false,
    };
    let stream = futures_util::stream::unfold(
        (events.into_iter(), guard),
        move |(mut it, mut guard)| async move {
            let event = it.next()?;
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            if event == "[DONE]" {
                guard.finished = true;
            }
            Some((
                Ok::<_, std::io::Error>(format!("data: {event}\n\n")),
                (it, guard),
            ))
        },
    );
    let mut response = axum::body::Body::from_stream(stream).into_response();
    response.headers_mut().insert(
        "content-type",
        axum::http::HeaderValue::from_static("text/event-stream"),
    );
    response
}

async fn models(State(s): State<Arc<MockState>>, headers: HeaderMap) -> Response {
    s.models_calls.fetch_add(1, Ordering::SeqCst);
    if let Some(answer) = s.intercept(&headers).await {
        return answer;
    }
    let data: Vec<Value> = s
        .models
        .lock()
        .expect("lock")
        .iter()
        .map(|id| json!({"id": id, "object": "model", "created": 0, "owned_by": "mock"}))
        .collect();
    Json(json!({"object": "list", "data": data})).into_response()
}

async fn generate_204(State(s): State<Arc<MockState>>) -> StatusCode {
    s.probe_calls.fetch_add(1, Ordering::SeqCst);
    StatusCode::NO_CONTENT
}

impl MockUpstream {
    /// Starts a mock that accepts any key and lists `gpt-4o` and `gpt-4o-mini`.
    pub async fn start() -> MockUpstream {
        let state = Arc::new(MockState::default());
        *state.models.lock().expect("lock") = vec!["gpt-4o".into(), "gpt-4o-mini".into()];
        let app = Router::new()
            .route("/v1/chat/completions", post(chat_completions))
            .route("/v1/completions", post(chat_completions))
            .route("/v1/responses", post(chat_completions))
            .route("/v1/embeddings", post(embeddings))
            .route("/v1/models", get(models))
            .route("/generate_204", get(generate_204))
            // Real providers take large bodies (base64 images): no 2 MB default here.
            .layer(axum::extract::DefaultBodyLimit::disable())
            .with_state(Arc::clone(&state));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        MockUpstream {
            base: format!("http://{addr}"),
            state,
            task,
        }
    }

    /// Only these keys are accepted; any other gets a 401 `invalid_api_key`.
    pub fn accept_keys(&self, keys: &[&str]) {
        *self.state.accepted_keys.lock().expect("lock") =
            Some(keys.iter().map(|k| (*k).to_owned()).collect());
    }

    /// Scripts the next answer (of any route except /generate_204).
    pub fn push_fault(&self, status: u16, body: Value) {
        self.push(Fault {
            status,
            body,
            delay: Duration::ZERO,
        });
    }

    /// Scripts the next answer with full control.
    pub fn push(&self, fault: Fault) {
        self.state.faults.lock().expect("lock").push_back(fault);
    }

    /// Delays every answer.
    pub fn set_delay(&self, delay: Duration) {
        *self.state.delay.lock().expect("lock") = delay;
    }

    /// The model ids `GET /v1/models` lists.
    pub fn set_models(&self, models: &[&str]) {
        *self.state.models.lock().expect("lock") = models.iter().map(|m| (*m).to_owned()).collect();
    }

    /// Sets the usage the mock reports: `(prompt, completion, cached)`, or `None` for none.
    pub fn set_usage(&self, usage: Option<(i64, i64, i64)>) {
        *self.state.usage.lock().expect("lock") = usage;
    }

    /// Sets the streamed (or returned) content pieces.
    pub fn set_pieces(&self, pieces: &[&str]) {
        *self.state.pieces.lock().expect("lock") = pieces.iter().map(|p| (*p).to_owned()).collect();
    }

    /// Waits this long before each streamed chunk.
    pub fn set_chunk_delay(&self, delay: Duration) {
        *self.state.chunk_delay.lock().expect("lock") = delay;
    }

    /// Makes a stream answer exactly `parts`, one body chunk each (`set_chunk_delay` apart).
    pub fn set_raw_stream(&self, parts: &[&str]) {
        *self.state.raw_stream.lock().expect("lock") =
            Some(parts.iter().map(|p| (*p).to_owned()).collect());
    }

    /// Scripts the answer of the next chat, completions or responses call (before any fault).
    pub fn push_script(&self, script: Script) {
        self.state.scripts.lock().expect("lock").push_back(script);
    }

    /// Waits until the chat, completions and responses routes got `n` calls in all.
    pub async fn wait_calls(&self, n: usize) {
        self.state.calls.wait(n).await;
    }

    /// Calls of the chat, completions and responses routes so far.
    pub fn calls(&self) -> usize {
        self.state.calls.count()
    }

    /// Streams whose body was dropped before reaching `[DONE]`.
    pub fn streams_cut(&self) -> usize {
        self.state.streams_cut.load(Ordering::SeqCst)
    }

    /// Number of chat completion calls.
    pub fn chat_calls(&self) -> usize {
        self.state.chat_calls.load(Ordering::SeqCst)
    }

    /// Model list calls so far.
    pub fn models_calls(&self) -> usize {
        self.state.models_calls.load(Ordering::SeqCst)
    }

    /// `/generate_204` calls so far.
    pub fn probe_calls(&self) -> usize {
        self.state.probe_calls.load(Ordering::SeqCst)
    }

    /// The bearer key of the last call.
    pub fn last_key(&self) -> Option<String> {
        self.state.last_auth.lock().expect("lock").clone()
    }

    /// The JSON body of the last chat call.
    pub fn last_body(&self) -> Option<Value> {
        self.state.last_body.lock().expect("lock").clone()
    }
}
