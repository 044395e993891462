//! Anthropic through the public HTTP API: POST /v1/messages to Claude channels (byte-exact
//! pass-through, stream and not), to OpenAI channels (converted both ways), OpenAI chat clients
//! of Claude channels, exact billing with cache reads and writes, auth headers, Anthropic-shaped
//! errors, model mapping and failover, and count_tokens (forwarded or counted locally).

mod common;

use common::TestServer;
use common::mock_anthropic::{AnthropicUsage, MockAnthropic};
use common::mock_upstream::MockUpstream;
use common::relay_fixture::{balances, fixture, new_key, other, raw, sse_events, wait_until};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

fn claude_channel(mock: &MockAnthropic) -> Value {
    json!({"name": "claude", "type": 14, "key": "claude-upstream-key", "base_url": mock.base,
        "models": "claude-test", "group": "default"})
}

fn openai_channel(mock: &MockUpstream, models: &str) -> Value {
    json!({"name": "openai", "type": 1, "key": "openai-upstream-key", "base_url": mock.base,
        "models": models, "group": "default"})
}

fn messages_req(server: &TestServer, key: &str) -> reqwest::RequestBuilder {
    server
        .client
        .post(server.url("/v1/messages"))
        .header("x-api-key", key)
        .header("anthropic-version", "2023-06-01")
}

#[tokio::test]
async fn claude_pass_through_is_byte_exact_both_ways_and_bills_cache_tokens() {
    let mock = MockAnthropic::start().await;
    let answer = r#"{"id":"msg_1",  "type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"Hi"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":100,"cache_creation_input_tokens":200,"cache_read_input_tokens":1000,"output_tokens":20}, "extra": "kept"}"#;
    mock.set_raw_answer("application/json", answer);
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(&server, &[claude_channel(&mock)], 1_000_000, 500_000).await;
    // Odd spacing and key order: the upstream must get exactly these bytes.
    let body = "{ \"max_tokens\": 50,\n  \"model\": \"claude-test\", \"messages\": [{\"role\":\"user\",\"content\":\"hi\"}], \"metadata\": {\"user_id\": \"u1\"} }";
    let (status, headers, text) = raw(messages_req(&server, &key)
        .header("anthropic-beta", "prompt-caching-2024-07-31")
        .header("content-type", "application/json")
        .body(body))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(text, answer, "the answer reaches the client byte for byte");
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(
        mock.last_raw_body().as_deref(),
        Some(body.as_bytes()),
        "the request reaches the upstream byte for byte"
    );
    assert_eq!(
        mock.last_header("x-api-key").as_deref(),
        Some("claude-upstream-key")
    );
    assert_eq!(
        mock.last_header("anthropic-version").as_deref(),
        Some("2023-06-01")
    );
    assert_eq!(
        mock.last_header("anthropic-beta").as_deref(),
        Some("prompt-caching-2024-07-31")
    );
    assert_eq!(
        mock.last_header("authorization"),
        None,
        "the client's key never leaves"
    );
    let (quota, used, count, logs) = balances(&server, payer.id).await;
    // 2 × (100 + 1000 × 0.1 + 200 × 1.25 + 20 × 5) = 2 × 550 = 1100
    assert_eq!((quota, used, count), (1_000_000 - 1100, 1100, 1));
    let log = &logs[0];
    assert_eq!(
        (log.quota, log.prompt_tokens, log.completion_tokens),
        (1100, 1300, 20)
    );
    let other = other(log);
    assert_eq!(other["cache_tokens"], 1000);
    assert_eq!(other["cache_creation_tokens"], 200);
    assert_eq!(other["cache_ratio"], 0.1);
    assert_eq!(other["usage_source"], "upstream");
}

