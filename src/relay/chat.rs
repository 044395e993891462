//! The OpenAI-compatible hot path for JSON endpoints: chat completions, completions, embeddings,
//! moderations, image generations, rerank and responses share it; only the upstream path differs.
//!
//! auth (memory) → price (options snapshot) → reserve (quota book) → pick a channel (routing
//! table snapshot) → forward → settle. Retries (RetryTimes) walk down the priority tiers, skip
//! channels already tried, and happen only before any byte reached the client and only for
//! retryable failures (no answer, 401/403/408/429, 5xx). Every upstream outcome is cast to the channel pool.
//!
//! The body is forwarded as received unless it must change (model mapping, the channel's
//! param_override, or asking the upstream for a usage chunk); only then is it re-serialised.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderValue, Uri, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;
use tollgate_actors::channel_pool::msg::{Outcome, OutcomeSource};
use tollgate_actors::channel_pool::routing_table::{RoutedChannel, RoutingTable, select};
use tollgate_actors::options::pricing::ModelPricing;
use tollgate_actors::quota::{QuotaError, Refusal};
use tollgate_storage::secret::Secret;

use super::auth::Caller;
use super::price::{self, Usage};
use super::settle::{Attempt, SettleCtx, UsageSource};
use super::stream::{self, UsageJson};
use super::tokenize::Counter;
use crate::channel_types::effective_base_url;
use crate::error::RelayError;
use crate::state::AppState;

/// Channel types spoken with the OpenAI wire format (others need an adaptor).
pub(super) const OPENAI_COMPATIBLE: &[i32] = &[1, 4, 8, 17, 20, 25, 31, 40, 42, 43, 45, 47, 48];

/// What the relay reads from the request body; everything else passes through untouched.
#[derive(Debug, Deserialize)]
struct ChatHead {
    #[serde(default)]
    model: String,
    #[serde(default)]
    stream: bool,
    #[serde(default)]
    stream_options: Option<Value>,
    #[serde(default)]
    max_tokens: Option<i64>,
    #[serde(default)]
    max_completion_tokens: Option<i64>,
    #[serde(default)]
    messages: Vec<Value>,
    /// Embeddings, moderations, responses, rerank input.
    #[serde(default)]
    input: Option<Value>,
    /// Completions and image prompts.
    #[serde(default)]
    prompt: Option<Value>,
    /// Rerank query.
    #[serde(default)]
    query: Option<String>,
}

/// Calls `f` on every text in a prompt-like value (a string, or an array of strings / parts).
pub(super) fn each_text<'a>(value: &'a Value, f: &mut impl FnMut(&'a str)) {
    match value {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter().for_each(|v| each_text(v, f)),
        Value::Object(map) => {
            if let Some(v) = map.get("text").or_else(|| map.get("content")) {
                each_text(v, f);
            }
        }
        _ => {}
    }
}

impl ChatHead {
    /// Prompt tokens, whatever the endpoint's input field: exact for OpenAI-family models, by
    /// Tollgate's estimator otherwise ([`Counter`]). Chat messages add OpenAI's framing: 3 per
    /// message and 3 for the reply priming.
    fn prompt_estimate(&self) -> i64 {
        let counter = Counter::for_model(&self.model);
        let mut tokens = 0i64;
        let mut add = |text: &str| tokens = tokens.saturating_add(counter.count(text));
        if !self.messages.is_empty() {
            self.messages
                .iter()
                .for_each(|m| each_text(&m["content"], &mut add));
            let framing = i64::try_from(self.messages.len())
                .unwrap_or(i64::MAX)
                .saturating_mul(3)
                .saturating_add(3);
            return tokens.saturating_add(framing);
        }
        for value in [&self.input, &self.prompt].into_iter().flatten() {
            each_text(value, &mut add);
        }
        if let Some(query) = &self.query {
            add(query);
        }
        tokens
    }
}

