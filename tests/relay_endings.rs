//! Every ending of an answer, golden: each ending × inbound protocol (OpenAI chat, Responses,
//! Anthropic Messages, Gemini, each to a channel of its own protocol, plus OpenAI chat converted
//! to a Claude channel) × stream / non-stream, against the mocks' scripted faults, with
//! the exact log row it leaves (prompt, completion, quota, `usage_source`, `partial_reason`) or
//! the error row and untouched balance of a failed request. The README's billing table is this
//! table. Prices: every model at ratio 1, completion 2 (quota = prompt + 2 × completion).

mod common;

use std::time::Duration;

use common::fault::{Script, Tail};
use common::mock_anthropic::MockAnthropic;
use common::mock_gemini::MockGemini;
use common::mock_upstream::MockUpstream;
use common::relay_fixture::{fixture, other};
use common::{ROOT_PASS, ROOT_USER, TestServer};
use serde_json::{Value, json};
use tollgate_storage::logs::{LOG_CONSUME, LOG_ERROR, LogEntry};
use tollgate_storage::{StorageError, UserId, logs};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inbound {
    Chat,
    Responses,
    Anthropic,
    Gemini,
    /// An OpenAI chat client of a Claude channel: the adaptor converts both ways.
    ChatToClaude,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Complete,
    GoneBeforeFirstByte,
    GoneMidStream,
    ErrorBeforeOutput,
    BodyCut,
    IdleTimeout,
    NonJson,
    OversizedEvent,
}

const ENDS: [End; 8] = [
    End::Complete,
    End::GoneBeforeFirstByte,
    End::GoneMidStream,
    End::ErrorBeforeOutput,
    End::BodyCut,
    End::IdleTimeout,
    End::NonJson,
    End::OversizedEvent,
];

/// What a cell leaves behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// A consume row: (prompt, completion, usage_source, partial_reason), quota = p + 2c.
    Row(i64, i64, &'static str, Option<&'static str>),
    /// No charge, an error row.
    ErrorRow,
    /// The ending cannot happen on this cell.
    NotApplicable,
}

/// Tollgate's own prompt count of each inbound's "hi" request (no upstream report read).
fn estimate(inbound: Inbound) -> i64 {
    match inbound {
        // 1 token + 3 per message + 3 for the reply.
        Inbound::Chat => 7,
        // `input` is counted without chat framing.
        Inbound::Responses => 1,
        Inbound::Anthropic | Inbound::Gemini | Inbound::ChatToClaude => 7,
    }
}

/// The prompt and completion the upstream reported before the stream was cut after its first
/// text ("aaaa", 1 token): Anthropic's `message_start` and every Gemini chunk carry the prompt.
fn reported_at_cut(inbound: Inbound) -> Option<i64> {
    match inbound {
        Inbound::Chat | Inbound::Responses => None,
        Inbound::Anthropic | Inbound::Gemini | Inbound::ChatToClaude => Some(100),
    }
}

/// The golden table.
fn expected(inbound: Inbound, stream: bool, end: End) -> Expect {
    let est = estimate(inbound);
    let cut_prompt = reported_at_cut(inbound).unwrap_or(est);
    let partial = |p, c, reason| Expect::Row(p, c, "partial", Some(reason));
    match (end, stream) {
        (End::Complete, _) => Expect::Row(100, 20, "upstream", None),
        // A whole answer is read to its end and billed as reported; a stream is dropped unread.
        (End::GoneBeforeFirstByte, false) => partial(100, 20, "client_gone"),
        (End::GoneBeforeFirstByte, true) => partial(est, 0, "client_gone"),
        (End::GoneMidStream, true) => partial(cut_prompt, 1, "client_gone"),
        (End::GoneMidStream | End::OversizedEvent, false) => Expect::NotApplicable,
        (End::ErrorBeforeOutput, _) => Expect::ErrorRow,
        (End::BodyCut, false) => partial(est, 0, "upstream_cut"),
        (End::BodyCut, true) => partial(cut_prompt, 1, "upstream_cut"),
        (End::IdleTimeout, false) => partial(est, 0, "idle_timeout"),
        (End::IdleTimeout, true) => partial(cut_prompt, 1, "idle_timeout"),
        (End::NonJson, _) => partial(est, 0, "non_json"),
        (End::OversizedEvent, true) => partial(cut_prompt, 1, "oversized_event"),
    }
}

fn sse_event(name: &str, data: &Value) -> String {
    if name.is_empty() {
        format!("data: {data}\n\n")
    } else {
        format!("event: {name}\ndata: {data}\n\n")
    }
}

