//! Cohere (channel type 34) through the public HTTP API, against a mock speaking Cohere's API v2
//! as documented: chat (`POST /v2/chat`, whole and streamed, with tools) for OpenAI chat and
//! Anthropic clients, embeddings (`POST /v2/embed`) and rerank (`POST /v2/rerank`) for
//! `/v1/embeddings` and `/v1/rerank`; billed from Cohere's billed units, a cut stream from what
//! was read, errors classified and keys never shown.
//!
//! Fixtures are the examples of Cohere's API reference: <https://docs.cohere.com/reference/chat>
//! (non-streamed, streamed and tool examples), <https://docs.cohere.com/v2/docs/streaming>,
//! <https://docs.cohere.com/reference/embed> and <https://docs.cohere.com/reference/rerank>
//! (shortened where they are long).

mod common;

use base64::Engine;
use common::fault::{Script, Tail};
use common::mock_scripted::MockScripted;
use common::relay_fixture::{balances, chat_request, fixture, other, raw, sse_events};
use common::{Actor, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};

const KEY: &str = "cohere-upstream-key-0123456789";

fn cohere_channel(mock: &MockScripted) -> Value {
    json!({"name": "cohere", "type": 34, "key": KEY, "base_url": mock.base,
        "models": "command-test,embed-test,rerank-test,rerank-ratio", "group": "default",
        "model_mapping": r#"{"command-test": "command-a-03-2025"}"#})
}

/// command-test: ratio 2, completion 4; embed-test: ratio 1; rerank-ratio: ratio 1;
/// rerank-test: $0.002 per call (1,000 units at QuotaPerUnit 500,000).
async fn prices(server: &TestServer, root: &Actor) {
    server
        .set_option(
            root,
            "ModelRatio",
            json!(r#"{"command-test": 2, "embed-test": 1, "rerank-ratio": 1}"#),
        )
        .await;
    server
        .set_option(root, "CompletionRatio", json!(r#"{"command-test": 4}"#))
        .await;
    server
        .set_option(root, "ModelPrice", json!(r#"{"rerank-test": 0.002}"#))
        .await;
}

async fn setup(mock: &MockScripted) -> (TestServer, Actor, String) {
    let server = TestServer::start().await;
    let (root, payer, key) = fixture(&server, &[cohere_channel(mock)], 1_000_000, 500_000).await;
    prices(&server, &root).await;
    (server, payer, key)
}

/// The non-streamed example of the chat reference (text shortened).
fn chat_answer() -> Value {
    json!({"id": "c14c80c3-18eb-4519-9460-6c92edd8cfb4",
        "message": {"role": "assistant", "content": [{"type": "text",
            "text": "LLMs stand for Large Language Models."}]},
        "finish_reason": "COMPLETE",
        "usage": {"billed_units": {"input_tokens": 5, "output_tokens": 418},
            "tokens": {"input_tokens": 71, "output_tokens": 418}}})
}

/// The streamed example of the chat reference.
fn chat_events() -> Vec<(&'static str, Value)> {
    vec![
        (
            "message-start",
            json!({"type": "message-start", "id": "29f14a5a-11de-4cae-9800-25e4747408ea",
            "delta": {"message": {"role": "assistant"}}}),
        ),
        (
            "content-start",
            json!({"type": "content-start", "index": 0,
            "delta": {"message": {"content": {"type": "text", "text": ""}}}}),
        ),
        (
            "content-delta",
            json!({"type": "content-delta", "index": 0,
            "delta": {"message": {"content": {"text": "LL"}}}}),
        ),
        (
            "content-delta",
            json!({"type": "content-delta", "index": 0,
            "delta": {"message": {"content": {"text": "Ms"}}}}),
        ),
        ("content-end", json!({"type": "content-end", "index": 0})),
        (
            "message-end",
            json!({"type": "message-end", "delta": {"finish_reason": "COMPLETE",
            "usage": {"billed_units": {"input_tokens": 5, "output_tokens": 26},
                "tokens": {"input_tokens": 71, "output_tokens": 26}}}}),
        ),
    ]
}

#[tokio::test]
async fn openai_chat_to_cohere_is_converted_and_billed_from_billed_units() {
    let mock = MockScripted::start().await;
    mock.push_json(200, &chat_answer());
    let (server, payer, key) = setup(&mock).await;
    let body = json!({"model": "command-test", "max_tokens": 100, "temperature": 0.3,
        "messages": [{"role": "system", "content": "be brief"},
            {"role": "user", "content": "Tell me about LLMs"}]});
    let (status, answer) = server.send(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["object"], "chat.completion");
    assert_eq!(answer["model"], "command-test");
    let choice = &answer["choices"][0];
    assert_eq!(
        choice["message"]["content"],
        "LLMs stand for Large Language Models."
    );
    assert_eq!(choice["finish_reason"], "stop");
    assert_eq!(
        (
            &answer["usage"]["prompt_tokens"],
            &answer["usage"]["completion_tokens"]
        ),
        (&json!(5), &json!(418))
    );
    let call = mock.last();
    assert_eq!(call.uri, "/v2/chat");
    assert_eq!(
        call.header("authorization").as_deref(),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(
        call.json(),
        json!({"model": "command-a-03-2025", "max_tokens": 100, "temperature": 0.3,
            "messages": [{"role": "system", "content": "be brief"},
                {"role": "user", "content": "Tell me about LLMs"}]})
    );
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // 2 × (5 + 418 × 4) = 3,354: the billed units, not the 71 tokens the model saw.
    assert_eq!(quota, 1_000_000 - 3_354);
    assert_eq!((logs[0].prompt_tokens, logs[0].completion_tokens), (5, 418));
    assert_eq!(other(&logs[0])["usage_source"], "upstream");
    assert_eq!(logs[0].quota, 3_354);
}

#[tokio::test]
async fn a_cohere_stream_reaches_openai_clients_as_chunks_with_usage() {
    let mock = MockScripted::start().await;
    mock.push_events(&chat_events());
    let (server, payer, key) = setup(&mock).await;
    let body = json!({"model": "command-test", "stream": true,
        "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": "Tell me about LLMs"}]});
    let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let chunks = sse_events(&text);
    let content: String = chunks
        .iter()
        .filter_map(|(_, c)| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "LLMs");
    assert!(
        chunks
            .iter()
            .any(|(_, c)| c["choices"][0]["finish_reason"] == "stop"),
        "{text}"
    );
    let usage = chunks
        .iter()
        .find_map(|(_, c)| c.get("usage").filter(|u| u.is_object()))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (&usage["prompt_tokens"], &usage["completion_tokens"]),
        (&json!(5), &json!(26))
    );
    assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
    assert_eq!(mock.last().json()["stream"], true);
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // 2 × (5 + 26 × 4) = 218
    assert_eq!(quota, 1_000_000 - 218);
    assert!(logs[0].is_stream);
    assert_eq!((logs[0].prompt_tokens, logs[0].completion_tokens), (5, 26));
    assert_eq!(other(&logs[0])["usage_source"], "upstream");
}

#[tokio::test]
async fn tool_calls_go_to_cohere_and_come_back_whole_and_streamed() {
    let mock = MockScripted::start().await;
    // The tool example of the chat reference (one of its two calls).
    mock.push_json(
        200,
        &json!({"id": "9e5f00aa-bf1e-481a-abe3-0eceac18c3ec",
            "message": {"role": "assistant",
                "content": [{"type": "thinking", "thinking": "I will first find the sales summary."}],
                "tool_calls": [{"id": "query_daily_sales_report_hgxxmkby3wta", "type": "function",
                    "function": {"name": "query_daily_sales_report", "arguments": "{\"day\": \"2023-09-29\"}"}}]},
            "finish_reason": "TOOL_CALL",
            "usage": {"billed_units": {"input_tokens": 127, "output_tokens": 69},
                "tokens": {"input_tokens": 1032, "output_tokens": 124}}}),
    );
    let (server, payer, key) = setup(&mock).await;
    let tools = json!([{"type": "function", "function": {"name": "query_daily_sales_report",
        "description": "Connects to a database to retrieve overall sales volumes and sales information for a given day.",
        "parameters": {"type": "object", "properties": {"day": {"type": "string"}}, "required": ["day"]}}}]);
    let body = json!({"model": "command-test", "tools": tools, "tool_choice": "required",
        "messages": [{"role": "user", "content": "Sales on 29th September 2023?"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "query_daily_sales_report", "arguments": "{\"day\": \"2023-09-28\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "{\"total_sales_amount\": 5000}"},
            {"role": "user", "content": "And the day after?"}]});
    let (status, answer) = server.send(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let choice = &answer["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(
        choice["message"]["tool_calls"],
        json!([{"id": "query_daily_sales_report_hgxxmkby3wta", "type": "function",
            "function": {"name": "query_daily_sales_report", "arguments": "{\"day\": \"2023-09-29\"}"}}])
    );
    let sent = mock.last().json();
    assert_eq!(
        sent["tools"], tools,
        "Cohere's tools are OpenAI's function tools"
    );
    assert_eq!(sent["tool_choice"], "REQUIRED");
    assert_eq!(
        sent["messages"][1],
        json!({"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "query_daily_sales_report", "arguments": "{\"day\": \"2023-09-28\"}"}}]})
    );
    assert_eq!(
        sent["messages"][2],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "{\"total_sales_amount\": 5000}"})
    );

    // Streamed: the tool example's events (arguments in pieces).
    let call_delta = |index: u64, args: &str| {
        json!({"type": "tool-call-delta", "index": index,
            "delta": {"message": {"tool_calls": {"function": {"arguments": args}}}}})
    };
    mock.push_events(&[
        (
            "message-start",
            json!({"type": "message-start", "id": "m1", "delta": {"message": {"role": "assistant"}}}),
        ),
        (
            "tool-plan-delta",
            json!({"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "I will"}}}),
        ),
        (
            "tool-call-start",
            json!({"type": "tool-call-start", "index": 0, "delta": {"message": {"tool_calls": {
                "id": "query_daily_sales_report_j3f0adww9pmr", "type": "function",
                "function": {"name": "query_daily_sales_report", "arguments": ""}}}}}),
        ),
        ("tool-call-delta", call_delta(0, "{\"")),
        ("tool-call-delta", call_delta(0, "day\": \"2023-09-29\"}")),
        ("tool-call-end", json!({"type": "tool-call-end", "index": 0})),
        (
            "message-end",
            json!({"type": "message-end", "delta": {"finish_reason": "TOOL_CALL",
            "usage": {"billed_units": {"input_tokens": 126, "output_tokens": 84},
                "tokens": {"input_tokens": 1589, "output_tokens": 135}}}}),
        ),
    ]);
    let mut stream_body = body.clone();
    stream_body["stream"] = json!(true);
    let (status, _, text) = raw(chat_request(&server, &key, &stream_body)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let chunks = sse_events(&text);
    let calls: Vec<&Value> = chunks
        .iter()
        .map(|(_, c)| &c["choices"][0]["delta"]["tool_calls"][0])
        .filter(|call| call.is_object())
        .collect();
    assert_eq!(calls[0]["id"], "query_daily_sales_report_j3f0adww9pmr");
    assert_eq!(calls[0]["function"]["name"], "query_daily_sales_report");
    let args: String = calls
        .iter()
        .filter_map(|c| c["function"]["arguments"].as_str())
        .collect();
    assert_eq!(args, "{\"day\": \"2023-09-29\"}");
    let reasoning: String = chunks
        .iter()
        .filter_map(|(_, c)| c["choices"][0]["delta"]["reasoning_content"].as_str())
        .collect();
    assert_eq!(reasoning, "I will", "the tool plan is reasoning");
    assert!(
        chunks
            .iter()
            .any(|(_, c)| c["choices"][0]["finish_reason"] == "tool_calls")
    );
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // 2 × (127 + 69 × 4) + 2 × (126 + 84 × 4) = 806 + 924
    assert_eq!(quota, 1_000_000 - 806 - 924);
    assert_eq!(
        (logs[0].prompt_tokens, logs[0].completion_tokens),
        (126, 84)
    );
}

#[tokio::test]
async fn anthropic_clients_reach_cohere_channels() {
    let mock = MockScripted::start().await;
    mock.push_json(200, &chat_answer());
    let (server, payer, key) = setup(&mock).await;
    let (status, answer) = server
        .send(
            server
                .client
                .post(server.url("/v1/messages"))
                .header("x-api-key", &key)
                .json(
                    &json!({"model": "command-test", "max_tokens": 64, "system": "be brief",
                    "messages": [{"role": "user", "content": "Tell me about LLMs"}]}),
                ),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["type"], "message");
    assert_eq!(
        answer["content"][0]["text"],
        "LLMs stand for Large Language Models."
    );
    assert_eq!(answer["stop_reason"], "end_turn");
    assert_eq!(answer["usage"]["input_tokens"], 5);
    assert_eq!(
        mock.last().json()["messages"][0],
        json!({"role": "system", "content": "be brief"})
    );
    let (quota, _, _, _) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000 - 3_354);
}

#[tokio::test]
async fn a_cut_cohere_stream_bills_what_was_read() {
    let mock = MockScripted::start().await;
    let events = chat_events();
    let mut parts: Vec<String> = events[..2]
        .iter()
        .map(|(n, d)| format!("event: {n}\ndata: {d}\n\n"))
        .collect();
    parts.push(format!(
        "event: content-delta\ndata: {}\n\n",
        json!({"type": "content-delta", "index": 0,
            "delta": {"message": {"content": {"text": "aaaabbbbcccc"}}}})
    ));
    let mut script = Script::ok("text/event-stream", parts);
    script.tail = Tail::Cut;
    mock.push(script);
    let (server, payer, key) = setup(&mock).await;
    let body = json!({"model": "command-test", "stream": true,
        "messages": [{"role": "user", "content": "hi"}]});
    let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(text.contains("aaaabbbbcccc"), "{text}");
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    let row = &logs[0];
    // Prompt counted: "hi" 1 + 3 + 3 framing = 7; completion counted: 12 characters → 3.
    assert_eq!((row.prompt_tokens, row.completion_tokens), (7, 3));
    assert_eq!(other(row)["usage_source"], "partial");
    assert_eq!(other(row)["partial_reason"], "upstream_cut");
    // 2 × (7 + 3 × 4) = 38
    assert_eq!(quota, 1_000_000 - 38);
}

#[tokio::test]
async fn cohere_errors_are_classified_and_the_key_never_shown() {
    let mock = MockScripted::start().await;
    // Cohere's 498: an invalid API key, a channel fault like a 401.
    mock.push_json(498, &json!({"message": format!("invalid api token {KEY}")}));
    let (server, payer, key) = setup(&mock).await;
    let body = json!({"model": "command-test", "messages": [{"role": "user", "content": "hi"}]});
    let (status, answer) = server.send(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("invalid api token"), "{answer}");
    assert!(!message.contains(KEY), "the key is masked: {message}");
    // A client mistake is the client's: 400 with Cohere's message, nothing billed.
    mock.push_json(
        400,
        &json!({"message": "invalid request: temperature must be between 0 and 1"}),
    );
    let (status, answer) = server.send(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(
        answer["error"]["message"],
        "invalid request: temperature must be between 0 and 1"
    );
    let (quota, _, _, _) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000);
}

#[tokio::test]
async fn the_channel_test_of_a_cohere_channel_is_the_relays_chat_request() {
    // The console's channel test is built by the relay's adaptor: a one-token chat at /v2/chat
    // with the key as a bearer token (before, Cohere channels were refused as untestable).
    let mock = MockScripted::start().await;
    mock.push_json(200, &chat_answer());
    let server = TestServer::start().await;
    let (root, _, _) = fixture(&server, &[cohere_channel(&mock)], 1_000_000, 500_000).await;
    let (status, body) = root.get("/api/channel/test/1?model=command-test").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["success"], true, "{body}");
    let call = mock.last();
    assert_eq!(call.uri, "/v2/chat");
    assert_eq!(
        call.header("authorization").as_deref(),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(
        call.json(),
        json!({"model": "command-a-03-2025", "max_tokens": 1,
            "messages": [{"role": "user", "content": "hi"}]})
    );
}

#[tokio::test]
async fn embeddings_go_to_cohere_embed_and_come_back_in_openai_shape() {
    let mock = MockScripted::start().await;
    let answer = json!({"id": "da6e531f-54c6-4a73-bf92-f60566d8d753", "texts": ["hello", "goodbye"],
        "embeddings": {"float": [[0.016296387, -0.008354187], [0.5, -1.0]]},
        "meta": {"api_version": {"version": "2", "is_experimental": true},
            "billed_units": {"input_tokens": 2}}});
    mock.push_json(200, &answer);
    mock.push_json(200, &answer);
    let (server, payer, key) = setup(&mock).await;
    let embed = |body: Value| {
        server
            .client
            .post(server.url("/v1/embeddings"))
            .bearer_auth(&key)
            .json(&body)
    };
    let (status, out) = server
        .send(embed(
            json!({"model": "embed-test", "input": ["hello", "goodbye"]}),
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    assert_eq!(
        out,
        json!({"object": "list", "model": "embed-test",
            "data": [{"object": "embedding", "index": 0, "embedding": [0.016296387, -0.008354187]},
                {"object": "embedding", "index": 1, "embedding": [0.5, -1.0]}],
            "usage": {"prompt_tokens": 2, "total_tokens": 2}})
    );
    let call = mock.last();
    assert_eq!(call.uri, "/v2/embed");
    assert_eq!(
        call.json(),
        json!({"model": "embed-test", "texts": ["hello", "goodbye"],
            "input_type": "search_document", "embedding_types": ["float"]})
    );
    // The official OpenAI SDKs ask for base64: little-endian f32s.
    let (status, out) = server
        .send(embed(
            json!({"model": "embed-test", "input": ["hello", "goodbye"], "encoding_format": "base64"}),
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{out}");
    let packed = base64::engine::general_purpose::STANDARD
        .decode(out["data"][1]["embedding"].as_str().unwrap_or_default())
        .unwrap_or_default();
    let floats: Vec<f32> = packed
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(floats, [0.5, -1.0]);
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    assert_eq!(
        quota,
        1_000_000 - 4,
        "2 billed input tokens at ratio 1, twice"
    );
    assert_eq!((logs[0].prompt_tokens, logs[0].completion_tokens), (2, 0));
    assert_eq!(other(&logs[0])["usage_source"], "upstream");
}

#[tokio::test]
async fn rerank_goes_to_cohere_and_is_billed_per_search_unit_or_token() {
    let mock = MockScripted::start().await;
    let answer = |units: i64| {
        json!({"id": "07734bd2-2473-4f07-94e1-0d9f0e6843cf",
            "results": [{"index": 1, "relevance_score": 0.999071}, {"index": 0, "relevance_score": 0.32713068}],
            "meta": {"api_version": {"version": "2", "is_experimental": false},
                "billed_units": {"search_units": units}}})
    };
    mock.push_json(200, &answer(2));
    mock.push_json(200, &answer(1));
    let (server, payer, key) = setup(&mock).await;
    let request = |model: &str| {
        json!({"model": model, "query": "What is the capital of the United States?",
            "top_n": 2, "return_documents": true,
            "documents": ["Carson City is the capital city of the American state of Nevada.",
                "Washington, D.C. is the capital of the United States."]})
    };
    let rerank = |body: Value| {
        server
            .client
            .post(server.url("/v1/rerank"))
            .bearer_auth(&key)
            .json(&body)
    };
    let (status, out) = server.send(rerank(request("rerank-test"))).await;
    assert_eq!(status, StatusCode::OK, "{out}");
    assert_eq!(
        out["results"],
        json!([{"index": 1, "relevance_score": 0.999071,
                "document": {"text": "Washington, D.C. is the capital of the United States."}},
            {"index": 0, "relevance_score": 0.32713068,
                "document": {"text": "Carson City is the capital city of the American state of Nevada."}}])
    );
    let call = mock.last();
    assert_eq!(call.uri, "/v2/rerank");
    assert_eq!(
        call.json(),
        json!({"model": "rerank-test", "query": "What is the capital of the United States?",
            "top_n": 2, "documents": ["Carson City is the capital city of the American state of Nevada.",
                "Washington, D.C. is the capital of the United States."]})
    );
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // $0.002 per search unit × 2 units × 500,000 per dollar.
    assert_eq!(quota, 1_000_000 - 2_000);
    assert_eq!(logs[0].quota, 2_000);
    // Ratio-priced: the prompt tokens, counted by Tollgate (Cohere reports search units only).
    let (status, out) = server.send(rerank(request("rerank-ratio"))).await;
    assert_eq!(status, StatusCode::OK, "{out}");
    let (quota_after, _, _, logs) = balances(&server, payer.id).await;
    let row = &logs[0];
    assert_eq!(other(row)["usage_source"], "estimated");
    assert!(row.prompt_tokens > 0);
    assert_eq!(out["usage"]["prompt_tokens"], row.prompt_tokens);
    assert_eq!(quota - quota_after, row.prompt_tokens);
}
