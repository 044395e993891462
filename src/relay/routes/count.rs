//! Token counting for the adaptor clients: Anthropic `POST /v1/messages/count_tokens` and
//! Gemini `:countTokens`. Neither is billed (every provider counts for free).
//!
//! When the channel the model's route picks first can count for the client's format, the
//! request is forwarded to it: only the provider knows its tokenizer (Claude's is not public,
//! and Tollgate's estimator is off by tens of percent for it), and clients such as Claude Code
//! use the count to decide when to compact a conversation. Who counts, and with which request,
//! is the channel's adaptor's business ([`crate::relay::adaptor::count`]): Claude channels,
//! Claude on Vertex AI and Bedrock for Anthropic clients, Gemini channels and Gemini on Vertex AI
//! for Gemini clients.
//!
//! Tollgate counts itself ([`crate::relay::measure::tokenize`]) and answers in the client's shape when no
//! channel of the model can count for the format (an OpenAI channel, Claude models for a
//! Gemini client), and when the forwarded count fails for a reason that is not the client's:
//! no answer or a timeout, a 5xx, a 429, a refused credential (401/403), an endpoint the
//! channel does not have (404 — many Claude-compatible relays), an answer without the count,
//! and every Bedrock error (AWS answers a model that cannot count, such as Claude models served
//! by cross-region inference only, with the same `ValidationException` as a malformed input).
//! Only a 400 in which the provider says the request itself is invalid (Anthropic's
//! `invalid_request_error`, Google's `INVALID_ARGUMENT`) is the client's fault: it is answered
//! as a 400 with the provider's message, keys masked. Forwarded counts are not reported to the
//! channel pool: a relay without the endpoint must not lose health for it.

use std::time::{Duration, Instant};

use axum::Json;
use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::error::RelayError;
use crate::relay::adaptor;
use crate::relay::adaptor::count::{self, Asked, Reshape};
use crate::relay::measure::prompt_count::each_text;
use crate::relay::measure::prompt_count::prompt_tokens;
use crate::relay::measure::tokenize::Counter;
use crate::relay::pipeline::attempt;
use crate::relay::pipeline::auth::Caller;
use crate::relay::pipeline::pick::{mapped_model, pick};
use crate::relay::pipeline::redact::redact;
use crate::relay::wire::{anthropic, gemini};
use crate::state::AppState;

/// The longest a forwarded count may take before Tollgate counts itself.
const COUNT_TIMEOUT: Duration = Duration::from_secs(30);

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

/// What a forwarded count came to.
enum Forwarded {
    /// The upstream's count, in the client's shape.
    Counted(Response),
    /// The upstream said the request itself is invalid: the client's fault.
    Refused(RelayError),
    /// Tollgate counts itself.
    Local,
}

/// Sends the count of `asked` to the first channel of `model`, when its adaptor can count for
/// the client ([`count::call`]).
async fn forward(state: &AppState, caller: &Caller, model: &str, asked: &Asked<'_>) -> Forwarded {
    let table = state.channel_pool.table().load_full();
    let Some(channel) = pick(&table, caller, model, 0, 0, &[]) else {
        return Forwarded::Local;
    };
    let channel_type = channel.channel.channel_type;
    let upstream_model = mapped_model(&channel, model);
    let Some(wire) = adaptor::wire(channel_type, &upstream_model) else {
        return Forwarded::Local;
    };
    let key_text = channel.next_key().map_or("", |(_, k)| k.expose());
    let Ok(credential) = adaptor::authorize(&state.http, &channel, key_text).await else {
        return Forwarded::Local;
    };
    let Some(call) = count::call(&channel, wire, &credential, &upstream_model, asked) else {
        return Forwarded::Local;
    };
    let Ok(req) = adaptor::request(
        &state.http,
        &channel,
        wire,
        call.url,
        &credential,
        &call.headers,
        call.body,
    ) else {
        return Forwarded::Local;
    };
    let timeout = state.config.relay_timeout().min(COUNT_TIMEOUT);
    let sent = Instant::now();
    let Ok(resp) = attempt::send(req, timeout).await else {
        return Forwarded::Local;
    };
    let status = resp.status();
    let left = timeout.saturating_sub(sent.elapsed());
    let Ok(Ok(bytes)) = tokio::time::timeout(left, resp.bytes()).await else {
        return Forwarded::Local;
    };
    let Ok(value) = serde_json::from_slice::<Value>(&bytes) else {
        return Forwarded::Local;
    };
    let count = value.get(call.field).and_then(Value::as_i64);
    match count {
        Some(count) if status.is_success() => {
            let mut response = match call.reshape {
                Reshape::AsIs => (status, bytes).into_response(),
                Reshape::InputTokens => Json(json!({"input_tokens": count})).into_response(),
                Reshape::Gemini => Json(gemini_answer(&value)).into_response(),
            };
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            Forwarded::Counted(response)
        }
        _ => {
            let fault = call
                .client_faults
                .then(|| client_fault(status.as_u16(), &value));
            match fault.flatten() {
                Some(message) => Forwarded::Refused(RelayError::Upstream {
                    status: 400,
                    message: redact(message, [key_text]),
                }),
                None => {
                    tracing::debug!(channel = %channel.id().0, status = status.as_u16(), "the channel did not count; Tollgate counts");
                    Forwarded::Local
                }
            }
        }
    }
}

/// The provider's message when its answer says the request itself is invalid (see the module
/// header): a 400 with Anthropic's `invalid_request_error` or Google's `INVALID_ARGUMENT`.
/// Bedrock's errors never are (the call says so: [`count::CountCall::client_faults`]).
fn client_fault(status: u16, answer: &Value) -> Option<&str> {
    if status != 400 {
        return None;
    }
    let error = &answer["error"];
    let invalid = error["type"] == "invalid_request_error" || error["status"] == "INVALID_ARGUMENT";
    invalid.then(|| {
        error["message"]
            .as_str()
            .unwrap_or("the request is invalid")
    })
}

/// The Gemini API's count fields of a Vertex `:countTokens` answer (Vertex adds
/// `totalBillableCharacters`, which the Gemini API does not have).
fn gemini_answer(answer: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for field in [
        "totalTokens",
        "cachedContentTokenCount",
        "promptTokensDetails",
        "cacheTokensDetails",
    ] {
        if let Some(value) = answer.get(field) {
            out.insert(field.to_owned(), value.clone());
        }
    }
    Value::Object(out)
}

/// A forwarded count's answer or refusal; `None`: count locally.
fn settled(forwarded: Forwarded) -> Option<Result<Response, RelayError>> {
    match forwarded {
        Forwarded::Counted(response) => Some(Ok(response)),
        Forwarded::Refused(error) => Some(Err(error)),
        Forwarded::Local => None,
    }
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
    let asked = Asked::Anthropic {
        model: &model,
        body: &body,
        parsed: &parsed,
        hub: &hub,
        headers,
    };
    let forwarded = forward(state, &caller, &model, &asked).await;
    if let Some(answer) = settled(forwarded) {
        return answer;
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
    let asked = Asked::Gemini {
        model,
        body: &body,
        parsed: &parsed,
    };
    let forwarded = forward(state, &caller, model, &asked).await;
    if let Some(answer) = settled(forwarded) {
        return answer;
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
