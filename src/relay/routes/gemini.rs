//! POST /v1beta/models/{model}:generateContent and :streamGenerateContent (answered as SSE, as
//! with `?alt=sse`): Gemini clients; `:countTokens` ([`crate::relay::routes::count`]), `:embedContent` and
//! `:batchEmbedContents` ([`crate::relay::routes::embed`]) are dispatched from here too. The key comes from `x-goog-api-key` or `?key=` (or a
//! bearer header); every error is answered in Gemini's shape
//! `{"error":{"code","message","status"}}`. Gemini channels get the request as received
//! (pass-through; a mapped model changes only the URL); other channels get it converted.

use std::collections::HashMap;
use std::convert::Infallible;
use std::time::Instant;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::error::RelayError;
use crate::relay::measure::prompt_count::prompt_tokens;
use crate::relay::pipeline::auth::Caller;
use crate::relay::routes::convert::Job;
use crate::relay::wire::{Wire, gemini};
use crate::state::AppState;

/// The caller of a Gemini route: the key from `x-goog-api-key` or `?key=` is checked like a
/// bearer key.
pub struct GeminiCaller(pub Result<Caller, RelayError>);

impl FromRequestParts<AppState> for GeminiCaller {
    type Rejection = Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let key = parts
            .headers
            .get("x-goog-api-key")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .or_else(|| {
                Query::<HashMap<String, String>>::try_from_uri(&parts.uri)
                    .ok()
                    .and_then(|Query(q)| q.get("key").cloned())
            });
        if let Some(key) = key
            && let Ok(value) = HeaderValue::from_str(&format!("Bearer {}", key.trim()))
        {
            parts.headers.insert(header::AUTHORIZATION, value);
        }
        Ok(GeminiCaller(Caller::from_request_parts(parts, state).await))
    }
}

/// POST /v1beta/models/{model}:{action}.
pub async fn generate(
    State(state): State<AppState>,
    Path(target): Path<String>,
    GeminiCaller(caller): GeminiCaller,
    body: Bytes,
) -> Response {
    match handle(&state, &target, caller, body).await {
        Ok(response) => response,
        Err(e) => error_response(e),
    }
}

async fn handle(
    state: &AppState,
    target: &str,
    caller: Result<Caller, RelayError>,
    mut body: Bytes,
) -> Result<Response, RelayError> {
    let caller = caller?;
    let started = Instant::now();
    let Some((model, action)) = target.rsplit_once(':') else {
        return Err(RelayError::UnknownRoute {
            method: "POST".into(),
            path: format!("/v1beta/models/{target}"),
        });
    };
    let stream = match action {
        "generateContent" => false,
        "streamGenerateContent" => true,
        "countTokens" => {
            return crate::relay::routes::count::gemini(state, caller, model, body).await;
        }
        "embedContent" | "batchEmbedContents" => {
            return crate::relay::routes::embed::gemini(state, caller, model, action, body).await;
        }
        other => {
            return Err(RelayError::NotImplemented(format!(
                "the Gemini method {other}"
            )));
        }
    };
    let mut parsed: Value = serde_json::from_slice(&body)
        .map_err(|e| RelayError::BadRequest(format!("the request body is not valid JSON: {e}")))?;
    let max_cost = crate::relay::pipeline::max_cost::take(&mut parsed, &mut body)?;
    let mut hub = gemini::request_to_hub(&parsed).map_err(|e| RelayError::BadRequest(e.0))?;
    hub["model"] = Value::String(model.to_owned());
    let prompt_estimate = hub["messages"]
        .as_array()
        .map_or(0, |m| prompt_tokens(model, m));
    let job = Job {
        client: Wire::Gemini,
        body,
        parsed,
        hub,
        model: model.to_owned(),
        stream,
        include_usage: false,
        prompt_estimate,
        headers: HeaderMap::new(),
        started,
        max_cost,
    };
    crate::relay::pipeline::spine::run(state, caller, job).await
}

/// Gemini's `error.status` for an HTTP status.
fn status_name(status: u16) -> &'static str {
    match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ABORTED",
        429 => "RESOURCE_EXHAUSTED",
        501 => "UNIMPLEMENTED",
        502 | 503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "INTERNAL",
    }
}

/// A relay error in Gemini's shape, with the status the OpenAI routes would answer.
pub fn error_response(e: RelayError) -> Response {
    let message = match &e {
        RelayError::MissingKey => {
            "no API key provided; send it as `x-goog-api-key: sk-...` or `?key=sk-...`".to_owned()
        }
        other => other.to_string(),
    };
    let answered = e.into_response();
    let status = answered.status();
    let body = json!({"error": {"code": status.as_u16(), "message": message,
        "status": status_name(status.as_u16())}});
    let mut response = (status, Json(body)).into_response();
    // A 429's Retry-After (rate limits, budgets) is kept in every format.
    if let Some(retry) = answered.headers().get(axum::http::header::RETRY_AFTER) {
        response
            .headers_mut()
            .insert(axum::http::header::RETRY_AFTER, retry.clone());
    }
    response
}
