//! A real OpenAI audio server on 127.0.0.1:0 for tests: `/v1/audio/speech` answers fixed audio
//! bytes, `/v1/audio/transcriptions` and `/translations` answer a configurable body. Records
//! the path, raw body, content type and key of the last call, and can fail the next call or
//! answer it with a scripted fault ([`MockAudio::push_script`]).
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

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::post;

use super::fault::Script;

/// The audio the speech route answers.
pub const AUDIO: &[u8] = b"ID3\x04\x00fake-mp3-frames\xff\xfb";

#[derive(Default)]
struct MockState {
    calls: AtomicUsize,
    fail_next: Mutex<Option<u16>>,
    scripts: Mutex<VecDeque<Script>>,
    answer: Mutex<(String, String)>,
    last_path: Mutex<String>,
    last_body: Mutex<Bytes>,
    last_content_type: Mutex<Option<String>>,
    last_auth: Mutex<Option<String>>,
    /// Answers wait for [`MockAudio::release`] while this is set.
    held: std::sync::atomic::AtomicBool,
    open: tokio::sync::Notify,
    arrived: tokio::sync::Notify,
}

/// The running mock; stops when dropped.
pub struct MockAudio {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    state: Arc<MockState>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MockAudio {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn record(s: &MockState, uri: &Uri, headers: &HeaderMap, body: Bytes) -> Option<Response> {
    s.calls.fetch_add(1, Ordering::SeqCst);
    uri.path()
        .clone_into(&mut s.last_path.lock().expect("lock"));
    *s.last_body.lock().expect("lock") = body;
    let header = |n: &str| {
        headers
            .get(n)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    *s.last_content_type.lock().expect("lock") = header("content-type");
    *s.last_auth.lock().expect("lock") = header("authorization");
    s.fail_next.lock().expect("lock").take().map(|status| {
        let body = r#"{"error":{"message":"upstream failed","type":"server_error"}}"#;
        (StatusCode::from_u16(status).expect("status"), body).into_response()
    })
}

/// Tells the test a call arrived, then waits while answers are held.
async fn gate(s: &MockState) {
    s.arrived.notify_one();
    if s.held.load(Ordering::SeqCst) {
        s.open.notified().await;
    }
}

async fn speech(
    State(s): State<Arc<MockState>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(fail) = record(&s, &uri, &headers, body) {
        return fail;
    }
    gate(&s).await;
    let mut response = Response::new(Body::from(AUDIO));
    response
        .headers_mut()
        .insert("content-type", HeaderValue::from_static("audio/mpeg"));
    response
}

async fn transcribe(
    State(s): State<Arc<MockState>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(fail) = record(&s, &uri, &headers, body) {
        return fail;
    }
    gate(&s).await;
    let script = s.scripts.lock().expect("lock").pop_front();
    if let Some(script) = script {
        return script.respond().await;
    }
    let (content_type, answer) = s.answer.lock().expect("lock").clone();
    let mut response = Response::new(Body::from(answer));
    response.headers_mut().insert(
        "content-type",
        HeaderValue::from_str(&content_type).expect("ascii"),
    );
    response
}

impl MockAudio {
    /// Starts the mock; transcriptions answer `{"text":"hello"}` until told otherwise.
    pub async fn start() -> MockAudio {
        let state = Arc::new(MockState::default());
        *state.answer.lock().expect("lock") =
            ("application/json".into(), r#"{"text":"hello"}"#.into());
        let app = Router::new()
            .route("/v1/audio/speech", post(speech))
            .route("/v1/audio/transcriptions", post(transcribe))
            .route("/v1/audio/translations", post(transcribe))
            .layer(axum::extract::DefaultBodyLimit::disable())
            .with_state(Arc::clone(&state));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        MockAudio {
            base: format!("http://{addr}"),
            state,
            task,
        }
    }

    /// Sets the transcription answer.
    pub fn set_answer(&self, content_type: &str, body: &str) {
        *self.state.answer.lock().expect("lock") = (content_type.to_owned(), body.to_owned());
    }

    /// Answers the next transcription or translation with `script`.
    pub fn push_script(&self, script: Script) {
        self.state.scripts.lock().expect("lock").push_back(script);
    }

    /// Fails the next call with `status`.
    pub fn fail_next(&self, status: u16) {
        *self.state.fail_next.lock().expect("lock") = Some(status);
    }

    /// Holds every answer until [`MockAudio::release`].
    pub fn hold_answers(&self) {
        self.state.held.store(true, Ordering::SeqCst);
    }

    /// Lets the held answer go (and answers at once from now on).
    pub fn release(&self) {
        self.state.held.store(false, Ordering::SeqCst);
        self.state.open.notify_one();
    }

    /// Waits until a call has arrived (one that arrived earlier counts).
    pub async fn arrived(&self) {
        self.state.arrived.notified().await;
    }

    /// Calls so far.
    pub fn calls(&self) -> usize {
        self.state.calls.load(Ordering::SeqCst)
    }

    /// Path of the last call.
    pub fn last_path(&self) -> String {
        self.state.last_path.lock().expect("lock").clone()
    }

    /// Raw body of the last call.
    pub fn last_body(&self) -> Bytes {
        self.state.last_body.lock().expect("lock").clone()
    }

    /// Content type of the last call.
    pub fn last_content_type(&self) -> Option<String> {
        self.state.last_content_type.lock().expect("lock").clone()
    }

    /// Authorization header of the last call.
    pub fn last_auth(&self) -> Option<String> {
        self.state.last_auth.lock().expect("lock").clone()
    }
}
