//! A real Anthropic-speaking HTTP server on 127.0.0.1:0 for tests: `POST /v1/messages`, whole
//! or streamed (`message_start` … `message_stop`, with a `ping`), and `count_tokens`, with configurable text pieces,
//! usage (input, output, cache read, cache write) and scripted faults. It records the raw body
//! and the headers of the last call, and can answer a fixed byte string (to check pass-through).
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

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Value, json};

use super::fault::{Calls, Script};

/// Token counts the mock reports.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnthropicUsage {
    /// `input_tokens` (cache excluded).
    pub input: i64,
    /// `output_tokens`.
    pub output: i64,
    /// `cache_read_input_tokens`.
    pub cache_read: i64,
    /// `cache_creation_input_tokens`.
    pub cache_write: i64,
}

#[derive(Default)]
struct MockState {
    calls: AtomicUsize,
    faults: Mutex<VecDeque<(u16, Value)>>,
    usage: Mutex<AnthropicUsage>,
    pieces: Mutex<Vec<String>>,
    tool: Mutex<Option<(String, Value)>>,
    raw_answer: Mutex<Option<(String, String)>>,
    last_body: Mutex<Option<Bytes>>,
    last_headers: Mutex<HeaderMap>,
    chunk_delay: Mutex<Duration>,
    streams_cut: AtomicUsize,
    scripts: Mutex<VecDeque<Script>>,
    signal: Calls,
}

/// Counts a stream as cut when it is dropped before `message_stop`.
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
pub struct MockAnthropic {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    state: Arc<MockState>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MockAnthropic {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn usage_json(u: AnthropicUsage, output: i64) -> Value {
    json!({"input_tokens": u.input, "output_tokens": output,
        "cache_read_input_tokens": u.cache_read, "cache_creation_input_tokens": u.cache_write})
}

fn event(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// `POST /v1/messages/count_tokens`: `input_tokens` is the mock's input usage (faults apply).
async fn count_tokens(
    State(s): State<Arc<MockState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    s.calls.fetch_add(1, Ordering::SeqCst);
    *s.last_headers.lock().expect("lock") = headers;
    *s.last_body.lock().expect("lock") = Some(body.clone());
    if let Some((status, body)) = s.faults.lock().expect("lock").pop_front() {
        return (StatusCode::from_u16(status).expect("status"), Json(body)).into_response();
    }
    let _: Value = serde_json::from_slice(&body).expect("the relay sends JSON");
    let input = s.usage.lock().expect("lock").input;
    Json(json!({"input_tokens": input})).into_response()
}

async fn messages(State(s): State<Arc<MockState>>, headers: HeaderMap, body: Bytes) -> Response {
    s.calls.fetch_add(1, Ordering::SeqCst);
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
    let request: Value = serde_json::from_slice(&body).expect("the relay sends JSON");
    let model = request["model"].as_str().unwrap_or("claude").to_owned();
    if let Some((content_type, raw)) = s.raw_answer.lock().expect("lock").clone() {
        let mut response = Response::new(Body::from(raw));
        response.headers_mut().insert(
            "content-type",
            HeaderValue::from_str(&content_type).expect("ascii"),
        );
        return response;
    }
    let usage = *s.usage.lock().expect("lock");
    let pieces = s.pieces.lock().expect("lock").clone();
    let tool = s.tool.lock().expect("lock").clone();
    if request["stream"] == true {
        let mut out = event(
            "message_start",
            &json!({"type": "message_start", "message": {"id": "msg_mock", "type": "message",
                "role": "assistant", "model": model, "content": [], "stop_reason": null,
                "stop_sequence": null, "usage": usage_json(usage, 1)}}),
        );
        out.push_str(&event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ));
        out.push_str(&event("ping", &json!({"type": "ping"})));
        for piece in &pieces {
            out.push_str(&event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": piece}}),
            ));
        }
        out.push_str(&event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": 0}),
        ));
        let mut stop = "end_turn";
        if let Some((name, input)) = &tool {
            stop = "tool_use";
            out.push_str(&event(
                "content_block_start",
                &json!({"type": "content_block_start", "index": 1,
                    "content_block": {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}}),
            ));
            out.push_str(&event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": 1,
                    "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
            ));
            out.push_str(&event(
                "content_block_stop",
                &json!({"type": "content_block_stop", "index": 1}),
            ));
        }
        out.push_str(&event(
            "message_delta",
            &json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                "usage": {"output_tokens": usage.output}}),
        ));
        out.push_str(&event("message_stop", &json!({"type": "message_stop"})));
        let delay = *s.chunk_delay.lock().expect("lock");
        let events: Vec<String> = out.split_inclusive("\n\n").map(str::to_owned).collect();
        let guard = CutGuard {
            state: Arc::clone(&s),
            finished: false,
        };
        let stream = futures_util::stream::unfold(
            (events.into_iter(), guard),
            move |(mut it, mut guard)| async move {
                let event = it.next()?;
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                if event.contains("message_stop") {
                    guard.finished = true;
                }
                Some((Ok::<_, std::io::Error>(event), (it, guard)))
            },
        );
        let mut response = Response::new(Body::from_stream(stream));
        response.headers_mut().insert(
            "content-type",
            HeaderValue::from_static("text/event-stream"),
        );
        return response;
    }
    let mut content = vec![json!({"type": "text", "text": pieces.concat()})];
    let mut stop = "end_turn";
    if let Some((name, input)) = tool {
        stop = "tool_use";
        content.push(json!({"type": "tool_use", "id": "toolu_1", "name": name, "input": input}));
    }
    Json(
        json!({"id": "msg_mock", "type": "message", "role": "assistant", "model": model,
        "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": usage_json(usage, usage.output)}),
    )
    .into_response()
}