#[tokio::test]
async fn claude_stream_is_piped_unchanged_and_billed_from_its_events() {
    let mock = MockAnthropic::start().await;
    let stream = concat!(
        "event: message_start\n",
        "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-test\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":30,\"cache_read_input_tokens\":100,\"cache_creation_input_tokens\":0,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\n",
        "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: ping\ndata: {\"type\": \"ping\"}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: message_delta\n",
        "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":40}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    mock.set_raw_answer("text/event-stream", stream);
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(&server, &[claude_channel(&mock)], 1_000_000, 500_000).await;
    let (status, headers, text) = raw(messages_req(&server, &key).json(&json!({
        "model": "claude-test", "max_tokens": 100, "stream": true,
        "messages": [{"role": "user", "content": "hi"}]})))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(headers["content-type"], "text/event-stream");
    assert_eq!(text, stream, "the stream reaches the client byte for byte");
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // 2 × (30 + 100 × 0.1 + 40 × 5) = 2 × 240 = 480
    assert_eq!(quota, 1_000_000 - 480);
    assert_eq!(
        (logs[0].prompt_tokens, logs[0].completion_tokens),
        (130, 40)
    );
    assert!(logs[0].is_stream);
    assert_eq!(other(&logs[0])["usage_source"], "upstream");
}