/// A stream of `inbound`'s wire: (everything up to and including the first text "aaaa", the
/// rest: second text "bbbb", usage 100 / 20, end marker).
fn stream_parts(inbound: Inbound) -> (String, String) {
    match inbound {
        Inbound::Chat => {
            let text = |t: &str| json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": t}}]});
            let first = sse_event("", &text("aaaa"));
            let rest = [
                sse_event("", &text("bbbb")),
                sse_event(
                    "",
                    &json!({"id": "c", "choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}),
                ),
                "data: [DONE]\n\n".to_owned(),
            ]
            .concat();
            (first, rest)
        }
        Inbound::Responses => {
            let delta = |t: &str| {
                sse_event(
                    "response.output_text.delta",
                    &json!({"type": "response.output_text.delta", "delta": t}),
                )
            };
            let rest = [
                delta("bbbb"),
                sse_event(
                    "response.completed",
                    &json!({"type": "response.completed", "response": {"id": "r", "status": "completed",
                        "usage": {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120}}}),
                ),
            ]
            .concat();
            (delta("aaaa"), rest)
        }
        Inbound::Anthropic | Inbound::ChatToClaude => {
            let delta = |t: &str| {
                sse_event(
                    "content_block_delta",
                    &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}}),
                )
            };
            let first = [
                sse_event(
                    "message_start",
                    &json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
                        "role": "assistant", "model": "claude-test", "content": [], "stop_reason": null,
                        "usage": {"input_tokens": 100, "output_tokens": 1}}}),
                ),
                sse_event(
                    "content_block_start",
                    &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                ),
                delta("aaaa"),
            ]
            .concat();
            let rest = [
                delta("bbbb"),
                sse_event(
                    "content_block_stop",
                    &json!({"type": "content_block_stop", "index": 0}),
                ),
                sse_event(
                    "message_delta",
                    &json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 20}}),
                ),
                sse_event("message_stop", &json!({"type": "message_stop"})),
            ]
            .concat();
            (first, rest)
        }
        Inbound::Gemini => {
            let chunk = |t: &str, last: bool| {
                let mut c = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": t}]}, "index": 0}],
                    "usageMetadata": {"promptTokenCount": 100, "totalTokenCount": 100}});
                if last {
                    c["candidates"][0]["finishReason"] = json!("STOP");
                    c["usageMetadata"] = json!({"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120});
                }
                sse_event("", &c)
            };
            (chunk("aaaa", false), chunk("bbbb", true))
        }
    }
}

/// A whole answer of `inbound`'s wire: "aaaabbbb", usage 100 / 20.
fn whole_answer(inbound: Inbound) -> String {
    match inbound {
        Inbound::Chat => json!({"id": "c", "object": "chat.completion", "choices": [{"index": 0,
            "message": {"role": "assistant", "content": "aaaabbbb"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}),
        Inbound::Responses => json!({"id": "r", "object": "response", "status": "completed",
            "output": [{"type": "message", "content": [{"type": "output_text", "text": "aaaabbbb"}]}],
            "usage": {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120}}),
        Inbound::Anthropic | Inbound::ChatToClaude => json!({"id": "msg_1", "type": "message", "role": "assistant",
            "model": "claude-test", "content": [{"type": "text", "text": "aaaabbbb"}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 100, "output_tokens": 20}}),
        Inbound::Gemini => json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "aaaabbbb"}]},
            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120}}),
    }
    .to_string()
}

/// The upstream's script for a cell.
fn script(inbound: Inbound, stream: bool, end: End) -> Script {
    let kind = if stream {
        "text/event-stream"
    } else {
        "application/json"
    };
    let (first, rest) = if stream {
        stream_parts(inbound)
    } else {
        let whole = whole_answer(inbound);
        let half = whole.len() / 2;
        (whole[..half].to_owned(), whole[half..].to_owned())
    };
    let mut s = Script::ok(kind, vec![first.clone(), rest]);
    match end {
        End::Complete => {}
        End::GoneBeforeFirstByte => s.first_delay = Duration::from_millis(300),
        End::GoneMidStream | End::IdleTimeout => {
            s.parts = vec![first];
            s.tail = Tail::Stall;
        }
        End::BodyCut => {
            s.parts = vec![first];
            s.tail = Tail::Cut;
        }
        End::ErrorBeforeOutput => {
            s.status = 500;
            s.content_type = "application/json";
            s.parts = vec![
                json!({"error": {"message": "the upstream broke", "type": "server_error"}})
                    .to_string(),
            ];
        }
        End::NonJson => {
            s.content_type = "text/html";
            s.parts = vec!["<html><body>502 Bad Gateway</body></html>".to_owned()];
        }
        End::OversizedEvent => {
            // One event of 65 MiB with no blank line after it: past the 64 MiB limit.
            s.parts = vec![first, format!("data: {}", "x".repeat(65 << 20))];
        }
    }
    s
}

