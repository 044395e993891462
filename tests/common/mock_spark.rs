//! An iFlytek Spark upstream on 127.0.0.1:0 speaking its WebSocket chat API as documented
//! (<https://xfyun.cn/doc/spark/Web.html>): the handshake's URL must carry `authorization`,
//! `date` and `host`, the authorization signed as "WebSocket协议通用鉴权URL生成说明" says by the
//! mock's APISecret and naming its APIKey (checked here independently of Tollgate's signer; a
//! wrong one is refused as Spark does, HTTP 401 `{"message": "HMAC signature cannot be
//! verified"}`); then one request frame is read and the next scripted answer sent as answer
//! frames (`header.status` 0, 1, …, 2 with `payload.usage.text` on the last), cut before the
//! last one, or an error frame (`header.code`), after which the connection is closed.
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

use base64::Engine;
use futures_util::{SinkExt, StreamExt};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::StatusCode;

/// The mock's APPID.
pub const APP_ID: &str = "mockapp1";
const API_SECRET: &str = "mock-api-secret-0123456789";
const API_KEY: &str = "mock-api-key-abcdef";

/// The mock's credentials, as a channel key line `APPID|APISecret|APIKey`.
pub const KEY: &str = "mockapp1|mock-api-secret-0123456789|mock-api-key-abcdef";

/// A scripted answer.
#[derive(Debug, Clone)]
pub enum Answer {
    /// Text pieces, one frame each, and the usage (prompt, completion) in the last frame;
    /// `complete`: the last frame has `status` 2 (else the connection closes before it).
    Text {
        /// The pieces.
        pieces: Vec<String>,
        /// (prompt, completion) tokens.
        usage: (i64, i64),
        /// Ends with the last frame.
        complete: bool,
    },
    /// Text pieces, then an error frame (Spark's output audit: 10014).
    TextThenError {
        /// The pieces.
        pieces: Vec<String>,
        /// The code.
        code: i64,
    },
    /// An error frame with this `header.code`.
    Error {
        /// The code (11200, …).
        code: i64,
        /// The message.
        message: String,
    },
}

/// One recorded conversation.
#[derive(Debug, Clone)]
pub struct Call {
    /// The handshake's path.
    pub path: String,
    /// Whether the URL's signature checked out.
    pub signed: bool,
    /// The request frame (Null when none came).
    pub frame: Value,
}

#[derive(Default)]
struct Shared {
    answers: Mutex<VecDeque<Answer>>,
    calls: Mutex<Vec<Call>>,
}

