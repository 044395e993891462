//! A Coze bot on 127.0.0.1:0 as its chat API v3 documents it: `POST /v3/chat` with a personal
//! access token as bearer (another token: HTTP 401 `{code: 4100, msg}`), a body of `bot_id`,
//! `user_id`, `stream: true` and `additional_messages` (text, or `object_string` multimodal
//! content checked as coze-py's `MessageObjectString`), then the next scripted answer — an event
//! stream (`conversation.chat.created`, `conversation.chat.in_progress`, the answer's
//! `conversation.message.delta` events, its `conversation.message.completed` and the `verbose`
//! and `follow_up` messages, `conversation.chat.completed` with `usage {token_count,
//! output_count, input_count}`, `done`; or cut before the chat's end), an `error` event or a
//! `conversation.chat.failed` in the stream, or an error body `{code, msg}` before it.
#![allow(
    dead_code,
    reason = "each test binary uses a different subset of the mock"
)]
#![expect(
    clippy::expect_used,
    reason = "a broken mock must fail the test loudly"
)]

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The personal access token.
pub const KEY: &str = "pat_mockcozetoken0123";
/// The bot.
pub const BOT: &str = "7348293334";
/// The conversation the mock's chats belong to.
pub const CONVERSATION: &str = "7381473525342978089";

/// A scripted answer.
#[derive(Debug, Clone)]
pub enum Answer {
    /// An event stream of answer pieces and usage (input, output); `complete`: ends with
    /// `conversation.chat.completed` and `done`.
    Stream {
        /// The answer's deltas.
        pieces: Vec<String>,
        /// (input, output) tokens.
        usage: (i64, i64),
        /// Ends with the chat's completion.
        complete: bool,
    },
    /// The stream's first pieces, then an `error` event (`failed`: a
    /// `conversation.chat.failed` with `last_error`) of `code`.
    StreamError {
        /// Deltas before the error.
        pieces: Vec<String>,
        /// The code.
        code: i64,
        /// The message.
        msg: String,
        /// As a failed chat rather than an `error` event.
        failed: bool,
    },
    /// An error before the stream: HTTP status and `{code, msg}`.
    Error {
        /// The HTTP status.
        status: u16,
        /// The code.
        code: i64,
        /// The message.
        msg: String,
    },
}

/// One request the mock received.
#[derive(Debug, Clone)]
pub struct Call {
    /// The body.
    pub body: Value,
    /// The query parameters.
    pub query: HashMap<String, String>,
}

#[derive(Default)]
struct Shared {
    answers: Mutex<VecDeque<Answer>>,
    calls: Mutex<Vec<Call>>,
}

