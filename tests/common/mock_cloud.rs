//! A recording HTTP server on 127.0.0.1:0 for the cloud providers' tests (Azure OpenAI, Vertex
//! AI, AWS Bedrock): every request is recorded whole (method, path with query, headers, body) and
//! answered by the test's handler, which speaks the provider's documented wire format.
#![allow(
    dead_code,
    reason = "each test binary uses a different subset of the mock"
)]
#![expect(
    clippy::expect_used,
    reason = "a broken mock must fail the test loudly"
)]

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde_json::Value;

/// One request as the mock received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Method.
    pub method: Method,
    /// Path without the query.
    pub path: String,
    /// The raw query ("" when none).
    pub query: String,
    /// Headers.
    pub headers: HeaderMap,
    /// Body bytes.
    pub body: Bytes,
}

impl Recorded {
    /// A header's value as text.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("the recorded body is JSON")
    }
}

/// What the handler answers.
pub enum Answer {
    /// A JSON body with a status.
    Json(u16, Value),
    /// A JSON body with a status and extra headers.
    JsonWith(u16, Vec<(&'static str, String)>, Value),
    /// Raw bytes with a status and content type.
    Bytes(u16, &'static str, Vec<u8>),
    /// Bytes sent in separate writes (a stream).
    Chunks(&'static str, Vec<Vec<u8>>),
}

type Handler = Arc<dyn Fn(&Recorded) -> Answer + Send + Sync>;

struct MockState {
    handler: Handler,
    requests: Mutex<Vec<Recorded>>,
}

/// A running recording mock.
pub struct MockCloud {
    /// `http://127.0.0.1:port`.
    pub base: String,
    state: Arc<MockState>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MockCloud {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl MockCloud {
    /// Starts a mock answering every request with `handler`.
    pub async fn start(handler: impl Fn(&Recorded) -> Answer + Send + Sync + 'static) -> MockCloud {
        let state = Arc::new(MockState {
            handler: Arc::new(handler),
            requests: Mutex::new(Vec::new()),
        });
        let app = Router::new().fallback(serve).with_state(Arc::clone(&state));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        MockCloud {
            base: format!("http://{addr}"),
            state,
            task,
        }
    }

    /// Every request so far, oldest first.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state.requests.lock().expect("lock").clone()
    }

    /// The requests to paths starting with `prefix`.
    pub fn requests_to(&self, prefix: &str) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.path.starts_with(prefix))
            .collect()
    }

    /// The last request.
    pub fn last(&self) -> Recorded {
        self.requests().pop().expect("a request was made")
    }
}

async fn serve(State(state): State<Arc<MockState>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let body = axum::body::to_bytes(body, 64 << 20)
        .await
        .expect("request body");
    let recorded = Recorded {
        method: parts.method.clone(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().unwrap_or_default().to_owned(),
        headers: parts.headers.clone(),
        body,
    };
    let answer = (state.handler)(&recorded);
    state.requests.lock().expect("lock").push(recorded);
    match answer {
        Answer::Json(status, value) => (
            StatusCode::from_u16(status).expect("status"),
            axum::Json(value),
        )
            .into_response(),
        Answer::JsonWith(status, headers, value) => {
            let mut response = (
                StatusCode::from_u16(status).expect("status"),
                axum::Json(value),
            )
                .into_response();
            for (name, value) in headers {
                response
                    .headers_mut()
                    .insert(name, value.parse().expect("header value"));
            }
            response
        }
        Answer::Bytes(status, content_type, bytes) => (
            StatusCode::from_u16(status).expect("status"),
            [(header::CONTENT_TYPE, content_type)],
            bytes,
        )
            .into_response(),
        Answer::Chunks(content_type, chunks) => {
            let stream =
                futures_util::stream::iter(chunks).map(|c| Ok::<_, std::io::Error>(Bytes::from(c)));
            let mut response = Response::new(Body::from_stream(stream));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                content_type.parse().expect("content type"),
            );
            response
        }
    }
}

/// SSE bytes of `(event, data)` pairs (no `event:` line when the name is empty).
pub fn sse(events: &[(&str, Value)]) -> Vec<u8> {
    let mut out = String::new();
    for (name, data) in events {
        if !name.is_empty() {
            out.push_str(&format!("event: {name}\n"));
        }
        out.push_str(&format!("data: {data}\n\n"));
    }
    out.into_bytes()
}
