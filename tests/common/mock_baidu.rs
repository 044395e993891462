//! A Baidu Qianfan v1 upstream on 127.0.0.1:0 as its reference documents it: the OAuth token
//! endpoint (`POST /oauth/2.0/token?grant_type=client_credentials&client_id=…&client_secret=…`,
//! answering `{"access_token", "expires_in"}`, or HTTP 401 `invalid_client` for another key)
//! and ERNIE chat (`POST /rpc/2.0/ai_custom/v1/wenxinworkshop/chat/{endpoint}?access_token=…`:
//! a token it did not issue, or revoked, is answered HTTP 200 `{"error_code": 110, …}`), then the next
//! scripted answer — a whole answer (`result`, `usage`), a stream (SSE chunks with `is_end`
//! on the last, or cut before it) or an error (`{"error_code", "error_msg"}`, HTTP 200).
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
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The mock's credentials, as a channel key line `APIKey|SecretKey`.
pub const KEY: &str = "mock-baidu-api-key|mock-baidu-secret-key";
const API_KEY: &str = "mock-baidu-api-key";
const SECRET_KEY: &str = "mock-baidu-secret-key";

/// A scripted answer.
#[derive(Debug, Clone)]
pub enum Answer {
    /// A whole answer: text and usage (prompt, completion).
    Whole {
        /// The text.
        text: String,
        /// (prompt, completion) tokens.
        usage: (i64, i64),
    },
    /// A stream of sentences with the usage so far; `complete`: the last has `is_end: true`.
    Stream {
        /// The sentences.
        pieces: Vec<String>,
        /// (prompt, completion) tokens at the end.
        usage: (i64, i64),
        /// Ends with `is_end`.
        complete: bool,
    },
    /// An error (HTTP 200).
    Error {
        /// The code (`18`, …).
        code: i64,
        /// The message.
        message: String,
    },
}

/// One recorded chat call.
#[derive(Debug, Clone)]
pub struct Call {
    /// The path.
    pub path: String,
    /// The query's parameters.
    pub query: HashMap<String, String>,
    /// The body, as JSON.
    pub body: Value,
}

#[derive(Default)]
struct Shared {
    answers: Mutex<VecDeque<Answer>>,
    calls: Mutex<Vec<Call>>,
    tokens: Mutex<u32>,
    /// Tokens issued up to this count are refused (110), as Baidu refuses a revoked token.
    revoked: Mutex<u32>,
}

/// The running mock; stops when dropped.
pub struct MockBaidu {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MockBaidu {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The token the mock issues the `n`th time.
fn issued(n: u32) -> String {
    format!("24.mock-access-token-{n}")
}

async fn token(
    State(shared): State<Arc<Shared>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let ok = q.get("grant_type").map(String::as_str) == Some("client_credentials")
        && q.get("client_id").map(String::as_str) == Some(API_KEY)
        && q.get("client_secret").map(String::as_str) == Some(SECRET_KEY);
    if !ok {
        return (
            StatusCode::UNAUTHORIZED,
            [("content-type", "application/json")],
            json!({"error": "invalid_client", "error_description": "unknown client id"})
                .to_string(),
        )
            .into_response();
    }
    let n = {
        let mut tokens = shared.tokens.lock().expect("lock");
        *tokens += 1;
        *tokens
    };
    (
        [("content-type", "application/json")],
        json!({"refresh_token": "25.mock-refresh", "expires_in": 2_592_000,
            "session_key": "mock-session", "access_token": issued(n),
            "scope": "public brain_all_scope", "session_secret": "mock-secret"})
        .to_string(),
    )
        .into_response()
}

fn json_200(body: Value) -> Response {
    ([("content-type", "application/json")], body.to_string()).into_response()
}

fn chunk(id: &str, n: usize, text: &str, end: bool, usage: (i64, i64)) -> Value {
    json!({"id": id, "object": "chat.completion", "created": 1_715_000_000,
        "sentence_id": n, "is_end": end, "is_truncated": false, "result": text,
        "need_clear_history": false, "finish_reason": "normal",
        "usage": {"prompt_tokens": usage.0, "completion_tokens": usage.1,
            "total_tokens": usage.0 + usage.1}})
}

async fn chat(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    Query(query): Query<HashMap<String, String>>,
    body: Bytes,
) -> Response {
    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    shared.calls.lock().expect("lock").push(Call {
        path: uri.path().to_owned(),
        query: query.clone(),
        body: json,
    });
    let given = query.get("access_token").cloned().unwrap_or_default();
    let revoked = *shared.revoked.lock().expect("lock");
    let known = (revoked + 1..=*shared.tokens.lock().expect("lock")).any(|n| issued(n) == given);
    if !known {
        return json_200(
            json!({"error_code": 110, "error_msg": "Access token invalid or no longer valid"}),
        );
    }
    let answer = shared.answers.lock().expect("lock").pop_front();
    match answer {
        None => (StatusCode::INTERNAL_SERVER_ERROR, "no scripted answer left").into_response(),
        Some(Answer::Error { code, message }) => {
            json_200(json!({"error_code": code, "error_msg": message}))
        }
        Some(Answer::Whole { text, usage }) => {
            let mut answer = chunk("as-whole-1", 0, &text, true, usage);
            if let Some(o) = answer.as_object_mut() {
                o.remove("sentence_id");
                o.remove("is_end");
            }
            json_200(answer)
        }
        Some(Answer::Stream {
            pieces,
            usage: (p, c),
            complete,
        }) => {
            let mut out = String::new();
            let n = pieces.len();
            for (i, piece) in pieces.iter().enumerate() {
                let last = i + 1 == n;
                let done = if last {
                    c
                } else {
                    i64::try_from(i + 1).unwrap_or(0)
                };
                let data = chunk("as-stream-1", i, piece, last && complete, (p, done));
                out.push_str(&format!("data: {data}\n\n"));
            }
            ([("content-type", "text/event-stream")], out).into_response()
        }
    }
}

impl MockBaidu {
    /// Starts the mock with no answer scripted.
    pub async fn start() -> MockBaidu {
        let shared = Arc::new(Shared::default());
        let app = Router::new()
            .route("/oauth/2.0/token", axum::routing::post(token))
            .route(
                "/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/{endpoint}",
                axum::routing::post(chat),
            )
            .with_state(Arc::clone(&shared));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        MockBaidu { base, shared, task }
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

    /// Answers the next call with an error.
    pub fn push_error(&self, code: i64, message: &str) {
        self.push(Answer::Error {
            code,
            message: message.to_owned(),
        });
    }

    /// Every chat call so far.
    pub fn calls(&self) -> Vec<Call> {
        self.shared.calls.lock().expect("lock").clone()
    }

    /// The last chat call.
    pub fn last(&self) -> Call {
        self.calls().last().cloned().expect("a call was made")
    }

    /// Refuses every token issued so far (HTTP 200 `error_code` 110) before it expires.
    pub fn revoke_tokens(&self) {
        *self.shared.revoked.lock().expect("lock") = self.tokens_issued();
    }

    /// How many tokens were issued.
    pub fn tokens_issued(&self) -> u32 {
        *self.shared.tokens.lock().expect("lock")
    }
}
