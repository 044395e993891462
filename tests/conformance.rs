//! The conformance matrix of #19: every inbound format {OpenAI chat, Responses, Anthropic
//! Messages, Gemini} × every upstream {OpenAI, Azure, Claude, Bedrock-Claude, Bedrock-Converse,
//! Vertex-Gemini, Vertex-Claude, Gemini, Cohere, MiniMax, Zhipu, Cloudflare, Qianfan v2,
//! Hunyuan, Baidu Qianfan v1, Dify, Coze} × {whole, streamed}, per scenario (text, tools, images, reasoning), through the public
//! HTTP API against one mock of all the upstreams
//! (tests/common/conformance_upstreams.rs); iFlytek Spark's column runs against its WebSocket
//! mock (tests/common/mock_spark.rs: text and reasoning answered, tools and images refused). Each cell asserts (a) the upstream request the mock
//! recorded (path, auth, body shape), (b) what the client sees in its own format, (c) the usage
//! billed (the user's quota and the log row). A failing cell is named in the failure message;
//! every cell runs before the test fails, so one run lists them all.
//!
//! Inbound formats as documented: https://platform.openai.com/docs/api-reference/chat/create,
//! https://platform.openai.com/docs/api-reference/responses/create,
//! https://docs.anthropic.com/en/api/messages, https://ai.google.dev/api/generate-content.

mod common;
#[path = "common/conformance_upstreams.rs"]
mod upstreams;

use common::TestServer;
use common::mock_cloud::MockCloud;
use common::mock_spark::{self, MockSpark};
use common::relay_fixture::{balances, fixture, raw, sse_events};
use reqwest::StatusCode;
use serde_json::{Value, json};
use upstreams::{
    COMPLETION, PNG, PROMPT, SIGNATURE, Scenario, TEXT, THINKING, UPSTREAMS, Upstream,
};

/// The client formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inbound {
    Chat,
    Responses,
    Messages,
    Gemini,
}

const INBOUNDS: [Inbound; 4] = [
    Inbound::Chat,
    Inbound::Responses,
    Inbound::Messages,
    Inbound::Gemini,
];

/// What a client saw, whatever its format.
#[derive(Debug, Default)]
struct Seen {
    text: String,
    thinking: String,
    signature: String,
    tool: Option<(String, Value)>,
}

fn weather_schema() -> Value {
    json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
}

