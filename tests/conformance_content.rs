//! Content beyond text across formats (#19 P7a, coding-agent traffic): documents (PDFs) and
//! audio from every client format reach each upstream in that upstream's own form, or are
//! refused with a 400 naming the part — never dropped on the way. Through the public HTTP API
//! against the conformance matrix's mock of the nine upstreams
//! (tests/common/conformance_upstreams.rs), asserting the upstream request, the client's answer
//! and the bill.
//!
//! Formats, as documented:
//! - OpenAI chat content parts `file` (`file_data` a data URL, `filename`) and `input_audio`
//!   (`data`, `format` wav | mp3): https://platform.openai.com/docs/api-reference/chat/create
//! - Responses `input_file` (`file_data`, `filename`):
//!   https://platform.openai.com/docs/api-reference/responses/create
//! - Anthropic `document` blocks (base64 PDF source, `title`):
//!   https://docs.anthropic.com/en/docs/build-with-claude/pdf-support
//! - Gemini `inlineData` (`mimeType`, `data`): https://ai.google.dev/api/caching#Blob, PDFs
//!   https://ai.google.dev/gemini-api/docs/document-processing, audio
//!   https://ai.google.dev/gemini-api/docs/audio
//! - Bedrock Converse DocumentBlock (`format` pdf | csv | doc | docx | xls | xlsx | html | txt |
//!   md; `name` of alphanumerics, single whitespace, hyphens, parentheses and square brackets;
//!   `source.bytes`): https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_DocumentBlock.html
//! - Cohere chat v2: user content is text and `image_url` only; `documents` are text for
//!   citations (https://docs.cohere.com/v2/reference/chat), so a PDF cannot be sent.

#![expect(clippy::expect_used, reason = "test helpers fail the test loudly")]

mod common;
#[expect(
    dead_code,
    reason = "the matrix's mock is shared; this file uses part of it"
)]
#[path = "common/conformance_upstreams.rs"]
mod upstreams;

use std::sync::{Arc, Mutex};

use base64::Engine;
use common::TestServer;
use common::mock_cloud::{Answer, MockCloud, Recorded, sse};
use common::relay_fixture::sse_events;
use common::relay_fixture::{balances, fixture, raw};
use reqwest::StatusCode;
use serde_json::{Value, json};
use upstreams::{COMPLETION, PROMPT, SIGNATURE, TEXT, THINKING, UPSTREAMS, Upstream, find};

/// A tiny PDF, base64 (`%PDF-1.4` …).
const PDF: &str = "JVBERi0xLjQKMSAwIG9iago8PD4+CmVuZG9iagp0cmFpbGVyCjw8Pj4KJSVFT0YK";
/// A few bytes of WAV audio, base64 (`RIFF` …).
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";
/// The prompt: the mock answers plain text to it.
const PROMPT_TEXT: &str = "scenario-text: summarise the attachment";

/// The client formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Client {
    Chat,
    Responses,
    Messages,
    Gemini,
}

const CLIENTS: [Client; 4] = [
    Client::Chat,
    Client::Responses,
    Client::Messages,
    Client::Gemini,
];

impl Client {
    /// The client's request with the prompt and `part` (in the client's own format).
    fn request(
        self,
        server: &TestServer,
        key: &str,
        model: &str,
        part: Value,
        stream: bool,
    ) -> reqwest::RequestBuilder {
        let client = &server.client;
        match self {
            Client::Chat => client
                .post(server.url("/v1/chat/completions"))
                .bearer_auth(key)
                .json(&json!({"model": model, "max_tokens": 256, "stream": stream,
                    "messages": [{"role": "user", "content": [
                        {"type": "text", "text": PROMPT_TEXT}, part]}]})),
            Client::Responses => client
                .post(server.url("/v1/responses"))
                .bearer_auth(key)
                .json(
                    &json!({"model": model, "max_output_tokens": 256, "stream": stream,
                    "input": [{"role": "user", "content": [
                        {"type": "input_text", "text": PROMPT_TEXT}, part]}]}),
                ),
            Client::Messages => client
                .post(server.url("/v1/messages"))
                .header("x-api-key", key)
                .header("anthropic-version", "2023-06-01")
                .json(&json!({"model": model, "max_tokens": 256, "stream": stream,
                    "messages": [{"role": "user", "content": [
                        part, {"type": "text", "text": PROMPT_TEXT}]}]})),
            Client::Gemini => {
                let path = if stream {
                    format!("/v1beta/models/{model}:streamGenerateContent?alt=sse")
                } else {
                    format!("/v1beta/models/{model}:generateContent")
                };
                client
                    .post(server.url(&path))
                    .header("x-goog-api-key", key)
                    .json(&json!({"contents": [{"role": "user", "parts": [
                        {"text": PROMPT_TEXT}, part]}]}))
            }
        }
    }

