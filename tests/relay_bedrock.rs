//! AWS Bedrock (channel type 33) through the public HTTP API, against a mock Bedrock runtime
//! that checks SigV4 signatures the way AWS does ([`common::cloud_auth::verify_sigv4`], itself
//! checked against AWS's published test suite below) and speaks the documented wire formats:
//! InvokeModel / InvokeModelWithResponseStream with Claude's Messages body
//! (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html,
//! https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html),
//! Converse / ConverseStream (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html,
//! https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html), and
//! the `application/vnd.amazon.eventstream` framing of the streams, written by the maintained
//! `aws-smithy-eventstream` crate, and CountTokens (`POST /model/{modelId}/count-tokens` with
//! `input.invokeModel.body` — the InvokeModel body as a base64 blob — or `input.converse`,
//! answering `{"inputTokens": N}`;
//! https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CountTokens.html,
//! https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CountTokensInput.html,
//! https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModelTokensRequest.html,
//! https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseTokensRequest.html),
//! and embeddings through InvokeModel: Titan Text Embeddings V2 (`inputText` / `dimensions` →
//! `embedding`, `inputTextTokenCount`;
//! https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-text.html)
//! and Cohere Embed (`texts`, `input_type`, `embedding_types` → `embeddings.float`;
//! https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-embed.html).

mod common;

use aws_smithy_eventstream::frame::write_message_to;
use aws_smithy_types::event_stream::{Header, HeaderValue, Message};
use base64::Engine;
use bytes::Bytes;
use common::TestServer;
use common::cloud_auth::{AwsExpect, verify_sigv4};
use common::mock_cloud::{Answer, MockCloud, Recorded};
use common::relay_fixture::{
    balances, chat_request, fixture, raw, sse_events, wait_channel_status,
};
use reqwest::StatusCode;
use serde_json::{Value, json};

const ACCESS_KEY: &str = "AKIDBEDROCKTEST1";
const SECRET_KEY: &str = "bedrock/Secret+Key/EXAMPLE";
const SESSION_TOKEN: &str = "FwoGZXIvYXdzEXAMPLETOKEN";
const API_KEY: &str = "ABSKQmVkcm9ja0FQSUtleS1leGFtcGxl";
const REGION: &str = "us-east-1";

/// One event-stream message (`:message-type: event`).
#[expect(clippy::panic, reason = "a broken fixture must fail the test")]
fn frame(event_type: &str, payload: &Value) -> Vec<u8> {
    let message = Message::new(Bytes::from(payload.to_string()))
        .add_header(Header::new(
            ":message-type",
            HeaderValue::String("event".into()),
        ))
        .add_header(Header::new(
            ":event-type",
            HeaderValue::String(event_type.to_owned().into()),
        ))
        .add_header(Header::new(
            ":content-type",
            HeaderValue::String("application/json".into()),
        ));
    let mut out = Vec::new();
    write_message_to(&message, &mut out).unwrap_or_else(|e| panic!("frame: {e}"));
    out
}

/// A `chunk` event of InvokeModelWithResponseStream carrying one Claude stream event.
fn chunk(event: &Value) -> Vec<u8> {
    let bytes = base64::engine::general_purpose::STANDARD.encode(event.to_string());
    frame("chunk", &json!({"bytes": bytes}))
}

/// Claude's Messages answer on Bedrock.
fn claude_answer() -> Value {
    json!({"id": "msg_bdrk_01", "type": "message", "role": "assistant",
        "model": "claude-3-5-sonnet-20241022", "content": [{"type": "text", "text": "Hello from Bedrock"}],
        "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 12, "cache_creation_input_tokens": 40,
            "cache_read_input_tokens": 0, "output_tokens": 9}})
}

/// Claude's stream on Bedrock, one Anthropic event per `chunk` (the last with Bedrock's
/// invocation metrics).
fn claude_events() -> Vec<Value> {
    vec![
        json!({"type": "message_start", "message": {"id": "msg_bdrk_02", "type": "message",
            "role": "assistant", "model": "claude-sonnet-4-20250514", "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 25, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi "}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "there"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null},
            "usage": {"output_tokens": 30}}),
        json!({"type": "message_stop", "amazon-bedrock-invocationMetrics": {"inputTokenCount": 25,
            "outputTokenCount": 30, "invocationLatency": 500, "firstByteLatency": 200}}),
    ]
}