impl Inbound {
    /// The client's request for `scenario`.
    fn request(
        self,
        server: &TestServer,
        key: &str,
        model: &str,
        scenario: Scenario,
        stream: bool,
    ) -> reqwest::RequestBuilder {
        let prompt = format!("{}: what is the weather?", scenario.marker());
        let data_url = format!("data:image/png;base64,{PNG}");
        let client = &server.client;
        match self {
            Inbound::Chat => {
                let content = if scenario == Scenario::Image {
                    json!([{"type": "text", "text": prompt},
                        {"type": "image_url", "image_url": {"url": data_url}}])
                } else {
                    json!(prompt)
                };
                let mut body = json!({"model": model, "max_tokens": 256,
                    "messages": [{"role": "user", "content": content}]});
                if stream {
                    body["stream"] = json!(true);
                }
                if scenario == Scenario::Tools {
                    body["tools"] = json!([{"type": "function", "function": {"name": "get_weather",
                        "description": "The weather of a city", "parameters": weather_schema()}}]);
                }
                if scenario == Scenario::Reasoning {
                    body["reasoning_effort"] = json!("low");
                }
                client
                    .post(server.url("/v1/chat/completions"))
                    .bearer_auth(key)
                    .json(&body)
            }
            Inbound::Responses => {
                let mut content = vec![json!({"type": "input_text", "text": prompt})];
                if scenario == Scenario::Image {
                    content.push(json!({"type": "input_image", "image_url": data_url}));
                }
                let mut body = json!({"model": model, "max_output_tokens": 256,
                    "input": [{"role": "user", "content": content}]});
                if stream {
                    body["stream"] = json!(true);
                }
                if scenario == Scenario::Tools {
                    body["tools"] = json!([{"type": "function", "name": "get_weather",
                        "description": "The weather of a city", "parameters": weather_schema()}]);
                }
                if scenario == Scenario::Reasoning {
                    body["reasoning"] = json!({"effort": "low", "summary": "auto"});
                }
                client
                    .post(server.url("/v1/responses"))
                    .bearer_auth(key)
                    .json(&body)
            }
            Inbound::Messages => {
                let mut content = vec![json!({"type": "text", "text": prompt})];
                if scenario == Scenario::Image {
                    content.push(json!({"type": "image", "source": {"type": "base64",
                        "media_type": "image/png", "data": PNG}}));
                }
                let mut body = json!({"model": model, "max_tokens": 2048,
                    "messages": [{"role": "user", "content": content}]});
                if stream {
                    body["stream"] = json!(true);
                }
                if scenario == Scenario::Tools {
                    body["tools"] = json!([{"name": "get_weather",
                        "description": "The weather of a city", "input_schema": weather_schema()}]);
                }
                if scenario == Scenario::Reasoning {
                    body["thinking"] = json!({"type": "enabled", "budget_tokens": 1024});
                }
                client
                    .post(server.url("/v1/messages"))
                    .header("x-api-key", key)
                    .header("anthropic-version", "2023-06-01")
                    .json(&body)
            }
            Inbound::Gemini => {
                let mut parts = vec![json!({"text": prompt})];
                if scenario == Scenario::Image {
                    parts.push(json!({"inlineData": {"mimeType": "image/png", "data": PNG}}));
                }
                let mut body = json!({"contents": [{"role": "user", "parts": parts}],
                    "generationConfig": {"maxOutputTokens": 256}});
                if scenario == Scenario::Tools {
                    body["tools"] = json!([{"functionDeclarations": [{"name": "get_weather",
                        "description": "The weather of a city", "parameters": weather_schema()}]}]);
                }
                if scenario == Scenario::Reasoning {
                    body["generationConfig"]["thinkingConfig"] =
                        json!({"includeThoughts": true, "thinkingBudget": 1024});
                }
                let path = if stream {
                    format!("/v1beta/models/{model}:streamGenerateContent?alt=sse")
                } else {
                    format!("/v1beta/models/{model}:generateContent")
                };
                client
                    .post(server.url(&path))
                    .header("x-goog-api-key", key)
                    .json(&body)
            }
        }
    }

