//! Debt bounded per request by limiting the answer (P16 item 3): the output limit L decided in
//! the reservation's critical section, written into the upstream body in each wire's field only
//! when the balance covers less than the upstream would otherwise allow, never into a body that
//! may not change, and the one mid-stream ceiling ending a stream whose cost reaches its
//! reservation + DebtAllowance — in the client's format, billed once as `partial` / `capped`,
//! the upstream's connection dropped. A client's `max_cost` / `X-Max-Cost` (P15 item 3) lowers
//! the same limit and the same ceiling, and never reaches the upstream.
//!
//! Prices: every model at ratio 1, completion 1 (a token costs a unit); `big-test` and the
//! other test models write at most 100,000 tokens (`ModelMaxOutput`).

mod common;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderValue, Uri, header};
use axum::response::{IntoResponse, Response};
use common::relay_fixture::{balances, chat_request, fixture, hi, other, sse_events};
use common::{Actor, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The model maximum every test model has.
const MODEL_MAX: i64 = 100_000;

/// How the mock answers a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A whole answer whose completion is exactly the limit the body asked (MODEL_MAX when
    /// none), after a short wait (so concurrent calls overlap).
    AnswerTheLimit,
    /// A stream that ignores any limit: MODEL_MAX tokens of text, in small writes.
    Flood,
}

#[derive(Default)]
struct Shared {
    modes: Mutex<VecDeque<Mode>>,
    /// (path, raw body) of every call.
    calls: Mutex<Vec<(String, Bytes)>>,
    /// A flood's body was dropped before its end (the relay hung up).
    cut: Arc<AtomicBool>,
    /// A flood's body was written to its end.
    finished: Arc<AtomicBool>,
}

struct Mock {
    base: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Mock {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Mock {
    #[expect(clippy::expect_used, reason = "a broken mock must fail the test")]
    async fn start() -> Mock {
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
        Mock { base, shared, task }
    }

    #[expect(clippy::expect_used, reason = "test mock")]
    fn push(&self, mode: Mode) {
        self.shared.modes.lock().expect("lock").push_back(mode);
    }

    #[expect(clippy::expect_used, reason = "test mock")]
    fn calls(&self) -> Vec<(String, Bytes)> {
        self.shared.calls.lock().expect("lock").clone()
    }

    fn last_json(&self) -> Value {
        self.calls().last().map_or(Value::Null, |(_, b)| {
            serde_json::from_slice(b).unwrap_or(Value::Null)
        })
    }
}

/// The wire a path speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wire {
    Chat,
    Responses,
    Anthropic,
    Gemini,
    Converse,
    Cohere,
}

fn wire_of(path: &str) -> Wire {
    if path.ends_with("/responses") {
        Wire::Responses
    } else if path.ends_with("/messages") {
        Wire::Anthropic
    } else if path.contains(":generateContent") || path.contains(":streamGenerateContent") {
        Wire::Gemini
    } else if path.contains("/converse") {
        Wire::Converse
    } else if path.ends_with("/v2/chat") {
        Wire::Cohere
    } else {
        Wire::Chat
    }
}

/// The output limit a body asks for, in its wire's field.
fn limit_of(wire: Wire, body: &Value) -> Option<i64> {
    match wire {
        Wire::Chat => body["max_completion_tokens"]
            .as_i64()
            .or_else(|| body["max_tokens"].as_i64()),
        Wire::Responses => body["max_output_tokens"].as_i64(),
        Wire::Anthropic | Wire::Cohere => body["max_tokens"].as_i64(),
        Wire::Gemini => body["generationConfig"]["maxOutputTokens"].as_i64(),
        Wire::Converse => body["inferenceConfig"]["maxTokens"].as_i64(),
    }
}

/// A whole answer of `wire` with `prompt` and `completion` tokens.
fn whole(wire: Wire, prompt: i64, completion: i64) -> Value {
    match wire {
        Wire::Chat => json!({"id": "c", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}}),
        Wire::Responses => {
            json!({"id": "r", "object": "response", "status": "completed", "model": "m",
            "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}],
            "usage": {"input_tokens": prompt, "output_tokens": completion, "total_tokens": prompt + completion}})
        }
        Wire::Anthropic => {
            json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
            "usage": {"input_tokens": prompt, "output_tokens": completion}})
        }
        Wire::Gemini => {
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]},
            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": completion,
                "totalTokenCount": prompt + completion}})
        }
        Wire::Converse => {
            json!({"output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
            "stopReason": "end_turn",
            "usage": {"inputTokens": prompt, "outputTokens": completion, "totalTokens": prompt + completion}})
        }
        Wire::Cohere => {
            json!({"id": "co", "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
            "finish_reason": "COMPLETE",
            "usage": {"billed_units": {"input_tokens": prompt, "output_tokens": completion}}})
        }
    }
}

