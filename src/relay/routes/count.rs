//! Token counting for the adaptor clients: Anthropic `POST /v1/messages/count_tokens` and
//! Gemini `:countTokens`. Neither is billed (every provider counts for free).
//!
//! When the channel the model's route picks first can count for the client's format, the
//! request is forwarded to it: only the provider knows its tokenizer (Claude's is not public,
//! and Tollgate's estimator is off by tens of percent for it), and clients such as Claude Code
//! use the count to decide when to compact a conversation. Who counts:
//! - Anthropic clients: Claude channels (`/v1/messages/count_tokens`, answer as is); Claude on
//!   Vertex AI (the `count-tokens` model's `rawPredict`, the model in the body); Bedrock
//!   (`CountTokens`, with the InvokeModel body for Claude or the Converse messages for other
//!   models, `{"inputTokens": N}` answered as `{"input_tokens": N}`).
//! - Gemini clients: Gemini channels (`:countTokens`, answer as is); Gemini on Vertex AI
//!   (`:countTokens` under the project, or express mode's, with the request's `contents`,
//!   `systemInstruction` and `tools`).
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
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use crate::channel_types::effective_base_url;
use crate::error::RelayError;
use crate::relay::adaptor::{self, Credential, Transport, bedrock, vertex};
use crate::relay::measure::prompt_count::each_text;
use crate::relay::measure::prompt_count::prompt_tokens;
use crate::relay::measure::tokenize::Counter;
use crate::relay::pipeline::attempt;
use crate::relay::pipeline::auth::Caller;
use crate::relay::pipeline::pick::{mapped_model, pick};
use crate::relay::pipeline::redact::redact;
use crate::relay::routes::embed::gemini_url;
use crate::relay::wire::{Wire, anthropic, converse, gemini};
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

/// How an upstream's count becomes the client's answer.
#[derive(Clone, Copy)]
enum Reshape {
    /// The upstream speaks the client's format: its answer as it is.
    AsIs,
    /// `{"input_tokens": N}` (Anthropic's shape) from the count field.
    InputTokens,
    /// Gemini's `CountTokensResponse` fields of a Vertex answer (`totalTokens`,
    /// `cachedContentTokenCount`, `promptTokensDetails`, `cacheTokensDetails`).
    Gemini,
}