/// A Converse answer (API reference shape) with a tool call.
fn converse_answer() -> Value {
    json!({"output": {"message": {"role": "assistant", "content": [
            {"text": "Checking the weather."},
            {"toolUse": {"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": "get_weather",
                "input": {"city": "Seattle"}}}]}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": 40, "outputTokens": 18, "totalTokens": 58},
        "metrics": {"latencyMs": 812}})
}

/// A ConverseStream answer's events.
fn converse_stream() -> Vec<u8> {
    let mut out = Vec::new();
    for (name, payload) in [
        ("messageStart", json!({"role": "assistant", "p": "abcdef"})),
        (
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"text": "Nova "}, "p": "ab"}),
        ),
        (
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"text": "says hi"}, "p": "abcd"}),
        ),
        (
            "contentBlockStop",
            json!({"contentBlockIndex": 0, "p": "a"}),
        ),
        ("messageStop", json!({"stopReason": "end_turn", "p": "abc"})),
        (
            "metadata",
            json!({"usage": {"inputTokens": 14, "outputTokens": 6, "totalTokens": 20},
            "metrics": {"latencyMs": 300}, "p": "ab"}),
        ),
    ] {
        out.extend(frame(name, &payload));
    }
    out
}

/// AWS's error shape.
fn aws_error(status: u16, message: &str) -> Answer {
    Answer::Json(status, json!({"message": message}))
}

/// The mock Bedrock runtime: the signature (or Bedrock API key) checked, then the operation
/// answered by its path.
fn bedrock(req: &Recorded) -> Answer {
    let auth = req.header("authorization").unwrap_or_default();
    if auth.starts_with("Bearer ") {
        if auth != format!("Bearer {API_KEY}") {
            return aws_error(
                403,
                "Invalid API Key format: Must start with pre-defined prefix",
            );
        }
    } else {
        let expect = AwsExpect {
            access_key: ACCESS_KEY,
            secret_key: SECRET_KEY,
            region: REGION,
            service: "bedrock",
            session_token: req.header("x-amz-security-token").map(|_| SESSION_TOKEN),
            now: Some(time::OffsetDateTime::now_utc().unix_timestamp()),
        };
        if let Err(e) = verify_sigv4(req, &expect) {
            // AWS names the refusal in x-amzn-ErrorType.
            let kind = if e.starts_with("UnrecognizedClient") {
                "UnrecognizedClientException"
            } else {
                "InvalidSignatureException"
            };
            return Answer::JsonWith(
                403,
                vec![(
                    "x-amzn-errortype",
                    format!("{kind}:http://internal.amazon.com/coral/com.amazon.coral.service/"),
                )],
                json!({"message": e}),
            );
        }
    }
    let Some(rest) = req.path.strip_prefix("/model/") else {
        return aws_error(404, "UnknownOperationException");
    };
    let Some((model, operation)) = rest.rsplit_once('/') else {
        return aws_error(404, "UnknownOperationException");
    };
    if model.contains("throttled") {
        return aws_error(429, "Too many requests, please wait before trying again.");
    }
    let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
    match operation {
        // Titan text embeddings V2 and Cohere Embed through InvokeModel.
        "invoke" if model.contains("titan-embed") => Answer::Json(
            200,
            json!({"embedding": [0.5, 0.25], "inputTextTokenCount": 7,
                "embeddingsByType": {"float": [0.5, 0.25]}}),
        ),
        "invoke" if model.contains("cohere.embed") => {
            let texts = body["texts"].as_array().cloned().unwrap_or_default();
            let vectors: Vec<Value> = (0..texts.len()).map(|i| json!([0.75, i])).collect();
            Answer::Json(
                200,
                json!({"id": "emb-1", "response_type": "embeddings_by_type", "texts": texts,
                    "embeddings": {"float": vectors}}),
            )
        }
        "invoke" => Answer::Json(200, claude_answer()),
        "invoke-with-response-stream" => Answer::Chunks(
            "application/vnd.amazon.eventstream",
            claude_events().iter().map(chunk).collect(),
        ),
        "converse" => Answer::Json(200, converse_answer()),
        "converse-stream" => Answer::Chunks(
            "application/vnd.amazon.eventstream",
            // Split mid-frame: the reader must join the reads.
            {
                let bytes = converse_stream();
                let (a, b) = bytes.split_at(bytes.len() / 3);
                vec![a.to_vec(), b.to_vec()]
            },
        ),
        "count-tokens" => count_tokens(model, &req.json()),
        _ => aws_error(404, "UnknownOperationException"),
    }
}

