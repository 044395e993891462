//! Criterion micro-benchmarks of the wire conversions (issue P19 item 4): per format, a
//! representative request and whole answer converted to and from the hub (OpenAI chat
//! completions), a whole answer read from its bytes with its usage (`answer_read`, the relay's
//! path) and its usage alone, and a stream decoded from the format's events and encoded into
//! them. Formats: Responses, Anthropic, Gemini, and the upstream-only Converse and Cohere
//! (no client request, no encoder). Run the same binary's `--save-baseline before` and
//! `--baseline before` around a change to a format.
//!
//! `cargo bench --bench wire_formats` (add a filter, e.g. `-- responses`).
#![expect(
    clippy::expect_used,
    reason = "a benchmark binary: a failed set-up aborts it"
)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tollgate::relay::measure::price::Usage;
use tollgate::relay::wire::{self, EncodeCtx, Piece, Wire};

/// A hub request with a system prompt, history, an image, a tool call and its result, tools,
/// a tool choice and a few sampling fields (what the upstream-side conversions read).
fn hub_request() -> Value {
    json!({
        "model": "m", "max_tokens": 512, "temperature": 0.3, "top_p": 0.9, "stream": false,
        "user": "u-1", "reasoning_effort": "low", "parallel_tool_calls": true,
        "messages": [
            {"role": "system", "content": "You are a terse assistant that answers in one line."},
            {"role": "user", "content": [
                {"type": "text", "text": "What is the weather where this photo was taken?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "detail": "low"}}]},
            {"role": "assistant", "content": "Let me look that up.", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Oslo\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21 degrees"},
            {"role": "assistant", "content": "Sunny and 21 degrees in Oslo."},
            {"role": "user", "content": "And tomorrow?"}],
        "tools": [{"type": "function", "function": {"name": "weather", "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
        "tool_choice": "auto"
    })
}

/// A hub answer with text, reasoning, a tool call and usage.
fn hub_answer() -> Value {
    json!({
        "id": "chatcmpl-abc123", "object": "chat.completion", "created": 1_700_000_000, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
            "content": "Let me check the forecast for tomorrow in Oslo.",
            "reasoning_content": "The user asks about tomorrow; call the tool with the same city.",
            "tool_calls": [{"id": "call_2", "type": "function",
                "function": {"name": "weather", "arguments": "{\"city\":\"Oslo\",\"day\":\"tomorrow\"}"}}]}}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160,
            "prompt_tokens_details": {"cached_tokens": 20}, "completion_tokens_details": {"reasoning_tokens": 12}}
    })
}

/// The pieces of a streamed answer: start, 20 text deltas, a tool call, stop and usage.
fn pieces() -> Vec<Piece> {
    let mut pieces = vec![
        Piece::Start {
            id: "chatcmpl-abc123".into(),
            model: "m".into(),
        },
        Piece::Thinking("Consider the city.".into()),
    ];
    pieces.extend((0..20).map(|i| Piece::Text(format!("tok{i} "))));
    pieces.push(Piece::ToolStart {
        index: 0,
        id: "call_2".into(),
        name: "weather".into(),
    });
    pieces.push(Piece::ToolArgs {
        index: 0,
        json: "{\"city\":\"Oslo\"}".into(),
    });
    pieces.push(Piece::Stop("tool_calls".into()));
    pieces.push(Piece::Usage(Usage {
        prompt_tokens: 120,
        completion_tokens: 40,
        ..Usage::default()
    }));
    pieces
}

/// A client request, an upstream answer and upstream stream events in one format.
struct Samples {
    name: &'static str,
    wire: Wire,
    /// A request from a client speaking `wire` (none: not a client format).
    request: Option<Value>,
    answer: Value,
    events: Vec<(&'static str, String)>,
}

fn responses() -> Samples {
    let request = json!({"model": "m", "instructions": "You are a terse assistant.", "max_output_tokens": 512,
        "temperature": 0.3, "reasoning": {"effort": "low"}, "stream": true, "metadata": {"trace": "t-1"},
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "What is the weather where this photo was taken?"},
                {"type": "input_image", "image_url": "https://example.com/photo.png", "detail": "low"}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Let me look that up."}]},
            {"type": "function_call", "call_id": "call_1", "name": "weather", "arguments": "{\"city\":\"Oslo\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "sunny, 21 degrees"},
            {"role": "user", "content": "And tomorrow?"}],
        "tools": [{"type": "function", "name": "weather", "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}, "strict": true}],
        "tool_choice": "auto", "text": {"format": {"type": "json_schema", "name": "w", "schema": {"type": "object"}}}});
    let answer = json!({"id": "resp_abc123", "object": "response", "created_at": 1_700_000_000, "status": "completed",
        "model": "m", "incomplete_details": null, "error": null,
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Call the tool again."}]},
            {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": "Let me check the forecast for tomorrow in Oslo.", "annotations": []}]},
            {"type": "function_call", "id": "fc_1", "call_id": "call_2", "name": "weather",
                "arguments": "{\"city\":\"Oslo\"}", "status": "completed"}],
        "usage": {"input_tokens": 120, "input_tokens_details": {"cached_tokens": 20}, "output_tokens": 40,
            "output_tokens_details": {"reasoning_tokens": 12}, "total_tokens": 160}});
    let mut events = vec![(
        "response.created",
        json!({"type": "response.created", "sequence_number": 0,
            "response": {"id": "resp_abc123", "model": "m", "status": "in_progress", "output": []}})
        .to_string(),
    )];
    for i in 0..20 {
        events.push((
            "response.output_text.delta",
            json!({"type": "response.output_text.delta", "sequence_number": i + 1, "item_id": "msg_1",
                "output_index": 0, "content_index": 0, "delta": format!("tok{i} "), "logprobs": []})
            .to_string(),
        ));
    }
    events.push(("response.output_item.added", json!({"type": "response.output_item.added", "output_index": 1,
        "item": {"type": "function_call", "id": "fc_1", "call_id": "call_2", "name": "weather", "arguments": "", "status": "in_progress"}}).to_string()));
    events.push((
        "response.function_call_arguments.delta",
        json!({"type": "response.function_call_arguments.delta",
        "item_id": "fc_1", "output_index": 1, "delta": "{\"city\":\"Oslo\"}"})
        .to_string(),
    ));
    events.push((
        "response.completed",
        json!({"type": "response.completed",
        "response": answer.clone()})
        .to_string(),
    ));
    Samples {
        name: "responses",
        wire: Wire::Responses,
        request: Some(request),
        answer,
        events,
    }
}

fn anthropic() -> Samples {
    let request = json!({"model": "m", "max_tokens": 512, "temperature": 0.3, "stream": true,
        "metadata": {"user_id": "u-1"},
        "system": [{"type": "text", "text": "You are a terse assistant.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "What is the weather where this photo was taken?"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="}}]},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": "Use the tool.", "signature": "sig"},
                {"type": "text", "text": "Let me look that up."},
                {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Oslo"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny, 21 degrees"}]},
            {"role": "assistant", "content": "Sunny and 21 degrees in Oslo."},
            {"role": "user", "content": "And tomorrow?"}],
        "tools": [{"name": "weather", "description": "Weather for a city",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
        "tool_choice": {"type": "auto"}, "thinking": {"type": "enabled", "budget_tokens": 256}});
    let answer = json!({"id": "msg_abc123", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "thinking", "thinking": "Call the tool again.", "signature": "sig2"},
            {"type": "text", "text": "Let me check the forecast for tomorrow in Oslo."},
            {"type": "tool_use", "id": "toolu_2", "name": "weather", "input": {"city": "Oslo"}}],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 100, "cache_read_input_tokens": 20, "output_tokens": 40}});
    let mut events = vec![
        ("message_start", json!({"type": "message_start", "message": {"id": "msg_abc123", "type": "message",
            "role": "assistant", "model": "m", "content": [], "usage": {"input_tokens": 100, "output_tokens": 1}}}).to_string()),
        ("content_block_start", json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}).to_string()),
    ];
    for i in 0..20 {
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": format!("tok{i} ")}})
            .to_string(),
        ));
    }
    events.push((
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}).to_string(),
    ));
    events.push((
        "content_block_start",
        json!({"type": "content_block_start", "index": 1,
        "content_block": {"type": "tool_use", "id": "toolu_2", "name": "weather", "input": {}}})
        .to_string(),
    ));
    events.push((
        "content_block_delta",
        json!({"type": "content_block_delta", "index": 1,
        "delta": {"type": "input_json_delta", "partial_json": "{\"city\":\"Oslo\"}"}})
        .to_string(),
    ));
    events.push((
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 1}).to_string(),
    ));
    events.push((
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
        "usage": {"output_tokens": 40}})
        .to_string(),
    ));
    events.push(("message_stop", json!({"type": "message_stop"}).to_string()));
    Samples {
        name: "anthropic",
        wire: Wire::Anthropic,
        request: Some(request),
        answer,
        events,
    }
}

