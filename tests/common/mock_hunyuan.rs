//! A Tencent Hunyuan upstream on 127.0.0.1:0 speaking `ChatCompletions` (API 3.0, 2023-09-01)
//! as its reference documents it: the request must be a POST to `/` with `X-TC-Action:
//! ChatCompletions`, `X-TC-Version: 2023-09-01`, `X-TC-Timestamp` and an `Authorization`
//! signed with TC3-HMAC-SHA256 by the mock's SecretKey (checked here independently of
//! Tollgate's signer: a wrong one is answered as Tencent does, HTTP 200 with
//! `AuthFailure.SignatureFailure`); then the next scripted answer — a whole answer
//! (`{"Response": {…}}`), a stream (SSE chunks of response parameters, the last with
//! `FinishReason`, or cut before it) or an API error (`{"Response": {"Error": …}}`, HTTP 200).
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
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The mock's credentials, as a channel key line `AppId|SecretId|SecretKey`.
pub const KEY: &str = "1300000000|AKIDmockhunyuan0123456789|mock-secret-key-abcdef";
const SECRET_ID: &str = "AKIDmockhunyuan0123456789";
const SECRET_KEY: &str = "mock-secret-key-abcdef";

/// A scripted answer.
#[derive(Debug, Clone)]
pub enum Answer {
    /// A whole answer: text, or tool calls `(id, name, arguments)`, and usage (prompt,
    /// completion).
    Whole {
        /// The text.
        text: String,
        /// Tool calls.
        calls: Vec<(String, String, String)>,
        /// (prompt, completion) tokens.
        usage: (i64, i64),
    },
    /// A stream of text pieces with the usage so far in each chunk; `complete`: the last chunk
    /// has `FinishReason: stop` (else the stream ends without it).
    Stream {
        /// The text pieces.
        pieces: Vec<String>,
        /// (prompt, completion) tokens at the end.
        usage: (i64, i64),
        /// Ends with the finish reason.
        complete: bool,
    },
    /// An API 3.0 error (HTTP 200).
    Error {
        /// The code (`LimitExceeded`, …).
        code: String,
        /// The message.
        message: String,
    },
}

/// One recorded call.
#[derive(Debug, Clone)]
pub struct Call {
    /// Path and query.
    pub uri: String,
    /// The request headers.
    pub headers: HeaderMap,
    /// The body, as JSON.
    pub body: Value,
    /// Whether the signature checked out.
    pub signed: bool,
}

impl Call {
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
    answers: Mutex<VecDeque<Answer>>,
    calls: Mutex<Vec<Call>>,
}

