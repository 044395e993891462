//! The OpenAI Responses API both ways, through the public HTTP API: `/v1/responses` clients of
//! channels without it (a chat-only OpenAI-compatible channel, Claude) get their answers as
//! Responses objects and typed events; chat clients of a channel set to
//! `setting.upstream_api: "responses"` get chat completions made from its Responses answers;
//! what a chat upstream cannot honour is refused with a 400 naming the field; a channel that has
//! the API still gets the client's bytes. Billed from the usage the upstream reported (chat
//! `usage`, Anthropic `usage`, Responses `response.completed`), a cut stream from what was read.
//!
//! Shapes follow OpenAI's API reference (<https://platform.openai.com/docs/api-reference/responses>
//! and its streaming events page).

mod common;

use common::TestServer;
use common::fault::{Script, Tail};
use common::mock_anthropic::MockAnthropic;
use common::mock_scripted::MockScripted;
use common::relay_fixture::{balances, fixture, other, raw, sse_events};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// A chat-only OpenAI-compatible channel (custom, type 8) serving `models`.
fn chat_channel(mock: &MockScripted, models: &str) -> Value {
    json!({"name": "chat-only", "type": 8, "key": "chat-upstream-key", "base_url": mock.base,
        "models": models, "group": "default"})
}

/// An OpenAI-compatible channel that answers through the Responses API.
fn responses_channel(mock: &MockScripted, models: &str) -> Value {
    json!({"name": "responses-only", "type": 8, "key": "responses-upstream-key",
        "base_url": mock.base, "models": models, "group": "default",
        "setting": r#"{"upstream_api": "responses"}"#})
}

/// chat-test and resp-test: ratio 1, completion 2; mixed-test: ratio 1.
async fn prices(server: &TestServer) {
    let root = server
        .client_for(common::ROOT_USER, common::ROOT_PASS)
        .await;
    server
        .set_option(
            &root,
            "ModelRatio",
            json!(r#"{"claude-test": 2, "chat-test": 1, "resp-test": 1, "mixed-test": 1}"#),
        )
        .await;
    server
        .set_option(
            &root,
            "CompletionRatio",
            json!(r#"{"claude-test": 5, "chat-test": 2, "resp-test": 2}"#),
        )
        .await;
}

fn post(server: &TestServer, key: &str, path: &str, body: &Value) -> reqwest::RequestBuilder {
    server
        .client
        .post(server.url(path))
        .bearer_auth(key)
        .json(body)
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let c = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
        "model": "chat-test", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {c}\n\n")
}

fn chat_stream() -> Vec<String> {
    vec![
        chunk(json!({"role": "assistant", "content": ""}), None),
        chunk(json!({"content": "Hi"}), None),
        chunk(json!({"content": " there"}), None),
        chunk(json!({}), Some("stop")),
        format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
                "model": "chat-test", "choices": [],
                "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}})
        ),
        "data: [DONE]\n\n".to_owned(),
    ]
}

#[tokio::test]
async fn responses_clients_of_a_chat_only_channel_are_converted_both_ways() {
    let mock = MockScripted::start().await;
    mock.push_json(
        200,
        &json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "chat-test",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi there"},
                "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}}),
    );
    mock.push(Script::ok("text/event-stream", chat_stream()));
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(
        &server,
        &[chat_channel(&mock, "chat-test")],
        1_000_000,
        500_000,
    )
    .await;
    prices(&server).await;
    let body = json!({"model": "chat-test", "instructions": "be brief", "max_output_tokens": 50,
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "hello"}]}],
        "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}]});
    let (status, answer) = server
        .send(post(&server, &key, "/v1/responses", &body))
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        (&answer["object"], &answer["status"], &answer["model"]),
        (&json!("response"), &json!("completed"), &json!("chat-test"))
    );
    assert_eq!(answer["output"][0]["type"], "message");
    assert_eq!(answer["output"][0]["content"][0]["type"], "output_text");
    assert_eq!(answer["output"][0]["content"][0]["text"], "Hi there");
    assert_eq!(
        (
            &answer["usage"]["input_tokens"],
            &answer["usage"]["output_tokens"]
        ),
        (&json!(20), &json!(5))
    );
    let call = mock.last();
    assert_eq!(call.uri, "/v1/chat/completions");
    assert_eq!(
        call.json(),
        json!({"model": "chat-test", "max_tokens": 50,
            "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]})
    );

    // Streamed: the chat chunks become typed events, the usage chunk `response.completed`'s.
    let mut stream = body.clone();
    stream["stream"] = json!(true);
    let (status, _, text) = raw(post(&server, &key, "/v1/responses", &stream)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let events = sse_events(&text);
    assert_eq!(events[0].0, "response.created");
    let deltas: String = events
        .iter()
        .filter(|(k, _)| k == "response.output_text.delta")
        .filter_map(|(_, d)| d["delta"].as_str())
        .collect();
    assert_eq!(deltas, "Hi there");
    let (last, done) = events.last().cloned().unwrap_or_default();
    assert_eq!(last, "response.completed", "{text}");
    assert_eq!(
        done["response"]["output"][0]["content"][0]["text"],
        "Hi there"
    );
    assert_eq!(done["response"]["usage"]["input_tokens"], 20);
    assert_eq!(done["response"]["usage"]["output_tokens"], 5);
    let sent = mock.last().json();
    assert_eq!(
        (&sent["stream"], &sent["stream_options"]["include_usage"]),
        (&json!(true), &json!(true))
    );
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // 1 × (20 + 5 × 2) = 30, twice.
    assert_eq!(quota, 1_000_000 - 60);
    assert!(logs[0].is_stream);
    assert_eq!((logs[0].prompt_tokens, logs[0].completion_tokens), (20, 5));
    assert_eq!(other(&logs[0])["usage_source"], "upstream");
}

#[tokio::test]
async fn responses_clients_reach_claude_channels() {
    let mock = MockAnthropic::start().await;
    let server = TestServer::start().await;
    let claude = json!({"name": "claude", "type": 14, "key": "claude-upstream-key",
        "base_url": mock.base, "models": "claude-test", "group": "default"});
    let (_, payer, key) = fixture(&server, &[claude], 1_000_000, 500_000).await;
    let body = json!({"model": "claude-test", "input": "hi", "max_output_tokens": 20});
    let (status, answer) = server
        .send(post(&server, &key, "/v1/responses", &body))
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["object"], "response");
    assert_eq!(answer["output"][0]["content"][0]["text"], "Hello");
    assert_eq!(answer["usage"]["input_tokens"], 10);
    let sent = mock.last_body().unwrap_or_default();
    assert_eq!(
        (
            &sent["max_tokens"],
            &sent["messages"][0]["content"][0]["text"]
        ),
        (&json!(20), &json!("hi"))
    );
    let mut stream = body.clone();
    stream["stream"] = json!(true);
    let (status, _, text) = raw(post(&server, &key, "/v1/responses", &stream)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let events = sse_events(&text);
    let deltas: String = events
        .iter()
        .filter(|(k, _)| k == "response.output_text.delta")
        .filter_map(|(_, d)| d["delta"].as_str())
        .collect();
    assert_eq!(deltas, "Hello");
    let (last, done) = events.last().cloned().unwrap_or_default();
    assert_eq!(last, "response.completed");
    assert_eq!(done["response"]["usage"]["input_tokens"], 10);
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // 2 × (10 + 2 × 5) = 40, twice.
    assert_eq!(quota, 1_000_000 - 80);
    assert_eq!((logs[0].prompt_tokens, logs[0].completion_tokens), (10, 2));
}

#[tokio::test]
async fn chat_clients_of_a_responses_only_channel_are_converted_both_ways() {
    let mock = MockScripted::start().await;
    mock.push_json(
        200,
        &json!({"id": "resp_1", "object": "response", "created_at": 1, "status": "completed",
            "model": "resp-test",
            "output": [{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": "Hi there", "annotations": []}]}],
            "usage": {"input_tokens": 12, "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 4, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 16}}),
    );
    mock.push_events(&[
        (
            "response.created",
            json!({"type": "response.created", "sequence_number": 0,
            "response": {"id": "resp_2", "object": "response", "status": "in_progress", "model": "resp-test", "output": []}}),
        ),
        (
            "response.output_item.added",
            json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
            "item": {"id": "msg_2", "type": "message", "status": "in_progress", "role": "assistant", "content": []}}),
        ),
        (
            "response.output_text.delta",
            json!({"type": "response.output_text.delta", "sequence_number": 2, "item_id": "msg_2",
            "output_index": 0, "content_index": 0, "delta": "Hi", "logprobs": []}),
        ),
        (
            "response.output_text.delta",
            json!({"type": "response.output_text.delta", "sequence_number": 3, "item_id": "msg_2",
            "output_index": 0, "content_index": 0, "delta": " there", "logprobs": []}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed", "sequence_number": 4,
            "response": {"id": "resp_2", "object": "response", "status": "completed", "model": "resp-test",
                "output": [{"type": "message", "id": "msg_2", "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": "Hi there", "annotations": []}]}],
                "usage": {"input_tokens": 12, "output_tokens": 4, "total_tokens": 16}}}),
        ),
    ]);
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(
        &server,
        &[responses_channel(&mock, "resp-test")],
        1_000_000,
        500_000,
    )
    .await;
    prices(&server).await;
    let body = json!({"model": "resp-test", "max_tokens": 30,
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}]});
    let (status, answer) = server
        .send(post(&server, &key, "/v1/chat/completions", &body))
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["object"], "chat.completion");
    assert_eq!(answer["choices"][0]["message"]["content"], "Hi there");
    assert_eq!(answer["choices"][0]["finish_reason"], "stop");
    assert_eq!(answer["usage"]["prompt_tokens"], 12);
    let call = mock.last();
    assert_eq!(call.uri, "/v1/responses");
    assert_eq!(
        call.header("authorization").as_deref(),
        Some("Bearer responses-upstream-key")
    );
    assert_eq!(
        call.json(),
        json!({"model": "resp-test", "store": false, "max_output_tokens": 30,
            "input": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}]})
    );
    let mut stream = body.clone();
    stream["stream"] = json!(true);
    stream["stream_options"] = json!({"include_usage": true});
    let (status, _, text) = raw(post(&server, &key, "/v1/chat/completions", &stream)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let chunks = sse_events(&text);
    let content: String = chunks
        .iter()
        .filter_map(|(_, c)| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "Hi there");
    let usage = chunks
        .iter()
        .find_map(|(_, c)| c.get("usage").filter(|u| u.is_object()))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (&usage["prompt_tokens"], &usage["completion_tokens"]),
        (&json!(12), &json!(4))
    );
    assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
    assert_eq!(mock.last().json()["stream"], true);
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // 1 × (12 + 4 × 2) = 20, twice.
    assert_eq!(quota, 1_000_000 - 40);
    assert!(logs[0].is_stream);
    assert_eq!((logs[0].prompt_tokens, logs[0].completion_tokens), (12, 4));
    assert_eq!(other(&logs[0])["usage_source"], "upstream");
}