struct Mocks {
    openai: MockUpstream,
    anthropic: MockAnthropic,
    gemini: MockGemini,
}

impl Mocks {
    fn push(&self, inbound: Inbound, script: Script) -> usize {
        match inbound {
            Inbound::Chat | Inbound::Responses => {
                self.openai.push_script(script);
                self.openai.calls()
            }
            Inbound::Anthropic | Inbound::ChatToClaude => {
                self.anthropic.push_script(script);
                self.anthropic.calls()
            }
            Inbound::Gemini => {
                self.gemini.push_script(script);
                self.gemini.calls()
            }
        }
    }

    async fn wait_calls(&self, inbound: Inbound, n: usize) {
        match inbound {
            Inbound::Chat | Inbound::Responses => self.openai.wait_calls(n).await,
            Inbound::Anthropic | Inbound::ChatToClaude => self.anthropic.wait_calls(n).await,
            Inbound::Gemini => self.gemini.wait_calls(n).await,
        }
    }
}

fn request(
    server: &TestServer,
    key: &str,
    inbound: Inbound,
    stream: bool,
) -> reqwest::RequestBuilder {
    let c = &server.client;
    match inbound {
        Inbound::Chat => c.post(server.url("/v1/chat/completions")).bearer_auth(key).json(
            &json!({"model": "mock-test", "stream": stream, "messages": [{"role": "user", "content": "hi"}]}),
        ),
        Inbound::ChatToClaude => c.post(server.url("/v1/chat/completions")).bearer_auth(key).json(
            &json!({"model": "claude-test", "stream": stream, "messages": [{"role": "user", "content": "hi"}]}),
        ),
        Inbound::Responses => c
            .post(server.url("/v1/responses"))
            .bearer_auth(key)
            .json(&json!({"model": "mock-test", "stream": stream, "input": "hi"})),
        Inbound::Anthropic => c.post(server.url("/v1/messages")).header("x-api-key", key).json(
            &json!({"model": "claude-test", "max_tokens": 50, "stream": stream, "messages": [{"role": "user", "content": "hi"}]}),
        ),
        Inbound::Gemini => {
            let path = if stream {
                "/v1beta/models/gemini-test:streamGenerateContent?alt=sse"
            } else {
                "/v1beta/models/gemini-test:generateContent"
            };
            c.post(server.url(path))
                .header("x-goog-api-key", key)
                .json(&json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}))
        }
    }
}

#[expect(
    clippy::expect_used,
    reason = "test helper: a failed read fails the test"
)]
async fn rows(server: &TestServer, user: i64) -> (i64, Vec<LogEntry>) {
    server.flush().await;
    server
        .store()
        .read_blocking(|rtx| {
            let u = tollgate_storage::users::get(rtx, UserId(user))?.expect("user");
            Ok::<_, StorageError>((u.quota.0, logs::recent_for_user(rtx, UserId(user), 10_000)?))
        })
        .expect("read")
}

/// Waits (the settlement of a client that left is asynchronous) until a row newer than
/// `before` rows is there; returns it with the balance.
async fn next_row(server: &TestServer, user: i64, before: usize) -> Option<(i64, LogEntry)> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let (quota, all) = rows(server, user).await;
        if all.len() > before {
            return all.into_iter().next().map(|row| (quota, row));
        }
        if tokio::time::Instant::now() > deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Runs one cell; `Err` says how it differs from the table.