/// The running mock; stops when dropped.
pub struct MockCoze {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MockCoze {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn error(status: u16, code: i64, msg: &str) -> Response {
    (
        StatusCode::from_u16(status).expect("status"),
        [("content-type", "application/json")],
        json!({"code": code, "msg": msg}).to_string(),
    )
        .into_response()
}

fn event(out: &mut String, name: &str, data: &Value) {
    out.push_str(&format!("event:{name}\ndata:{data}\n\n"));
}

fn chat(status: &str) -> Value {
    json!({"id": "7382159487131697202", "conversation_id": CONVERSATION, "bot_id": BOT,
        "created_at": 1_718_609_571, "last_error": {"code": 0, "msg": ""}, "status": status,
        "usage": null, "section_id": CONVERSATION})
}

fn message(id: &str, kind: &str, content: &str) -> Value {
    json!({"id": id, "conversation_id": CONVERSATION, "bot_id": BOT, "role": "assistant",
        "type": kind, "content": content, "content_type": "text",
        "chat_id": "7382159487131697202", "section_id": CONVERSATION})
}

/// The events of a chat's start and of `pieces` as answer deltas.
fn opening(pieces: &[String]) -> String {
    let mut out = String::new();
    event(&mut out, "conversation.chat.created", &chat("created"));
    event(
        &mut out,
        "conversation.chat.in_progress",
        &chat("in_progress"),
    );
    for piece in pieces {
        event(
            &mut out,
            "conversation.message.delta",
            &message("7382159494123470858", "answer", piece),
        );
    }
    out
}

fn stream(out: String) -> Response {
    ([("content-type", "text/event-stream")], out).into_response()
}

async fn serve(
    State(shared): State<Arc<Shared>>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if auth != format!("Bearer {KEY}") {
        return error(401, 4100, "authentication is invalid");
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if body["bot_id"].as_str().unwrap_or_default().is_empty()
        || body["user_id"].as_str().unwrap_or_default().is_empty()
    {
        return error(200, 4000, "bot_id and user_id are required");
    }
    if body["stream"] != true {
        return error(200, 4000, "the mock serves streams only");
    }
    if let Some(bad) = body["additional_messages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| !valid_content(m))
    {
        return error(200, 4000, &format!("invalid message content: {bad}"));
    }
    shared
        .calls
        .lock()
        .expect("lock")
        .push(Call { body, query });
    let answer = shared.answers.lock().expect("lock").pop_front();
    match answer {
        None => error(200, 5000, "no scripted answer left"),
        Some(Answer::Error { status, code, msg }) => error(status, code, &msg),
        Some(Answer::Stream {
            pieces,
            usage: (input, output),
            complete,
        }) => {
            let mut out = opening(&pieces);
            if !complete {
                return stream(out);
            }
            event(
                &mut out,
                "conversation.message.completed",
                &message("7382159494123470858", "answer", &pieces.concat()),
            );
            event(
                &mut out,
                "conversation.message.completed",
                &message(
                    "7382159494123470859",
                    "verbose",
                    "{\"msg_type\":\"generate_answer_finish\",\"data\":\"\"}",
                ),
            );
            event(
                &mut out,
                "conversation.message.completed",
                &message("7382159494123470860", "follow_up", "And then?"),
            );
            let mut done = chat("completed");
            done["completed_at"] = json!(1_718_609_575);
            done["usage"] = json!({"token_count": input + output, "output_count": output,
                "input_count": input});
            event(&mut out, "conversation.chat.completed", &done);
            out.push_str("event:done\ndata:\"[DONE]\"\n\n");
            stream(out)
        }
        Some(Answer::StreamError {
            pieces,
            code,
            msg,
            failed,
        }) => {
            let mut out = opening(&pieces);
            if failed {
                let mut chat = chat("failed");
                chat["last_error"] = json!({"code": code, "msg": msg});
                event(&mut out, "conversation.chat.failed", &chat);
            } else {
                event(&mut out, "error", &json!({"code": code, "msg": msg}));
            }
            stream(out)
        }
    }
}

/// Whether a message's content is what its `content_type` says: `text`, or `object_string` —
/// the JSON text of an array of objects, `text` ones with their text, `image`/`file`/`audio`
/// ones with a `file_id` or `file_url` (coze-py's `MessageObjectString`: "file_id or file_url
/// must be specified").
fn valid_content(message: &Value) -> bool {
    let Some(content) = message["content"].as_str() else {
        return false;
    };
    match message["content_type"].as_str() {
        Some("text") => true,
        Some("object_string") => serde_json::from_str::<Vec<Value>>(content).is_ok_and(|objects| {
            !objects.is_empty()
                && objects.iter().all(|o| match o["type"].as_str() {
                    Some("text") => o["text"].is_string(),
                    Some("image" | "file" | "audio") => {
                        o["file_id"].is_string() || o["file_url"].is_string()
                    }
                    _ => false,
                })
        }),
        _ => false,
    }
}

impl MockCoze {
    /// Starts the mock with no answer scripted.
    pub async fn start() -> MockCoze {
        let shared = Arc::new(Shared::default());
        let app = Router::new()
            .route("/v3/chat", axum::routing::post(serve))
            .with_state(Arc::clone(&shared));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        MockCoze { base, shared, task }
    }

    /// Answers the next call so.
    pub fn push(&self, answer: Answer) {
        self.shared.answers.lock().expect("lock").push_back(answer);
    }

    /// Answers the next call with a complete stream of `pieces` and usage.
    pub fn push_text(&self, pieces: &[&str], input: i64, output: i64) {
        self.push(Answer::Stream {
            pieces: pieces.iter().map(|p| (*p).to_owned()).collect(),
            usage: (input, output),
            complete: true,
        });
    }

    /// Answers the next call with an error body before the stream.
    pub fn push_error(&self, status: u16, code: i64, msg: &str) {
        self.push(Answer::Error {
            status,
            code,
            msg: msg.to_owned(),
        });
    }

    /// Every request so far.
    pub fn calls(&self) -> Vec<Call> {
        self.shared.calls.lock().expect("lock").clone()
    }

    /// The last request's body.
    pub fn last(&self) -> Value {
        self.calls().last().cloned().expect("a call was made").body
    }
}