/// CountTokens: 31 tokens for an InvokeModel body (decoded from its base64 blob and checked to
/// be a Claude InvokeModel body), 12 for a Converse input; a model whose id says `nocount`
/// cannot count (AWS's ValidationException).
fn count_tokens(model: &str, body: &Value) -> Answer {
    if model.contains("nocount") {
        return Answer::JsonWith(
            400,
            vec![("x-amzn-errortype", "ValidationException".into())],
            json!({"message": "The provided model doesn't support counting tokens."}),
        );
    }
    let input = &body["input"];
    if let Some(blob) = input["invokeModel"]["body"].as_str() {
        let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(blob) else {
            return aws_error(400, "body is not base64");
        };
        let Ok(invoke) = serde_json::from_slice::<Value>(&bytes) else {
            return aws_error(400, "body is not JSON");
        };
        if invoke["anthropic_version"] != "bedrock-2023-05-31" || invoke.get("model").is_some() {
            return aws_error(400, "not a Claude InvokeModel body");
        }
        return Answer::Json(200, json!({"inputTokens": 31}));
    }
    if input["converse"]["messages"].is_array() {
        return Answer::Json(200, json!({"inputTokens": 12}));
    }
    aws_error(400, "input must be invokeModel or converse")
}

fn bedrock_channel(mock: &MockCloud, key: &str, models: &str, mapping: Value) -> Value {
    json!({"name": "bedrock", "type": 33, "key": key, "base_url": mock.base,
        "models": models, "group": "default", "model_mapping": mapping.to_string()})
}

fn sigv4_key() -> String {
    format!("{ACCESS_KEY}|{SECRET_KEY}|{REGION}")
}