#[tokio::test]
async fn keys_by_header_and_errors_in_anthropic_shape() {
    let mock = MockAnthropic::start().await;
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(&server, &[claude_channel(&mock)], 1_000_000, 500_000).await;
    let body = json!({"model": "claude-test", "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}]});

    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/messages"))
                .bearer_auth(&key)
                .json(&body),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "a bearer key works too: {answer}");
    assert_eq!(answer["content"][0]["text"], "Hello");

    let (status, answer) = server
        .send(server.client.post(server.url("/v1/messages")).json(&body))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(answer["type"], "error");
    assert_eq!(answer["error"]["type"], "authentication_error");
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("x-api-key"))
    );

    let (status, answer) = server
        .send(messages_req(&server, "sk-nope").json(&body))
        .await;
    assert_eq!(
        (status, answer["error"]["type"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("authentication_error"))
    );

    let limited = new_key(
        &payer,
        500_000,
        json!({"model_limits_enabled": true, "model_limits": "gpt-4o"}),
    )
    .await;
    let (status, answer) = server
        .send(messages_req(&server, &limited).json(&body))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    assert_eq!(answer["error"]["type"], "permission_error");

    let (status, answer) = server
        .send(messages_req(&server, &key).body("{not json"))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(answer["error"]["type"], "invalid_request_error");

    mock.push_fault(
        400,
        json!({"type": "error", "error": {"type": "invalid_request_error",
        "message": "max_tokens: Field required"}}),
    );
    let (status, answer) = server.send(messages_req(&server, &key).json(&body)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(answer["type"], "error");
    assert_eq!(answer["error"]["message"], "max_tokens: Field required");

    let poor = new_key(&payer, 1, json!({})).await;
    let (status, answer) = server.send(messages_req(&server, &poor).json(&body)).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    assert_eq!(answer["type"], "error");
    let (quota, _, count, _) = balances(&server, payer.id).await;
    // Only the first request was billed: 2 × (10 + 2 × 5) = 40.
    assert_eq!((quota, count), (1_000_000 - 40, 1));
}

#[tokio::test]
async fn model_mapping_rewrites_only_the_model_and_failover_reaches_the_next_tier() {
    let broken = MockAnthropic::start().await;
    let mock = MockAnthropic::start().await;
    let server = TestServer::start().await;
    let mut first = claude_channel(&broken);
    first["priority"] = json!(10);
    let mut second = claude_channel(&mock);
    second["model_mapping"] = json!(r#"{"claude-test": "claude-upstream"}"#);
    let (root, payer, key) = fixture(&server, &[first, second], 1_000_000, 500_000).await;
    server.set_option(&root, "RetryTimes", json!("1")).await;
    broken.push_fault(
        529,
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    );
    let (status, answer) = server
        .send(
            messages_req(&server, &key).json(&json!({"model": "claude-test", "max_tokens": 10,
            "temperature": 0.5, "messages": [{"role": "user", "content": "hi"}]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!((broken.calls(), mock.calls()), (1, 1));
    let sent = mock.last_body().unwrap_or_default();
    assert_eq!(sent["model"], "claude-upstream");
    assert_eq!(sent["temperature"], 0.5, "everything else is kept");
    let (_, _, _, logs) = balances(&server, payer.id).await;
    let other = other(&logs[0]);
    assert_eq!(other["upstream_model_name"], "claude-upstream");
    assert_eq!(other["is_model_mapped"], true);
    assert_eq!(other["admin_info"]["use_channel"], json!([1, 2]));
}

#[tokio::test]
async fn messages_to_an_openai_channel_are_converted_both_ways() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((1000, 200, 400)));
    mock.set_pieces(&["hello"]);
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(
        &server,
        &[openai_channel(&mock, "gpt-4o")],
        1_000_000,
        500_000,
    )
    .await;
    let (status, answer) = server
        .send(
            messages_req(&server, &key).json(&json!({"model": "gpt-4o", "max_tokens": 300,
            "system": "be brief", "stop_sequences": ["END"],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let sent = mock.last_body().unwrap_or_default();
    assert_eq!(
        sent["messages"],
        json!([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}])
    );
    assert_eq!(
        (sent["max_tokens"].as_i64(), sent["stop"].clone()),
        (Some(300), json!(["END"]))
    );
    assert_eq!(mock.last_key().as_deref(), Some("openai-upstream-key"));
    assert_eq!(answer["type"], "message");
    assert_eq!(answer["role"], "assistant");
    assert_eq!(answer["model"], "gpt-4o");
    assert_eq!(
        answer["content"],
        json!([{"type": "text", "text": "hello"}])
    );
    assert_eq!(answer["stop_reason"], "end_turn");
    assert_eq!(
        answer["usage"],
        json!({"input_tokens": 600, "output_tokens": 200, "cache_read_input_tokens": 400,
            "cache_creation_input_tokens": 0})
    );
    let (quota, _, _, _) = balances(&server, payer.id).await;
    // gpt-4o: 1.25 × (600 + 400 × 0.5 + 200 × 4) = 2000
    assert_eq!(quota, 1_000_000 - 2000);
}

#[tokio::test]
async fn a_converted_stream_whose_upstream_event_never_ends_is_cut_off_and_billed_as_partial() {
    let mock = MockUpstream::start().await;
    let first =
        "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"He\"}}]}\n\n";
    // One event of 65 MiB with no blank line after it: past the 64 MiB limit of an event.
    let endless = format!("data: {}", "x".repeat(65 << 20));
    mock.set_raw_stream(&[first, &endless, "\n\ndata: [DONE]\n\n"]);
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(
        &server,
        &[openai_channel(&mock, "gpt-4o")],
        1_000_000,
        500_000,
    )
    .await;
    let (status, _, text) = raw(messages_req(&server, &key).json(&json!({"model": "gpt-4o",
        "max_tokens": 100, "stream": true, "messages": [{"role": "user", "content": "hi"}]})))
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        text.len() < 64 * 1024,
        "the client got {} bytes",
        text.len()
    );
    let said: String = sse_events(&text)
        .iter()
        .filter_map(|(_, d)| d["delta"]["text"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(said, "He", "the events before it were converted and sent");
    let (_, _, _, logs) = balances(&server, payer.id).await;
    assert_eq!(other(&logs[0])["usage_source"], "partial");
}

#[tokio::test]
async fn messages_stream_from_an_openai_channel_becomes_anthropic_events() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((50, 10, 0)));
    mock.set_pieces(&["Hel", "lo"]);
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(
        &server,
        &[openai_channel(&mock, "gpt-4o")],
        1_000_000,
        500_000,
    )
    .await;
    let (status, _, text) = raw(messages_req(&server, &key).json(&json!({"model": "gpt-4o",
        "max_tokens": 100, "stream": true, "messages": [{"role": "user", "content": "hi"}]})))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(
        mock.last_body().unwrap_or_default()["stream_options"]["include_usage"],
        true,
        "usage is asked of the upstream"
    );
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
        ]
    );
    for (name, data) in &events {
        assert_eq!(
            data["type"],
            name.as_str(),
            "each event names its type twice"
        );
    }
    let text: String = events
        .iter()
        .filter_map(|(_, d)| d["delta"]["text"].as_str())
        .collect();
    assert_eq!(text, "Hello");
    assert_eq!(events[0].1["message"]["model"], "gpt-4o");
    assert_eq!(events[5].1["delta"]["stop_reason"], "end_turn");
    assert_eq!(events[5].1["usage"]["output_tokens"], 10);
    assert_eq!(events[5].1["usage"]["input_tokens"], 50);
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // 1.25 × (50 + 10 × 4) = 112.5 → 113
    assert_eq!(quota, 1_000_000 - 113);
    assert_eq!(other(&logs[0])["usage_source"], "upstream");
}

#[tokio::test]
async fn openai_chat_clients_of_claude_channels_get_openai_answers() {
    let mock = MockAnthropic::start().await;
    mock.set_usage(AnthropicUsage {
        input: 20,
        output: 8,
        cache_read: 100,
        cache_write: 40,
    });
    mock.set_pieces(&["Hel", "lo"]);
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(&server, &[claude_channel(&mock)], 1_000_000, 500_000).await;
    let chat = |body: Value| {
        server
            .client
            .post(server.url("/v1/chat/completions"))
            .bearer_auth(&key)
            .json(&body)
    };
    let (status, answer) = server
        .send(chat(json!({"model": "claude-test", "messages": [
            {"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]})))
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let sent = mock.last_body().unwrap_or_default();
    assert_eq!(
        sent["system"],
        json!([{"type": "text", "text": "be brief"}])
    );
    assert_eq!(
        sent["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
    );
    assert_eq!(sent["max_tokens"], 8192, "Anthropic needs max_tokens");
    assert_eq!(
        mock.last_header("x-api-key").as_deref(),
        Some("claude-upstream-key")
    );
    assert_eq!(
        mock.last_header("anthropic-version").as_deref(),
        Some("2023-06-01")
    );
    assert_eq!(answer["object"], "chat.completion");
    assert_eq!(answer["model"], "claude-test");
    assert_eq!(answer["choices"][0]["message"]["content"], "Hello");
    assert_eq!(answer["choices"][0]["finish_reason"], "stop");
    assert_eq!(answer["usage"]["prompt_tokens"], 160);
    assert_eq!(answer["usage"]["completion_tokens"], 8);
    assert_eq!(
        answer["usage"]["prompt_tokens_details"]["cached_tokens"],
        100
    );

    let (status, _, text) = raw(chat(json!({"model": "claude-test", "stream": true,
        "messages": [{"role": "user", "content": "hi"}]})))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let events = sse_events(&text);
    let content: String = events
        .iter()
        .filter_map(|(_, d)| d["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "Hello");
    assert!(
        events.iter().all(|(_, d)| d.get("usage").is_none()),
        "no usage chunk unless asked"
    );
    assert_eq!(events.last().map(|(_, d)| d.clone()), Some(json!("[DONE]")));
    assert!(
        events
            .iter()
            .any(|(_, d)| d["choices"][0]["finish_reason"] == "stop")
    );

    let (_, _, text) = raw(chat(json!({"model": "claude-test", "stream": true,
        "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": "hi"}]})))
    .await;
    let usage = sse_events(&text)
        .into_iter()
        .find_map(|(_, d)| d.get("usage").cloned())
        .unwrap_or_default();
    assert_eq!(
        (
            usage["prompt_tokens"].as_i64(),
            usage["completion_tokens"].as_i64()
        ),
        (Some(160), Some(8))
    );

    let (quota, _, count, _) = balances(&server, payer.id).await;
    // each: 2 × (20 + 100 × 0.1 + 40 × 1.25 + 8 × 5) = 2 × 120 = 240
    assert_eq!((quota, count), (1_000_000 - 3 * 240, 3));
}

#[tokio::test]
async fn tool_calls_convert_between_openai_and_anthropic() {
    let mock = MockAnthropic::start().await;
    mock.set_pieces(&[]);
    mock.set_tool_call("weather", json!({"city": "Paris"}));
    let server = TestServer::start().await;
    let (_, _, key) = fixture(&server, &[claude_channel(&mock)], 1_000_000, 500_000).await;
    let request = json!({"model": "claude-test",
        "tools": [{"type": "function", "function": {"name": "weather", "description": "w",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
        "tool_choice": "required",
        "messages": [{"role": "user", "content": "weather in Paris?"}]});
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/chat/completions"))
                .bearer_auth(&key)
                .json(&request),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let sent = mock.last_body().unwrap_or_default();
    assert_eq!(sent["tools"][0]["name"], "weather");
    assert_eq!(
        sent["tools"][0]["input_schema"]["properties"]["city"]["type"],
        "string"
    );
    assert_eq!(sent["tool_choice"], json!({"type": "any"}));
    let call = &answer["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(call["id"], "toolu_1");
    assert_eq!(call["function"]["name"], "weather");
    assert_eq!(
        serde_json::from_str::<Value>(call["function"]["arguments"].as_str().unwrap_or_default())
            .ok(),
        Some(json!({"city": "Paris"}))
    );
    assert_eq!(answer["choices"][0]["finish_reason"], "tool_calls");

    let mut streamed = request.clone();
    streamed["stream"] = json!(true);
    let (_, _, text) = raw(server
        .client
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(&key)
        .json(&streamed))
    .await;
    let events = sse_events(&text);
    let calls: Vec<&Value> = events
        .iter()
        .filter_map(|(_, d)| d["choices"][0]["delta"]["tool_calls"].get(0))
        .collect();
    assert_eq!(calls[0]["function"]["name"], "weather");
    let args: String = calls
        .iter()
        .filter_map(|c| c["function"]["arguments"].as_str())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&args).ok(),
        Some(json!({"city": "Paris"}))
    );
    assert!(
        events
            .iter()
            .any(|(_, d)| d["choices"][0]["finish_reason"] == "tool_calls")
    );

    // And the conversation continues: the tool result goes back as a tool_result block.
    let follow = json!({"model": "claude-test", "messages": [
        {"role": "user", "content": "weather in Paris?"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "toolu_1", "type": "function",
            "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "sunny"}]});
    let (status, _) = server
        .send(
            server
                .client
                .post(server.url("/v1/chat/completions"))
                .bearer_auth(&key)
                .json(&follow),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let sent = mock.last_body().unwrap_or_default();
    assert_eq!(
        sent["messages"][1]["content"][0],
        json!({"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}})
    );
    assert_eq!(
        sent["messages"][2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"})
    );
}

/// Waits until `user` has `count` settled requests; returns the newest log.
async fn settled(server: &TestServer, user: i64, count: i64) -> tollgate_storage::logs::LogEntry {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (_, _, n, logs) = balances(server, user).await;
        if n == count
            && let Some(log) = logs.into_iter().next()
        {
            return log;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the request was never settled"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn client_disconnect_bills_what_was_produced_and_closes_the_upstream() {
    let claude = MockAnthropic::start().await;
    claude.set_usage(AnthropicUsage {
        input: 10,
        output: 500,
        ..AnthropicUsage::default()
    });
    claude.set_pieces(&["aaaa"; 20]);
    claude.set_chunk_delay(Duration::from_millis(100));
    let openai = MockUpstream::start().await;
    openai.set_usage(Some((10, 500, 0)));
    openai.set_pieces(&["bbbb"; 20]);
    openai.set_chunk_delay(Duration::from_millis(100));
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(
        &server,
        &[claude_channel(&claude), openai_channel(&openai, "gpt-4o")],
        1_000_000,
        500_000,
    )
    .await;
    for (round, model, marker) in [(1, "claude-test", "aaaa"), (2, "gpt-4o", "bbbb")] {
        let mut resp = messages_req(&server, &key)
            .json(&json!({"model": model, "max_tokens": 1000, "stream": true,
                "messages": [{"role": "user", "content": "hi"}]}))
            .send()
            .await
            .unwrap_or_else(|e| unreachable!("{e}"));
        let mut seen = String::new();
        while !seen.contains(marker) {
            let chunk = resp.chunk().await.unwrap_or_default().unwrap_or_default();
            assert!(!chunk.is_empty(), "the stream ended early");
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
        drop(resp);
        let log = settled(&server, payer.id, round).await;
        assert_eq!(other(&log)["usage_source"], "partial", "{model}");
        assert!(
            log.completion_tokens >= 1 && log.completion_tokens < 500,
            "{model}: billed what was produced, not the full answer: {log:?}"
        );
    }
    wait_until("the Claude stream to be closed", || {
        claude.streams_cut() > 0
    })
    .await;
    wait_until("the OpenAI stream to be closed", || {
        openai.streams_cut() > 0
    })
    .await;
}

fn count_req(server: &TestServer, key: &str) -> reqwest::RequestBuilder {
    server
        .client
        .post(server.url("/v1/messages/count_tokens"))
        .header("x-api-key", key)
        .header("anthropic-version", "2023-06-01")
}

#[tokio::test]
async fn count_tokens_asks_the_claude_channel_and_counts_itself_otherwise() {
    let mock = MockAnthropic::start().await;
    mock.set_usage(AnthropicUsage {
        input: 42,
        ..AnthropicUsage::default()
    });
    let openai = MockUpstream::start().await;
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(
        &server,
        &[
            claude_channel(&mock),
            openai_channel(&openai, "gpt-4o-mini"),
        ],
        1_000_000,
        500_000,
    )
    .await;
    let body = json!({"model": "claude-test", "system": "Be brief.",
        "messages": [{"role": "user", "content": "Hello, Claude"}]});

    // A Claude channel counts with Claude's own tokenizer: its answer is returned as is.
    let (status, _, text) = raw(count_req(&server, &key)
        .header("anthropic-beta", "token-counting-2024-11-01")
        .json(&body))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(
        serde_json::from_str::<Value>(&text).ok(),
        Some(json!({"input_tokens": 42}))
    );
    assert_eq!(mock.calls(), 1);
    assert_eq!(mock.last_body().as_ref(), Some(&body));
    assert_eq!(
        mock.last_header("x-api-key").as_deref(),
        Some("claude-upstream-key")
    );
    assert_eq!(
        mock.last_header("anthropic-beta").as_deref(),
        Some("token-counting-2024-11-01")
    );

    // A channel that cannot count (404): Tollgate's estimator — "Be brief." (9 chars → 3) +
    // "Hello, Claude" (13 → 4) + 3 per message × 2 + 3 = 16.
    mock.push_fault(
        404,
        json!({"type": "error", "error": {"type": "not_found_error", "message": "no"}}),
    );
    let (status, answer) = server.send(count_req(&server, &key).json(&body)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer, json!({"input_tokens": 16}));

    // A model on an OpenAI channel is counted exactly with its tiktoken encoding:
    // "Hello, world!" is 4 tokens, + 3 for the message + 3 for the reply.
    let (status, answer) = server
        .send(
            count_req(&server, &key).json(&json!({"model": "gpt-4o-mini",
            "messages": [{"role": "user", "content": "Hello, world!"}]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer, json!({"input_tokens": 10}));
    assert_eq!(
        openai.chat_calls(),
        0,
        "counting never calls an OpenAI channel"
    );

    // Counting is free: no balance change, no log row.
    let (quota, _, count, logs) = balances(&server, payer.id).await;
    assert_eq!((quota, count, logs.len()), (1_000_000, 0, 0));

    // Errors keep Anthropic's shape.
    let (status, answer) = server.send(count_req(&server, "sk-nope").json(&body)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(answer["error"]["type"], "authentication_error");
    let (status, answer) = server
        .send(count_req(&server, &key).json(&json!({"model": "no-such-model", "messages": []})))
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{answer}");
    assert_eq!(answer["type"], "error");
    let (status, answer) = server
        .send(count_req(&server, &key).json(&json!({"model": "claude-test"})))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["error"]["type"], "invalid_request_error");
}
