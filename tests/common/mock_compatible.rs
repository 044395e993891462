//! The documented answers of the OpenAI-compatible channel types that are not OpenAI (Zhipu,
//! Qianfan v2, MiniMax, Cloudflare Workers AI, Jina, M3E, 360), scripted on
//! [`super::mock_scripted::MockScripted`] by tests/relay_compatible_types.rs. Each fixture follows
//! its provider's page (cited on the function); they differ from OpenAI's where the provider does
//! (Jina's rerank `usage: {total_tokens}`, the providers' own error envelopes).
#![allow(
    dead_code,
    reason = "each test binary uses a different subset of the fixtures"
)]

use serde_json::{Value, json};

/// An OpenAI-shaped chat completion of `model` saying `text`, with this usage.
pub fn chat_answer(model: &str, text: &str, prompt: i64, completion: i64) -> Value {
    json!({"id": "chatcmpl-compat-1", "object": "chat.completion", "created": 1_735_000_000,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
            "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}})
}

/// The SSE parts of a streamed chat completion: the text in two deltas, then a last chunk with
/// the finish reason and the usage, then `[DONE]` — as Zhipu's v4 API streams
/// (<https://open.bigmodel.cn/dev/api/normal-model/glm-4>), and the OpenAI-compatible APIs of
/// MiniMax, Qianfan v2 and Workers AI with `stream_options.include_usage`.
pub fn chat_stream(model: &str, parts: [&str; 2], prompt: i64, completion: i64) -> Vec<String> {
    let chunk = |delta: Value, finish: Value, usage: Option<Value>| {
        let mut c = json!({"id": "chatcmpl-compat-1", "object": "chat.completion.chunk",
            "created": 1_735_000_000, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        if let Some(u) = usage {
            c["usage"] = u;
        }
        format!("data: {c}\n\n")
    };
    vec![
        chunk(
            json!({"role": "assistant", "content": parts[0]}),
            Value::Null,
            None,
        ),
        chunk(json!({"content": parts[1]}), Value::Null, None),
        chunk(
            json!({}),
            json!("stop"),
            Some(
                json!({"prompt_tokens": prompt, "completion_tokens": completion,
                "total_tokens": prompt + completion}),
            ),
        ),
        "data: [DONE]\n\n".to_owned(),
    ]
}

/// An embeddings answer in OpenAI's shape with `prompt` tokens (Zhipu's `embedding-3`, Workers
/// AI, the M3E server of FastGPT's guide, Jina's `/v1/embeddings` — which also answers
/// `total_tokens`).
pub fn embeddings_answer(model: &str, prompt: i64) -> Value {
    json!({"object": "list", "model": model,
        "data": [{"object": "embedding", "index": 0, "embedding": [0.015, -0.042, 0.031]}],
        "usage": {"prompt_tokens": prompt, "total_tokens": prompt}})
}

/// Jina's rerank answer (<https://jina.ai/reranker/>): results by relevance, and usage as
/// `total_tokens` alone.
pub fn jina_rerank_answer(total: i64) -> Value {
    json!({"model": "jina-reranker-v2-base-multilingual",
        "usage": {"total_tokens": total},
        "results": [
            {"index": 1, "document": {"text": "Organic skincare for sensitive skin"},
                "relevance_score": 0.8783},
            {"index": 0, "document": {"text": "Eco-friendly kitchenware"},
                "relevance_score": 0.0734}]})
}

/// Zhipu's error envelope (<https://docs.bigmodel.cn/cn/faq/api-code>): the business code as a
/// string in `error.code`.
pub fn zhipu_error(code: &str, message: &str) -> Value {
    json!({"error": {"code": code, "message": message}})
}

/// Cloudflare's API error envelope with a Workers AI error
/// (<https://developers.cloudflare.com/workers-ai/platform/errors/>).
pub fn cloudflare_error(code: i64, message: &str) -> Value {
    json!({"success": false, "errors": [{"code": code, "message": message}],
        "messages": [], "result": null})
}

/// MiniMax's error (<https://platform.minimax.io/docs/api-reference/errorcode>): `base_resp`
/// with the code and its message.
pub fn minimax_error(code: i64, message: &str) -> Value {
    json!({"id": "", "choices": null,
        "base_resp": {"status_code": code, "status_msg": message}})
}

/// A Gemini `generateContent` answer (<https://ai.google.dev/api/generate-content>), for PaLM2
/// channels sent to the Gemini API.
pub fn gemini_answer(text: &str, prompt: i64, completion: i64) -> Value {
    json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
            "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": completion,
            "totalTokenCount": prompt + completion},
        "modelVersion": "gemini-2.0-flash"})
}
