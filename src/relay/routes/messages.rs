//! POST /v1/messages (and /v1/messages/count_tokens, [`crate::relay::routes::count`]): Anthropic Messages clients (the official `anthropic` SDKs, Claude Code).
//! The key comes from `x-api-key` or `Authorization: Bearer`; every error, auth included, is
//! answered in Anthropic's shape `{"type":"error","error":{"type","message"}}`. Claude channels
//! get the request as received (pass-through); OpenAI-compatible and Gemini channels get it
//! converted and their answers converted back ([`crate::relay::pipeline::attempt`]).

use std::time::Instant;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::error::RelayError;
use crate::relay::measure::prompt_count::prompt_tokens;
use crate::relay::pipeline::auth::Caller;
use crate::relay::routes::convert::Job;
use crate::relay::wire::{Wire, anthropic};
use crate::state::AppState;

/// POST /v1/messages.
pub async fn messages(
    State(state): State<AppState>,
    caller: Result<Caller, RelayError>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    match handle(&state, caller, &headers, body).await {
        Ok(response) => response,
        Err(e) => error_response(e),
    }
}

async fn handle(
    state: &AppState,
    caller: Result<Caller, RelayError>,
    headers: &HeaderMap,
    mut body: Bytes,
) -> Result<Response, RelayError> {
    let caller = caller?;
    let started = Instant::now();
    let mut parsed: Value = serde_json::from_slice(&body)
        .map_err(|e| RelayError::BadRequest(format!("the request body is not valid JSON: {e}")))?;
    if !parsed.is_object() {
        return Err(RelayError::BadRequest(
            "the request body must be a JSON object".into(),
        ));
    }
    let max_cost = crate::relay::pipeline::max_cost::take(&mut parsed, &mut body)?;
    let model = parsed["model"].as_str().unwrap_or_default().to_owned();
    let hub = anthropic::request_to_hub(&parsed).map_err(|e| RelayError::BadRequest(e.0))?;
    let prompt_estimate = hub["messages"]
        .as_array()
        .map_or(0, |m| prompt_tokens(&model, m));
    let mut forwarded = HeaderMap::new();
    for name in ["anthropic-version", "anthropic-beta"] {
        if let Some(v) = headers.get(name) {
            forwarded.insert(name, v.clone());
        }
    }
    let job = Job {
        client: Wire::Anthropic,
        stream: parsed["stream"] == true,
        include_usage: false,
        body,
        parsed,
        hub,
        model,
        prompt_estimate,
        headers: forwarded,
        started,
        max_cost,
    };
    crate::relay::pipeline::spine::run(state, caller, job).await
}

/// POST /v1/messages/count_tokens ([`crate::relay::routes::count::anthropic`]).
pub async fn count_tokens(
    State(state): State<AppState>,
    caller: Result<Caller, RelayError>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let counted = match caller {
        Ok(caller) => crate::relay::routes::count::anthropic(&state, caller, &headers, body).await,
        Err(e) => Err(e),
    };
    counted.unwrap_or_else(error_response)
}

/// Anthropic's `error.type` for an HTTP status.
fn error_type(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        503 | 529 => "overloaded_error",
        504 => "timeout_error",
        _ => "api_error",
    }
}

/// A relay error in Anthropic's shape, with the status the OpenAI routes would answer.
pub fn error_response(e: RelayError) -> Response {
    let message = match &e {
        RelayError::MissingKey => {
            "no API key provided; send it as `x-api-key: sk-...` or `Authorization: Bearer sk-...`"
                .to_owned()
        }
        other => other.to_string(),
    };
    let answered = e.into_response();
    let status = answered.status();
    let body = json!({"type": "error", "error": {"type": error_type(status.as_u16()), "message": message}});
    let mut response = (status, Json(body)).into_response();
    // A 429's Retry-After (rate limits, budgets) is kept in every format.
    if let Some(retry) = answered.headers().get(axum::http::header::RETRY_AFTER) {
        response
            .headers_mut()
            .insert(axum::http::header::RETRY_AFTER, retry.clone());
    }
    response
}