pub(super) fn quota_error(e: QuotaError) -> RelayError {
    match e {
        QuotaError::Refused(Refusal::UserQuota { available, needed }) => {
            RelayError::InsufficientQuota(format!(
                "insufficient user quota: {available} left, this request needs up to {needed}"
            ))
        }
        QuotaError::Refused(Refusal::TokenQuota { available, needed }) => {
            RelayError::InsufficientQuota(format!(
                "insufficient token quota: {available} left on this API key, this request needs up to {needed}"
            ))
        }
        QuotaError::Storage(e) => RelayError::Internal(format!("loading the balance: {e}")),
    }
}

/// Handles every JSON relay route (chat completions, completions, embeddings, moderations,
/// image generations, rerank, responses): the upstream path is the client's path.
pub async fn relay(
    State(state): State<AppState>,
    uri: Uri,
    caller: Caller,
    body: Bytes,
) -> Result<Response, RelayError> {
    if uri.path() == "/v1/chat/completions"
        && let Some(job) = super::attempt::foreign_chat(&state, &caller, &body)
    {
        return super::attempt::relay(&state, job?).await;
    }
    relay_json(state, caller, body, uri.path()).await
}

/// The shared pipeline: `path` is both the client's route and the upstream's.
async fn relay_json(
    state: AppState,
    caller: Caller,
    body: Bytes,
    path: &str,
) -> Result<Response, RelayError> {
    let started = Instant::now();
    let head: ChatHead = serde_json::from_slice(&body)
        .map_err(|e| RelayError::BadRequest(format!("the request body is not valid JSON: {e}")))?;
    if head.model.is_empty() {
        return Err(RelayError::BadRequest("model is required".into()));
    }
    if !caller.token.allows_model(&head.model) {
        return Err(RelayError::Forbidden(format!(
            "this API key cannot use model {}",
            head.model
        )));
    }
    let options = state.options.current();
    let pricing = match options.prices().model(&head.model) {
        Some(p) => p,
        None if options.flag("SelfUseModeEnabled") || caller.user.accept_unset_price => {
            ModelPricing::Ratio {
                model: 0.0,
                completion: 0.0,
                cache: 0.0,
            }
        }
        None => return Err(RelayError::ModelUnpriced(head.model)),
    };
    let group_ratio = options.prices().group(&caller.group);
    let quota_per_unit = options.int("QuotaPerUnit");
    let prompt_estimate = head.prompt_estimate();
    let max_tokens = match (head.max_tokens, head.max_completion_tokens) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    let amount = price::reservation(
        pricing,
        group_ratio,
        quota_per_unit,
        prompt_estimate,
        max_tokens,
        options.int("PreConsumedQuota"),
    )
    .map_err(|e| RelayError::BadRequest(e.to_string()))?;
    let hold = state
        .quota
        .reserve(caller.user.id, Some(caller.token.id), amount)
        .await
        .map_err(quota_error)?;

    let client_wants_usage = head
        .stream_options
        .as_ref()
        .and_then(|o| o.get("include_usage"))
        .and_then(Value::as_bool)
        == Some(true);
    let table = state.channel_pool.table().load_full();
    let retries = usize::try_from(options.int("RetryTimes")).unwrap_or(0);
    let timeout = state.config.relay_timeout();
    let mut tried = Vec::new();
    let mut attempts = Vec::new();
    let mut last_error = None;
    for attempt in 0..=retries {
        let Some(channel) = pick(&table, &caller, &head.model, attempt, &tried) else {
            break;
        };
        tried.push(channel.id());
        if !OPENAI_COMPATIBLE.contains(&channel.channel.channel_type) {
            attempts.push(Attempt {
                c: channel.id().0,
                s: 0,
                ms: 0,
                e: "unsupported",
            });
            // Our limitation, not the channel's fault: try another channel, report nothing.
            last_error = Some(RelayError::NotImplemented(format!(
                "relaying to channel type {}",
                channel.channel.channel_type
            )));
            continue;
        }
        let upstream_model = mapped_model(&channel, &head.model);
        let upstream_body = upstream_body(
            &body,
            &upstream_model,
            &head,
            head.stream && !client_wants_usage,
            &channel.channel.param_override,
        )?;
        let key = channel.next_key();
        let sent = Instant::now();
        match send(&state, &channel, key, path, upstream_body, timeout).await {
            Ok(resp) if resp.status().is_success() => {
                let status = Some(resp.status().as_u16());
                report(&state, &channel, key, status, sent, None);
                attempts.push(timeline_entry(&channel, resp.status().as_u16(), sent, ""));
                let ctx = SettleCtx {
                    caller: caller.clone(),
                    model: head.model.clone(),
                    upstream_model,
                    channel: channel.id(),
                    tried: tried.clone(),
                    attempts: std::mem::take(&mut attempts),
                    pricing,
                    group_ratio,
                    quota_per_unit,
                    stream: head.stream,
                    started,
                    first_byte: None,
                    log_enabled: options.flag("LogConsumeEnabled"),
                };
                if head.stream {
                    return Ok(stream::respond(
                        resp,
                        ctx,
                        hold,
                        prompt_estimate,
                        client_wants_usage,
                        timeout,
                    ));
                }
                return finish_plain(resp, ctx, hold, prompt_estimate, timeout).await;
            }
            Ok(resp) => {
                let status = resp.status().as_u16();
                let text = resp.text().await.unwrap_or_default();
                let message = upstream_message(&text, status, &channel);
                report(
                    &state,
                    &channel,
                    key,
                    Some(status),
                    sent,
                    Some(message.clone()),
                );
                attempts.push(timeline_entry(
                    &channel,
                    status,
                    sent,
                    Attempt::class_of(status),
                ));
                last_error = Some(RelayError::Upstream {
                    status: mapped_status(&channel, status),
                    message,
                });
                if !retryable(status) {
                    break;
                }
            }
            Err((e, class)) => {
                report(&state, &channel, key, None, sent, Some(e.clone()));
                attempts.push(timeline_entry(&channel, 0, sent, class));
                last_error = Some(RelayError::Unreachable(e));
            }
        }
    }
    hold.release();
    Err(last_error.unwrap_or(RelayError::NoChannel {
        model: head.model,
        group: caller.group,
    }))
}

