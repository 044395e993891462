//! Token counting for the adaptor clients: Anthropic `POST /v1/messages/count_tokens` and
//! Gemini `:countTokens`. Neither is billed (both providers count for free).
//!
//! When the channel the model's route picks first speaks the client's protocol, the request is
//! forwarded to it and its answer returned as is: only the provider knows its tokenizer (Claude's
//! is not public, and Tollgate's estimator is off by tens of percent for it), and clients such as
//! Claude Code use the count to decide when to compact a conversation. Otherwise — a channel of
//! another protocol, or a channel that cannot count (many Claude-compatible relays answer 404
//! here) — Tollgate counts itself ([`super::tokenize`]) and answers in the client's shape.
//! Forwarded counts are not reported to the channel pool: a relay without the endpoint must not
//! lose health for it.

use std::time::{Duration, Instant};

use axum::Json;
use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use super::adaptor::post;
use super::attempt;
use super::auth::Caller;
use super::embed::gemini_url;
use super::pick::{mapped_model, pick};
use super::prompt_count::each_text;
use super::prompt_count::prompt_tokens;
use super::tokenize::Counter;
use super::wire::{Wire, anthropic, gemini};
use crate::channel_types::effective_base_url;
use crate::error::RelayError;
use crate::state::AppState;

/// The longest a forwarded count may take before Tollgate counts itself.
const COUNT_TIMEOUT: Duration = Duration::from_secs(30);

/// Headers of an Anthropic client passed on with a forwarded count.
const ANTHROPIC_HEADERS: &[&str] = &["anthropic-version", "anthropic-beta"];

/// The per-key rate (CountTokensRateLimit) and the size limit of the count routes.
fn admit(state: &AppState, caller: &Caller, body: &Bytes) -> Result<(), RelayError> {
    let per_minute = state.options.current().int("CountTokensRateLimit");
    state
        .count_guard
        .admit(caller.token.id, per_minute, body.len())
}

/// Checks the key may use `model` and that some channel serves it.
fn check(state: &AppState, caller: &Caller, model: &str) -> Result<(), RelayError> {
    if model.is_empty() {
        return Err(RelayError::BadRequest("model is required".into()));
    }
    if !caller.token.allows_model(model) {
        return Err(RelayError::Forbidden(format!(
            "this API key cannot use model {model}"
        )));
    }
    let table = state.channel_pool.table().load();
    if pick(&table, caller, model, 0, 0, &[]).is_none() {
        return Err(RelayError::NoChannel {
            model: model.to_owned(),
            group: caller.group.clone(),
        });
    }
    Ok(())
}

/// Sends `body` to `path` of the first channel of `model` if it speaks `wire`; `Some` is a
/// successful JSON answer holding `field`.
async fn forward(
    state: &AppState,
    caller: &Caller,
    model: &str,
    wire: Wire,
    field: &str,
    request: impl FnOnce(&RoutedChannel, &str) -> (String, Bytes),
    headers: &HeaderMap,
) -> Option<Response> {
    let table = state.channel_pool.table().load_full();
    let channel = pick(&table, caller, model, 0, 0, &[])?;
    if Wire::of_channel(channel.channel.channel_type) != Some(wire) {
        return None;
    }
    let upstream_model = mapped_model(&channel, model);
    let (path, body) = request(&channel, &upstream_model);
    let key = channel.next_key();
    let key_text = key.map_or("", |(_, k)| k.expose());
    let credential = super::adaptor::Credential::key(key_text);
    let mut req = post(state, &channel, wire, path, &credential)
        .ok()?
        .header(header::CONTENT_TYPE, "application/json")
        .body(body);
    if wire == Wire::Anthropic {
        for name in ANTHROPIC_HEADERS {
            match headers.get(*name) {
                Some(v) => req = req.header(*name, v),
                None if *name == "anthropic-version" => {
                    req = req.header(*name, anthropic::DEFAULT_VERSION);
                }
                None => {}
            }
        }
    }
    let timeout = state.config.relay_timeout().min(COUNT_TIMEOUT);
    let sent = Instant::now();
    let resp = attempt::send(req, timeout).await.ok()?;
    let status = resp.status();
    let left = timeout.saturating_sub(sent.elapsed());
    let bytes = tokio::time::timeout(left, resp.bytes()).await.ok()?.ok()?;
    let value: Value = serde_json::from_slice(&bytes).ok()?;
    if !status.is_success() || value.get(field).and_then(Value::as_i64).is_none() {
        tracing::debug!(channel = %channel.id().0, status = status.as_u16(), "the channel did not count; Tollgate counts");
        return None;
    }
    let mut response = (status, bytes).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Some(response)
}