/// The running mock; stops when dropped.
pub struct MockSpark {
    /// `http://127.0.0.1:<port>` (Tollgate dials it as `ws://`).
    pub base: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MockSpark {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Whether `query` (the handshake URL's) carries a valid authorization of `GET path` for
/// `host` by the mock's APIKey and APISecret — computed here from Spark's document.
fn signed(path: &str, query: &str, host: &str) -> bool {
    let pairs: Vec<(String, String)> = url_pairs(query);
    let get = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let date = get("date");
    if get("host") != host || date.is_empty() {
        return false;
    }
    let mut mac = Hmac::<Sha256>::new_from_slice(API_SECRET.as_bytes()).expect("any key length");
    mac.update(format!("host: {host}\ndate: {date}\nGET {path} HTTP/1.1").as_bytes());
    let b64 = base64::engine::general_purpose::STANDARD;
    let signature = b64.encode(mac.finalize().into_bytes());
    let expected = format!(
        "api_key=\"{API_KEY}\", algorithm=\"hmac-sha256\", headers=\"host date request-line\", signature=\"{signature}\""
    );
    b64.decode(get("authorization"))
        .ok()
        .and_then(|raw| String::from_utf8(raw).ok())
        .is_some_and(|auth| auth == expected)
}

/// `application/x-www-form-urlencoded` pairs.
fn url_pairs(query: &str) -> Vec<(String, String)> {
    let url = reqwest::Url::parse(&format!("http://x/?{query}")).expect("url");
    url.query_pairs().into_owned().collect()
}

fn frame(status: i64, seq: i64, text: &str, usage: Option<(i64, i64)>) -> String {
    let mut f = json!({
        "header": {"code": 0, "message": "Success", "sid": "cht000mock@dx0001", "status": status},
        "payload": {"choices": {"status": status, "seq": seq,
            "text": [{"content": text, "role": "assistant", "index": 0}]}}
    });
    if let Some((prompt, completion)) = usage {
        f["payload"]["usage"] = json!({"text": {"question_tokens": prompt.min(2),
            "prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}});
    }
    f.to_string()
}

async fn serve(shared: Arc<Shared>, tcp: tokio::net::TcpStream, host: String) {
    let seen: Arc<Mutex<(String, bool)>> = Arc::default();
    let record = Arc::clone(&seen);
    #[expect(
        clippy::result_large_err,
        reason = "the handshake callback's type is tungstenite's"
    )]
    let callback = move |req: &Request, resp: Response| -> Result<Response, ErrorResponse> {
        let path = req.uri().path().to_owned();
        let ok = signed(&path, req.uri().query().unwrap_or_default(), &host);
        *record.lock().expect("lock") = (path, ok);
        if ok {
            Ok(resp)
        } else {
            let mut refused = ErrorResponse::new(Some(
                r#"{"message":"HMAC signature cannot be verified"}"#.to_owned(),
            ));
            *refused.status_mut() = StatusCode::UNAUTHORIZED;
            Err(refused)
        }
    };
    let accepted = tokio_tungstenite::accept_hdr_async(tcp, callback).await;
    let (path, ok) = seen.lock().expect("lock").clone();
    let Ok(mut ws) = accepted else {
        shared.calls.lock().expect("lock").push(Call {
            path,
            signed: ok,
            frame: Value::Null,
        });
        return;
    };
    let request = loop {
        match ws.next().await {
            Some(Ok(Message::Text(text))) => {
                break serde_json::from_str(text.as_str()).unwrap_or(Value::Null);
            }
            Some(Ok(_)) => {}
            _ => break Value::Null,
        }
    };
    shared.calls.lock().expect("lock").push(Call {
        path,
        signed: ok,
        frame: request,
    });
    let answer = shared
        .answers
        .lock()
        .expect("lock")
        .pop_front()
        .unwrap_or(Answer::Text {
            pieces: vec!["ok".into()],
            usage: (1, 1),
            complete: true,
        });
    match answer {
        Answer::Text {
            pieces,
            usage,
            complete,
        } => {
            let last = pieces.len().saturating_sub(1);
            for (i, piece) in pieces.iter().enumerate() {
                let seq = i64::try_from(i).expect("small");
                let end = complete && i == last;
                let status = if end { 2 } else { i64::from(i > 0) };
                let f = frame(status, seq, piece, end.then_some(usage));
                if ws.send(Message::text(f)).await.is_err() {
                    return;
                }
            }
        }
        Answer::TextThenError { pieces, code } => {
            for (i, piece) in pieces.iter().enumerate() {
                let seq = i64::try_from(i).expect("small");
                let f = frame(i64::from(i > 0), seq, piece, None);
                if ws.send(Message::text(f)).await.is_err() {
                    return;
                }
            }
            let f = json!({"header": {"code": code, "message": "output audit failed",
                "sid": "cht000mock@dx0003", "status": 2}});
            let _ = ws.send(Message::text(f.to_string())).await;
        }
        Answer::Error { code, message } => {
            let f = json!({"header": {"code": code, "message": message,
                "sid": "cht000mock@dx0002", "status": 2}});
            let _ = ws.send(Message::text(f.to_string())).await;
        }
    }
    let _ = ws.close(None).await;
}

impl MockSpark {
    /// Starts the mock.
    pub async fn start() -> MockSpark {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let shared = Arc::new(Shared::default());
        let state = Arc::clone(&shared);
        let host = format!("127.0.0.1:{}", addr.port());
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                tokio::spawn(serve(Arc::clone(&state), tcp, host.clone()));
            }
        });
        MockSpark {
            base: format!("http://{addr}"),
            shared,
            task,
        }
    }

    /// Queues an answer.
    pub fn push(&self, answer: Answer) {
        self.shared.answers.lock().expect("lock").push_back(answer);
    }

    /// Queues a whole answer of one piece.
    pub fn push_text(&self, text: &str, prompt: i64, completion: i64) {
        self.push(Answer::Text {
            pieces: vec![text.to_owned()],
            usage: (prompt, completion),
            complete: true,
        });
    }

    /// Queues an error frame.
    pub fn push_error(&self, code: i64, message: &str) {
        self.push(Answer::Error {
            code,
            message: message.to_owned(),
        });
    }

    /// Every conversation so far.
    pub fn calls(&self) -> Vec<Call> {
        self.shared.calls.lock().expect("lock").clone()
    }

    /// The last conversation.
    pub fn last(&self) -> Call {
        self.calls().last().cloned().expect("a call")
    }
}