/// Whether another channel may succeed where this one answered `status`: the channel's own
/// credentials or account (401, 403), a timeout (408), rate limits (429) and server errors.
/// Other 4xx are the client's mistakes and would fail everywhere.
pub(super) fn retryable(status: u16) -> bool {
    matches!(status, 401 | 403 | 408 | 429) || status >= 500
}

/// The channel for attempt `attempt`: the admin's pinned one, else the routing table's choice.
pub(super) fn pick(
    table: &RoutingTable,
    caller: &Caller,
    model: &str,
    attempt: usize,
    tried: &[tollgate_storage::ChannelId],
) -> Option<std::sync::Arc<RoutedChannel>> {
    if let Some(id) = caller.pinned {
        return (attempt == 0).then(|| table.channel(id).cloned()).flatten();
    }
    let route = table.route(&caller.group, model)?;
    select(route, attempt, tried, &mut rand::rng()).cloned()
}

/// The status the client sees for an upstream error: the channel's `status_code_mapping`
/// (e.g. `{"429": "503"}`) applied to the upstream's.
pub(super) fn mapped_status(channel: &RoutedChannel, status: u16) -> u16 {
    let mapping: serde_json::Map<String, Value> =
        serde_json::from_str(&channel.channel.status_code_mapping).unwrap_or_default();
    mapping
        .get(&status.to_string())
        .and_then(|v| {
            v.as_str()
                .map(str::to_owned)
                .or_else(|| v.as_u64().map(|n| n.to_string()))
        })
        .and_then(|v| v.parse::<u16>().ok())
        .filter(|s| (100..600).contains(s))
        .unwrap_or(status)
}