async fn run_cell(
    server: &TestServer,
    mocks: &Mocks,
    key: &str,
    user: i64,
    (inbound, stream, end): (Inbound, bool, End),
    want: Expect,
) -> Result<(), String> {
    let (quota_before, before) = rows(server, user).await;
    let calls = mocks.push(inbound, script(inbound, stream, end));
    let req = request(server, key, inbound, stream);
    let mut status = 0;
    match end {
        End::GoneBeforeFirstByte => {
            let call = tokio::spawn(req.send());
            mocks.wait_calls(inbound, calls + 1).await;
            call.abort();
            let _ = call.await;
        }
        End::GoneMidStream => {
            let mut resp = req.send().await.map_err(|e| e.to_string())?;
            status = resp.status().as_u16();
            let first = resp.chunk().await.map_err(|e| e.to_string())?;
            if first.is_none() {
                return Err("no first chunk".into());
            }
            drop(resp);
        }
        _ => {
            let resp = req.send().await.map_err(|e| e.to_string())?;
            status = resp.status().as_u16();
            let _ = resp.bytes().await;
        }
    }
    let Some((quota, row)) = next_row(server, user, before.len()).await else {
        return Err(format!("no row (status {status})"));
    };
    let o = other(&row);
    match want {
        Expect::NotApplicable => Ok(()),
        Expect::ErrorRow => {
            if row.log_type == LOG_ERROR && quota == quota_before && status == 500 {
                Ok(())
            } else {
                Err(format!(
                    "want an error row and no charge, got status {status}, type {} quota {} (balance {quota_before} → {quota})",
                    row.log_type, row.quota
                ))
            }
        }
        Expect::Row(p, c, source, reason) => {
            let got = (
                row.log_type,
                row.prompt_tokens,
                row.completion_tokens,
                row.quota,
                o["usage_source"].as_str().unwrap_or_default().to_owned(),
                o["partial_reason"].as_str().map(str::to_owned),
            );
            let want_row = (
                LOG_CONSUME,
                p,
                c,
                p + 2 * c,
                source.to_owned(),
                reason.map(str::to_owned),
            );
            let status_ok = match end {
                End::BodyCut | End::IdleTimeout | End::NonJson if !stream => status == 502,
                End::Complete => status == 200,
                _ => true,
            };
            if got == want_row && quota_before - quota == p + 2 * c && status_ok {
                Ok(())
            } else {
                Err(format!(
                    "want {want_row:?}, got {got:?}, status {status}, charged {}",
                    quota_before - quota
                ))
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_ending_of_every_protocol_is_billed_as_the_table_says() {
    let mocks = Mocks {
        openai: MockUpstream::start().await,
        anthropic: MockAnthropic::start().await,
        gemini: MockGemini::start().await,
    };
    let server = TestServer::start_with(tempfile::tempdir().expect("tempdir"), |c| {
        c.relay_timeout_secs = 1;
    })
    .await;
    let channels = [
        json!({"name": "oa", "type": 1, "key": "k-oa", "base_url": mocks.openai.base,
            "models": "mock-test", "group": "default"}),
        json!({"name": "claude", "type": 14, "key": "k-claude", "base_url": mocks.anthropic.base,
            "models": "claude-test", "group": "default"}),
        json!({"name": "gemini", "type": 24, "key": "k-gemini", "base_url": mocks.gemini.base,
            "models": "gemini-test", "group": "default"}),
    ];
    let (_, payer, key) = fixture(&server, &channels, 100_000_000, 50_000_000).await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let models = r#"{"mock-test": 1, "claude-test": 1, "gemini-test": 1}"#;
    server.set_option(&root, "ModelRatio", json!(models)).await;
    let completion = r#"{"mock-test": 2, "claude-test": 2, "gemini-test": 2}"#;
    server
        .set_option(&root, "CompletionRatio", json!(completion))
        .await;
    server
        .set_option(&root, "AutomaticDisableChannelEnabled", json!("false"))
        .await;

    let mut failures = Vec::new();
    let mut ran = 0;
    for inbound in [
        Inbound::Chat,
        Inbound::Responses,
        Inbound::Anthropic,
        Inbound::Gemini,
        Inbound::ChatToClaude,
    ] {
        for stream in [false, true] {
            for end in ENDS {
                let want = expected(inbound, stream, end);
                if want == Expect::NotApplicable {
                    continue;
                }
                ran += 1;
                if let Err(why) = run_cell(
                    &server,
                    &mocks,
                    &key,
                    payer.id,
                    (inbound, stream, end),
                    want,
                )
                .await
                {
                    failures.push(format!("{inbound:?} stream={stream} {end:?}: {why}"));
                }
            }
        }
    }
    assert_eq!(
        ran, 70,
        "5 client/channel pairs × (8 stream + 6 non-stream endings)"
    );
    assert!(
        failures.is_empty(),
        "{} cells differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The one ending rule (P16 item 1): every upstream format × {its body ends without its end
/// marker, an in-band error then the end of the body, its end marker}, passed through (the
/// client speaks the upstream's format) and converted. Only the end marker makes an answer
/// `upstream`; anything else is `partial` / `upstream_cut` with completion = max(reported,
/// counted), and a converted stream then ends with the client format's error event, never a
/// made-up end marker.
mod one_rule {
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};

    use aws_smithy_eventstream::frame::write_message_to;
    use aws_smithy_types::event_stream::{Header, HeaderValue, Message};
    use serde_json::{Value, json};

    use super::common::mock_cloud::{Answer, MockCloud};
    use super::common::relay_fixture::{fixture, other, sse_events};
    use super::common::{ROOT_PASS, ROOT_USER, TestServer};
    use super::{LOG_CONSUME, rows};

    /// The mock's answers still to give: (content type, body).
    type Answers = VecDeque<(&'static str, Vec<u8>)>;

    /// An upstream format.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Up {
        OpenAi,
        Responses,
        Anthropic,
        Gemini,
        Converse,
        Cohere,
    }

    /// A client format.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Client {
        Chat,
        Responses,
        Anthropic,
        Gemini,
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum End {
        /// The body ends without the format's end marker.
        NoMarker,
        /// An in-band error event, then the body ends.
        ErrorThenEof,
        /// The end marker is read.
        Marker,
        /// OpenAI only: a usage chunk after a `finish_reason`, no `[DONE]` (complete).
        UsageAfterFinish,
    }

    fn sse(name: &str, data: &Value) -> Vec<u8> {
        super::sse_event(name, data).into_bytes()
    }

    #[expect(clippy::panic, reason = "a broken fixture must fail the test")]
    fn frame(kind: &str, name: &str, payload: &Value) -> Vec<u8> {
        let (type_header, message_type) = if kind == "event" {
            (":event-type", "event")
        } else {
            (":exception-type", "exception")
        };
        let message = Message::new(bytes::Bytes::from(payload.to_string()))
            .add_header(Header::new(
                ":message-type",
                HeaderValue::String(message_type.into()),
            ))
            .add_header(Header::new(
                type_header,
                HeaderValue::String(name.to_owned().into()),
            ))
            .add_header(Header::new(
                ":content-type",
                HeaderValue::String("application/json".into()),
            ));
        let mut out = Vec::new();
        write_message_to(&message, &mut out).unwrap_or_else(|e| panic!("frame: {e}"));
        out
    }

    /// The upstream's body: (head up to the first text "aaaa", its in-band error, the rest
    /// before the end marker — second text "bbbb", finish and usage 100 / 20 where the format
    /// carries them without its marker — and the end marker with what only it carries).
    fn parts(up: Up) -> [Vec<u8>; 4] {
        match up {
            Up::OpenAi => {
                let chunk = |choices: Value| {
                    sse(
                        "",
                        &json!({"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": choices}),
                    )
                };
                let text = |t: &str| chunk(json!([{"index": 0, "delta": {"content": t}}]));
                let usage = sse(
                    "",
                    &json!({"id": "c", "object": "chat.completion.chunk", "choices": [],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}),
                );
                [
                    text("aaaa"),
                    sse(
                        "",
                        &json!({"error": {"message": "overloaded", "type": "server_error"}}),
                    ),
                    [text("bbbb"), usage].concat(),
                    b"data: [DONE]\n\n".to_vec(),
                ]
            }
            Up::Responses => {
                let delta = |t: &str| {
                    sse(
                        "response.output_text.delta",
                        &json!({"type": "response.output_text.delta", "item_id": "m1", "output_index": 0,
                            "content_index": 0, "delta": t}),
                    )
                };
                let created = sse(
                    "response.created",
                    &json!({"type": "response.created", "response": {"id": "resp_1", "object": "response",
                        "status": "in_progress", "model": "m", "output": []}}),
                );
                [
                    [created, delta("aaaa")].concat(),
                    sse(
                        "error",
                        &json!({"type": "error", "code": "server_error", "message": "overloaded", "param": null}),
                    ),
                    delta("bbbb"),
                    sse(
                        "response.completed",
                        &json!({"type": "response.completed", "response": {"id": "resp_1", "object": "response",
                            "status": "completed", "model": "m", "output": [],
                            "usage": {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120}}}),
                    ),
                ]
            }
            Up::Anthropic => {
                let (head, rest) = super::stream_parts(super::Inbound::Anthropic);
                let marker = super::sse_event("message_stop", &json!({"type": "message_stop"}));
                let before = rest.trim_end_matches(&marker).to_owned();
                [
                    head.into_bytes(),
                    sse(
                        "error",
                        &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
                    ),
                    before.into_bytes(),
                    marker.into_bytes(),
                ]
            }
            Up::Gemini => {
                let chunk = |t: &str, finish: bool, completion: Option<i64>| {
                    let mut c = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": t}]}, "index": 0}],
                        "usageMetadata": {"promptTokenCount": 100, "totalTokenCount": 100}});
                    if finish {
                        c["candidates"][0]["finishReason"] = json!("STOP");
                    }
                    if let Some(n) = completion {
                        c["usageMetadata"] = json!({"promptTokenCount": 100, "candidatesTokenCount": n,
                            "totalTokenCount": 100 + n});
                    }
                    sse("", &c)
                };
                [
                    chunk("aaaa", false, None),
                    sse(
                        "",
                        &json!({"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}),
                    ),
                    chunk("bbbb", false, Some(20)),
                    // The finish reason with the usage (Gemini's last chunk carries both).
                    chunk("", true, Some(20)),
                ]
            }
            Up::Converse => {
                let delta = |t: &str| {
                    frame(
                        "event",
                        "contentBlockDelta",
                        &json!({"contentBlockIndex": 0, "delta": {"text": t}}),
                    )
                };
                let metadata = frame(
                    "event",
                    "metadata",
                    &json!({"usage": {"inputTokens": 100, "outputTokens": 20, "totalTokens": 120},
                        "metrics": {"latencyMs": 300}}),
                );
                [
                    [
                        frame("event", "messageStart", &json!({"role": "assistant"})),
                        delta("aaaa"),
                    ]
                    .concat(),
                    frame(
                        "exception",
                        "modelStreamErrorException",
                        &json!({"message": "overloaded"}),
                    ),
                    [
                        delta("bbbb"),
                        frame(
                            "event",
                            "contentBlockStop",
                            &json!({"contentBlockIndex": 0}),
                        ),
                    ]
                    .concat(),
                    // messageStop is the end; the metadata after it carries the usage (and
                    // without messageStop it is not an end).
                    [
                        frame("event", "messageStop", &json!({"stopReason": "end_turn"})),
                        metadata,
                    ]
                    .concat(),
                ]
            }
            Up::Cohere => {
                let delta = |t: &str| {
                    sse(
                        "content-delta",
                        &json!({"type": "content-delta", "index": 0,
                            "delta": {"message": {"content": {"text": t}}}}),
                    )
                };
                [
                    [
                        sse(
                            "message-start",
                            &json!({"type": "message-start", "id": "co-1",
                                "delta": {"message": {"role": "assistant"}}}),
                        ),
                        delta("aaaa"),
                    ]
                    .concat(),
                    Vec::new(),
                    [
                        delta("bbbb"),
                        sse("content-end", &json!({"type": "content-end", "index": 0})),
                    ]
                    .concat(),
                    sse(
                        "message-end",
                        &json!({"type": "message-end", "delta": {"finish_reason": "COMPLETE",
                            "usage": {"billed_units": {"input_tokens": 100, "output_tokens": 20},
                                "tokens": {"input_tokens": 100, "output_tokens": 20}}}}),
                    ),
                ]
            }
        }
    }

    /// The upstream body of one cell (`None`: the format has no such ending).
    fn body(up: Up, end: End) -> Option<Vec<u8>> {
        let [head, error, rest, marker] = parts(up);
        Some(match end {
            End::NoMarker => [head, rest].concat(),
            End::ErrorThenEof if error.is_empty() => return None,
            End::ErrorThenEof => [head, error].concat(),
            End::Marker => [head, rest, marker].concat(),
            End::UsageAfterFinish if up == Up::OpenAi => {
                let finish = sse(
                    "",
                    &json!({"id": "c", "object": "chat.completion.chunk", "choices": [
                        {"index": 0, "delta": {}, "finish_reason": "stop"}]}),
                );
                // head, "bbbb", the finish chunk, then the usage chunk: no [DONE].
                let [_, _, text_and_usage, _] = parts(Up::OpenAi);
                let text = super::sse_event(
                    "",
                    &json!({"id": "c", "object": "chat.completion.chunk", "model": "m",
                        "choices": [{"index": 0, "delta": {"content": "bbbb"}}]}),
                );
                let usage = text_and_usage[text.len()..].to_vec();
                [head, text.into_bytes(), finish, usage].concat()
            }
            End::UsageAfterFinish => return None,
        })
    }

    fn request(
        server: &TestServer,
        key: &str,
        client: Client,
        model: &str,
    ) -> reqwest::RequestBuilder {
        let c = &server.client;
        let messages = json!([{"role": "user", "content": "hi"}]);
        match client {
            Client::Chat => c
                .post(server.url("/v1/chat/completions"))
                .bearer_auth(key)
                .json(&json!({"model": model, "stream": true, "messages": messages})),
            Client::Responses => c
                .post(server.url("/v1/responses"))
                .bearer_auth(key)
                .json(&json!({"model": model, "stream": true, "input": "hi"})),
            Client::Anthropic => c
                .post(server.url("/v1/messages"))
                .header("x-api-key", key)
                .json(&json!({"model": model, "max_tokens": 50, "stream": true, "messages": messages})),
            Client::Gemini => c
                .post(server.url(&format!(
                    "/v1beta/models/{model}:streamGenerateContent?alt=sse"
                )))
                .header("x-goog-api-key", key)
                .json(&json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})),
        }
    }

    /// Whether the client's body ends as a cut converted stream must: with the client
    /// format's error event last, and no end marker of its format anywhere.
    fn ends_with_error(client: Client, text: &str) -> bool {
        let events = sse_events(text);
        let Some((name, data)) = events.last() else {
            return false;
        };
        match client {
            Client::Chat => data.get("error").is_some() && !text.contains("[DONE]"),
            Client::Gemini => data.get("error").is_some() && !text.contains("finishReason"),
            Client::Anthropic => name == "error" && !text.contains("message_stop"),
            Client::Responses => name == "error" && !text.contains("response.completed"),
        }
    }

    /// Whether the client's body ends with its format's end marker.
    fn ends_complete(client: Client, text: &str) -> bool {
        match client {
            Client::Chat => text.contains("data: [DONE]"),
            Client::Gemini => text.contains("finishReason"),
            Client::Anthropic => text.contains("event: message_stop"),
            Client::Responses => text.contains("event: response.completed"),
        }
    }

    /// Whether the upstream reports usage 100 / 20 before its end marker in `NoMarker`.
    fn reports_without_marker(up: Up) -> bool {
        matches!(up, Up::OpenAi | Up::Anthropic | Up::Gemini)
    }

    /// Whether the upstream reported the prompt (100) before the first text.
    fn reports_prompt_first(up: Up) -> bool {
        matches!(up, Up::Anthropic | Up::Gemini)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_answer_is_complete_only_when_its_formats_end_was_read() {
        let queue: Arc<Mutex<Answers>> = Arc::default();
        let answers = Arc::clone(&queue);
        let mock = MockCloud::start(move |_| match answers.lock().expect("lock").pop_front() {
            Some((kind, bytes)) => Answer::Chunks(kind, vec![bytes]),
            None => Answer::Json(500, json!({"error": {"message": "no answer scripted"}})),
        })
        .await;
        let server = TestServer::start().await;
        let base = &mock.base;
        let channels = [
            json!({"name": "oa", "type": 1, "key": "k-oa", "base_url": base, "models": "oa-test", "group": "default"}),
            json!({"name": "resp", "type": 8, "key": "k-resp", "base_url": base, "models": "resp-test",
                "group": "default", "setting": r#"{"upstream_api": "responses"}"#}),
            json!({"name": "claude", "type": 14, "key": "k-claude", "base_url": base, "models": "claude-test", "group": "default"}),
            json!({"name": "gemini", "type": 24, "key": "k-gemini", "base_url": base, "models": "gemini-test", "group": "default"}),
            json!({"name": "bedrock", "type": 33, "key": "ABSKQmVkcm9ja0FQSUtleS1leGFtcGxl|us-east-1",
                "base_url": base, "models": "nova-test", "group": "default"}),
            json!({"name": "cohere", "type": 34, "key": "k-cohere", "base_url": base, "models": "command-test", "group": "default"}),
        ];
        let (_, payer, key) = fixture(&server, &channels, 100_000_000, 50_000_000).await;
        let root = server.client_for(ROOT_USER, ROOT_PASS).await;
        let all = [
            "oa-test",
            "resp-test",
            "claude-test",
            "gemini-test",
            "nova-test",
            "command-test",
        ];
        let ratios = |r: i64| {
            let map: serde_json::Map<String, Value> =
                all.iter().map(|m| ((*m).to_owned(), json!(r))).collect();
            json!(Value::Object(map).to_string())
        };
        server.set_option(&root, "ModelRatio", ratios(1)).await;
        server.set_option(&root, "CompletionRatio", ratios(2)).await;
        server
            .set_option(&root, "AutomaticDisableChannelEnabled", json!("false"))
            .await;

        // (client, upstream format, model, passed through)
        let cells = [
            (Client::Chat, Up::OpenAi, "oa-test", true),
            (Client::Responses, Up::Responses, "oa-test", true),
            (Client::Anthropic, Up::Anthropic, "claude-test", true),
            (Client::Gemini, Up::Gemini, "gemini-test", true),
            (Client::Chat, Up::Anthropic, "claude-test", false),
            (Client::Anthropic, Up::OpenAi, "oa-test", false),
            (Client::Chat, Up::Gemini, "gemini-test", false),
            (Client::Chat, Up::Responses, "resp-test", false),
            (Client::Chat, Up::Converse, "nova-test", false),
            (Client::Chat, Up::Cohere, "command-test", false),
            (Client::Responses, Up::Anthropic, "claude-test", false),
            (Client::Gemini, Up::Anthropic, "claude-test", false),
        ];
        let mut failures = Vec::new();
        let mut ran = 0;
        for (client, up, model_name, through) in cells {
            for end in [
                End::NoMarker,
                End::ErrorThenEof,
                End::Marker,
                End::UsageAfterFinish,
            ] {
                let Some(bytes) = body(up, end) else { continue };
                ran += 1;
                let kind = if up == Up::Converse {
                    "application/vnd.amazon.eventstream"
                } else {
                    "text/event-stream"
                };
                queue.lock().expect("lock").push_back((kind, bytes));
                let (quota_before, before) = rows(&server, payer.id).await;
                let resp = request(&server, &key, client, model_name)
                    .send()
                    .await
                    .expect("sent");
                let status = resp.status().as_u16();
                let text = resp.text().await.unwrap_or_default();
                let Some((quota, row)) = super::next_row(&server, payer.id, before.len()).await
                else {
                    failures.push(format!(
                        "{client:?}←{up:?} {end:?}: no row (status {status})"
                    ));
                    continue;
                };
                let o = other(&row);
                let source = o["usage_source"].as_str().unwrap_or_default().to_owned();
                let reason = o["partial_reason"].as_str().unwrap_or_default().to_owned();
                let (p, c) = (row.prompt_tokens, row.completion_tokens);
                let mut why = Vec::new();
                if row.log_type != LOG_CONSUME || status != 200 {
                    why.push(format!("type {} status {status}", row.log_type));
                }
                if quota_before - quota != p + 2 * c || row.quota != p + 2 * c {
                    why.push(format!(
                        "charged {} for {p} + 2 × {c}",
                        quota_before - quota
                    ));
                }
                let complete = matches!(end, End::Marker | End::UsageAfterFinish);
                if complete {
                    if (source.as_str(), p, c) != ("upstream", 100, 20) {
                        why.push(format!(
                            "want upstream 100/20, got {source} {reason} {p}/{c}"
                        ));
                    }
                    if !through && !ends_complete(client, &text) {
                        why.push("the converted stream lacks its end marker".into());
                    }
                } else {
                    if (source.as_str(), reason.as_str()) != ("partial", "upstream_cut") {
                        why.push(format!("want partial/upstream_cut, got {source}/{reason}"));
                    }
                    let (want_p, want_c) = match end {
                        End::NoMarker if reports_without_marker(up) => (Some(100), Some(20)),
                        End::ErrorThenEof if reports_prompt_first(up) => (Some(100), None),
                        _ => (None, None),
                    };
                    if want_p.is_some_and(|w| w != p) || p <= 0 {
                        why.push(format!("prompt {p}, want {want_p:?}"));
                    }
                    if want_c.is_some_and(|w| w != c) || c < 1 {
                        why.push(format!(
                            "completion {c}, want {want_c:?} (at least the count)"
                        ));
                    }
                    if !through && !ends_with_error(client, &text) {
                        why.push(format!(
                            "the converted stream must end with an error event: {text}"
                        ));
                    }
                }
                if !why.is_empty() {
                    failures.push(format!("{client:?}←{up:?} {end:?}: {}", why.join("; ")));
                }
            }
        }
        // 12 cells × 3 endings, less Cohere's in-band error (its stream has no error event), plus
        // the two OpenAI upstreams' usage after a finish reason.
        assert_eq!(ran, 12 * 3 - 1 + 2, "every cell ran");
        assert!(
            failures.is_empty(),
            "{} cells differ:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}