impl MockAnthropic {
    /// Starts a mock answering "Hello" with 10 input and 2 output tokens.
    pub async fn start() -> MockAnthropic {
        let state = Arc::new(MockState::default());
        *state.usage.lock().expect("lock") = AnthropicUsage {
            input: 10,
            output: 2,
            ..AnthropicUsage::default()
        };
        *state.pieces.lock().expect("lock") = vec!["Hel".into(), "lo".into()];
        let app = Router::new()
            .route("/v1/messages", post(messages))
            .route("/v1/messages/count_tokens", post(count_tokens))
            .with_state(Arc::clone(&state));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        MockAnthropic {
            base: format!("http://{addr}"),
            state,
            task,
        }
    }

    /// Sets the usage reported.
    pub fn set_usage(&self, usage: AnthropicUsage) {
        *self.state.usage.lock().expect("lock") = usage;
    }

    /// Sets the text pieces (streamed one per delta; joined in whole answers).
    pub fn set_pieces(&self, pieces: &[&str]) {
        *self.state.pieces.lock().expect("lock") = pieces.iter().map(|p| (*p).to_owned()).collect();
    }

    /// Makes the answer end with a `tool_use` block calling `name` with `input`.
    pub fn set_tool_call(&self, name: &str, input: Value) {
        *self.state.tool.lock().expect("lock") = Some((name.to_owned(), input));
    }

    /// Answers exactly these bytes with this content type.
    pub fn set_raw_answer(&self, content_type: &str, raw: &str) {
        *self.state.raw_answer.lock().expect("lock") =
            Some((content_type.to_owned(), raw.to_owned()));
    }

    /// Waits this long before each streamed event.
    pub fn set_chunk_delay(&self, delay: Duration) {
        *self.state.chunk_delay.lock().expect("lock") = delay;
    }

    /// Streams dropped before `message_stop` (the relay closed the connection).
    pub fn streams_cut(&self) -> usize {
        self.state.streams_cut.load(Ordering::SeqCst)
    }

    /// Scripts the next answer.
    pub fn push_fault(&self, status: u16, body: Value) {
        self.state
            .faults
            .lock()
            .expect("lock")
            .push_back((status, body));
    }

    /// Scripts the answer of the next `/v1/messages` call (before any fault).
    pub fn push_script(&self, script: Script) {
        self.state.scripts.lock().expect("lock").push_back(script);
    }

    /// Waits until `/v1/messages` got `n` calls in all.
    pub async fn wait_calls(&self, n: usize) {
        self.state.signal.wait(n).await;
    }

    /// Calls so far.
    pub fn calls(&self) -> usize {
        self.state.calls.load(Ordering::SeqCst)
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