fn sse(name: &str, data: &Value) -> String {
    if name.is_empty() {
        format!("data: {data}\n\n")
    } else {
        format!("event: {name}\ndata: {data}\n\n")
    }
}

/// One write of a flood: `n` words of text in `wire`'s stream events.
fn flood_events(wire: Wire, n: usize) -> String {
    let text = " tok".repeat(n);
    match wire {
        Wire::Chat => sse(
            "",
            &json!({"id": "c", "object": "chat.completion.chunk", "model": "m",
                "choices": [{"index": 0, "delta": {"content": text}}]}),
        ),
        Wire::Responses => sse(
            "response.output_text.delta",
            &json!({"type": "response.output_text.delta", "item_id": "m1", "output_index": 0,
                "content_index": 0, "delta": text}),
        ),
        Wire::Anthropic => sse(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        ),
        Wire::Gemini | Wire::Converse | Wire::Cohere => sse(
            "",
            &json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}]}),
        ),
    }
}

/// The events before a flood's text.
fn flood_head(wire: Wire) -> String {
    match wire {
        Wire::Anthropic => [
            sse(
                "message_start",
                &json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
                    "role": "assistant", "model": "m", "content": [], "stop_reason": null,
                    "usage": {"input_tokens": 5, "output_tokens": 1}}}),
            ),
            sse(
                "content_block_start",
                &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ),
        ]
        .concat(),
        Wire::Responses => sse(
            "response.created",
            &json!({"type": "response.created", "response": {"id": "resp_1", "object": "response",
                "status": "in_progress", "model": "m", "output": []}}),
        ),
        _ => String::new(),
    }
}

/// Sets `flag` when dropped before `done` was set.
struct Watch {
    done: bool,
    cut: Arc<AtomicBool>,
    finished: Arc<AtomicBool>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        if self.done {
            self.finished.store(true, Ordering::SeqCst);
        } else {
            self.cut.store(true, Ordering::SeqCst);
        }
    }
}

async fn handle(State(shared): State<Arc<Shared>>, uri: Uri, body: Bytes) -> Response {
    let path = uri.path().to_owned();
    let wire = wire_of(&path);
    let mode = shared
        .modes
        .lock()
        .ok()
        .and_then(|mut m| m.pop_front())
        .unwrap_or(Mode::AnswerTheLimit);
    if let Ok(mut calls) = shared.calls.lock() {
        calls.push((path, body.clone()));
    }
    let parsed: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    match mode {
        Mode::AnswerTheLimit => {
            // Long enough for a concurrent request to be admitted meanwhile.
            tokio::time::sleep(Duration::from_millis(200)).await;
            let limit = limit_of(wire, &parsed).unwrap_or(MODEL_MAX);
            axum::Json(whole(wire, 5, limit)).into_response()
        }
        Mode::Flood => {
            // 100 writes of 1,000 words: MODEL_MAX tokens, each write after a short pause.
            let watch = Watch {
                done: false,
                cut: Arc::clone(&shared.cut),
                finished: Arc::clone(&shared.finished),
            };
            let head = flood_head(wire);
            let state = (0usize, watch, head);
            let body =
                futures_util::stream::unfold(state, move |(i, mut watch, head)| async move {
                    if i == 100 {
                        watch.done = true;
                        drop(watch);
                        return None;
                    }
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(2)).await;
                    }
                    let mut part = head;
                    part.push_str(&flood_events(wire, 1000));
                    Some((
                        Ok::<_, std::io::Error>(Bytes::from(part)),
                        (i + 1, watch, String::new()),
                    ))
                });
            let mut response = Response::new(Body::from_stream(body));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            );
            response
        }
    }
}