    /// What the client saw in its answer (`text` is the body, whole or SSE).
    fn seen(self, text: &str, stream: bool) -> Result<Seen, String> {
        let mut seen = Seen::default();
        let mut tool_name = String::new();
        let mut tool_args = String::new();
        let whole = |text: &str| {
            serde_json::from_str::<Value>(text).map_err(|e| format!("answer not JSON: {e}"))
        };
        match (self, stream) {
            (Inbound::Chat, false) => {
                let message = &whole(text)?["choices"][0]["message"];
                seen.text = message["content"].as_str().unwrap_or_default().to_owned();
                seen.thinking = message["reasoning_content"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let call = &message["tool_calls"][0]["function"];
                call["name"]
                    .as_str()
                    .unwrap_or_default()
                    .clone_into(&mut tool_name);
                call["arguments"]
                    .as_str()
                    .unwrap_or_default()
                    .clone_into(&mut tool_args);
            }
            (Inbound::Chat, true) => {
                for (_, chunk) in sse_events(text) {
                    let delta = &chunk["choices"][0]["delta"];
                    seen.text
                        .push_str(delta["content"].as_str().unwrap_or_default());
                    seen.thinking
                        .push_str(delta["reasoning_content"].as_str().unwrap_or_default());
                    let call = &delta["tool_calls"][0]["function"];
                    tool_name.push_str(call["name"].as_str().unwrap_or_default());
                    tool_args.push_str(call["arguments"].as_str().unwrap_or_default());
                }
            }
            (Inbound::Responses, _) => {
                let response = if stream {
                    let events = sse_events(text);
                    let deltas: String = events
                        .iter()
                        .filter(|(name, _)| name == "response.output_text.delta")
                        .filter_map(|(_, e)| e["delta"].as_str())
                        .collect();
                    let done = events
                        .iter()
                        .find(|(name, _)| name == "response.completed")
                        .map(|(_, e)| e["response"].clone())
                        .ok_or("no response.completed event")?;
                    seen.text = deltas;
                    done
                } else {
                    whole(text)?
                };
                let mut final_text = String::new();
                for item in response["output"].as_array().into_iter().flatten() {
                    match item["type"].as_str() {
                        Some("message") => {
                            for part in item["content"].as_array().into_iter().flatten() {
                                final_text.push_str(part["text"].as_str().unwrap_or_default());
                            }
                        }
                        Some("reasoning") => {
                            for part in item["summary"]
                                .as_array()
                                .into_iter()
                                .chain(item["content"].as_array())
                                .flatten()
                            {
                                seen.thinking
                                    .push_str(part["text"].as_str().unwrap_or_default());
                            }
                        }
                        Some("function_call") => {
                            item["name"]
                                .as_str()
                                .unwrap_or_default()
                                .clone_into(&mut tool_name);
                            item["arguments"]
                                .as_str()
                                .unwrap_or_default()
                                .clone_into(&mut tool_args);
                        }
                        _ => {}
                    }
                }
                if stream && seen.text != final_text {
                    return Err(format!(
                        "text deltas {:?} differ from the completed response's {final_text:?}",
                        seen.text
                    ));
                }
                seen.text = final_text;
            }
            (Inbound::Messages, false) => {
                for block in whole(text)?["content"].as_array().into_iter().flatten() {
                    match block["type"].as_str() {
                        Some("text") => seen
                            .text
                            .push_str(block["text"].as_str().unwrap_or_default()),
                        Some("thinking") => {
                            seen.thinking
                                .push_str(block["thinking"].as_str().unwrap_or_default());
                            seen.signature
                                .push_str(block["signature"].as_str().unwrap_or_default());
                        }
                        Some("tool_use") => {
                            block["name"]
                                .as_str()
                                .unwrap_or_default()
                                .clone_into(&mut tool_name);
                            tool_args = block["input"].to_string();
                        }
                        _ => {}
                    }
                }
            }
            (Inbound::Messages, true) => {
                for (name, event) in sse_events(text) {
                    if name == "content_block_start" && event["content_block"]["type"] == "tool_use"
                    {
                        event["content_block"]["name"]
                            .as_str()
                            .unwrap_or_default()
                            .clone_into(&mut tool_name);
                    }
                    let delta = &event["delta"];
                    let field = |f: &str| delta[f].as_str().unwrap_or_default().to_owned();
                    match delta["type"].as_str() {
                        Some("text_delta") => seen.text.push_str(&field("text")),
                        Some("thinking_delta") => seen.thinking.push_str(&field("thinking")),
                        Some("signature_delta") => seen.signature.push_str(&field("signature")),
                        Some("input_json_delta") => tool_args.push_str(&field("partial_json")),
                        _ => {}
                    }
                }
            }
            (Inbound::Gemini, _) => {
                let answers = if stream {
                    sse_events(text).into_iter().map(|(_, e)| e).collect()
                } else {
                    vec![whole(text)?]
                };
                for answer in answers {
                    for part in answer["candidates"][0]["content"]["parts"]
                        .as_array()
                        .into_iter()
                        .flatten()
                    {
                        let t = part["text"].as_str().unwrap_or_default();
                        if part["thought"] == true {
                            seen.thinking.push_str(t);
                        } else {
                            seen.text.push_str(t);
                        }
                        if let Some(name) = part["functionCall"]["name"].as_str() {
                            name.clone_into(&mut tool_name);
                            tool_args = part["functionCall"]["args"].to_string();
                        }
                    }
                }
            }
        }
        if !tool_name.is_empty() {
            let args = serde_json::from_str(&tool_args)
                .map_err(|e| format!("tool arguments {tool_args:?} are not JSON: {e}"))?;
            seen.tool = Some((tool_name, args));
        }
        Ok(seen)
    }
}

/// Whether the upstream answers thinking with a signature that a Claude client can send back
/// (Claude's own, and Converse's `reasoningText.signature`).
fn claude_family(upstream: Upstream) -> bool {
    matches!(
        upstream,
        Upstream::Claude
            | Upstream::BedrockClaude
            | Upstream::VertexClaude
            | Upstream::BedrockConverse
    )
}

/// Checks what the client saw against what every upstream answered.
fn check_seen(
    seen: &Seen,
    scenario: Scenario,
    inbound: Inbound,
    upstream: Upstream,
) -> Result<(), String> {
    if scenario == Scenario::Tools {
        let expected = Some(("get_weather".to_owned(), json!({"city": "Paris"})));
        if seen.tool != expected {
            return Err(format!("tool call {:?}, expected {expected:?}", seen.tool));
        }
        return Ok(());
    }
    if seen.text != TEXT {
        return Err(format!("text {:?}, expected {TEXT:?}", seen.text));
    }
    // Hunyuan's ChatCompletions and Qianfan v1's chat have no reasoning output: their answer
    // is the text alone.
    if scenario == Scenario::Reasoning
        && !matches!(
            upstream,
            Upstream::Hunyuan | Upstream::Baidu | Upstream::Dify | Upstream::Coze
        )
    {
        if seen.thinking != THINKING {
            return Err(format!(
                "thinking {:?}, expected {THINKING:?}",
                seen.thinking
            ));
        }
        if inbound == Inbound::Messages && claude_family(upstream) && seen.signature != SIGNATURE {
            return Err(format!("thinking signature {:?} not kept", seen.signature));
        }
    }
    Ok(())
}

/// A cell the relay cannot honour by design: the 400 it answers instead, and a piece of its
/// message. Baidu Qianfan v1's and Dify's chats take text only, Coze's text and image URLs (the
/// scenario's image is inline) (`relay::wire::baidu::check`, `relay::wire::dify::check`,
/// `relay::wire::coze::check`).
fn refused(_inbound: Inbound, upstream: Upstream, scenario: Scenario) -> Option<&'static str> {
    match (upstream, scenario) {
        (Upstream::Baidu | Upstream::Dify | Upstream::Coze, Scenario::Tools) => {
            Some("tools cannot be sent")
        }
        (Upstream::Baidu | Upstream::Dify | Upstream::Coze, Scenario::Image) => {
            Some("part cannot be sent")
        }
        _ => None,
    }
}

