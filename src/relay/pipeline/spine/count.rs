//! The spine's second kind of plan: token counts ([`run`]), which are free. A count is admitted
//! by its own rate guard (CountTokensRateLimit per key, a size limit) instead of the quota
//! reservation, has no meter and no failover: it goes to the first channel the model's route
//! picks when that channel's adaptor can count for the client
//! ([`crate::relay::adaptor::count`]), and Tollgate counts itself otherwise. Each client format
//! is a [`Count`] (`crate::relay::routes::count`): how it reads its request, what it asks the
//! adaptors and how it counts and answers locally.
//!
//! When the forwarded count fails for a reason that is not the client's — no answer or a
//! timeout, a 5xx, a 429, a refused credential (401/403), an endpoint the channel does not have
//! (404 — many Claude-compatible relays), an answer without the count, and every Bedrock error
//! — Tollgate counts itself. Only a 400 in which the provider says the request itself is invalid
//! (Anthropic's `invalid_request_error`, Google's `INVALID_ARGUMENT`) is the client's fault: it
//! is answered as a 400 with the provider's message, keys masked. Forwarded counts are not
//! reported to the channel pool: a relay without the endpoint must not lose health for it.

use std::time::{Duration, Instant};

use axum::Json;
use axum::body::Bytes;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::error::RelayError;
use crate::relay::adaptor;
use crate::relay::adaptor::count::{self, Asked, Reshape};
use crate::relay::pipeline::attempt;
use crate::relay::pipeline::auth::Caller;
use crate::relay::pipeline::pick::{mapped_model, pick};
use crate::relay::pipeline::redact::redact;
use crate::state::AppState;

/// The longest a forwarded count may take before Tollgate counts itself.
const COUNT_TIMEOUT: Duration = Duration::from_secs(30);

/// One client format's token count: what [`run`] needs besides its own phases.
pub trait Count: Send + 'static {
    /// The model to count for.
    fn model(&self) -> &str;

    /// The request as the channels' adaptors forward it.
    fn asked(&self) -> Asked<'_>;

    /// Tollgate's own count (run on the count guard's blocking pool).
    fn local(self) -> i64;

    /// The client's answer to a local count of `tokens`.
    fn answer(tokens: i64) -> Response;
}

/// Counts the tokens of `body` for `caller`: the rate guard, then `read` (the client's request
/// as a [`Count`], or why it is invalid), the key's model check, the forward to the first
/// channel and else the local count.
pub async fn run<C: Count>(
    state: &AppState,
    caller: Caller,
    body: Bytes,
    read: impl FnOnce(Bytes) -> Result<C, RelayError>,
) -> Result<Response, RelayError> {
    let per_minute = state.options.current().int("CountTokensRateLimit");
    state
        .count_guard
        .admit(caller.token.id, per_minute, body.len())?;
    let plan = read(body)?;
    check(state, &caller, plan.model())?;
    match forward(state, &caller, plan.model(), &plan.asked()).await {
        Forwarded::Counted(response) => return Ok(response),
        Forwarded::Refused(error) => return Err(error),
        Forwarded::Local => {}
    }
    let tokens = state.count_guard.run(move || plan.local()).await?;
    Ok(C::answer(tokens))
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
    let direct = state.http.direct_for(&channel.channel.proxy);
    let Ok(resp) = attempt::send(direct, req, timeout).await else {
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