const MODELS: &str = "big-test,o3-test,claude-big,gemini-big,nova-big,command-big,resp-big";

async fn prices(server: &TestServer, root: &Actor) {
    let each = |v: Value| {
        let map: serde_json::Map<String, Value> = MODELS
            .split(',')
            .map(|m| (m.to_owned(), v.clone()))
            .collect();
        json!(Value::Object(map).to_string())
    };
    server.set_option(root, "ModelRatio", each(json!(1))).await;
    server
        .set_option(root, "CompletionRatio", each(json!(1)))
        .await;
    server
        .set_option(root, "ModelMaxOutput", each(json!(MODEL_MAX)))
        .await;
    server
        .set_option(root, "AutomaticDisableChannelEnabled", json!("false"))
        .await;
}

/// A server with one channel per wire on `mock`, a user with `quota` and a key; the
/// OpenAI-compatible channel's `setting` is `openai_setting`.
async fn setup(
    mock: &Mock,
    quota: i64,
    openai_setting: &str,
) -> (TestServer, Actor, Actor, String) {
    let server = TestServer::start().await;
    let base = &mock.base;
    let channels = [
        json!({"name": "oa", "type": 1, "key": "k-oa", "base_url": base, "models": "big-test,o3-test",
            "group": "default", "setting": openai_setting}),
        json!({"name": "resp", "type": 8, "key": "k-resp", "base_url": base, "models": "resp-big",
            "group": "default", "setting": r#"{"upstream_api": "responses"}"#}),
        json!({"name": "claude", "type": 14, "key": "k-claude", "base_url": base, "models": "claude-big", "group": "default"}),
        json!({"name": "gemini", "type": 24, "key": "k-gemini", "base_url": base, "models": "gemini-big", "group": "default"}),
        json!({"name": "bedrock", "type": 33, "key": "ABSKQmVkcm9ja0FQSUtleS1leGFtcGxl|us-east-1",
            "base_url": base, "models": "nova-big", "group": "default"}),
        json!({"name": "cohere", "type": 34, "key": "k-cohere", "base_url": base, "models": "command-big", "group": "default"}),
    ];
    // The key is limited far above the user: the balance is what limits.
    let (root, payer, key) = fixture(&server, &channels, quota, 1_000_000_000).await;
    prices(&server, &root).await;
    (server, root, payer, key)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_from_a_small_balance_are_limited_and_leave_no_debt() {
    let mock = Mock::start().await;
    let (server, _root, payer, key) = setup(&mock, 10_000, "").await;
    let (a, b) = tokio::join!(
        chat_request(&server, &key, &hi("big-test")).send(),
        chat_request(&server, &key, &hi("big-test")).send()
    );
    let statuses: Vec<u16> = [a, b]
        .into_iter()
        .map(|r| r.map_or(0, |r| r.status().as_u16()))
        .collect();
    let calls = mock.calls();
    assert!(
        !calls.is_empty(),
        "at least one call was made: {statuses:?}"
    );
    let granted: i64 = calls
        .iter()
        .map(|(path, body)| {
            let body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
            limit_of(wire_of(path), &body).unwrap_or(MODEL_MAX) + 5
        })
        .sum();
    assert!(
        granted <= 10_000,
        "the limits granted ({granted} with the prompts) fit the balance; statuses {statuses:?}"
    );
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    assert!(quota >= 0, "no debt: balance {quota}");
    let o = other(&logs[0]);
    assert_eq!(o["output_limit_set"], true, "{o}");
    assert!(
        o["output_limit"].as_i64().is_some_and(|l| l < MODEL_MAX),
        "{o}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_balance_that_covers_the_maximum_sends_the_clients_bytes() {
    let mock = Mock::start().await;
    let (server, _root, payer, key) = setup(&mock, 10_000_000, "").await;
    let raw = r#"{"model":"big-test",  "messages":[{"role":"user","content":"hi"}]}"#;
    let resp = server
        .client
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .body(raw)
        .send()
        .await;
    assert_eq!(resp.map(|r| r.status()).ok(), Some(StatusCode::OK));
    assert_eq!(
        mock.calls().last().map(|(_, b)| b.clone()),
        Some(Bytes::from(raw)),
        "the client's bytes, unchanged"
    );
    let (_, _, _, logs) = balances(&server, payer.id).await;
    let o = other(&logs[0]);
    assert_eq!(
        (o["output_limit"].as_i64(), o["output_limit_set"].as_bool()),
        (Some(MODEL_MAX), Some(false))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_wire_gets_the_lowered_limit_in_its_field() {
    let mock = Mock::start().await;
    let (server, root, payer, key) = setup(&mock, 10_000, "").await;
    let c = &server.client;
    // (request, the field's path in the upstream body)
    let cases: Vec<(reqwest::RequestBuilder, &str, Vec<&str>)> = vec![
        (
            chat_request(&server, &key, &hi("big-test")),
            "chat max_tokens",
            vec!["max_tokens"],
        ),
        (
            chat_request(&server, &key, &hi("o3-test")),
            "reasoning model",
            vec!["max_completion_tokens"],
        ),
        (
            c.post(server.url("/v1/responses"))
                .bearer_auth(&key)
                .json(&json!({"model": "big-test", "input": "hi"})),
            "responses",
            vec!["max_output_tokens"],
        ),
        (
            chat_request(&server, &key, &hi("resp-big")),
            "chat to a Responses channel",
            vec!["max_output_tokens"],
        ),
        (
            chat_request(&server, &key, &hi("claude-big")),
            "chat to Claude",
            vec!["max_tokens"],
        ),
        (
            c.post(server.url("/v1beta/models/gemini-big:generateContent"))
                .header("x-goog-api-key", &key)
                .json(&json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})),
            "gemini",
            vec!["generationConfig", "maxOutputTokens"],
        ),
        (
            chat_request(&server, &key, &hi("nova-big")),
            "converse",
            vec!["inferenceConfig", "maxTokens"],
        ),
        (
            chat_request(&server, &key, &hi("command-big")),
            "cohere",
            vec!["max_tokens"],
        ),
    ];
    let mut failures = Vec::new();
    for (req, what, field) in cases {
        let before = mock.calls().len();
        let status = req.send().await.map_or(0, |r| r.status().as_u16());
        let body = mock.last_json();
        let got = field.iter().fold(&body, |v, k| &v[*k]).as_i64();
        // 10,000 units less the prompt's reservation: about 9,990 tokens.
        if status != 200
            || mock.calls().len() != before + 1
            || !got.is_some_and(|l| (9_000..10_000).contains(&l))
        {
            failures.push(format!(
                "{what}: status {status}, {field:?} = {got:?} in {body}"
            ));
        }
        // The mock charged the limit: top the user back up for the next case.
        reset_balance(&root, payer.id, 10_000).await;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // Anthropic: max_tokens and the thinking budget both lowered.
    let thinking = json!({"model": "claude-big", "max_tokens": 64000,
        "thinking": {"type": "enabled", "budget_tokens": 32000},
        "messages": [{"role": "user", "content": "hi"}]});
    let status = c
        .post(server.url("/v1/messages"))
        .header("x-api-key", &key)
        .json(&thinking)
        .send()
        .await
        .map_or(0, |r| r.status().as_u16());
    let body = mock.last_json();
    let max = body["max_tokens"].as_i64().unwrap_or_default();
    assert_eq!(status, 200, "{body}");
    assert!((9_000..10_000).contains(&max), "{body}");
    assert_eq!(
        body["thinking"]["budget_tokens"].as_i64(),
        Some(max - 1),
        "{body}"
    );
}

/// Sets `user`'s balance back to `quota`.
async fn reset_balance(root: &Actor, user: i64, quota: i64) {
    let (status, body) = root
        .put("/api/user/", json!({"id": user, "quota": quota}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_that_may_not_change_are_refused_or_left_alone() {
    let mock = Mock::start().await;
    let (server, _root, _payer, key) =
        setup(&mock, 10_000, r#"{"pass_through_body_enabled": true}"#).await;
    // A pass-through channel: the full maximum is not covered → refused, no call.
    let resp = chat_request(&server, &key, &hi("big-test")).send().await;
    let (status, text) = match resp {
        Ok(r) => (r.status(), r.text().await.unwrap_or_default()),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    };
    assert_eq!(status, StatusCode::FORBIDDEN, "{text}");
    assert!(text.contains("output tokens"), "names the amount: {text}");
    assert!(mock.calls().is_empty(), "the upstream saw nothing");

    // Legacy completions: never given a limit (reserved as OpenAI's default of 16).
    let raw = r#"{"model":"big-test","prompt":"hi"}"#;
    let status = server
        .client
        .post(server.url("/v1/completions"))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .body(raw)
        .send()
        .await
        .map_or(0, |r| r.status().as_u16());
    // The pass-through channel gets the client's bytes (the mock answers "its limit": none,
    // so MODEL_MAX: a debt the ceiling cannot prevent on a whole answer, as documented).
    assert_eq!(status, 200);
    assert_eq!(
        mock.calls().last().map(|(_, b)| b.clone()),
        Some(Bytes::from(raw))
    );

    // Anthropic's thinking cannot fit what the balance covers: refused naming the amount.
    let (server2, root2, _payer2, key2) = setup(&mock, 1_000, "").await;
    server2
        .set_option(&root2, "DefaultOutputReserve", json!("500"))
        .await;
    let calls = mock.calls().len();
    let resp = server2
        .client
        .post(server2.url("/v1/messages"))
        .header("x-api-key", &key2)
        .json(&json!({"model": "claude-big", "max_tokens": 64000,
            "thinking": {"type": "enabled", "budget_tokens": 32000},
            "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await;
    let (status, text) = match resp {
        Ok(r) => (r.status(), r.text().await.unwrap_or_default()),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    };
    assert_eq!(status, StatusCode::FORBIDDEN, "{text}");
    assert!(text.contains("1025"), "names the amount: {text}");
    assert_eq!(mock.calls().len(), calls, "the upstream saw nothing");
}

/// Waits (up to 10 s) until `flag` is set.
async fn wait_for(flag: &AtomicBool) -> bool {
    for _ in 0..500 {
        if flag.load(Ordering::SeqCst) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_ignores_the_limit_is_cut_at_the_ceiling_in_each_format() {
    let mock = Mock::start().await;
    let (server, root, payer, key) = setup(&mock, 10_000, "").await;
    let c = &server.client;
    let cases: Vec<(&str, reqwest::RequestBuilder)> = vec![
        (
            "chat",
            chat_request(
                &server,
                &key,
                &json!({"model": "big-test", "stream": true, "messages": [{"role": "user", "content": "hi"}]}),
            ),
        ),
        (
            "responses",
            c.post(server.url("/v1/responses"))
                .bearer_auth(&key)
                .json(&json!({"model": "big-test", "stream": true, "input": "hi"})),
        ),
        (
            "anthropic",
            c.post(server.url("/v1/messages"))
                .header("x-api-key", &key)
                .json(
                    &json!({"model": "claude-big", "max_tokens": 100000, "stream": true,
                    "messages": [{"role": "user", "content": "hi"}]}),
                ),
        ),
        (
            "gemini",
            c.post(server.url("/v1beta/models/gemini-big:streamGenerateContent?alt=sse"))
                .header("x-goog-api-key", &key)
                .json(&json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})),
        ),
        (
            "chat converted from Claude",
            chat_request(
                &server,
                &key,
                &json!({"model": "claude-big", "stream": true, "messages": [{"role": "user", "content": "hi"}]}),
            ),
        ),
    ];
    let mut failures = Vec::new();
    for (what, req) in cases {
        mock.shared.cut.store(false, Ordering::SeqCst);
        mock.shared.finished.store(false, Ordering::SeqCst);
        mock.push(Mode::Flood);
        let (_, _, _, before) = balances(&server, payer.id).await;
        let resp = req.send().await;
        let (status, text) = match resp {
            Ok(r) => (r.status().as_u16(), r.text().await.unwrap_or_default()),
            Err(e) => (0, e.to_string()),
        };
        let events = sse_events(&text);
        let ended = match what {
            "chat" | "chat converted from Claude" => {
                events
                    .iter()
                    .any(|(_, d)| d["choices"][0]["finish_reason"] == "length")
                    && text.contains("data: [DONE]")
            }
            "responses" => events.iter().any(|(n, d)| {
                n == "response.incomplete"
                    && d["response"]["incomplete_details"]["reason"] == "max_output_tokens"
            }),
            "anthropic" => {
                events
                    .iter()
                    .any(|(_, d)| d["delta"]["stop_reason"] == "max_tokens")
                    && events.last().is_some_and(|(n, _)| n == "message_stop")
            }
            _ => events
                .iter()
                .any(|(_, d)| d["candidates"][0]["finishReason"] == "MAX_TOKENS"),
        };
        let cut = wait_for(&mock.shared.cut).await;
        let (quota, _, _, logs) = balances(&server, payer.id).await;
        let new_rows = logs.len() - before.len();
        let row = &logs[0];
        let o = other(row);
        let mut why = Vec::new();
        if status != 200 || !ended {
            why.push(format!(
                "status {status}, no terminal event in {}",
                &text[text.len().saturating_sub(600)..]
            ));
        }
        if !cut || mock.shared.finished.load(Ordering::SeqCst) {
            why.push("the mock did not see the disconnect".to_owned());
        }
        if new_rows != 1 || o["usage_source"] != "partial" || o["partial_reason"] != "capped" {
            why.push(format!("{new_rows} rows, other {o}"));
        }
        if quota < 0 || row.completion_tokens >= MODEL_MAX / 2 {
            why.push(format!(
                "balance {quota}, completion {}",
                row.completion_tokens
            ));
        }
        if !why.is_empty() {
            failures.push(format!("{what}: {}", why.join("; ")));
        }
        reset_balance(&root, payer.id, 10_000).await;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// $0.02 at the default QuotaPerUnit (500,000): 10,000 units, so about 9,500 output tokens
/// beyond the prompt's reservation (PreConsumedQuota, 500).
const MAX_COST: f64 = 0.02;

/// Whether `body` (raw, as the upstream got it) mentions Tollgate's field.
fn leaks_max_cost(body: &Bytes) -> bool {
    String::from_utf8_lossy(body).contains("max_cost")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_cost_lowers_the_limit_in_each_format_and_never_reaches_the_upstream() {
    let mock = Mock::start().await;
    // A balance far above the ceiling: max_cost is what limits.
    let (server, _root, _payer, key) = setup(&mock, 100_000_000, "").await;
    let c = &server.client;
    let hi_cost = |model: &str| json!({"model": model, "max_cost": MAX_COST, "messages": [{"role": "user", "content": "hi"}]});
    let cases: Vec<(reqwest::RequestBuilder, &str)> = vec![
        (chat_request(&server, &key, &hi_cost("big-test")), "chat"),
        (
            c.post(server.url("/v1/responses"))
                .bearer_auth(&key)
                .json(&json!({"model": "big-test", "input": "hi", "max_cost": MAX_COST})),
            "responses",
        ),
        (
            c.post(server.url("/v1/messages"))
                .header("x-api-key", &key)
                .json(&json!({"model": "claude-big", "max_tokens": 100000, "max_cost": MAX_COST,
                    "messages": [{"role": "user", "content": "hi"}]})),
            "anthropic",
        ),
        (
            c.post(server.url("/v1beta/models/gemini-big:generateContent"))
                .header("x-goog-api-key", &key)
                .json(&json!({"max_cost": MAX_COST,
                    "contents": [{"role": "user", "parts": [{"text": "hi"}]}]})),
            "gemini",
        ),
        (
            chat_request(&server, &key, &hi_cost("claude-big")),
            "chat to Claude",
        ),
        (
            chat_request(&server, &key, &hi_cost("resp-big")),
            "chat to a Responses channel",
        ),
        // The header wins over the body (a body ceiling of $1 would allow 100,000 tokens).
        (
            chat_request(
                &server,
                &key,
                &json!({"model": "big-test", "max_cost": 1.0, "messages": [{"role": "user", "content": "hi"}]}),
            )
            .header("X-Max-Cost", MAX_COST.to_string()),
            "header over body",
        ),
        (
            c.post(server.url("/v1/messages"))
                .header("x-api-key", &key)
                .header("X-Max-Cost", MAX_COST.to_string())
                .json(&json!({"model": "claude-big", "max_tokens": 100000,
                    "messages": [{"role": "user", "content": "hi"}]})),
            "anthropic, header only",
        ),
    ];
    let mut failures = Vec::new();
    for (req, what) in cases {
        let before = mock.calls().len();
        let status = req.send().await.map_or(0, |r| r.status().as_u16());
        let calls = mock.calls();
        let Some((path, raw)) = calls.last().filter(|_| calls.len() == before + 1) else {
            failures.push(format!("{what}: status {status}, no upstream call"));
            continue;
        };
        let body: Value = serde_json::from_slice(raw).unwrap_or(Value::Null);
        let limit = limit_of(wire_of(path), &body);
        if status != 200
            || leaks_max_cost(raw)
            || !limit.is_some_and(|l| (9_000..10_000).contains(&l))
        {
            failures.push(format!(
                "{what}: status {status}, limit {limit:?} in {body}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // A prompt that alone costs more than the ceiling: 403 naming the amount, no call.
    let before = mock.calls().len();
    let resp = chat_request(&server, &key, &hi("big-test"))
        .header("X-Max-Cost", "0.000001")
        .send()
        .await;
    let (status, text) = match resp {
        Ok(r) => (r.status(), r.text().await.unwrap_or_default()),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    };
    assert_eq!(status, StatusCode::FORBIDDEN, "{text}");
    assert!(
        text.contains("max_cost of $0.000001"),
        "names the amount: {text}"
    );
    // The same in Anthropic's shape, from the body.
    let resp = c
        .post(server.url("/v1/messages"))
        .header("x-api-key", &key)
        .json(
            &json!({"model": "claude-big", "max_tokens": 100, "max_cost": 0,
            "messages": [{"role": "user", "content": "hi"}]}),
        )
        .send()
        .await;
    let (status, answer) = match resp {
        Ok(r) => (r.status(), r.json::<Value>().await.unwrap_or_default()),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, json!(e.to_string())),
    };
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    assert_eq!(answer["error"]["type"], "permission_error", "{answer}");
    // Not a number of dollars: 400.
    let status = chat_request(&server, &key, &hi("big-test"))
        .header("X-Max-Cost", "cheap")
        .send()
        .await
        .map_or(0, |r| r.status().as_u16());
    assert_eq!(status, 400);
    assert_eq!(mock.calls().len(), before, "the upstream saw none of them");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_cost_cuts_a_stream_in_each_format_billed_once() {
    let mock = Mock::start().await;
    // DebtAllowance and the balance are far above the ceiling: only max_cost can cut.
    let (server, _root, payer, key) = setup(&mock, 100_000_000, "").await;
    let c = &server.client;
    let cases: Vec<(&str, reqwest::RequestBuilder)> = vec![
        (
            "chat",
            chat_request(
                &server,
                &key,
                &json!({"model": "big-test", "stream": true, "max_cost": MAX_COST,
                    "messages": [{"role": "user", "content": "hi"}]}),
            ),
        ),
        (
            "responses",
            c.post(server.url("/v1/responses"))
                .bearer_auth(&key)
                .header("X-Max-Cost", MAX_COST.to_string())
                .json(&json!({"model": "big-test", "stream": true, "input": "hi"})),
        ),
        (
            "anthropic",
            c.post(server.url("/v1/messages"))
                .header("x-api-key", &key)
                .json(
                    &json!({"model": "claude-big", "max_tokens": 100000, "stream": true,
                    "max_cost": MAX_COST, "messages": [{"role": "user", "content": "hi"}]}),
                ),
        ),
        (
            "gemini",
            c.post(server.url("/v1beta/models/gemini-big:streamGenerateContent?alt=sse"))
                .header("x-goog-api-key", &key)
                .json(&json!({"max_cost": MAX_COST,
                    "contents": [{"role": "user", "parts": [{"text": "hi"}]}]})),
        ),
    ];
    let mut failures = Vec::new();
    for (what, req) in cases {
        mock.shared.cut.store(false, Ordering::SeqCst);
        mock.shared.finished.store(false, Ordering::SeqCst);
        mock.push(Mode::Flood);
        let (quota_before, _, _, before) = balances(&server, payer.id).await;
        let resp = req.send().await;
        let (status, text) = match resp {
            Ok(r) => (r.status().as_u16(), r.text().await.unwrap_or_default()),
            Err(e) => (0, e.to_string()),
        };
        let events = sse_events(&text);
        let ended = match what {
            "chat" => {
                events
                    .iter()
                    .any(|(_, d)| d["choices"][0]["finish_reason"] == "length")
                    && text.contains("data: [DONE]")
            }
            "responses" => events.iter().any(|(n, d)| {
                n == "response.incomplete"
                    && d["response"]["incomplete_details"]["reason"] == "max_output_tokens"
            }),
            "anthropic" => {
                events
                    .iter()
                    .any(|(_, d)| d["delta"]["stop_reason"] == "max_tokens")
                    && events.last().is_some_and(|(n, _)| n == "message_stop")
            }
            _ => events
                .iter()
                .any(|(_, d)| d["candidates"][0]["finishReason"] == "MAX_TOKENS"),
        };
        let cut = wait_for(&mock.shared.cut).await;
        let (quota, _, _, logs) = balances(&server, payer.id).await;
        let new_rows = logs.len() - before.len();
        let row = &logs[0];
        let o = other(row);
        let mut why = Vec::new();
        if status != 200 || !ended {
            why.push(format!(
                "status {status}, no terminal event in {}",
                &text[text.len().saturating_sub(600)..]
            ));
        }
        if !cut || mock.shared.finished.load(Ordering::SeqCst) {
            why.push("the mock did not see the disconnect".to_owned());
        }
        if new_rows != 1 || o["usage_source"] != "partial" || o["partial_reason"] != "capped" {
            why.push(format!("{new_rows} rows, other {o}"));
        }
        // Cut near the ceiling's 10,000 units (one write of the flood is 1,000 tokens), and
        // the balance charged exactly the row's quota.
        if row.quota > 12_000 || quota_before - quota != row.quota {
            why.push(format!(
                "charged {} of {quota_before}, row quota {}, completion {}",
                quota_before - quota,
                row.quota,
                row.completion_tokens
            ));
        }
        if mock.calls().last().is_some_and(|(_, b)| leaks_max_cost(b)) {
            why.push("the upstream saw max_cost".to_owned());
        }
        if !why.is_empty() {
            failures.push(format!("{what}: {}", why.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