fn gemini() -> Samples {
    let request = json!({
        "systemInstruction": {"parts": [{"text": "You are a terse assistant."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "What is the weather where this photo was taken?"},
                {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="}}]},
            {"role": "model", "parts": [{"text": "Let me look that up."},
                {"functionCall": {"name": "weather", "args": {"city": "Oslo"}}, "thoughtSignature": "sig"}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "weather", "response": {"result": "sunny"}}}]},
            {"role": "model", "parts": [{"text": "Sunny and 21 degrees in Oslo."}]},
            {"role": "user", "parts": [{"text": "And tomorrow?"}]}],
        "tools": [{"functionDeclarations": [{"name": "weather", "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]}],
        "generationConfig": {"maxOutputTokens": 512, "temperature": 0.3, "topP": 0.9,
            "thinkingConfig": {"thinkingBudget": 256, "includeThoughts": true}}});
    let answer = json!({"responseId": "r-abc123", "modelVersion": "m",
        "candidates": [{"index": 0, "finishReason": "STOP", "content": {"role": "model", "parts": [
            {"text": "Call the tool again.", "thought": true},
            {"text": "Let me check the forecast for tomorrow in Oslo."},
            {"functionCall": {"name": "weather", "args": {"city": "Oslo"}}, "thoughtSignature": "sig2"}]}}],
        "usageMetadata": {"promptTokenCount": 120, "candidatesTokenCount": 40, "thoughtsTokenCount": 12,
            "cachedContentTokenCount": 20, "totalTokenCount": 172}});
    let mut events = Vec::new();
    for i in 0..20 {
        events.push(("", json!({"responseId": "r-abc123", "modelVersion": "m",
            "candidates": [{"index": 0, "content": {"role": "model", "parts": [{"text": format!("tok{i} ")}]}}],
            "usageMetadata": {"promptTokenCount": 120, "candidatesTokenCount": i, "totalTokenCount": 120 + i}}).to_string()));
    }
    events.push(("", json!({"responseId": "r-abc123", "modelVersion": "m",
        "candidates": [{"index": 0, "finishReason": "STOP", "content": {"role": "model", "parts": [
            {"functionCall": {"name": "weather", "args": {"city": "Oslo"}}}]}}],
        "usageMetadata": {"promptTokenCount": 120, "candidatesTokenCount": 40, "totalTokenCount": 160}}).to_string()));
    Samples {
        name: "gemini",
        wire: Wire::Gemini,
        request: Some(request),
        answer,
        events,
    }
}

fn converse() -> Samples {
    let answer = json!({"output": {"message": {"role": "assistant", "content": [
            {"reasoningContent": {"reasoningText": {"text": "Call the tool again.", "signature": "sig2"}}},
            {"text": "Let me check the forecast for tomorrow in Oslo."},
            {"toolUse": {"toolUseId": "tooluse_2", "name": "weather", "input": {"city": "Oslo"}}}]}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": 100, "outputTokens": 40, "totalTokens": 140, "cacheReadInputTokens": 20},
        "metrics": {"latencyMs": 900}});
    let mut events = vec![("messageStart", json!({"role": "assistant"}).to_string())];
    for i in 0..20 {
        events.push((
            "contentBlockDelta",
            json!({"contentBlockIndex": 0,
            "delta": {"text": format!("tok{i} ")}})
            .to_string(),
        ));
    }
    events.push((
        "contentBlockStop",
        json!({"contentBlockIndex": 0}).to_string(),
    ));
    events.push((
        "contentBlockStart",
        json!({"contentBlockIndex": 1,
        "start": {"toolUse": {"toolUseId": "tooluse_2", "name": "weather"}}})
        .to_string(),
    ));
    events.push((
        "contentBlockDelta",
        json!({"contentBlockIndex": 1,
        "delta": {"toolUse": {"input": "{\"city\":\"Oslo\"}"}}})
        .to_string(),
    ));
    events.push((
        "contentBlockStop",
        json!({"contentBlockIndex": 1}).to_string(),
    ));
    events.push(("messageStop", json!({"stopReason": "tool_use"}).to_string()));
    events.push((
        "metadata",
        json!({"usage": {"inputTokens": 100, "outputTokens": 40, "totalTokens": 140},
        "metrics": {"latencyMs": 900}})
        .to_string(),
    ));
    Samples {
        name: "converse",
        wire: Wire::Converse,
        request: None,
        answer,
        events,
    }
}

fn cohere() -> Samples {
    let answer = json!({"id": "c-abc123", "finish_reason": "TOOL_CALL", "message": {"role": "assistant",
            "tool_plan": "Call the tool again.",
            "content": [{"type": "text", "text": "Let me check the forecast for tomorrow in Oslo."}],
            "tool_calls": [{"id": "call_2", "type": "function",
                "function": {"name": "weather", "arguments": "{\"city\":\"Oslo\"}"}}]},
        "usage": {"billed_units": {"input_tokens": 120, "output_tokens": 40},
            "tokens": {"input_tokens": 130, "output_tokens": 40}}});
    let mut events = vec![(
        "message-start",
        json!({"type": "message-start", "id": "c-abc123", "delta": {"message": {"role": "assistant"}}})
            .to_string(),
    )];
    events.push((
        "tool-plan-delta",
        json!({"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "Consider the city."}}})
            .to_string(),
    ));
    events.push((
        "content-start",
        json!({"type": "content-start", "index": 0,
            "delta": {"message": {"content": {"type": "text", "text": ""}}}})
        .to_string(),
    ));
    for i in 0..20 {
        events.push((
            "content-delta",
            json!({"type": "content-delta", "index": 0,
                "delta": {"message": {"content": {"text": format!("tok{i} ")}}}})
            .to_string(),
        ));
    }
    events.push((
        "content-end",
        json!({"type": "content-end", "index": 0}).to_string(),
    ));
    events.push((
        "tool-call-start",
        json!({"type": "tool-call-start", "index": 1, "delta": {"message": {"tool_calls": {"id": "call_2",
            "type": "function", "function": {"name": "weather", "arguments": ""}}}}})
        .to_string(),
    ));
    events.push((
        "tool-call-delta",
        json!({"type": "tool-call-delta", "index": 1,
            "delta": {"message": {"tool_calls": {"function": {"arguments": "{\"city\":\"Oslo\"}"}}}}})
        .to_string(),
    ));
    events.push((
        "tool-call-end",
        json!({"type": "tool-call-end", "index": 1}).to_string(),
    ));
    events.push((
        "message-end",
        json!({"type": "message-end", "delta": {"finish_reason": "TOOL_CALL",
            "usage": {"billed_units": {"input_tokens": 120, "output_tokens": 40},
                "tokens": {"input_tokens": 130, "output_tokens": 40}}}})
        .to_string(),
    ));
    Samples {
        name: "cohere",
        wire: Wire::Cohere,
        request: None,
        answer,
        events,
    }
}

fn ctx() -> EncodeCtx {
    EncodeCtx {
        model: "m".into(),
        prompt_estimate: 120,
        include_usage: true,
    }
}

/// Per format: request to and from the hub, answer to and from the hub, stream decode and
/// encode.
fn formats(c: &mut Criterion) {
    let hub = hub_request();
    let hub_answer = hub_answer();
    let pieces = pieces();
    for s in [responses(), anthropic(), gemini(), converse(), cohere()] {
        let mut group = c.benchmark_group(format!("wire/{}", s.name));
        if let Some(request) = &s.request {
            wire::to_hub_request(s.wire, request).expect("converts");
            group.bench_function("request_to_hub", |b| {
                b.iter(|| wire::to_hub_request(s.wire, black_box(request)));
            });
        }
        wire::from_hub_request(s.wire, &hub, "m", true).expect("converts");
        group.bench_function("request_from_hub", |b| {
            b.iter(|| wire::from_hub_request(s.wire, black_box(&hub), "m", true));
        });
        group.bench_function("answer_to_hub", |b| {
            b.iter(|| wire::to_hub_answer(s.wire, black_box(&s.answer)));
        });
        // What the relay does with a whole upstream answer: its bytes to the hub and its usage.
        let bytes = s.answer.to_string();
        wire::read_answer(s.wire, bytes.as_bytes()).expect("reads");
        group.bench_function("answer_read", |b| {
            b.iter(|| wire::read_answer(s.wire, black_box(bytes.as_bytes())));
        });
        group.bench_function("answer_usage", |b| {
            b.iter(|| wire::answer_usage(s.wire, black_box(&s.answer)));
        });
        if s.request.is_some() {
            group.bench_function("answer_from_hub", |b| {
                b.iter(|| wire::from_hub_answer(s.wire, black_box(&hub_answer), "m"));
            });
        }
        group.bench_function("stream_decode", |b| {
            b.iter(|| {
                let mut decoder = wire::decoder(s.wire);
                let mut n = 0;
                for (event, data) in &s.events {
                    n += decoder.event(event, black_box(data)).len();
                }
                (n, decoder.done())
            });
        });
        if s.request.is_some() {
            group.bench_function("stream_encode", |b| {
                b.iter(|| {
                    let mut encoder = wire::encoder(s.wire, ctx());
                    let mut out = Vec::with_capacity(8192);
                    for piece in &pieces {
                        encoder.piece(black_box(piece), &mut out);
                    }
                    encoder.end(&mut out);
                    out.len()
                });
            });
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = formats
}
criterion_main!(benches);