/// One count request to an upstream.
struct CountCall {
    url: String,
    body: Bytes,
    /// Headers besides the transport's auth.
    headers: Vec<(&'static str, HeaderValue)>,
    /// The answer's count field.
    field: &'static str,
    reshape: Reshape,
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

/// Sends the count `build` makes for the first channel of `model` (given the channel, the body
/// format it takes for the model, the usable credential and the upstream model; `None`: the
/// channel cannot count for this client).
async fn forward(
    state: &AppState,
    caller: &Caller,
    model: &str,
    build: impl FnOnce(&RoutedChannel, Wire, &Credential<'_>, &str) -> Option<CountCall>,
) -> Forwarded {
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
    let Some(call) = build(&channel, wire, &credential, &upstream_model) else {
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
            let transport = Transport::of(channel_type);
            match client_fault(transport, status.as_u16(), &value) {
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
/// Bedrock's errors never are: its `ValidationException` also means "this model cannot count".
fn client_fault(transport: Transport, status: u16, answer: &Value) -> Option<&str> {
    if status != 400 || transport == Transport::Bedrock {
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

/// The count request of an Anthropic client's `body` (`parsed`, naming `model`) for a channel
/// taking `wire` for `upstream_model`.
fn anthropic_call(
    channel: &RoutedChannel,
    wire: Wire,
    credential: &Credential<'_>,
    upstream_model: &str,
    count: &AnthropicCount<'_>,
) -> Option<CountCall> {
    let c = &channel.channel;
    let with_model = |name: &str| {
        if name == count.model {
            count.body.clone()
        } else {
            let mut value = count.parsed.clone();
            value["model"] = Value::String(name.to_owned());
            Bytes::from(value.to_string())
        }
    };
    match (Transport::of(c.channel_type), wire) {
        (Transport::Direct, Wire::Anthropic) => {
            let base = effective_base_url(c.channel_type, &c.base_url);
            let mut headers = Vec::new();
            for name in ANTHROPIC_HEADERS {
                match count.headers.get(*name) {
                    Some(v) => headers.push((*name, v.clone())),
                    None if *name == "anthropic-version" => {
                        headers.push((*name, HeaderValue::from_static(anthropic::DEFAULT_VERSION)))
                    }
                    None => {}
                }
            }
            Some(CountCall {
                url: format!("{base}/v1/messages/count_tokens"),
                body: with_model(upstream_model),
                headers,
                field: "input_tokens",
                reshape: Reshape::AsIs,
            })
        }
        // The documented body is the Messages request with its `model`.
        (Transport::Vertex, Wire::Anthropic) => Some(CountCall {
            url: vertex::count_url(channel, credential, wire, upstream_model)?,
            body: with_model(upstream_model),
            headers: Vec::new(),
            field: "input_tokens",
            reshape: Reshape::InputTokens,
        }),
        (Transport::Bedrock, Wire::Anthropic) => {
            // The InvokeModel body Tollgate would send for this conversation.
            let mut invoke = count.parsed.clone();
            bedrock::fix_claude_body(&mut invoke);
            if let Some(betas) = count
                .headers
                .get("anthropic-beta")
                .and_then(|v| v.to_str().ok())
            {
                bedrock::add_betas(&mut invoke, betas);
            }
            // `max_tokens` is required in an InvokeModel Claude body (a count request has none;
            // https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html).
            if invoke.get("max_tokens").is_none() {
                invoke["max_tokens"] = json!(1);
            }
            Some(CountCall {
                url: bedrock::model_url(channel, credential, upstream_model, "count-tokens")?,
                body: Bytes::from(bedrock::count_invoke_body(&invoke).to_string()),
                headers: Vec::new(),
                field: "inputTokens",
                reshape: Reshape::InputTokens,
            })
        }
        (Transport::Bedrock, Wire::Converse) => {
            let converse = converse::request_from_hub(count.hub).ok()?;
            Some(CountCall {
                url: bedrock::model_url(channel, credential, upstream_model, "count-tokens")?,
                body: Bytes::from(bedrock::count_converse_body(&converse).to_string()),
                headers: Vec::new(),
                field: "inputTokens",
                reshape: Reshape::InputTokens,
            })
        }
        _ => None,
    }
}

/// An Anthropic client's count request.
struct AnthropicCount<'a> {
    model: &'a str,
    body: &'a Bytes,
    parsed: &'a Value,
    hub: &'a Value,
    headers: &'a HeaderMap,
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
    let count = AnthropicCount {
        model: &model,
        body: &body,
        parsed: &parsed,
        hub: &hub,
        headers,
    };
    let forwarded = forward(
        state,
        &caller,
        &model,
        |channel, wire, credential, upstream| {
            anthropic_call(channel, wire, credential, upstream, &count)
        },
    )
    .await;
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
    let forwarded = forward(
        state,
        &caller,
        model,
        |channel, wire, credential, upstream| {
            gemini_call(channel, wire, credential, upstream, model, &body, &parsed)
        },
    )
    .await;
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

/// The count request of a Gemini client's `body` (`parsed`) for `model` on a channel taking
/// `wire` for `upstream_model`.
fn gemini_call(
    channel: &RoutedChannel,
    wire: Wire,
    credential: &Credential<'_>,
    upstream_model: &str,
    model: &str,
    body: &Bytes,
    parsed: &Value,
) -> Option<CountCall> {
    match (Transport::of(channel.channel.channel_type), wire) {
        (Transport::Direct, Wire::Gemini) => {
            let body = match parsed.get("generateContentRequest") {
                Some(Value::Object(_)) if upstream_model != model => {
                    let mut value = parsed.clone();
                    value["generateContentRequest"]["model"] =
                        Value::String(format!("models/{upstream_model}"));
                    Bytes::from(value.to_string())
                }
                _ => body.clone(),
            };
            Some(CountCall {
                url: gemini_url(channel, upstream_model, "countTokens"),
                body,
                headers: Vec::new(),
                field: "totalTokens",
                reshape: Reshape::AsIs,
            })
        }
        (Transport::Vertex, Wire::Gemini) => Some(CountCall {
            url: vertex::count_url(channel, credential, wire, upstream_model)?,
            body: Bytes::from(vertex::count_body(parsed).to_string()),
            headers: Vec::new(),
            field: "totalTokens",
            reshape: Reshape::Gemini,
        }),
        _ => None,
    }
}