#[tokio::test]
async fn a_cut_responses_stream_bills_what_was_read() {
    let mock = MockScripted::start().await;
    let mut script = Script::ok(
        "text/event-stream",
        vec![
            format!(
                "event: response.created\ndata: {}\n\n",
                json!({"type": "response.created", "response": {"id": "resp_3", "status": "in_progress"}})
            ),
            format!(
                "event: response.output_text.delta\ndata: {}\n\n",
                json!({"type": "response.output_text.delta", "item_id": "m", "output_index": 0,
                    "content_index": 0, "delta": "aaaabbbbcccc"})
            ),
        ],
    );
    script.tail = Tail::Cut;
    mock.push(script);
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(
        &server,
        &[responses_channel(&mock, "resp-test")],
        1_000_000,
        500_000,
    )
    .await;
    prices(&server).await;
    let body = json!({"model": "resp-test", "stream": true,
        "messages": [{"role": "user", "content": "hi"}]});
    let (status, _, text) = raw(post(&server, &key, "/v1/chat/completions", &body)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(text.contains("aaaabbbbcccc"), "{text}");
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    let row = &logs[0];
    // Prompt counted: "hi" 1 + 3 + 3 framing = 7; completion counted: 12 characters → 3.
    assert_eq!((row.prompt_tokens, row.completion_tokens), (7, 3));
    assert_eq!(other(row)["usage_source"], "partial");
    assert_eq!(other(row)["partial_reason"], "upstream_cut");
    assert_eq!(quota, 1_000_000 - 13);
}

#[tokio::test]
async fn what_a_chat_upstream_cannot_honour_is_refused_by_name() {
    let chat = MockScripted::start().await;
    let responses = MockScripted::start().await;
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(
        &server,
        &[
            chat_channel(&chat, "chat-test"),
            responses_channel(&responses, "resp-test"),
        ],
        1_000_000,
        500_000,
    )
    .await;
    prices(&server).await;
    let refused = |path: &'static str, body: Value| {
        let server = &server;
        let key = &key;
        async move {
            let (status, answer) = server.send(post(server, key, path, &body)).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
            answer["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        }
    };
    let message = refused(
        "/v1/responses",
        json!({"model": "chat-test", "input": "and then?", "previous_response_id": "resp_123"}),
    )
    .await;
    assert!(message.starts_with("previous_response_id:"), "{message}");
    let message = refused(
        "/v1/responses",
        json!({"model": "chat-test", "input": "news?", "tools": [{"type": "web_search_preview"}]}),
    )
    .await;
    assert!(message.starts_with("tools[0].type:"), "{message}");
    let message = refused(
        "/v1/responses",
        json!({"model": "chat-test", "input": [{"role": "user", "content": "hi"},
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA"}]}),
    )
    .await;
    assert!(message.starts_with("input[1]:"), "{message}");
    let message = refused(
        "/v1/chat/completions",
        json!({"model": "resp-test", "n": 2, "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert!(message.starts_with("n:"), "{message}");
    assert!(chat.calls().is_empty() && responses.calls().is_empty());
    let (quota, _, _, _) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000, "nothing is billed");
}

#[tokio::test]
async fn a_channel_with_the_responses_api_gets_the_clients_bytes_in_a_mixed_route() {
    let openai = MockScripted::start().await;
    let claude = MockAnthropic::start().await;
    let answer = r#"{"id":"resp_9","object":"response","status":"completed","model":"mixed-test",
 "output":[{"type":"message","id":"msg_9","role":"assistant","content":[{"type":"output_text","text":"Hey","annotations":[]}]}],
 "usage":{"input_tokens":9,"output_tokens":1,"total_tokens":10}}"#;
    openai.push(Script::ok("application/json", vec![answer.to_owned()]));
    let server = TestServer::start().await;
    let channels = [
        json!({"name": "openai", "type": 1, "key": "openai-upstream-key", "base_url": openai.base,
            "models": "mixed-test", "group": "default", "priority": 10}),
        json!({"name": "claude", "type": 14, "key": "claude-upstream-key", "base_url": claude.base,
            "models": "mixed-test", "group": "default", "priority": 0}),
    ];
    let (_, payer, key) = fixture(&server, &channels, 1_000_000, 500_000).await;
    prices(&server).await;
    let body = "{\"model\": \"mixed-test\",  \"input\": \"hey\", \"store\": true}";
    let (status, _, text) = raw(server
        .client
        .post(server.url("/v1/responses"))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .body(body))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(text, answer, "the answer reaches the client byte for byte");
    let call = openai.last();
    assert_eq!(call.uri, "/v1/responses");
    assert_eq!(
        call.body.as_ref(),
        body.as_bytes(),
        "the body is not rewritten"
    );
    assert_eq!(claude.calls(), 0);
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000 - 10);
    assert_eq!((logs[0].prompt_tokens, logs[0].completion_tokens), (9, 1));
}