    /// A PDF named "Q3 report.pdf" (Gemini's inline data has no name) in this format.
    fn pdf(self) -> Value {
        match self {
            Client::Chat => json!({"type": "file", "file": {"filename": "Q3 report.pdf",
                "file_data": format!("data:application/pdf;base64,{PDF}")}}),
            Client::Responses => json!({"type": "input_file", "filename": "Q3 report.pdf",
                "file_data": format!("data:application/pdf;base64,{PDF}")}),
            Client::Messages => json!({"type": "document", "title": "Q3 report.pdf",
                "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}}),
            Client::Gemini => json!({"inlineData": {"mimeType": "application/pdf", "data": PDF}}),
        }
    }

    /// Whether the answer (whole or SSE) carries the mock's text.
    fn answered(self, text: &str) -> bool {
        // Streams split the text in two ("Hi " + "there"); either way both halves are there.
        match self {
            Client::Chat | Client::Responses | Client::Messages | Client::Gemini => {
                text.contains(TEXT) || (text.contains("Hi ") && text.contains("there"))
            }
        }
    }
}

/// A server with the nine upstreams of the matrix, each at ratio 1 / completion 2.
async fn start() -> (MockCloud, TestServer, i64, String) {
    start_with(upstreams::answer).await
}

/// [`start`] with the mock answering through `handler`.
async fn start_with(
    handler: impl Fn(&Recorded) -> Answer + Send + Sync + 'static,
) -> (MockCloud, TestServer, i64, String) {
    start_tuned(handler, |_| {}).await
}

/// [`start_with`] with the server's configuration tuned.
async fn start_tuned(
    handler: impl Fn(&Recorded) -> Answer + Send + Sync + 'static,
    tune: impl FnOnce(&mut tollgate::config::Config),
) -> (MockCloud, TestServer, i64, String) {
    let mock = MockCloud::start(handler).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let server = TestServer::start_with(dir, tune).await;
    let channels: Vec<Value> = UPSTREAMS.iter().map(|u| u.channel(&mock.base)).collect();
    let (root, payer, key) = fixture(&server, &channels, 10_000_000, 5_000_000).await;
    let ratios = |v: i64| {
        let map: serde_json::Map<String, Value> = UPSTREAMS
            .iter()
            .map(|u| (u.model().to_owned(), json!(v)))
            .collect();
        json!(Value::Object(map).to_string())
    };
    server.set_option(&root, "ModelRatio", ratios(1)).await;
    server.set_option(&root, "CompletionRatio", ratios(2)).await;
    // Audio input needs its price (P16 item 2), or admission refuses it before the converter.
    server.set_option(&root, "AudioRatio", ratios(1)).await;
    (mock, server, payer.id, key)
}

/// Sends one request; checks it reached the upstream once and was answered and billed like
/// any other; returns the body the upstream got.
async fn relayed(
    server: &TestServer,
    mock: &MockCloud,
    payer: i64,
    req: reqwest::RequestBuilder,
    client: Client,
) -> Result<Value, String> {
    let (quota_before, _, _, _) = balances(server, payer).await;
    let before = mock.requests().len();
    let (status, _, text) = raw(req).await;
    if status != StatusCode::OK {
        return Err(format!("status {status}: {text}"));
    }
    let calls: Vec<_> = mock.requests()[before..]
        .iter()
        .filter(|r| r.path != "/token")
        .cloned()
        .collect();
    let [call] = calls.as_slice() else {
        return Err(format!("{} upstream calls, expected 1", calls.len()));
    };
    if !client.answered(&text) {
        return Err(format!("answer without the upstream's text: {text}"));
    }
    let (quota, _, _, _) = balances(server, payer).await;
    if quota_before - quota != PROMPT + 2 * COMPLETION {
        return Err(format!("billed {}", quota_before - quota));
    }
    Ok(call.json())
}

/// Sends one request that must be refused: a 400 whose message has every piece of `names`, no
/// upstream call, nothing billed.
async fn refused(
    server: &TestServer,
    mock: &MockCloud,
    payer: i64,
    req: reqwest::RequestBuilder,
    names: &[&str],
) -> Result<(), String> {
    let (quota_before, _, count_before, _) = balances(server, payer).await;
    let before = mock.requests().len();
    let (status, _, text) = raw(req).await;
    let calls = mock.requests().len() - before;
    let (quota, _, count, _) = balances(server, payer).await;
    if status != StatusCode::BAD_REQUEST || names.iter().any(|n| !text.contains(n)) {
        return Err(format!(
            "expected a 400 naming {names:?}, got {status}: {text}"
        ));
    }
    if calls != 0 {
        return Err(format!("{calls} upstream calls for a refused request"));
    }
    if quota != quota_before || count != count_before {
        return Err("a refused request was billed".into());
    }
    Ok(())
}

fn report(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} cells failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Item 2: a PDF from every client format reaches a non-Claude Bedrock model as a Converse
/// `document` block: format `pdf`, a name of the characters DocumentBlock allows (the client's
/// file name without its extension; "document" when it has none), the bytes.
#[tokio::test]
async fn pdfs_from_every_client_format_reach_converse_as_document_blocks() {
    let (mock, server, payer, key) = start().await;
    let model = Upstream::BedrockConverse.model();
    let mut failures = Vec::new();
    for client in CLIENTS {
        for stream in [false, true] {
            let req = client.request(&server, &key, model, client.pdf(), stream);
            let name = if client == Client::Gemini {
                "document"
            } else {
                "Q3 report"
            };
            let result = relayed(&server, &mock, payer, req, client)
                .await
                .and_then(|sent| {
                    let expected = json!({"document": {"format": "pdf", "name": name,
                        "source": {"bytes": PDF}}});
                    if find(&sent["messages"], &|v| v == &expected) {
                        Ok(())
                    } else {
                        Err(format!("no {expected} in the Converse body {sent}"))
                    }
                });
            if let Err(e) = result {
                failures.push(format!("{client:?} → Converse, stream {stream}: {e}"));
            }
        }
    }
    report(&failures);
}

/// Item 1: Cohere's chat takes only text and images, so a PDF from any client format is refused
/// with a 400 naming the part, before anything is sent or billed; so is audio, for every
/// upstream that takes none.
#[tokio::test]
async fn cohere_refuses_pdfs_by_name_and_audio_is_refused_where_no_audio_is_taken() {
    let (mock, server, payer, key) = start().await;
    let mut failures = Vec::new();
    let cohere = Upstream::Cohere.model();
    for client in CLIENTS {
        let req = client.request(&server, &key, cohere, client.pdf(), false);
        // Gemini's inline data has no name: a PDF is called document.pdf.
        let named = if client == Client::Gemini {
            "a file part (\\\"document.pdf\\\", application/pdf)"
        } else {
            "a file part (\\\"Q3 report.pdf\\\", application/pdf)"
        };
        if let Err(e) = refused(
            &server,
            &mock,
            payer,
            req,
            &[named, "cannot be sent to a Cohere model"],
        )
        .await
        {
            failures.push(format!("{client:?} PDF → Cohere: {e}"));
        }
    }
    let audio = json!({"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}});
    for upstream in [
        Upstream::Cohere,
        Upstream::Claude,
        Upstream::BedrockConverse,
    ] {
        let req = Client::Chat.request(&server, &key, upstream.model(), audio.clone(), false);
        if let Err(e) = refused(
            &server,
            &mock,
            payer,
            req,
            &["an input_audio part (wav)", "takes no audio input"],
        )
        .await
        {
            failures.push(format!("Chat audio → {upstream:?}: {e}"));
        }
    }
    report(&failures);
}

/// Item 1's faithful mappings: a PDF from an OpenAI client reaches Claude as a `document`
/// block; audio crosses between OpenAI's `input_audio` and Gemini's inline data both ways; an
/// Anthropic document given by Files API id (no bytes to send) is refused by name for every
/// upstream that is not Claude.
#[tokio::test]
async fn documents_and_audio_cross_formats_faithfully_or_are_refused_by_name() {
    let (mock, server, payer, key) = start().await;
    let mut failures = Vec::new();
    let mut cell = |name: &str, result: Result<(), String>| {
        if let Err(e) = result {
            failures.push(format!("{name}: {e}"));
        }
    };
    let check = |sent: &Value, expected: &Value| {
        if find(sent, &|v| v == expected) {
            Ok(())
        } else {
            Err(format!("no {expected} in the upstream body {sent}"))
        }
    };

    let req = Client::Chat.request(
        &server,
        &key,
        Upstream::Claude.model(),
        Client::Chat.pdf(),
        false,
    );
    let result = relayed(&server, &mock, payer, req, Client::Chat).await;
    cell(
        "Chat PDF → Claude",
        result.and_then(|sent| {
            check(
                &sent,
                &json!({"type": "document", "title": "Q3 report.pdf", "source": {
                    "type": "base64", "media_type": "application/pdf", "data": PDF}}),
            )
        }),
    );

    let audio = json!({"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}});
    let req = Client::Chat.request(&server, &key, Upstream::Gemini.model(), audio, true);
    let result = relayed(&server, &mock, payer, req, Client::Chat).await;
    cell(
        "Chat audio → Gemini",
        result.and_then(|sent| {
            check(
                &sent,
                &json!({"inlineData": {"mimeType": "audio/wav", "data": WAV}}),
            )
        }),
    );

    let mp3 = json!({"inlineData": {"mimeType": "audio/mp3", "data": WAV}});
    let req = Client::Gemini.request(&server, &key, Upstream::OpenAi.model(), mp3, false);
    let result = relayed(&server, &mock, payer, req, Client::Gemini).await;
    cell(
        "Gemini audio → OpenAI",
        result.and_then(|sent| {
            check(
                &sent,
                &json!({"type": "input_audio", "input_audio": {"data": WAV, "format": "mp3"}}),
            )
        }),
    );

    let by_id = json!({"type": "document", "source": {"type": "file", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"}});
    for upstream in [
        Upstream::OpenAi,
        Upstream::Gemini,
        Upstream::BedrockConverse,
        Upstream::Cohere,
    ] {
        let req = Client::Messages.request(&server, &key, upstream.model(), by_id.clone(), false);
        cell(
            &format!("Messages document by file id → {upstream:?}"),
            refused(
                &server,
                &mock,
                payer,
                req,
                &["a document given by Files API id (file_011CNha8iCJcU1wXNR6q4V8w)"],
            )
            .await,
        );
    }
    report(&failures);
}

// ---- item 4: thinking signatures across formats ----

/// The marker of the turns the signing mock answers.
const SIGNED: &str = "scenario-signed: what is the weather in Paris?";
/// A redacted thinking block's data (opaque base64).
const REDACTED: &str = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP";
/// Gemini's thought signature of a function call.
const GEMINI_SIGNATURE: &str = "CiQB0e2Kb8SigNedByGemini/Ab1ZZ=";

/// The conformance mock, except that a turn with [`SIGNED`] gets a signed answer: Converse
/// answers signed thinking, redacted thinking and a tool call (ReasoningContentBlock,
/// https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ReasoningContentBlock.html;
/// the stream's ReasoningContentBlockDelta `text` | `signature` | `redactedContent`,
/// https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ReasoningContentBlockDelta.html),
/// Gemini a function call with its `thoughtSignature`
/// (https://ai.google.dev/gemini-api/docs/thought-signatures).
fn signing(req: &Recorded) -> Answer {
    if !String::from_utf8_lossy(&req.body).contains("scenario-signed") {
        return upstreams::answer(req);
    }
    let usage = json!({"inputTokens": PROMPT, "outputTokens": COMPLETION,
        "totalTokens": PROMPT + COMPLETION});
    let call = json!({"toolUseId": "tooluse_signed_1", "name": "get_weather",
        "input": {"city": "Paris"}});
    let gemini_part = json!({"functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
        "thoughtSignature": GEMINI_SIGNATURE});
    let gemini = json!({"candidates": [{"content": {"role": "model", "parts": [gemini_part]},
            "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": PROMPT, "candidatesTokenCount": COMPLETION,
            "totalTokenCount": PROMPT + COMPLETION},
        "modelVersion": "gemini-3-pro-preview", "responseId": "signed"});
    match req.path.rsplit_once(['/', ':']).map(|(_, op)| op) {
        Some("converse") => Answer::Json(
            200,
            json!({"output": {"message": {"role": "assistant", "content": [
                {"reasoningContent": {"reasoningText": {"text": THINKING, "signature": SIGNATURE}}},
                {"reasoningContent": {"redactedContent": REDACTED}},
                {"toolUse": call}]}},
                "stopReason": "tool_use", "usage": usage, "metrics": {"latencyMs": 9}}),
        ),
        Some("converse-stream") => {
            let events = [
                ("messageStart", json!({"role": "assistant"})),
                (
                    "contentBlockDelta",
                    json!({"contentBlockIndex": 0,
                    "delta": {"reasoningContent": {"text": THINKING}}}),
                ),
                (
                    "contentBlockDelta",
                    json!({"contentBlockIndex": 0,
                    "delta": {"reasoningContent": {"signature": SIGNATURE}}}),
                ),
                ("contentBlockStop", json!({"contentBlockIndex": 0})),
                (
                    "contentBlockDelta",
                    json!({"contentBlockIndex": 1,
                    "delta": {"reasoningContent": {"redactedContent": REDACTED}}}),
                ),
                ("contentBlockStop", json!({"contentBlockIndex": 1})),
                (
                    "contentBlockStart",
                    json!({"contentBlockIndex": 2, "start": {"toolUse":
                    {"toolUseId": "tooluse_signed_1", "name": "get_weather"}}}),
                ),
                (
                    "contentBlockDelta",
                    json!({"contentBlockIndex": 2,
                    "delta": {"toolUse": {"input": "{\"city\": \"Paris\"}"}}}),
                ),
                ("contentBlockStop", json!({"contentBlockIndex": 2})),
                ("messageStop", json!({"stopReason": "tool_use"})),
                (
                    "metadata",
                    json!({"usage": usage, "metrics": {"latencyMs": 9}}),
                ),
            ];
            Answer::Chunks(
                "application/vnd.amazon.eventstream",
                events
                    .iter()
                    .map(|(name, payload)| upstreams::aws_frame(name, payload))
                    .collect(),
            )
        }
        Some("generateContent") => Answer::Json(200, gemini),
        Some("streamGenerateContent") => {
            Answer::Chunks("text/event-stream", vec![sse(&[("", gemini)])])
        }
        _ => upstreams::answer(req),
    }
}

/// Item 4: an Anthropic client on a non-Claude Bedrock model (Converse) gets the thinking with
/// its signature and the redacted thinking, whole and streamed, and its next turn gives them
/// back to Converse as they were; an OpenAI client gets them in the hub's `thinking_blocks`
/// and gives them back the same way; unsigned reasoning is left out of the next turn (Converse
/// cannot check it).
#[tokio::test]
async fn thinking_signatures_go_to_anthropic_and_openai_clients_and_back_to_converse() {
    let (mock, server, _payer, key) = start_with(signing).await;
    let model = Upstream::BedrockConverse.model();
    let mut failures = Vec::new();
    let tools = json!([{"name": "get_weather", "description": "The weather of a city",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]);
    for stream in [false, true] {
        let req = server
            .client
            .post(server.url("/v1/messages"))
            .header("x-api-key", &key)
            .header("anthropic-version", "2023-06-01")
            .json(
                &json!({"model": model, "max_tokens": 2048, "stream": stream,
                "thinking": {"type": "enabled", "budget_tokens": 1024}, "tools": tools,
                "messages": [{"role": "user", "content": SIGNED}]}),
            );
        let (status, _, text) = raw(req).await;
        let blocks: Vec<Value> = if stream {
            // The blocks as the stream builds them: start, then deltas.
            let mut blocks: Vec<Value> = Vec::new();
            for (name, event) in sse_events(&text) {
                match name.as_str() {
                    "content_block_start" => blocks.push(event["content_block"].clone()),
                    "content_block_delta" => {
                        let (Some(block), delta) = (blocks.last_mut(), &event["delta"]) else {
                            continue;
                        };
                        for (field, kind) in [
                            ("thinking", "thinking_delta"),
                            ("signature", "signature_delta"),
                        ] {
                            if delta["type"] == kind {
                                let so_far = block[field].as_str().unwrap_or_default().to_owned();
                                block[field] =
                                    json!(so_far + delta[field].as_str().unwrap_or_default());
                            }
                        }
                    }
                    _ => {}
                }
            }
            blocks
        } else {
            serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v["content"].as_array().cloned())
                .unwrap_or_default()
        };
        let kinds: Vec<&str> = blocks.iter().filter_map(|b| b["type"].as_str()).collect();
        let ok = status == StatusCode::OK
            && kinds == ["thinking", "redacted_thinking", "tool_use"]
            && blocks[0]["thinking"] == THINKING
            && blocks[0]["signature"] == SIGNATURE
            && blocks[1]["data"] == REDACTED;
        if !ok {
            failures.push(format!(
                "Messages ← Converse, stream {stream}: {status} {kinds:?}: {text}"
            ));
        }
    }

    // The next turn: the history as the Anthropic client keeps it.
    let expected_assistant = json!([
        {"reasoningContent": {"reasoningText": {"text": THINKING, "signature": SIGNATURE}}},
        {"reasoningContent": {"redactedContent": REDACTED}},
        {"toolUse": {"toolUseId": "tooluse_signed_1", "name": "get_weather",
            "input": {"city": "Paris"}}}]);
    let history = json!([
        {"role": "user", "content": SIGNED},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": THINKING, "signature": SIGNATURE},
            {"type": "redacted_thinking", "data": REDACTED},
            {"type": "tool_use", "id": "tooluse_signed_1", "name": "get_weather",
                "input": {"city": "Paris"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tooluse_signed_1",
            "content": "sunny"}]}]);
    let before = mock.requests().len();
    let (status, _, text) = raw(server
        .client
        .post(server.url("/v1/messages"))
        .header("x-api-key", &key)
        .header("anthropic-version", "2023-06-01")
        .json(&json!({"model": model, "max_tokens": 2048, "tools": tools,
            "thinking": {"type": "enabled", "budget_tokens": 1024}, "messages": history})))
    .await;
    let sent = mock.requests().get(before).map(|r| r.json());
    let assistant = sent.as_ref().map(|b| b["messages"][1].clone());
    if status != StatusCode::OK
        || assistant.as_ref().map(|a| &a["content"]) != Some(&expected_assistant)
    {
        failures.push(format!(
            "Messages next turn → Converse: {status} {text}; the assistant turn sent: {assistant:?}"
        ));
    }

    // An OpenAI client: the whole answer's thinking_blocks, given back in the next turn.
    let (status, _, text) = raw(server
        .client
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(&key)
        .json(&json!({"model": model, "messages": [{"role": "user", "content": SIGNED}]})))
    .await;
    let message = serde_json::from_str::<Value>(&text)
        .map(|v| v["choices"][0]["message"].clone())
        .unwrap_or_default();
    let expected_blocks = json!([
        {"type": "thinking", "thinking": THINKING, "signature": SIGNATURE},
        {"type": "redacted_thinking", "data": REDACTED}]);
    if status != StatusCode::OK || message["thinking_blocks"] != expected_blocks {
        failures.push(format!("Chat ← Converse: {status} {text}"));
    }
    for (label, extra, expected) in [
        (
            "signed",
            json!({"thinking_blocks": expected_blocks, "reasoning_content": THINKING}),
            expected_assistant.clone(),
        ),
        (
            "unsigned reasoning only",
            json!({"reasoning_content": THINKING}),
            json!([expected_assistant[2]]),
        ),
    ] {
        let mut assistant = json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "tooluse_signed_1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]});
        if let (Some(a), Some(e)) = (assistant.as_object_mut(), extra.as_object()) {
            a.extend(e.clone());
        }
        let before = mock.requests().len();
        let (status, _, text) = raw(server
            .client
            .post(server.url("/v1/chat/completions"))
            .bearer_auth(&key)
            .json(&json!({"model": model, "messages": [
                {"role": "user", "content": SIGNED}, assistant,
                {"role": "tool", "tool_call_id": "tooluse_signed_1", "content": "sunny"}]})))
        .await;
        let sent = mock.requests().get(before).map(|r| r.json());
        let content = sent.as_ref().map(|b| b["messages"][1]["content"].clone());
        if status != StatusCode::OK || content.as_ref() != Some(&expected) {
            failures.push(format!(
                "Chat next turn ({label}) → Converse: {status} {text}; sent {content:?}"
            ));
        }
    }
    report(&failures);
}

/// Item 4 for Gemini: an OpenAI client on a Gemini upstream gets a function call's
/// `thoughtSignature` in `extra_content.google.thought_signature` (where Gemini's own
/// OpenAI-compatible API puts it, https://ai.google.dev/gemini-api/docs/thought-signatures),
/// whole and streamed, and its next turn gives it back on the function call part.
#[tokio::test]
async fn gemini_thought_signatures_reach_openai_clients_and_come_back() {
    let (mock, server, _payer, key) = start_with(signing).await;
    let mut failures = Vec::new();
    let tools = json!([{"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]);
    for upstream in [Upstream::Gemini, Upstream::VertexGemini] {
        for stream in [false, true] {
            let (status, _, text) = raw(server
                .client
                .post(server.url("/v1/chat/completions"))
                .bearer_auth(&key)
                .json(
                    &json!({"model": upstream.model(), "stream": stream, "tools": tools,
                    "messages": [{"role": "user", "content": SIGNED}]}),
                ))
            .await;
            let signature = if stream {
                sse_events(&text)
                    .iter()
                    .find_map(|(_, c)| {
                        c["choices"][0]["delta"]["tool_calls"][0]["extra_content"]["google"]
                            ["thought_signature"]
                            .as_str()
                            .map(str::to_owned)
                    })
                    .unwrap_or_default()
            } else {
                serde_json::from_str::<Value>(&text)
                    .ok()
                    .and_then(|v| {
                        v["choices"][0]["message"]["tool_calls"][0]["extra_content"]["google"]
                            ["thought_signature"]
                            .as_str()
                            .map(str::to_owned)
                    })
                    .unwrap_or_default()
            };
            if status != StatusCode::OK || signature != GEMINI_SIGNATURE {
                failures.push(format!(
                    "Chat ← {upstream:?}, stream {stream}: {status} {text}"
                ));
            }
        }
        let before = mock.requests().len();
        let (status, _, text) = raw(server
            .client
            .post(server.url("/v1/chat/completions"))
            .bearer_auth(&key)
            .json(
                &json!({"model": upstream.model(), "tools": tools, "messages": [
                {"role": "user", "content": SIGNED},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "call_0",
                    "type": "function", "function": {"name": "get_weather",
                        "arguments": "{\"city\":\"Paris\"}"},
                    "extra_content": {"google": {"thought_signature": GEMINI_SIGNATURE}}}]},
                {"role": "tool", "tool_call_id": "call_0", "content": "{\"sky\":\"sunny\"}"}]}),
            ))
        .await;
        let sent = mock
            .requests()
            .get(before..)
            .and_then(|r| r.iter().find(|r| r.path != "/token").map(|r| r.json()));
        let part = sent.as_ref().map(|b| b["contents"][1]["parts"][0].clone());
        let expected = json!({"functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
            "thoughtSignature": GEMINI_SIGNATURE});
        if status != StatusCode::OK || part.as_ref() != Some(&expected) {
            failures.push(format!(
                "Chat next turn → {upstream:?}: {status} {text}; the model turn sent: {part:?}"
            ));
        }
    }
    report(&failures);
}

// ---- item 3: documents named by URL ----

/// The document server: the paths it was asked for. `/q3-report.pdf` is the PDF.
#[derive(Clone, Default)]
struct Docs(Arc<Mutex<Vec<String>>>);

impl Docs {
    fn hits(&self) -> usize {
        self.0.lock().expect("lock").len()
    }
}

async fn serve_doc(
    axum::extract::State(docs): axum::extract::State<Docs>,
    uri: axum::http::Uri,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    docs.0.lock().expect("lock").push(uri.path().to_owned());
    match uri.path() {
        "/q3-report.pdf" => {
            let pdf = base64::engine::general_purpose::STANDARD
                .decode(PDF)
                .expect("the test PDF is base64");
            ([(axum::http::header::CONTENT_TYPE, "application/pdf")], pdf).into_response()
        }
        _ => axum::http::StatusCode::NOT_FOUND.into_response(),
    }
}

async fn doc_server() -> (Docs, u16) {
    let docs = Docs::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let app = axum::Router::new()
        .fallback(serve_doc)
        .with_state(docs.clone());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (docs, port)
}

/// The test's names: `docs.test` is the document server (trusted, on 127.0.0.1);
/// `media.example` resolves to 127.0.0.1 and is refused like any loopback name.
fn overrides() -> tollgate::outbound::Overrides {
    let loopback: Vec<std::net::IpAddr> = vec!["127.0.0.1".parse().expect("ip")];
    tollgate::outbound::Overrides {
        hosts: [
            ("docs.test".to_owned(), loopback.clone()),
            ("media.example".to_owned(), loopback),
        ]
        .into_iter()
        .collect(),
        trusted: vec!["docs.test".to_owned()],
    }
}

/// Item 3: a document a client names by URL (an Anthropic `document` with a `url` source,
/// https://docs.anthropic.com/en/docs/build-with-claude/pdf-support; a Responses `input_file`
/// with a `file_url`, https://developers.openai.com/api/docs/guides/file-inputs) is read by the
/// guarded media fetcher when the request is converted for an upstream that needs the bytes —
/// OpenAI chat (which takes no file URL), Gemini, Converse, Claude from another format — and
/// sent as those bytes in the upstream's form; Cohere still refuses it by name. A URL the guard
/// refuses is a 400 naming the part, with nothing sent or billed; Claude itself gets an
/// Anthropic client's URL as it is, and nothing is read.
#[tokio::test]
async fn documents_named_by_url_are_read_through_the_guard_for_upstreams_that_need_bytes() {
    let (docs, port) = doc_server().await;
    let (mock, server, payer, key) = start_tuned(upstreams::answer, |c| {
        c.outbound_overrides = Arc::new(overrides());
    })
    .await;
    let url = format!("http://docs.test:{port}/q3-report.pdf");
    let by_url = json!({"type": "document", "source": {"type": "url", "url": url}});
    let mut failures = Vec::new();
    let expectations = [
        (
            Upstream::OpenAi,
            json!({"type": "file", "file": {"filename": "q3-report.pdf",
                "file_data": format!("data:application/pdf;base64,{PDF}")}}),
        ),
        (
            Upstream::Gemini,
            json!({"inlineData": {"mimeType": "application/pdf", "data": PDF}}),
        ),
        (
            Upstream::BedrockConverse,
            json!({"document": {"format": "pdf", "name": "q3-report", "source": {"bytes": PDF}}}),
        ),
    ];
    for (upstream, expected) in expectations {
        for stream in [false, true] {
            let before = docs.hits();
            let req =
                Client::Messages.request(&server, &key, upstream.model(), by_url.clone(), stream);
            let result = relayed(&server, &mock, payer, req, Client::Messages)
                .await
                .and_then(|sent| {
                    if !find(&sent, &|v| v == &expected) {
                        return Err(format!("no {expected} in the upstream body {sent}"));
                    }
                    if docs.hits() != before + 1 {
                        return Err(format!("{} reads of the URL", docs.hits() - before));
                    }
                    Ok(())
                });
            if let Err(e) = result {
                failures.push(format!(
                    "Messages URL document → {upstream:?}, stream {stream}: {e}"
                ));
            }
        }
    }

    let file_url = json!({"type": "input_file", "file_url": url});
    let req = Client::Responses.request(&server, &key, Upstream::Claude.model(), file_url, false);
    let result = relayed(&server, &mock, payer, req, Client::Responses)
        .await
        .and_then(|sent| {
            let expected = json!({"type": "document", "title": "q3-report.pdf",
                "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}});
            if find(&sent, &|v| v == &expected) {
                Ok(())
            } else {
                Err(format!("no {expected} in the Claude body {sent}"))
            }
        });
    if let Err(e) = result {
        failures.push(format!("Responses file_url → Claude: {e}"));
    }

    let req = Client::Messages.request(
        &server,
        &key,
        Upstream::Cohere.model(),
        by_url.clone(),
        false,
    );
    if let Err(e) = refused(
        &server,
        &mock,
        payer,
        req,
        &[
            "a file part (\\\"q3-report.pdf\\\", application/pdf)",
            "cannot be sent to a Cohere model",
        ],
    )
    .await
    {
        failures.push(format!("Messages URL document → Cohere: {e}"));
    }

    let local = format!("http://media.example:{port}/q3-report.pdf");
    let before = docs.hits();
    let req = Client::Messages.request(
        &server,
        &key,
        Upstream::OpenAi.model(),
        json!({"type": "document", "source": {"type": "url", "url": local}}),
        false,
    );
    let named = format!(
        "messages[0].content[0]: document URL {local} refused: media.example resolves to a loopback address"
    );
    if let Err(e) = refused(&server, &mock, payer, req, &[&named]).await {
        failures.push(format!("Messages loopback URL → OpenAI: {e}"));
    }
    if docs.hits() != before {
        failures.push("the refused URL was read".into());
    }

    // Claude reads URLs itself: an Anthropic client's body goes as it is.
    let before = docs.hits();
    let req = Client::Messages.request(
        &server,
        &key,
        Upstream::Claude.model(),
        by_url.clone(),
        false,
    );
    let result = relayed(&server, &mock, payer, req, Client::Messages)
        .await
        .and_then(|sent| {
            if !find(&sent, &|v| v == &by_url) || docs.hits() != before {
                return Err(format!(
                    "Claude got {sent} after {} reads",
                    docs.hits() - before
                ));
            }
            Ok(())
        });
    if let Err(e) = result {
        failures.push(format!("Messages URL document → Claude: {e}"));
    }
    report(&failures);
}

// ---- tool results with images ----

/// A tool's screenshot in a tool result: Claude's `tool_result` and Converse's `toolResult`
/// (ToolResultContentBlock: text, image, document,
/// https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolResultContentBlock.html)
/// get the image; OpenAI's tool messages and Gemini's `functionResponse` take text, so the image
/// is refused by name there instead of dropped.
#[tokio::test]
async fn tool_result_images_reach_claude_and_converse_and_are_refused_where_results_are_text() {
    let (mock, server, payer, key) = start().await;
    let mut failures = Vec::new();
    let turn = |model: &str| {
        json!({"model": model, "max_tokens": 256, "messages": [
            {"role": "user", "content": PROMPT_TEXT},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_shot",
                "name": "screenshot", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_shot",
                "content": [{"type": "text", "text": "the page"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                        "data": upstreams::PNG}}]}]}]})
    };
    let messages = |body: Value| {
        server
            .client
            .post(server.url("/v1/messages"))
            .header("x-api-key", &key)
            .header("anthropic-version", "2023-06-01")
            .json(&body)
    };
    let req = messages(turn(Upstream::BedrockConverse.model()));
    let result = relayed(&server, &mock, payer, req, Client::Messages)
        .await
        .and_then(|sent| {
            let expected = json!({"toolResult": {"toolUseId": "toolu_shot", "content": [
                {"text": "the page"},
                {"image": {"format": "png", "source": {"bytes": upstreams::PNG}}}]}});
            if find(&sent, &|v| v == &expected) {
                Ok(())
            } else {
                Err(format!("no {expected} in {sent}"))
            }
        });
    if let Err(e) = result {
        failures.push(format!("Messages tool_result image → Converse: {e}"));
    }
    for upstream in [Upstream::OpenAi, Upstream::Gemini] {
        let req = messages(turn(upstream.model()));
        if let Err(e) = refused(
            &server,
            &mock,
            payer,
            req,
            &[
                "an image_url part in a tool result cannot be sent to",
                "its tool results take text only",
            ],
        )
        .await
        {
            failures.push(format!("Messages tool_result image → {upstream:?}: {e}"));
        }
    }
    let req = server
        .client
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(&key)
        .json(&json!({"model": Upstream::Claude.model(), "messages": [
            {"role": "user", "content": PROMPT_TEXT},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "toolu_shot",
                "type": "function", "function": {"name": "screenshot", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "toolu_shot", "content": [
                {"type": "text", "text": "the page"},
                {"type": "image_url", "image_url": {"url":
                    format!("data:image/png;base64,{}", upstreams::PNG)}}]}]}));
    let result = relayed(&server, &mock, payer, req, Client::Chat)
        .await
        .and_then(|sent| {
            let expected = json!({"type": "tool_result", "tool_use_id": "toolu_shot", "content": [
                {"type": "text", "text": "the page"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                    "data": upstreams::PNG}}]});
            if find(&sent, &|v| v == &expected) {
                Ok(())
            } else {
                Err(format!("no {expected} in {sent}"))
            }
        });
    if let Err(e) = result {
        failures.push(format!("Chat tool image → Claude: {e}"));
    }
    report(&failures);
}
