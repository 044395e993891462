//! A Dify chat app on 127.0.0.1:0 as its "Chat App API" documents it: `POST /v1/chat-messages`
//! with the app's key as bearer (another key: HTTP 401 `unauthorized`), then the next scripted
//! answer — a blocking answer (`event: message`, `answer`, `metadata.usage`), a stream of
//! `message` (or `agent_message`) events ending with `message_end` and its usage (or cut before
//! it), an `error` event in the stream, or an error status with `{code, message, status}`.
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
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The app's API key.
pub const KEY: &str = "app-mockdifykey0123";
/// The conversation the mock's answers belong to.
pub const CONVERSATION: &str = "45701982-8118-4bc5-8e9b-64562b4555f2";

/// A scripted answer.
#[derive(Debug, Clone)]
pub enum Answer {
    /// A blocking answer: text and usage (prompt, completion).
    Whole {
        /// The text.
        text: String,
        /// (prompt, completion) tokens.
        usage: (i64, i64),
    },
    /// A stream of answer pieces; `agent`: as `agent_message` events; `complete`: ends with
    /// `message_end` and the usage.
    Stream {
        /// The pieces.
        pieces: Vec<String>,
        /// (prompt, completion) tokens.
        usage: (i64, i64),
        /// An agent app's events.
        agent: bool,
        /// Ends with `message_end`.
        complete: bool,
    },
    /// An error answer: HTTP status, code, message.
    Error {
        /// The HTTP status.
        status: u16,
        /// `provider_quota_exceeded`, …
        code: String,
        /// The message.
        message: String,
    },
}

#[derive(Default)]
struct Shared {
    answers: Mutex<VecDeque<Answer>>,
    calls: Mutex<Vec<Value>>,
}

/// The running mock; stops when dropped.
pub struct MockDify {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MockDify {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn error(status: u16, code: &str, message: &str) -> Response {
    (
        StatusCode::from_u16(status).expect("status"),
        [("content-type", "application/json")],
        json!({"code": code, "message": message, "status": status}).to_string(),
    )
        .into_response()
}

fn usage(p: i64, c: i64) -> Value {
    json!({"prompt_tokens": p, "prompt_unit_price": "0.001", "prompt_price_unit": "0.001",
        "prompt_price": "0.0010330", "completion_tokens": c, "completion_unit_price": "0.002",
        "completion_price_unit": "0.001", "completion_price": "0.0002560",
        "total_tokens": p + c, "total_price": "0.0012890", "currency": "USD", "latency": 0.7})
}

async fn chat(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if auth != format!("Bearer {KEY}") {
        return error(401, "unauthorized", "Access token is invalid");
    }
    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    shared.calls.lock().expect("lock").push(json);
    let answer = shared.answers.lock().expect("lock").pop_front();
    match answer {
        None => error(500, "internal_server_error", "no scripted answer left"),
        Some(Answer::Error {
            status,
            code,
            message,
        }) => error(status, &code, &message),
        Some(Answer::Whole {
            text,
            usage: (p, c),
        }) => (
            [("content-type", "application/json")],
            json!({"event": "message", "task_id": "t-1", "id": "m-1", "message_id": "m-1",
                "conversation_id": CONVERSATION, "mode": "chat", "answer": text,
                "metadata": {"usage": usage(p, c), "retriever_resources": []},
                "created_at": 1_705_407_629})
            .to_string(),
        )
            .into_response(),
        Some(Answer::Stream {
            pieces,
            usage: (p, c),
            agent,
            complete,
        }) => {
            let kind = if agent { "agent_message" } else { "message" };
            let mut out = String::new();
            if agent {
                out.push_str(&format!(
                    "data: {}\n\n",
                    json!({"event": "agent_thought",
                    "id": "th-1", "message_id": "m-2", "position": 1, "thought": "",
                    "conversation_id": CONVERSATION})
                ));
            }
            for piece in &pieces {
                out.push_str(&format!(
                    "data: {}\n\n",
                    json!({"event": kind, "task_id": "t-2",
                    "message_id": "m-2", "conversation_id": CONVERSATION, "answer": piece,
                    "created_at": 1_705_398_420})
                ));
            }
            out.push_str("data: {\"event\": \"ping\"}\n\n");
            if complete {
                out.push_str(&format!(
                    "data: {}\n\n",
                    json!({"event": "message_end",
                    "task_id": "t-2", "id": "m-2", "message_id": "m-2",
                    "conversation_id": CONVERSATION,
                    "metadata": {"usage": usage(p, c), "retriever_resources": []}})
                ));
            }
            ([("content-type", "text/event-stream")], out).into_response()
        }
    }
}

impl MockDify {
    /// Starts the mock with no answer scripted.
    pub async fn start() -> MockDify {
        let shared = Arc::new(Shared::default());
        let app = Router::new()
            .route("/v1/chat-messages", axum::routing::post(chat))
            .with_state(Arc::clone(&shared));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        MockDify { base, shared, task }
    }

    /// Answers the next call so.
    pub fn push(&self, answer: Answer) {
        self.shared.answers.lock().expect("lock").push_back(answer);
    }

    /// Answers the next call with `text` and usage.
    pub fn push_text(&self, text: &str, prompt: i64, completion: i64) {
        self.push(Answer::Whole {
            text: text.to_owned(),
            usage: (prompt, completion),
        });
    }

    /// Answers the next call with an error status.
    pub fn push_error(&self, status: u16, code: &str, message: &str) {
        self.push(Answer::Error {
            status,
            code: code.to_owned(),
            message: message.to_owned(),
        });
    }

    /// Every request body so far.
    pub fn calls(&self) -> Vec<Value> {
        self.shared.calls.lock().expect("lock").clone()
    }

    /// The last request body.
    pub fn last(&self) -> Value {
        self.calls().last().cloned().expect("a call was made")
    }
}
