//! Token counting for the adaptor clients: Anthropic `POST /v1/messages/count_tokens` and
//! Gemini `:countTokens`. Neither is billed (every provider counts for free).
//!
//! When the channel the model's route picks first can count for the client's format, the
//! request is forwarded to it: only the provider knows its tokenizer (Claude's is not public,
//! and Tollgate's estimator is off by tens of percent for it), and clients such as Claude Code
//! use the count to decide when to compact a conversation. Who counts, and with which request,
//! is the channel's adaptor's business ([`crate::relay::adaptor::count`]): Claude channels,
//! Claude on Vertex AI and Bedrock for Anthropic clients, Gemini channels and Gemini on Vertex AI
//! for Gemini clients. The wiring (rate guard, model check, forward, local fallback, when a
//! failed forward is the client's fault) is the spine's, written once
//! ([`crate::relay::pipeline::spine::count::run`]); this file says how each client's request is
//! read, and how Tollgate counts it itself ([`crate::relay::measure::tokenize`]) and answers in
//! the client's shape when no channel of the model can count for the format (an OpenAI channel,
//! Claude models for a Gemini client) or the forwarded count fails.

use axum::Json;
use axum::body::Bytes;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::error::RelayError;
use crate::relay::adaptor::count::Asked;
use crate::relay::measure::prompt_count::{each_text, prompt_tokens};
use crate::relay::measure::tokenize::Counter;
use crate::relay::pipeline::auth::Caller;
use crate::relay::pipeline::spine::count::{self, Count};
use crate::relay::wire::{anthropic, gemini};
use crate::state::AppState;

/// The body as JSON, or the client's 400.
fn json_body(body: &Bytes) -> Result<Value, RelayError> {
    serde_json::from_slice(body)
        .map_err(|e| RelayError::BadRequest(format!("the request body is not valid JSON: {e}")))
}

/// An Anthropic client's count request.
struct AnthropicCount {
    model: String,
    body: Bytes,
    parsed: Value,
    hub: Value,
    headers: HeaderMap,
}

impl Count for AnthropicCount {
    fn model(&self) -> &str {
        &self.model
    }

    fn asked(&self) -> Asked<'_> {
        Asked::Anthropic {
            model: &self.model,
            body: &self.body,
            parsed: &self.parsed,
            hub: &self.hub,
            headers: &self.headers,
        }
    }

    fn local(self) -> i64 {
        let messages = self.hub["messages"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        prompt_tokens(&self.model, messages).saturating_add(tools_tokens(&self.model, &self.parsed))
    }

    fn answer(tokens: i64) -> Response {
        Json(json!({"input_tokens": tokens})).into_response()
    }
}

/// POST /v1/messages/count_tokens: `{"input_tokens": N}`.
pub async fn anthropic(
    state: &AppState,
    caller: Caller,
    headers: &HeaderMap,
    body: Bytes,
) -> Result<Response, RelayError> {
    count::run(state, caller, body, |body| {
        let parsed = json_body(&body)?;
        if !parsed.is_object() {
            return Err(RelayError::BadRequest(
                "the request body must be a JSON object".into(),
            ));
        }
        let model = parsed["model"].as_str().unwrap_or_default().to_owned();
        let hub = anthropic::request_to_hub(&parsed).map_err(|e| RelayError::BadRequest(e.0))?;
        Ok(AnthropicCount {
            model,
            body,
            parsed,
            hub,
            headers: headers.clone(),
        })
    })
    .await
}

/// Tokens of the tool definitions (their JSON text), which count as input.
fn tools_tokens(model: &str, body: &Value) -> i64 {
    match body.get("tools") {
        Some(tools @ Value::Array(list)) if !list.is_empty() => {
            Counter::for_model(model).count(&tools.to_string())
        }
        _ => 0,
    }
}

/// A Gemini client's count request.
struct GeminiCount {
    model: String,
    body: Bytes,
    parsed: Value,
    hub: Value,
}

impl Count for GeminiCount {
    fn model(&self) -> &str {
        &self.model
    }

    fn asked(&self) -> Asked<'_> {
        Asked::Gemini {
            model: &self.model,
            body: &self.body,
            parsed: &self.parsed,
        }
    }

    /// Gemini counts the text itself, with no per-message framing.
    fn local(self) -> i64 {
        let counter = Counter::for_model(&self.model);
        let mut tokens = 0i64;
        for message in self.hub["messages"]
            .as_array()
            .map_or(&[][..], Vec::as_slice)
        {
            each_text(&message["content"], &mut |text| {
                tokens = tokens.saturating_add(counter.count(text));
            });
        }
        tokens
    }

    fn answer(tokens: i64) -> Response {
        Json(json!({"totalTokens": tokens})).into_response()
    }
}

/// POST /v1beta/models/{model}:countTokens: `{"totalTokens": N}`.
pub async fn gemini(
    state: &AppState,
    caller: Caller,
    model: &str,
    body: Bytes,
) -> Result<Response, RelayError> {
    count::run(state, caller, body, |body| {
        let parsed = json_body(&body)?;
        // Either `contents` or a whole `generateContentRequest` (whose `model` must name the
        // model).
        let inner = match parsed.get("generateContentRequest") {
            Some(request @ Value::Object(_)) => request,
            _ => &parsed,
        };
        let hub = gemini::request_to_hub(inner).map_err(|e| RelayError::BadRequest(e.0))?;
        Ok(GeminiCount {
            model: model.to_owned(),
            body,
            parsed,
            hub,
        })
    })
    .await
}