/// The model name after the channel's `model_mapping`.
pub(super) fn mapped_model(channel: &RoutedChannel, model: &str) -> String {
    let mapping: serde_json::Map<String, Value> =
        serde_json::from_str(&channel.channel.model_mapping).unwrap_or_default();
    mapping
        .get(model)
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .unwrap_or(model)
        .to_owned()
}

/// The body to send upstream: the client's bytes unless the model is mapped or a usage chunk
/// must be requested.
fn upstream_body<'a>(
    body: &'a Bytes,
    upstream_model: &str,
    head: &ChatHead,
    force_usage: bool,
    param_override: &str,
) -> Result<Cow<'a, Bytes>, RelayError> {
    let overrides: serde_json::Map<String, Value> =
        serde_json::from_str(param_override).unwrap_or_default();
    if upstream_model == head.model && !force_usage && overrides.is_empty() {
        return Ok(Cow::Borrowed(body));
    }
    let mut value: Value = serde_json::from_slice(body)
        .map_err(|e| RelayError::BadRequest(format!("the request body is not valid JSON: {e}")))?;
    value["model"] = Value::String(upstream_model.to_owned());
    if force_usage {
        value["stream_options"]["include_usage"] = Value::Bool(true);
    }
    // The channel's param_override: its top-level keys replace the client's.
    if let Value::Object(map) = &mut value {
        map.extend(overrides);
    }
    let bytes = serde_json::to_vec(&value).map_err(|e| RelayError::Internal(e.to_string()))?;
    Ok(Cow::Owned(Bytes::from(bytes)))
}

/// One timeline entry for `channel`.
fn timeline_entry(
    channel: &RoutedChannel,
    status: u16,
    sent: Instant,
    class: &'static str,
) -> Attempt {
    Attempt {
        c: channel.id().0,
        s: status,
        ms: u64::try_from(sent.elapsed().as_millis()).unwrap_or(u64::MAX),
        e: class,
    }
}

/// Sends the request; `Err` carries a description and the error class when no HTTP answer came
/// back in time.
async fn send(
    state: &AppState,
    channel: &RoutedChannel,
    key: Option<(usize, &Secret)>,
    path: &str,
    body: Cow<'_, Bytes>,
    timeout: Duration,
) -> Result<reqwest::Response, (String, &'static str)> {
    let c = &channel.channel;
    let client = if c.proxy.trim().is_empty() {
        state.http.direct().clone()
    } else {
        state.http.for_proxy(&c.proxy).map_err(|e| (e, "connect"))?
    };
    let url = format!("{}{path}", effective_base_url(c.channel_type, &c.base_url));
    let key = key.map_or("", |(_, k)| k.expose());
    let mut req = client
        .post(url)
        .bearer_auth(key)
        .header(header::CONTENT_TYPE, "application/json")
        .body(body.into_owned());
    if !c.openai_organization.is_empty() {
        req = req.header("OpenAI-Organization", &c.openai_organization);
    }
    match tokio::time::timeout(timeout, req.send()).await {
        Ok(Ok(resp)) => Ok(resp),
        Ok(Err(e)) => Err(if e.is_connect() {
            ("could not connect to the upstream".into(), "connect")
        } else if e.is_timeout() {
            ("the upstream request timed out".into(), "timeout")
        } else {
            ("the upstream request failed".into(), "network")
        }),
        Err(_) => Err((
            format!("no answer within {} s", timeout.as_secs()),
            "timeout",
        )),
    }
}

/// The upstream's error message (OpenAI shape if it has one), with the channel's keys masked.
pub(super) fn upstream_message(text: &str, status: u16, channel: &RoutedChannel) -> String {
    let parsed: Option<String> = serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| v["error"]["message"].as_str().map(str::to_owned));
    let mut message = parsed.unwrap_or_else(|| format!("the upstream answered HTTP {status}"));
    for key in channel.channel.key_lines() {
        if key.len() >= 8 {
            message = message.replace(key, "*****");
        }
    }
    message
}