/// Prices: the fixture's, and `nova-test` (ratio 1, completion 2).
async fn prices(server: &TestServer, root: &common::Actor) {
    server
        .set_option(
            root,
            "ModelRatio",
            json!(r#"{"claude-test": 2, "gemini-test": 0.5, "nova-test": 1}"#),
        )
        .await;
    server
        .set_option(
            root,
            "CompletionRatio",
            json!(r#"{"claude-test": 5, "gemini-test": 4, "nova-test": 2}"#),
        )
        .await;
}

fn messages(server: &TestServer, key: &str, body: Value) -> reqwest::RequestBuilder {
    server
        .client
        .post(server.url("/v1/messages"))
        .header("x-api-key", key)
        .header("anthropic-version", "2023-06-01")
        .json(&body)
}

/// The mock's verifier agrees with AWS's published SigV4 test suite (get-vanilla,
/// https://docs.aws.amazon.com/general/latest/gr/signature-v4-test-suite.html).
#[test]
fn the_mock_verifies_signatures_like_the_published_test_suite() {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        "host",
        "example.amazonaws.com".parse().unwrap_or_else(|_| panic!()),
    );
    headers.insert(
        "x-amz-date",
        "20150830T123600Z".parse().unwrap_or_else(|_| panic!()),
    );
    headers.insert(
        "authorization",
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
         SignedHeaders=host;x-amz-date, \
         Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
            .parse()
            .unwrap_or_else(|_| panic!()),
    );
    let mut req = Recorded {
        method: reqwest::Method::GET,
        path: "/".into(),
        query: String::new(),
        headers,
        body: Bytes::new(),
    };
    let expect = AwsExpect {
        access_key: "AKIDEXAMPLE",
        secret_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        region: "us-east-1",
        service: "service",
        session_token: None,
        now: None,
    };
    assert_eq!(verify_sigv4(&req, &expect), Ok(()));
    req.path = "/other".into();
    assert!(verify_sigv4(&req, &expect).is_err(), "a changed path fails");
}

#[tokio::test]
async fn claude_goes_through_invoke_model_signed_and_is_billed_from_its_usage() {
    let mock = MockCloud::start(bedrock).await;
    let server = TestServer::start().await;
    let channel = bedrock_channel(
        &mock,
        &sigv4_key(),
        "claude-test",
        json!({"claude-test": "anthropic.claude-3-5-sonnet-20241022-v2:0"}),
    );
    let (root, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    prices(&server, &root).await;
    let (status, _, text) = raw(messages(
        &server,
        &key,
        json!({"model": "claude-test", "max_tokens": 200,
            "messages": [{"role": "user", "content": "Hello"}]}),
    )
    .header(
        "anthropic-beta",
        "interleaved-thinking-2025-05-14, token-efficient-tools-2025-02-19",
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap_or_default(),
        claude_answer()
    );
    let sent = mock.last();
    assert_eq!(
        sent.path,
        "/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/invoke"
    );
    let body = sent.json();
    assert_eq!(body["anthropic_version"], "bedrock-2023-05-31");
    assert!(
        body.get("model").is_none() && body.get("stream").is_none(),
        "{body}"
    );
    assert_eq!(body["max_tokens"], 200);
    assert_eq!(
        body["anthropic_beta"],
        json!([
            "interleaved-thinking-2025-05-14",
            "token-efficient-tools-2025-02-19"
        ]),
        "the beta header goes into the body on Bedrock"
    );
    assert!(
        sent.header("authorization")
            .is_some_and(|a| a.contains(&format!("Credential={ACCESS_KEY}/"))),
        "SigV4-signed"
    );
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // 2 × (12 + 40 × 1.25 + 9 × 5) = 2 × 107 = 214.
    assert_eq!(quota, 1_000_000 - 214);
    assert_eq!((logs[0].prompt_tokens, logs[0].completion_tokens), (52, 9));
}

#[tokio::test]
async fn claude_streams_through_the_event_stream_to_anthropic_and_openai_clients() {
    let mock = MockCloud::start(bedrock).await;
    let server = TestServer::start().await;
    // A cross-region inference profile through the model mapping.
    let channel = bedrock_channel(
        &mock,
        &sigv4_key(),
        "claude-test",
        json!({"claude-test": "us.anthropic.claude-sonnet-4-20250514-v1:0"}),
    );
    let (root, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    prices(&server, &root).await;
    let (status, headers, text) = raw(messages(
        &server,
        &key,
        json!({"model": "claude-test", "max_tokens": 200, "stream": true,
            "messages": [{"role": "user", "content": "Hello"}]}),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(headers["content-type"], "text/event-stream");
    let events = sse_events(&text);
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ],
        "Anthropic's SSE, event for event"
    );
    assert_eq!(events[2].1, claude_events()[2]);
    let sent = mock.last();
    assert_eq!(
        sent.path,
        "/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/invoke-with-response-stream"
    );
    // 2 × (25 + 30 × 5) = 350.
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000 - 350);
    assert!(logs[0].is_stream);

    let (status, _, text) = raw(chat_request(
        &server,
        &key,
        &json!({"model": "claude-test", "max_tokens": 200, "stream": true,
            "messages": [{"role": "user", "content": "Hello"}]}),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let content: String = sse_events(&text)
        .iter()
        .filter_map(|(_, d)| d["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "Hi there");
    let (quota, _, _, _) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000 - 700);
}

#[tokio::test]
async fn other_models_use_converse_with_tools_and_are_billed_from_its_usage() {
    let mock = MockCloud::start(bedrock).await;
    let server = TestServer::start().await;
    let channel = bedrock_channel(
        &mock,
        &sigv4_key(),
        "nova-test",
        json!({"nova-test": "amazon.nova-pro-v1:0"}),
    );
    let (root, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    prices(&server, &root).await;
    let (status, _, text) = raw(chat_request(
        &server,
        &key,
        &json!({"model": "nova-test", "max_tokens": 300,
            "messages": [{"role": "system", "content": "You are terse."},
                {"role": "user", "content": "Weather in Seattle?"}],
            "tools": [{"type": "function", "function": {"name": "get_weather",
                "description": "Current weather", "parameters": {"type": "object",
                "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]}),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let answer: Value = serde_json::from_str(&text).unwrap_or_default();
    let message = &answer["choices"][0]["message"];
    assert_eq!(message["content"], "Checking the weather.");
    assert_eq!(
        message["tool_calls"][0]["id"],
        "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q"
    );
    assert_eq!(
        message["tool_calls"][0]["function"]["arguments"],
        "{\"city\":\"Seattle\"}"
    );
    assert_eq!(answer["choices"][0]["finish_reason"], "tool_calls");
    let sent = mock.last();
    assert_eq!(sent.path, "/model/amazon.nova-pro-v1%3A0/converse");
    let body = sent.json();
    assert_eq!(body["system"], json!([{"text": "You are terse."}]));
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"text": "Weather in Seattle?"}]}])
    );
    assert_eq!(body["inferenceConfig"]["maxTokens"], 300);
    assert_eq!(
        body["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"]["required"],
        json!(["city"])
    );
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // 1 × (40 + 18 × 2) = 76.
    assert_eq!(quota, 1_000_000 - 76);
    assert_eq!((logs[0].prompt_tokens, logs[0].completion_tokens), (40, 18));
}

#[tokio::test]
async fn converse_streams_are_decoded_from_the_event_stream() {
    let mock = MockCloud::start(bedrock).await;
    let server = TestServer::start().await;
    let channel = bedrock_channel(&mock, &sigv4_key(), "nova-test", json!({}));
    let (root, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    prices(&server, &root).await;
    let (status, _, text) = raw(chat_request(
        &server,
        &key,
        &json!({"model": "nova-test", "stream": true, "stream_options": {"include_usage": true},
            "messages": [{"role": "user", "content": "hi"}]}),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let events = sse_events(&text);
    let content: String = events
        .iter()
        .filter_map(|(_, d)| d["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "Nova says hi");
    assert!(
        events
            .iter()
            .any(|(_, d)| d["usage"]["prompt_tokens"] == 14),
        "{text}"
    );
    assert_eq!(mock.last().path, "/model/nova-test/converse-stream");
    let (quota, _, _, _) = balances(&server, payer.id).await;
    // 14 + 6 × 2 = 26.
    assert_eq!(quota, 1_000_000 - 26);

    // An Anthropic client of a Converse model gets Anthropic's events.
    let (status, _, text) = raw(messages(
        &server,
        &key,
        json!({"model": "nova-test", "max_tokens": 50, "stream": true,
            "messages": [{"role": "user", "content": "hi"}]}),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let text_deltas: String = sse_events(&text)
        .iter()
        .filter_map(|(_, d)| d["delta"]["text"].as_str())
        .collect();
    assert_eq!(text_deltas, "Nova says hi");
}

#[tokio::test]
async fn session_tokens_are_signed_and_bedrock_api_keys_are_bearer_tokens() {
    let mock = MockCloud::start(bedrock).await;
    let server = TestServer::start().await;
    let with_token = bedrock_channel(
        &mock,
        &format!("{ACCESS_KEY}|{SECRET_KEY}|{REGION}|{SESSION_TOKEN}"),
        "claude-test",
        json!({}),
    );
    let (root, _, key) = fixture(&server, &[with_token], 1_000_000, 500_000).await;
    prices(&server, &root).await;
    let body = json!({"model": "claude-test", "max_tokens": 20,
        "messages": [{"role": "user", "content": "Hello"}]});
    let (status, _, text) = raw(messages(&server, &key, body.clone())).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(
        mock.last().header("x-amz-security-token").as_deref(),
        Some(SESSION_TOKEN)
    );

    let server = TestServer::start().await;
    let api_key = bedrock_channel(
        &mock,
        &format!("{API_KEY}|{REGION}"),
        "claude-test",
        json!({}),
    );
    let (root, _, key) = fixture(&server, &[api_key], 1_000_000, 500_000).await;
    prices(&server, &root).await;
    let (status, _, text) = raw(messages(&server, &key, body)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let sent = mock.last();
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {API_KEY}"))
    );
    assert_eq!(sent.header("x-amz-date"), None, "not signed");
}

#[tokio::test]
async fn errors_are_classified_and_keys_never_shown() {
    let mock = MockCloud::start(bedrock).await;
    // A wrong secret: AWS refuses the signature (403), the request fails over to a good channel.
    let server = TestServer::start().await;
    let mut wrong = bedrock_channel(
        &mock,
        &format!("{ACCESS_KEY}|not-the-secret-key-0000|{REGION}"),
        "claude-test",
        json!({}),
    );
    wrong["priority"] = json!(10);
    let good = bedrock_channel(&mock, &sigv4_key(), "claude-test", json!({}));
    let (root, _, key) = fixture(&server, &[wrong.clone(), good], 1_000_000, 500_000).await;
    prices(&server, &root).await;
    server.set_option(&root, "RetryTimes", json!("2")).await;
    let body = json!({"model": "claude-test", "max_tokens": 20,
        "messages": [{"role": "user", "content": "Hello"}]});
    let before = mock.requests().len();
    let (status, _, text) = raw(messages(&server, &key, body.clone())).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(
        mock.requests().len() - before,
        2,
        "refused, then retried elsewhere"
    );

    // Alone, the refused channel's error reaches the client without the key.
    let server = TestServer::start().await;
    let (root, _, key) = fixture(&server, &[wrong], 1_000_000, 500_000).await;
    prices(&server, &root).await;
    let (status, _, text) = raw(messages(&server, &key, body.clone())).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{text}");
    assert!(text.contains("SignatureDoesNotMatch"), "{text}");
    assert!(
        !text.contains("not-the-secret-key-0000") && !text.contains(ACCESS_KEY),
        "{text}"
    );

    // A malformed key is refused when the channel is saved (the channel type table's key
    // format), so it never reaches the relay; the refusal does not show the key.
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server
        .client_for(common::ROOT_USER, common::ROOT_PASS)
        .await;
    let bad = bedrock_channel(&mock, "just-one-part-key", "claude-test", json!({}));
    let (status, resp) = root.post("/api/channel/", bad).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{resp}");
    let message = resp["message"].as_str().unwrap_or_default();
    assert!(message.contains("AK|SK|region"), "{message}");
    assert!(!message.contains("just-one-part-key"), "{message}");

    // Throttling (429) is passed on when no other channel can take the request.
    let server = TestServer::start().await;
    let throttled = bedrock_channel(
        &mock,
        &sigv4_key(),
        "claude-test",
        json!({"claude-test": "anthropic.claude-throttled-v1:0"}),
    );
    let (root, payer, key) = fixture(&server, &[throttled], 1_000_000, 500_000).await;
    prices(&server, &root).await;
    let (status, _, text) = raw(messages(&server, &key, body)).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{text}");
    assert!(text.contains("Too many requests"), "{text}");
    let (quota, _, count, _) = balances(&server, payer.id).await;
    assert_eq!((quota, count), (1_000_000, 0), "nothing billed");
}

#[tokio::test]
async fn the_channel_test_is_signed_like_the_relay() {
    let mock = MockCloud::start(bedrock).await;
    let server = TestServer::start().await;
    let channel = bedrock_channel(&mock, &sigv4_key(), "nova-test", json!({}));
    let (root, _, _) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let (status, answer) = root.get("/api/channel/test/1").await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["success"], true, "{answer}");
    let sent = mock.last();
    assert_eq!(sent.path, "/model/nova-test/converse");
    assert_eq!(sent.json()["inferenceConfig"]["maxTokens"], 1);
}

#[tokio::test]
async fn a_refused_signature_condemns_the_key_like_a_401() {
    let mock = MockCloud::start(bedrock).await;
    let server = TestServer::start().await;
    let mut wrong = bedrock_channel(
        &mock,
        &format!("{ACCESS_KEY}|not-the-secret-key-0000|{REGION}"),
        "claude-test",
        json!({}),
    );
    wrong["auto_ban"] = json!(1);
    let (root, _, key) = fixture(&server, &[wrong], 1_000_000, 500_000).await;
    prices(&server, &root).await;
    server
        .set_option(&root, "AutomaticDisableChannelEnabled", json!("true"))
        .await;
    let (status, _, text) = raw(messages(
        &server,
        &key,
        json!({"model": "claude-test", "max_tokens": 20,
            "messages": [{"role": "user", "content": "Hello"}]}),
    ))
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{text}");
    wait_channel_status(&root, 1, 3).await;
}

#[tokio::test]
async fn gemini_clients_and_images_reach_converse() {
    let mock = MockCloud::start(bedrock).await;
    let server = TestServer::start().await;
    let channel = bedrock_channel(&mock, &sigv4_key(), "nova-test", json!({}));
    let (root, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    prices(&server, &root).await;
    let (status, _, text) = raw(server
        .client
        .post(server.url("/v1beta/models/nova-test:generateContent"))
        .header("x-goog-api-key", &key)
        .json(
            &json!({"contents": [{"role": "user", "parts": [{"text": "Weather?"},
            {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]}]}),
        ))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let answer: Value = serde_json::from_str(&text).unwrap_or_default();
    let parts = &answer["candidates"][0]["content"]["parts"];
    assert_eq!(parts[0]["text"], "Checking the weather.", "{answer}");
    assert_eq!(parts[1]["functionCall"]["name"], "get_weather", "{answer}");
    assert_eq!(answer["usageMetadata"]["promptTokenCount"], 40);
    let sent = mock.last();
    assert_eq!(sent.path, "/model/nova-test/converse");
    assert_eq!(
        sent.json()["messages"][0]["content"],
        json!([{"text": "Weather?"},
            {"image": {"format": "png", "source": {"bytes": "iVBORw0KGgo="}}}])
    );
    let (quota, _, _, _) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000 - 76);
}

fn count(server: &TestServer, key: &str, body: Value) -> reqwest::RequestBuilder {
    server
        .client
        .post(server.url("/v1/messages/count_tokens"))
        .header("x-api-key", key)
        .header("anthropic-version", "2023-06-01")
        .json(&body)
}

#[tokio::test]
async fn count_tokens_asks_bedrock_count_tokens_and_counts_itself_when_it_cannot() {
    let mock = MockCloud::start(bedrock).await;
    let server = TestServer::start().await;
    let channel = bedrock_channel(
        &mock,
        &sigv4_key(),
        "claude-test,nova-test,claude-nocount",
        json!({"claude-test": "anthropic.claude-3-5-sonnet-20241022-v2:0",
            "nova-test": "amazon.nova-pro-v1:0",
            "claude-nocount": "us.anthropic.claude-nocount-v1:0"}),
    );
    let (_, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let body = |model: &str| {
        json!({"model": model, "system": "Be brief.",
            "messages": [{"role": "user", "content": "Hello, Claude"}]})
    };

    // Claude: CountTokens with the InvokeModel body Tollgate would send, signed with SigV4.
    let (status, _, text) = raw(count(&server, &key, body("claude-test"))
        .header("anthropic-beta", "token-counting-2024-11-01"))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap_or_default(),
        json!({"input_tokens": 31}),
        "Bedrock's inputTokens in Anthropic's shape"
    );
    let sent = mock.last();
    assert_eq!(
        sent.path,
        "/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/count-tokens"
    );
    assert!(
        sent.header("authorization")
            .is_some_and(|a| a.contains(&format!("Credential={ACCESS_KEY}/"))),
        "SigV4-signed (the mock verified the signature)"
    );
    let blob = sent.json()["input"]["invokeModel"]["body"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_default();
    let invoke: Value = base64::engine::general_purpose::STANDARD
        .decode(blob)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    assert_eq!(
        invoke,
        json!({"anthropic_version": "bedrock-2023-05-31", "max_tokens": 1,
            "system": "Be brief.", "messages": [{"role": "user", "content": "Hello, Claude"}],
            "anthropic_beta": ["token-counting-2024-11-01"]})
    );

    // Another model: CountTokens with the Converse messages and system.
    let (status, answer) = server.send(count(&server, &key, body("nova-test"))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer, json!({"input_tokens": 12}));
    let sent = mock.last();
    assert_eq!(sent.path, "/model/amazon.nova-pro-v1%3A0/count-tokens");
    assert_eq!(
        sent.json(),
        json!({"input": {"converse": {"system": [{"text": "Be brief."}],
            "messages": [{"role": "user", "content": [{"text": "Hello, Claude"}]}]}}})
    );

    // A model Bedrock cannot count for (ValidationException): Tollgate counts — "Be brief."
    // (3) + "Hello, Claude" (4) + 3 per message × 2 + 3 = 16.
    let calls = mock.requests_to("/model/").len();
    let (status, answer) = server
        .send(count(&server, &key, body("claude-nocount")))
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer, json!({"input_tokens": 16}));
    assert_eq!(
        mock.requests_to("/model/").len(),
        calls + 1,
        "Bedrock was asked"
    );

    // Counting is free.
    let (quota, _, requests, logs) = balances(&server, payer.id).await;
    assert_eq!((quota, requests, logs.len()), (1_000_000, 0, 0));
}

fn embeddings(server: &TestServer, key: &str, body: Value) -> reqwest::RequestBuilder {
    server
        .client
        .post(server.url("/v1/embeddings"))
        .bearer_auth(key)
        .json(&body)
}

#[tokio::test]
async fn titan_and_cohere_embeddings_go_through_invoke_model_signed() {
    let mock = MockCloud::start(bedrock).await;
    let server = TestServer::start().await;
    let channel = bedrock_channel(
        &mock,
        &sigv4_key(),
        "nova-test,gemini-test",
        json!({"nova-test": "amazon.titan-embed-text-v2:0",
            "gemini-test": "cohere.embed-multilingual-v3"}),
    );
    let (root, payer, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    prices(&server, &root).await;

    // Titan: one text, `dimensions` passed on, billed from inputTextTokenCount (1 × 7).
    let (status, answer) = server
        .send(embeddings(
            &server,
            &key,
            json!({"model": "nova-test", "input": "hello bedrock", "dimensions": 256}),
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["data"][0]["embedding"], json!([0.5, 0.25]));
    assert_eq!(answer["usage"]["prompt_tokens"], 7);
    let sent = mock.last();
    assert_eq!(sent.path, "/model/amazon.titan-embed-text-v2%3A0/invoke");
    assert!(
        sent.header("authorization")
            .is_some_and(|a| a.contains(&format!("Credential={ACCESS_KEY}/"))),
        "SigV4-signed (the mock verified it)"
    );
    assert_eq!(
        sent.json(),
        json!({"inputText": "hello bedrock", "dimensions": 256})
    );
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000 - 7);
    assert_eq!(logs[0].prompt_tokens, 7);

    // Titan takes one text per call: a list of two is the client's to split, nothing is sent.
    let calls = mock.requests().len();
    let (status, answer) = server
        .send(embeddings(
            &server,
            &key,
            json!({"model": "nova-test", "input": ["a", "b"]}),
        ))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert!(
        answer.to_string().contains("one text per request"),
        "{answer}"
    );
    assert_eq!(mock.requests().len(), calls);

    // Cohere Embed: every text in one call; no token count in its body, so Tollgate's count
    // of the texts is billed (two 8-letter texts: 2 + 2 tokens; gemini-test 0.5 × 4 = 2).
    let (status, answer) = server
        .send(embeddings(
            &server,
            &key,
            json!({"model": "gemini-test", "input": ["abcdefgh", "ijklmnop"],
                "input_type": "search_query"}),
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["data"][1]["embedding"], json!([0.75, 1]));
    assert_eq!(answer["usage"]["prompt_tokens"], 4);
    let sent = mock.last();
    assert_eq!(sent.path, "/model/cohere.embed-multilingual-v3/invoke");
    assert_eq!(
        sent.json(),
        json!({"texts": ["abcdefgh", "ijklmnop"], "input_type": "search_query",
            "embedding_types": ["float"]})
    );
    let (quota, _, requests, _) = balances(&server, payer.id).await;
    assert_eq!((quota, requests), (1_000_000 - 7 - 2, 2));
}