/// POST /v1/messages/count_tokens: `{"input_tokens": N}`.
pub async fn anthropic(
    state: &AppState,
    caller: Caller,
    headers: &HeaderMap,
    body: Bytes,
) -> Result<Response, RelayError> {
    admit(state, &caller, &body)?;
    let parsed: Value = serde_json::from_slice(&body)
        .map_err(|e| RelayError::BadRequest(format!("the request body is not valid JSON: {e}")))?;
    if !parsed.is_object() {
        return Err(RelayError::BadRequest(
            "the request body must be a JSON object".into(),
        ));
    }
    let model = parsed["model"].as_str().unwrap_or_default().to_owned();
    let hub = anthropic::request_to_hub(&parsed).map_err(|e| RelayError::BadRequest(e.0))?;
    check(state, &caller, &model)?;
    let request = |channel: &RoutedChannel, upstream_model: &str| {
        let c = &channel.channel;
        let base = effective_base_url(c.channel_type, &c.base_url);
        let body = if upstream_model == model {
            body.clone()
        } else {
            let mut value = parsed.clone();
            value["model"] = Value::String(upstream_model.to_owned());
            Bytes::from(value.to_string())
        };
        (format!("{base}/v1/messages/count_tokens"), body)
    };
    let forwarded = forward(
        state,
        &caller,
        &model,
        Wire::Anthropic,
        "input_tokens",
        request,
        headers,
    )
    .await;
    if let Some(response) = forwarded {
        return Ok(response);
    }
    let tokens = state
        .count_guard
        .run(move || {
            let messages = hub["messages"].as_array().map_or(&[][..], Vec::as_slice);
            prompt_tokens(&model, messages).saturating_add(tools_tokens(&model, &parsed))
        })
        .await?;
    Ok(Json(json!({"input_tokens": tokens})).into_response())
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

/// POST /v1beta/models/{model}:countTokens: `{"totalTokens": N}`.
pub async fn gemini(
    state: &AppState,
    caller: Caller,
    model: &str,
    body: Bytes,
) -> Result<Response, RelayError> {
    admit(state, &caller, &body)?;
    let parsed: Value = serde_json::from_slice(&body)
        .map_err(|e| RelayError::BadRequest(format!("the request body is not valid JSON: {e}")))?;
    // Either `contents` or a whole `generateContentRequest` (whose `model` must name the model).
    let inner = match parsed.get("generateContentRequest") {
        Some(request @ Value::Object(_)) => request,
        _ => &parsed,
    };
    let hub = gemini::request_to_hub(inner).map_err(|e| RelayError::BadRequest(e.0))?;
    check(state, &caller, model)?;
    let request = |channel: &RoutedChannel, upstream_model: &str| {
        let body = match parsed.get("generateContentRequest") {
            Some(Value::Object(_)) if upstream_model != model => {
                let mut value = parsed.clone();
                value["generateContentRequest"]["model"] =
                    Value::String(format!("models/{upstream_model}"));
                Bytes::from(value.to_string())
            }
            _ => body.clone(),
        };
        (gemini_url(channel, upstream_model, "countTokens"), body)
    };
    let forwarded = forward(
        state,
        &caller,
        model,
        Wire::Gemini,
        "totalTokens",
        request,
        &HeaderMap::new(),
    )
    .await;
    if let Some(response) = forwarded {
        return Ok(response);
    }
    // Gemini counts the text itself, with no per-message framing.
    let counter = Counter::for_model(model);
    let tokens = state
        .count_guard
        .run(move || {
            let mut tokens = 0i64;
            for message in hub["messages"].as_array().map_or(&[][..], Vec::as_slice) {
                each_text(&message["content"], &mut |text| {
                    tokens = tokens.saturating_add(counter.count(text));
                });
            }
            tokens
        })
        .await?;
    Ok(Json(json!({"totalTokens": tokens})).into_response())
}