pub(super) fn report(
    state: &AppState,
    channel: &RoutedChannel,
    key: Option<(usize, &Secret)>,
    status: Option<u16>,
    sent: Instant,
    error: Option<String>,
) {
    state.channel_pool.report(Outcome {
        channel: channel.id(),
        status,
        latency: sent.elapsed(),
        error,
        source: OutcomeSource::Relay,
        key: key.map(|(index, _)| index),
    });
}

#[derive(Deserialize)]
struct PlainAnswer {
    #[serde(default)]
    usage: Option<UsageJson>,
    #[serde(default)]
    choices: Vec<Value>,
}

/// Reads a non-stream answer whole, settles, and passes it on unchanged.
async fn finish_plain(
    resp: reqwest::Response,
    mut ctx: SettleCtx,
    hold: tollgate_actors::quota::Hold,
    prompt_estimate: i64,
    timeout: Duration,
) -> Result<Response, RelayError> {
    let status = resp.status();
    let content_type = resp.headers().get(header::CONTENT_TYPE).cloned();
    let bytes = match tokio::time::timeout(timeout, resp.bytes()).await {
        Ok(Ok(bytes)) => bytes,
        _ => {
            hold.release();
            return Err(RelayError::Unreachable(
                "the upstream answer was cut off".into(),
            ));
        }
    };
    ctx.first_byte = Some(Instant::now());
    let answer: Option<PlainAnswer> = serde_json::from_slice(&bytes).ok();
    let (usage, source) = match answer.as_ref().and_then(|a| a.usage.as_ref()) {
        Some(u) => (Usage::from(u), UsageSource::Upstream),
        None => {
            let counter = Counter::for_model(&ctx.upstream_model);
            let completion: i64 = answer
                .iter()
                .flat_map(|a| a.choices.iter())
                .filter_map(|c| c["message"]["content"].as_str())
                .map(|t| counter.count(t))
                .sum();
            let usage = Usage {
                prompt_tokens: prompt_estimate,
                completion_tokens: completion,
                cached_tokens: 0,
                cache_write_tokens: 0,
            };
            (usage, UsageSource::Estimated)
        }
    };
    ctx.settle(hold, usage, source);
    let mut response = (status, bytes).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        content_type.unwrap_or(HeaderValue::from_static("application/json")),
    );
    Ok(response)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn head(body: serde_json::Value) -> ChatHead {
        serde_json::from_value(body).unwrap_or_else(|e| panic!("head: {e}"))
    }

    #[test]
    fn prompt_estimate_counts_text_parts_and_framing() {
        let messages = json!([
            {"role": "system", "content": "12345678"},
            {"role": "user", "content": [{"type": "text", "text": "abcd"},
                {"type": "image_url", "image_url": {"url": "data:…"}}]},
        ]);
        // Estimator (non-OpenAI model): 8/4 + 4/4 = 3 tokens, + 2 × 3 + 3 framing.
        let claude = head(json!({"model": "claude-x", "messages": messages}));
        assert_eq!(claude.prompt_estimate(), 12);
        // tiktoken for OpenAI models: "Hello, world!" is 4 tokens, + 3 + 3 framing.
        let gpt = head(json!({"model": "gpt-4o",
            "messages": [{"role": "user", "content": "Hello, world!"}]}));
        assert_eq!(gpt.prompt_estimate(), 10);
        let embed = head(json!({"model": "text-embedding-3-small",
            "input": ["Hello, world!", "Hello, world!"]}));
        assert_eq!(embed.prompt_estimate(), 8);
        assert_eq!(
            head(json!({"model": "x", "messages": []})).prompt_estimate(),
            0
        );
    }
}