/// The running mock; stops when dropped.
pub struct MockHunyuan {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MockHunyuan {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hmac(key: &[u8], message: &str) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("any key length");
    mac.update(message.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

/// Whether `headers` carry a valid TC3-HMAC-SHA256 signature of `body` by the mock's key.
fn signature_ok(headers: &HeaderMap, body: &[u8]) -> bool {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    signed_by(&get, body, SECRET_ID, SECRET_KEY)
}

/// Whether a request whose headers `get` reads carries a valid TC3-HMAC-SHA256 signature of
/// `body` by `secret_id` / `secret_key` for the `hunyuan` service and the `ChatCompletions`
/// action — computed here from Tencent's "Signature v3" document, independently of Tollgate.
pub fn signed_by(
    get: &dyn Fn(&str) -> String,
    body: &[u8],
    secret_id: &str,
    secret_key: &str,
) -> bool {
    let timestamp = get("x-tc-timestamp");
    let Ok(seconds) = timestamp.parse::<i64>() else {
        return false;
    };
    let Ok(at) = time::OffsetDateTime::from_unix_timestamp(seconds) else {
        return false;
    };
    let date = format!(
        "{:04}-{:02}-{:02}",
        at.year(),
        u8::from(at.month()),
        at.day()
    );
    let canonical = format!(
        "POST\n/\n\ncontent-type:{}\nhost:{}\n\ncontent-type;host\n{}",
        get("content-type"),
        get("host"),
        hex(&Sha256::digest(body))
    );
    let scope = format!("{date}/hunyuan/tc3_request");
    let to_sign = format!(
        "TC3-HMAC-SHA256\n{timestamp}\n{scope}\n{}",
        hex(&Sha256::digest(canonical.as_bytes()))
    );
    let k = hmac(format!("TC3{secret_key}").as_bytes(), &date);
    let k = hmac(&k, "hunyuan");
    let k = hmac(&k, "tc3_request");
    let expected = format!(
        "TC3-HMAC-SHA256 Credential={secret_id}/{scope}, SignedHeaders=content-type;host, Signature={}",
        hex(&hmac(&k, &to_sign))
    );
    get("authorization") == expected
        && get("x-tc-action") == "ChatCompletions"
        && get("x-tc-version") == "2023-09-01"
}

fn envelope(params: Value) -> Response {
    (
        [("content-type", "application/json")],
        json!({"Response": params}).to_string(),
    )
        .into_response()
}

fn api_error(code: &str, message: &str) -> Response {
    envelope(json!({"Error": {"Code": code, "Message": message}, "RequestId": "req-err"}))
}

fn usage(prompt: i64, completion: i64) -> Value {
    json!({"PromptTokens": prompt, "CompletionTokens": completion, "TotalTokens": prompt + completion})
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let signed = signature_ok(&headers, &body);
    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    shared.calls.lock().expect("lock").push(Call {
        uri: uri.to_string(),
        headers,
        body: json,
        signed,
    });
    if !signed {
        return api_error(
            "AuthFailure.SignatureFailure",
            "The provided credentials could not be validated. Please check your signature is correct.",
        );
    }
    let answer = shared.answers.lock().expect("lock").pop_front();
    match answer {
        None => (StatusCode::INTERNAL_SERVER_ERROR, "no scripted answer left").into_response(),
        Some(Answer::Error { code, message }) => api_error(&code, &message),
        Some(Answer::Whole {
            text,
            calls,
            usage: (p, c),
        }) => {
            let tool_calls: Vec<Value> = calls
                .iter()
                .map(|(id, name, args)| {
                    json!({"Id": id, "Type": "function", "Function": {"Name": name, "Arguments": args}})
                })
                .collect();
            let finish = if tool_calls.is_empty() {
                "stop"
            } else {
                "tool_calls"
            };
            let mut message = json!({"Role": "assistant", "Content": text});
            if !tool_calls.is_empty() {
                message["ToolCalls"] = Value::Array(tool_calls);
            }
            envelope(json!({"Id": "hy-answer-1", "Created": 1_715_000_000,
                "Note": "以上内容为AI生成，不代表开发者立场，请勿删除或修改本标记",
                "Choices": [{"FinishReason": finish, "Message": message}],
                "Usage": usage(p, c), "RequestId": "hy-answer-1"}))
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
                let finish = if last && complete { "stop" } else { "" };
                let done = if last {
                    c
                } else {
                    i64::try_from(i + 1).unwrap_or(0)
                };
                let chunk = json!({"Note": "以上内容为AI生成，不代表开发者立场，请勿删除或修改本标记",
                    "Choices": [{"Delta": {"Role": "assistant", "Content": piece}, "FinishReason": finish}],
                    "Created": 1_715_000_000, "Id": "hy-stream-1", "Usage": usage(p, done)});
                out.push_str(&format!("data: {chunk}\n\n"));
            }
            ([("content-type", "text/event-stream")], out).into_response()
        }
    }
}

impl MockHunyuan {
    /// Starts the mock with no answer scripted.
    pub async fn start() -> MockHunyuan {
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
        MockHunyuan { base, shared, task }
    }

    /// Answers the next call so.
    pub fn push(&self, answer: Answer) {
        self.shared.answers.lock().expect("lock").push_back(answer);
    }

    /// Answers the next call with `text` and usage.
    pub fn push_text(&self, text: &str, prompt: i64, completion: i64) {
        self.push(Answer::Whole {
            text: text.to_owned(),
            calls: Vec::new(),
            usage: (prompt, completion),
        });
    }

    /// Answers the next call with an API error.
    pub fn push_error(&self, code: &str, message: &str) {
        self.push(Answer::Error {
            code: code.to_owned(),
            message: message.to_owned(),
        });
    }

    /// Every call so far.
    pub fn calls(&self) -> Vec<Call> {
        self.shared.calls.lock().expect("lock").clone()
    }

    /// The last call.
    pub fn last(&self) -> Call {
        self.calls().last().cloned().expect("a call was made")
    }
}