/// Runs every cell of `scenario`; fails listing every cell that failed.
async fn matrix(scenario: Scenario) {
    let mock = MockCloud::start(upstreams::answer).await;
    let server = TestServer::start().await;
    let channels: Vec<Value> = UPSTREAMS.iter().map(|u| u.channel(&mock.base)).collect();
    let (root, payer, key) = fixture(&server, &channels, 10_000_000, 5_000_000).await;
    let models: Vec<&str> = UPSTREAMS.iter().map(|u| u.model()).collect();
    let ratios = |v: i64| {
        let map: serde_json::Map<String, Value> =
            models.iter().map(|m| ((*m).to_owned(), json!(v))).collect();
        json!(Value::Object(map).to_string())
    };
    server.set_option(&root, "ModelRatio", ratios(1)).await;
    server.set_option(&root, "CompletionRatio", ratios(2)).await;
    let mut failures = Vec::new();
    let mut passed = 0;
    for upstream in UPSTREAMS {
        for inbound in INBOUNDS {
            for stream in [false, true] {
                let cell = format!(
                    "{inbound:?} → {upstream:?}, {scenario:?}, {}",
                    if stream { "stream" } else { "whole" }
                );
                match cell_run(
                    &server, &mock, payer.id, &key, inbound, upstream, scenario, stream,
                )
                .await
                {
                    Ok(()) => passed += 1,
                    Err(e) => failures.push(format!("{cell}: {e}")),
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cells failed:\n{}",
        failures.len(),
        failures.len() + passed,
        failures.join("\n")
    );
}

#[expect(clippy::too_many_arguments, reason = "one cell's coordinates")]
async fn cell_run(
    server: &TestServer,
    mock: &MockCloud,
    payer: i64,
    key: &str,
    inbound: Inbound,
    upstream: Upstream,
    scenario: Scenario,
    stream: bool,
) -> Result<(), String> {
    let (quota_before, _, count_before, _) = balances(server, payer).await;
    let calls_before = mock.requests().len();
    let (status, _, text) =
        raw(inbound.request(server, key, upstream.model(), scenario, stream)).await;
    let calls: Vec<_> = mock.requests()[calls_before..]
        .iter()
        .filter(|r| !r.path.ends_with("/token"))
        .cloned()
        .collect();
    let (quota, _, count, logs) = balances(server, payer).await;
    if let Some(message) = refused(inbound, upstream, scenario) {
        if status != StatusCode::BAD_REQUEST || !text.contains(message) {
            return Err(format!(
                "expected a 400 naming {message:?}, got {status}: {text}"
            ));
        }
        if quota != quota_before || count != count_before {
            return Err("a refused request was billed".into());
        }
        return Ok(());
    }
    if status != StatusCode::OK {
        return Err(format!(
            "status {status}: {}",
            text.chars().take(400).collect::<String>()
        ));
    }
    // (a) the upstream request.
    let [call] = calls.as_slice() else {
        return Err(format!("{} upstream calls, expected 1", calls.len()));
    };
    upstream.check_request(call, scenario, inbound == Inbound::Responses, stream)?;
    // (b) the client's answer.
    let seen = inbound
        .seen(&text, stream)
        .map_err(|e| format!("{e}: {}", text.chars().take(600).collect::<String>()))?;
    check_seen(&seen, scenario, inbound, upstream)
        .map_err(|e| format!("{e}: {}", text.chars().take(600).collect::<String>()))?;
    // (c) the billed usage: ratio 1, completion ratio 2.
    let billed = quota_before - quota;
    if billed != PROMPT + 2 * COMPLETION || count != count_before + 1 {
        return Err(format!(
            "billed {billed} quota over {} requests, expected {} over 1",
            count - count_before,
            PROMPT + 2 * COMPLETION
        ));
    }
    let log = logs.first().ok_or("no log row")?;
    if (log.prompt_tokens, log.completion_tokens) != (PROMPT, COMPLETION)
        || log.model_name != upstream.model()
    {
        return Err(format!(
            "log row {} {}+{}, expected {} {PROMPT}+{COMPLETION}",
            log.model_name,
            log.prompt_tokens,
            log.completion_tokens,
            upstream.model()
        ));
    }
    Ok(())
}

/// iFlytek Spark's column: every inbound format, whole and streamed, per scenario. Text and
/// reasoning (Spark answers text alone) are answered and billed from Spark's usage; tools and
/// images — which Spark's chat does not take — are a 400 naming them, sent nowhere, unbilled.
#[tokio::test]
async fn sparks_column_through_every_inbound() {
    let mock = MockSpark::start().await;
    let server = TestServer::start().await;
    let channel = json!({"name": "spark", "type": 18, "key": mock_spark::KEY,
        "base_url": mock.base, "models": "conf-spark", "group": "default",
        "model_mapping": r#"{"conf-spark": "SparkDesk-v4.0"}"#});
    let (root, payer, key) = fixture(&server, &[channel], 10_000_000, 5_000_000).await;
    server
        .set_option(&root, "ModelRatio", json!(r#"{"conf-spark": 1}"#))
        .await;
    server
        .set_option(&root, "CompletionRatio", json!(r#"{"conf-spark": 2}"#))
        .await;
    let mut failures = Vec::new();
    let scenarios = [
        Scenario::Text,
        Scenario::Tools,
        Scenario::Image,
        Scenario::Reasoning,
    ];
    for scenario in scenarios {
        for inbound in INBOUNDS {
            for stream in [false, true] {
                let cell = format!("{inbound:?} → Spark, {scenario:?}, stream {stream}");
                let refused = match scenario {
                    Scenario::Tools => Some("tools"),
                    Scenario::Image => Some("image_url"),
                    Scenario::Text | Scenario::Reasoning => None,
                };
                if refused.is_none() {
                    mock.push(mock_spark::Answer::Text {
                        pieces: vec!["Hi ".into(), "there".into()],
                        usage: (PROMPT, COMPLETION),
                        complete: true,
                    });
                }
                let (quota_before, _, count_before, _) = balances(&server, payer.id).await;
                let calls_before = mock.calls().len();
                let (status, _, text) =
                    raw(inbound.request(&server, &key, "conf-spark", scenario, stream)).await;
                let (quota, _, count, _) = balances(&server, payer.id).await;
                let calls = mock.calls().len() - calls_before;
                let result = match refused {
                    Some(name) if status != StatusCode::BAD_REQUEST || !text.contains(name) => Err(
                        format!("expected a 400 naming {name}, got {status}: {text}"),
                    ),
                    Some(_) if calls != 0 || quota != quota_before => {
                        Err("a refused request was sent or billed".into())
                    }
                    Some(_) => Ok(()),
                    None if status != StatusCode::OK => Err(format!("status {status}: {text}")),
                    None => inbound.seen(&text, stream).and_then(|seen| {
                        let call = mock.last();
                        if seen.text != TEXT {
                            Err(format!("text {:?}", seen.text))
                        } else if calls != 1
                            || !call.signed
                            || call.path != "/v4.0/chat"
                            || call.frame["parameter"]["chat"]["domain"] != "4.0Ultra"
                        {
                            Err(format!("{calls} conversations, the last {call:?}"))
                        } else if quota_before - quota != PROMPT + 2 * COMPLETION
                            || count != count_before + 1
                        {
                            Err(format!("billed {}", quota_before - quota))
                        } else {
                            Ok(())
                        }
                    }),
                };
                if let Err(e) = result {
                    failures.push(format!("{cell}: {e}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn text_through_every_inbound_and_upstream() {
    matrix(Scenario::Text).await;
}

#[tokio::test]
async fn tool_calls_through_every_inbound_and_upstream() {
    matrix(Scenario::Tools).await;
}

#[tokio::test]
async fn inline_images_through_every_inbound_and_upstream() {
    matrix(Scenario::Image).await;
}

#[tokio::test]
async fn reasoning_through_every_inbound_and_upstream() {
    matrix(Scenario::Reasoning).await;
}

/// A tiny PDF, base64 (`%PDF-1.4` …).
const PDF: &str = "JVBERi0xLjQKMSAwIG9iago8PD4+CmVuZG9iagp0cmFpbGVyCjw8Pj4KJSVFT0YK";

/// A coding agent's turn (issue item 5): extended thinking with its signature in the history,
/// `cache_control` blocks with the 1-hour TTL, a tool use and its result, an image and a PDF
/// (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking,
/// https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching (`"ttl": "1h"`),
/// https://docs.anthropic.com/en/docs/build-with-claude/pdf-support).
fn coding_agent_turn(model: &str, stream: bool) -> Value {
    json!({"model": model, "max_tokens": 4096, "stream": stream,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "system": [{"type": "text", "text": "You are a coding agent.",
            "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
        "tools": [{"name": "get_weather", "description": "The weather of a city",
            "input_schema": weather_schema(), "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": "scenario-text: what is the weather in Paris?"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": THINKING, "signature": SIGNATURE},
                {"type": "tool_use", "id": "toolu_conf_1", "name": "get_weather",
                    "input": {"city": "Paris"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_conf_1", "content": "sunny, 21 °C"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                    "data": PDF}},
                {"type": "text", "text": "Summarise all of it.",
                    "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}]})
}

/// What the upstream must have received of the coding agent's turn.
fn check_coding_agent_body(upstream: Upstream, client: &Value, sent: &Value) -> Result<(), String> {
    let pdf_url = format!("data:application/pdf;base64,{PDF}");
    let ok = match upstream {
        // Claude's own format: intact, the cloud's envelope aside.
        Upstream::Claude | Upstream::BedrockClaude | Upstream::VertexClaude => {
            let strip = |v: &Value| {
                let mut v = v.clone();
                if let Some(map) = v.as_object_mut() {
                    for key in ["model", "stream", "anthropic_version"] {
                        map.remove(key);
                    }
                }
                v
            };
            // Bedrock takes the beta header in the body (model-parameters-anthropic-claude-messages).
            let beta = upstream != Upstream::BedrockClaude
                || sent["anthropic_beta"] == json!(["extended-cache-ttl-2025-04-11"]);
            let mut sent = sent.clone();
            if let Some(map) = sent.as_object_mut() {
                map.remove("anthropic_beta");
            }
            beta && strip(client) == strip(&sent)
        }
        Upstream::OpenAi
        | Upstream::Azure
        | Upstream::MiniMax
        | Upstream::Zhipu
        | Upstream::Cloudflare
        | Upstream::QianfanV2 => {
            upstreams::find(sent, &|v| {
                v["type"] == "file" && v["file"]["file_data"] == pdf_url.as_str()
            }) && upstreams::find(sent, &|v| {
                v["role"] == "tool" && v["tool_call_id"] == "toolu_conf_1"
            })
        }
        Upstream::Gemini | Upstream::VertexGemini => {
            upstreams::find(sent, &|v| {
                v["inlineData"]["mimeType"] == "application/pdf" && v["inlineData"]["data"] == PDF
            }) && upstreams::find(sent, &|v| v["functionResponse"]["name"] == "get_weather")
        }
        Upstream::BedrockConverse
        | Upstream::Cohere
        | Upstream::Hunyuan
        | Upstream::Baidu
        | Upstream::Dify
        | Upstream::Coze => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("the upstream got {sent}"))
    }
}

#[tokio::test]
async fn coding_agent_turns_reach_claude_intact_and_are_converted_for_openai_and_gemini() {
    let mock = MockCloud::start(upstreams::answer).await;
    let server = TestServer::start().await;
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
    let mut failures = Vec::new();
    let upstreams = [
        Upstream::Claude,
        Upstream::BedrockClaude,
        Upstream::VertexClaude,
        Upstream::OpenAi,
        Upstream::Azure,
        Upstream::Gemini,
        Upstream::VertexGemini,
    ];
    for upstream in upstreams {
        for stream in [false, true] {
            let body = coding_agent_turn(upstream.model(), stream);
            let (quota_before, _, _, _) = balances(&server, payer.id).await;
            let before = mock.requests().len();
            let (status, _, text) = raw(server
                .client
                .post(server.url("/v1/messages"))
                .header("x-api-key", &key)
                .header("anthropic-version", "2023-06-01")
                .header("anthropic-beta", "extended-cache-ttl-2025-04-11")
                .json(&body))
            .await;
            let cell = format!("coding agent → {upstream:?}, stream {stream}");
            let result = async {
                if status != StatusCode::OK {
                    return Err(format!("status {status}: {text}"));
                }
                let calls: Vec<_> = mock.requests()[before..]
                    .iter()
                    .filter(|r| !r.path.ends_with("/token"))
                    .cloned()
                    .collect();
                let [call] = calls.as_slice() else {
                    return Err(format!("{} upstream calls", calls.len()));
                };
                check_coding_agent_body(upstream, &body, &call.json())?;
                let seen = Inbound::Messages.seen(&text, stream)?;
                if seen.text != TEXT {
                    return Err(format!("text {:?}", seen.text));
                }
                let (quota, _, _, _) = balances(&server, payer.id).await;
                if quota_before - quota != PROMPT + 2 * COMPLETION {
                    return Err(format!("billed {}", quota_before - quota));
                }
                Ok(())
            }
            .await;
            if let Err(e) = result {
                failures.push(format!("{cell}: {e}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
