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

use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderValue, Uri, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;
use tollgate_actors::channel_pool::msg::{Outcome, OutcomeSource};
use tollgate_actors::channel_pool::routing_table::{RoutedChannel, RoutingTable, select_for};
use tollgate_actors::quota::rate::RateKind;
use tollgate_actors::quota::{QuotaError, Refusal};
use tollgate_storage::secret::Secret;

use super::attempt::{
    Admission, Ask, Build, admit, count_prompt, count_prompt_with, forward, post, settle_ctx,
};
use super::auth::Caller;
use super::estimate::{Estimate, ImageRule};
use super::meter::{Ending, Meter};
use super::prompt::Prompt;
use super::settle::SettleCtx;
use super::stream;
use super::tokenize::Counter;
use super::usage::{OpenAiUsage, PartialReason, Usage};
use super::wire::Wire;
use crate::channel_types::serve::Need;
use crate::error::RelayError;
use crate::state::AppState;

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
    /// Responses API.
    #[serde(default)]
    max_output_tokens: Option<i64>,
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
    /// Rerank documents.
    #[serde(default)]
    documents: Option<Value>,
    /// Responses instructions.
    #[serde(default)]
    instructions: Option<Value>,
    /// Chat and completions: how many answers; images: how many images (with their size and
    /// quality below).
    #[serde(default)]
    n: Option<i64>,
    /// Legacy completions: how many answers are generated (and billed) to return the best `n`.
    #[serde(default)]
    best_of: Option<i64>,
    #[serde(default)]
    size: Option<String>,
    #[serde(default)]
    quality: Option<String>,
    /// Tool definitions (and the legacy functions).
    #[serde(default)]
    tools: Option<Value>,
    #[serde(default)]
    functions: Option<Value>,
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
    /// Every text of the prompt, whatever the endpoint's input field: the messages' contents,
    /// else `input` / `prompt` and a rerank `query`.
    fn texts(&self) -> Vec<&str> {
        let mut texts = Vec::new();
        let mut add = |text| texts.push(text);
        if self.messages.is_empty() {
            for value in [&self.input, &self.prompt].into_iter().flatten() {
                each_text(value, &mut add);
            }
            if let Some(query) = &self.query {
                add(query);
            }
        } else {
            self.messages
                .iter()
                .for_each(|m| each_text(&m["content"], &mut add));
        }
        texts
    }

    /// The upper-bound prompt estimate the reservation uses: every part of the request, images
    /// and audio by their size ([`estimate`]).
    fn reserve_estimate(&self) -> i64 {
        let mut e = Estimate::new(ImageRule::for_model(&self.model));
        if !self.messages.is_empty() {
            e.messages(&self.messages);
        }
        let fields = [
            ("input", &self.input),
            ("prompt", &self.prompt),
            ("documents", &self.documents),
            ("instructions", &self.instructions),
            ("tools", &self.tools),
            ("functions", &self.functions),
        ];
        for (key, value) in fields {
            if let Some(value) = value {
                e.field(key, value);
            }
        }
        if let Some(query) = &self.query {
            e.field("query", &Value::String(query.clone()));
        }
        e.total()
    }

    /// Chat framing applies when the request has messages.
    fn framed_messages(&self) -> Option<usize> {
        (!self.messages.is_empty()).then_some(self.messages.len())
    }

    /// The request's prompt tokens: Tollgate's estimate of `texts` (from [`ChatHead::texts`])
    /// now, the exact count of `body` by the model's tokenizer only if settlement needs it.
    fn prompt(&self, texts: &[&str], body: &Bytes) -> Prompt {
        let estimate = count_prompt_with(Counter::Estimate, texts, self.framed_messages());
        if Counter::is_exact(&self.model) {
            Prompt::deferred(estimate, body, self.model.clone())
        } else {
            Prompt::known(estimate)
        }
    }
}

/// The exact prompt tokens of a JSON relay request `body` for `model` (its texts with the
/// model's counter, plus the chat framing); `None` if the body is not a request.
pub(super) fn exact_prompt(body: &[u8], model: &str) -> Option<i64> {
    let head: ChatHead = serde_json::from_slice(body).ok()?;
    Some(count_prompt(model, &head.texts(), head.framed_messages()))
}

pub(super) fn quota_error(e: QuotaError) -> RelayError {
    match e {
        QuotaError::Refused(Refusal::UserQuota { available, needed }) => {
            RelayError::InsufficientUserQuota(format!(
                "insufficient user quota: {available} available, this request needs {needed} \
                 (its prompt and a share of its output); a lower max_tokens needs less"
            ))
        }
        QuotaError::Refused(Refusal::TokenQuota { available, needed }) => {
            RelayError::InsufficientTokenQuota(format!(
                "insufficient token quota: {available} available on this API key, this request \
                 needs {needed} (its prompt and a share of its output); a lower max_tokens needs less"
            ))
        }
        QuotaError::Refused(Refusal::RateLimited { kind, max, minutes }) => {
            let what = match kind {
                RateKind::Total => "requests",
                RateKind::Success => "successful requests",
            };
            RelayError::RateLimited(format!(
                "rate limit reached: at most {max} {what} per {minutes} minute(s); try again later"
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
    serve(state, caller, body, uri.path()).await
}

/// Relays one JSON request of `caller` on route `path` (the playground comes in here too).
pub(super) async fn serve(
    state: AppState,
    caller: Caller,
    body: Bytes,
    path: &str,
) -> Result<Response, RelayError> {
    if path == "/v1/chat/completions"
        && let Some(job) = super::attempt::foreign_chat(&state, &caller, &body)
    {
        return super::attempt::relay(&state, job?).await;
    }
    if path == "/v1/responses"
        && let Some(job) = super::responses::job(&state, &caller, &body)
    {
        return super::attempt::relay(&state, job?).await;
    }
    if super::cohere::serves(&state, &caller, path, &body) {
        return super::cohere::serve(state, caller, body, path).await;
    }
    relay_json(state, caller, body, path).await
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
    let texts = head.texts();
    let prompt = head.prompt(&texts, &body);
    // Only text-generating routes produce output tokens to reserve for.
    let generates = matches!(
        path,
        "/v1/chat/completions" | "/v1/completions" | "/v1/responses"
    );
    let max_tokens = if generates {
        [
            head.max_tokens,
            head.max_completion_tokens,
            head.max_output_tokens,
        ]
        .into_iter()
        .flatten()
        .max()
    } else {
        Some(0)
    };
    // Each answer asked for may be max_tokens long (`best_of` are all generated and billed).
    let answers = if generates {
        head.n.into_iter().chain(head.best_of).max().unwrap_or(1)
    } else {
        1
    };
    let calls = if path == "/v1/images/generations" {
        super::price::image_calls(
            &head.model,
            head.n,
            head.size.as_deref(),
            head.quality.as_deref(),
        )
    } else {
        1.0
    };
    let Admission { price, hold } = admit(
        &state,
        &caller,
        Ask {
            model: &head.model,
            prompt_estimate: prompt.estimate().max(head.reserve_estimate()),
            max_tokens,
            answers,
            calls,
            texts: &texts,
        },
    )
    .await?;
    let job = Forward {
        caller,
        body,
        path: path.to_owned(),
        head,
        prompt,
        price,
        started,
    };
    let worker = state.clone();
    super::detach::run(&state, move |presence| job.run(worker, hold, presence)).await
}

/// An admitted JSON request on its way upstream (owned: it runs in a task of its own, see
/// [`super::detach`]).
struct Forward {
    caller: Caller,
    body: Bytes,
    path: String,
    head: ChatHead,
    prompt: Prompt,
    price: super::attempt::Price,
    started: Instant,
}

impl Forward {
    /// Forwards with failover and answers, settling `hold`.
    async fn run(
        self,
        state: AppState,
        hold: tollgate_actors::quota::Hold,
        presence: super::detach::Presence,
    ) -> Result<Response, RelayError> {
        let Forward {
            caller,
            body,
            path,
            head,
            prompt,
            price,
            started,
        } = self;
        let path = path.as_str();
        let client_wants_usage = head
            .stream_options
            .as_ref()
            .and_then(|o| o.get("include_usage"))
            .and_then(Value::as_bool)
            == Some(true);
        // Only chat completions and completions know `stream_options.include_usage`.
        let usage_chunk = matches!(path, "/v1/chat/completions" | "/v1/completions");
        let force_usage = head.stream && usage_chunk && !client_wants_usage;
        let rewrite = Rewrite {
            force_usage,
            chat: path == "/v1/chat/completions",
            pass_through: price.pass_through,
        };
        let won = forward(
            &state,
            &caller,
            &head.model,
            Need::openai_route(path, head.stream),
            &price,
            |channel, wire, upstream_model, key| {
                if wire != Wire::OpenAi {
                    return Ok(Build::Skip(RelayError::NotImplemented(format!(
                        "relaying {path} to channel type {}",
                        channel.channel.channel_type
                    ))));
                }
                let Some(url) = super::adaptor::openai_url(channel, path, upstream_model) else {
                    return Ok(Build::Skip(RelayError::NotImplemented(format!(
                        "relaying {path} to channel type {}",
                        channel.channel.channel_type
                    ))));
                };
                let upstream_body = upstream_body(&body, upstream_model, &head, rewrite, channel)?;
                let req = post(&state, channel, wire, url, key)?
                    .header(header::CONTENT_TYPE, "application/json")
                    .body(upstream_body);
                Ok(Build::Send(Box::new(req)))
            },
        )
        .await;
        let won = match won {
            Ok(won) => won,
            Err(e) => {
                hold.release();
                return Err(e);
            }
        };
        let ctx = settle_ctx(&caller, &head.model, price, &won, head.stream, started);
        let timeout = state.config.relay_timeout();
        if head.stream {
            return Ok(stream::respond(
                won.resp,
                Meter::new(ctx, hold, prompt),
                client_wants_usage,
                std::sync::Arc::clone(&won.routed),
                timeout,
                price.ping,
            ));
        }
        finish_plain(won.resp, ctx, hold, prompt, timeout, &presence).await
    }
}

/// Whether another channel may succeed where this one answered `status`: the channel's own
/// credentials or account (401, 403), a timeout (408), rate limits (429) and server errors.
/// Other 4xx are the client's mistakes and would fail everywhere.
pub(super) fn retryable(status: u16) -> bool {
    matches!(status, 401 | 403 | 408 | 429) || status >= 500
}

/// The channel for attempt `attempt` among those whose type serves every route-kind bit of
/// `need` (0: any): the admin's pinned one, else the routing table's choice.
pub(super) fn pick(
    table: &RoutingTable,
    caller: &Caller,
    model: &str,
    need: u32,
    attempt: usize,
    tried: &[tollgate_storage::ChannelId],
) -> Option<std::sync::Arc<RoutedChannel>> {
    if let Some(id) = caller.pinned {
        return (attempt == 0)
            .then(|| table.channel(id).filter(|c| c.serves(need)).cloned())
            .flatten();
    }
    let route = table.route(&caller.group, model)?;
    select_for(route, need, attempt, tried, &mut rand::rng()).cloned()
}

/// Why no channel could be tried for `model`: a 400 naming the route and the model when the
/// model has channels (or the pinned channel exists) but none of their types serves the route,
/// else no channel at all.
pub(super) fn no_channel(
    table: &RoutingTable,
    caller: &Caller,
    model: &str,
    need: Need,
) -> RelayError {
    let has_channels = match caller.pinned {
        Some(id) => table.channel(id).is_some(),
        None => table.route(&caller.group, model).is_some(),
    };
    if has_channels {
        return RelayError::BadRequest(format!(
            "model {model} has no channel whose type can serve {}",
            need.route
        ));
    }
    RelayError::NoChannel {
        model: model.to_owned(),
        group: caller.group.clone(),
    }
}

/// The status the client sees for an upstream error: the channel's `status_code_mapping`
/// (e.g. `{"429": "503"}`) applied to the upstream's.
pub(super) fn mapped_status(channel: &RoutedChannel, status: u16) -> u16 {
    channel.json.mapped_status(status)
}

/// The model name after the channel's `model_mapping` (chains followed).
pub(super) fn mapped_model(channel: &RoutedChannel, model: &str) -> String {
    channel.json.mapped_model(model).to_owned()
}

/// What may change in a request body on its way upstream.
#[derive(Debug, Clone, Copy)]
struct Rewrite {
    /// Ask the upstream for a usage chunk.
    force_usage: bool,
    /// A chat completions request (channel system prompts apply).
    chat: bool,
    /// `global.pass_through_request_enabled`: forward every body untouched.
    pass_through: bool,
}

/// The body to send upstream: the client's bytes unless the model is mapped, the channel
/// has a param_override or a system prompt, or a usage chunk must be requested — and always
/// the client's bytes when pass-through is on (globally or for the channel).
fn upstream_body(
    body: &Bytes,
    upstream_model: &str,
    head: &ChatHead,
    rewrite: Rewrite,
    channel: &RoutedChannel,
) -> Result<Bytes, RelayError> {
    if rewrite.pass_through || channel.json.pass_through() {
        return Ok(body.clone());
    }
    let overrides = channel.json.param_override();
    let prompt = channel.json.system_prompt().filter(|_| rewrite.chat);
    let force_usage = rewrite.force_usage;
    if upstream_model == head.model && !force_usage && overrides.is_empty() && prompt.is_none() {
        return Ok(body.clone());
    }
    let mut value: Value = serde_json::from_slice(body)
        .map_err(|e| RelayError::BadRequest(format!("the request body is not valid JSON: {e}")))?;
    value["model"] = Value::String(upstream_model.to_owned());
    if force_usage {
        value["stream_options"]["include_usage"] = Value::Bool(true);
    }
    if let Some((prompt, override_client)) = prompt {
        super::system_prompt::apply(Wire::OpenAi, &mut value, prompt, override_client);
    }
    // The channel's param_override: its top-level keys replace the client's.
    if let Value::Object(map) = &mut value {
        map.extend(overrides.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    let bytes = serde_json::to_vec(&value).map_err(|e| RelayError::Internal(e.to_string()))?;
    Ok(Bytes::from(bytes))
}

/// The upstream's error message (OpenAI's `error.message`, or a top-level `message` as Cohere
/// answers), with every recognisable part of
/// the channel's keys masked ([`super::redact`]). This is the one place upstream error text
/// enters Tollgate: the client's error, the error log row and the channel's stored error are
/// all made from it.
pub(super) fn upstream_message(text: &str, status: u16, channel: &RoutedChannel) -> String {
    // OpenAI, Anthropic, Gemini and Vertex put it in `error.message`; AWS in `message`.
    let parsed: Option<String> = serde_json::from_str::<Value>(text).ok().and_then(|v| {
        v["error"]["message"]
            .as_str()
            .or_else(|| v["message"].as_str())
            .or_else(|| v["Message"].as_str())
            .map(str::to_owned)
    });
    match parsed {
        Some(message) => super::redact::redact(&message, channel.channel.key_lines()),
        None => format!("the upstream answered HTTP {status}"),
    }
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

/// The usage of a whole answer (the rest is skipped without building values).
#[derive(Deserialize)]
struct PlainUsage {
    #[serde(default)]
    usage: Option<OpenAiUsage>,
}

/// Every piece of output of a whole OpenAI-style answer (for counting when it reports no
/// usage): chat messages' content, reasoning and tool calls, legacy completions' `text`, and
/// the Responses API's `output` items (message text and refusals, function calls, reasoning).
pub(super) fn answer_output(answer: &Value, mut out: impl FnMut(&str)) {
    let mut text = |v: &Value| {
        if let Some(t) = v.as_str() {
            out(t);
        }
    };
    for choice in answer["choices"].as_array().into_iter().flatten() {
        text(&choice["text"]);
        let message = &choice["message"];
        for field in ["reasoning_content", "reasoning", "refusal"] {
            text(&message[field]);
        }
        match &message["content"] {
            Value::Array(parts) => parts.iter().for_each(|p| text(&p["text"])),
            content => text(content),
        }
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            text(&call["function"]["name"]);
            text(&call["function"]["arguments"]);
        }
    }
    for item in answer["output"].as_array().into_iter().flatten() {
        text(&item["name"]);
        text(&item["arguments"]);
        text(&item["input"]);
        for list in ["content", "summary"] {
            for part in item[list].as_array().into_iter().flatten() {
                text(&part["text"]);
                text(&part["refusal"]);
            }
        }
    }
}

/// Reads a non-stream answer whole, settles, and passes it on unchanged. A body that breaks
/// off or does not come within the relay timeout, or is not JSON, is billed as partial (the
/// upstream accepted the request) and answered 502.
async fn finish_plain(
    resp: reqwest::Response,
    ctx: SettleCtx,
    hold: tollgate_actors::quota::Hold,
    prompt: Prompt,
    timeout: Duration,
    presence: &super::detach::Presence,
) -> Result<Response, RelayError> {
    let status = resp.status();
    let content_type = resp.headers().get(header::CONTENT_TYPE).cloned();
    let mut meter = Meter::new(ctx, hold, prompt);
    let bytes = read_whole(resp, timeout, &mut meter).await?;
    let Ok(answer) = serde_json::from_slice::<PlainUsage>(&bytes) else {
        return Err(not_json(&mut meter).await);
    };
    match answer.usage {
        Some(u) => meter.reported(Usage::from(&u)),
        None => {
            if let Ok(value) = serde_json::from_slice::<Value>(&bytes) {
                answer_output(&value, |t| meter.output(t));
            }
        }
    }
    meter.settle(presence.ending()).await;
    let mut response = (status, bytes).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        content_type.unwrap_or(HeaderValue::from_static("application/json")),
    );
    Ok(response)
}

/// The whole body of a 2xx answer, within `timeout`; a body that breaks off or comes too late
/// settles the meter as partial and is answered 502.
pub(super) async fn read_whole(
    resp: reqwest::Response,
    timeout: Duration,
    meter: &mut Meter,
) -> Result<Bytes, RelayError> {
    let read = tokio::time::timeout(timeout, resp.bytes()).await;
    let ctx = meter.ctx_mut();
    ctx.first_byte = Some(Instant::now());
    let reason = match read {
        Ok(Ok(bytes)) => return Ok(bytes),
        Ok(Err(_)) => PartialReason::UpstreamCut,
        Err(_) => PartialReason::IdleTimeout,
    };
    meter.settle(Ending::Cut(reason)).await;
    Err(RelayError::Unreachable(
        "the upstream answer was cut off".into(),
    ))
}

/// A 2xx answer that is not JSON: billed as partial, answered 502.
pub(super) async fn not_json(meter: &mut Meter) -> RelayError {
    meter.settle(Ending::Cut(PartialReason::NonJson)).await;
    RelayError::Upstream {
        status: 502,
        message: "the upstream answer is not valid JSON".into(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn head(body: serde_json::Value) -> ChatHead {
        serde_json::from_value(body).unwrap_or_else(|e| panic!("head: {e}"))
    }

    fn estimate(body: &serde_json::Value) -> i64 {
        let head = head(body.clone());
        let bytes = Bytes::from(body.to_string());
        head.prompt(&head.texts(), &bytes).estimate()
    }

    fn exact(body: &serde_json::Value) -> i64 {
        let head = head(body.clone());
        let bytes = Bytes::from(body.to_string());
        head.prompt(&head.texts(), &bytes).exact()
    }

    #[test]
    fn prompt_estimate_counts_text_parts_and_framing() {
        let messages = json!([
            {"role": "system", "content": "12345678"},
            {"role": "user", "content": [{"type": "text", "text": "abcd"},
                {"type": "image_url", "image_url": {"url": "data:…"}}]},
        ]);
        // Estimator: 8/4 + 4/4 = 3 tokens, + 2 × 3 + 3 framing; for any model.
        let claude = json!({"model": "claude-x", "messages": messages});
        assert_eq!(estimate(&claude), 12);
        assert_eq!(
            exact(&claude),
            12,
            "the estimator is the exact count of non-OpenAI models"
        );
        let gpt = json!({"model": "gpt-4o", "messages": messages});
        assert_eq!(estimate(&gpt), 12);
        let embed = json!({"model": "text-embedding-3-small", "input": ["abcd", "abcdefgh"]});
        assert_eq!(estimate(&embed), 3);
        assert_eq!(estimate(&json!({"model": "x", "messages": []})), 0);
    }

    #[test]
    fn openai_models_get_the_exact_count_only_on_demand() {
        // o200k: "Hello, world!" is 4 tokens, + 3 + 3 framing. The estimator counts
        // "你好，世界Hello" as 5 CJK characters + 5 / 4 rounded up = 7, + 6 framing.
        let gpt = json!({"model": "gpt-4o",
            "messages": [{"role": "user", "content": "Hello, world!"}]});
        assert_eq!(exact(&gpt), 10);
        let embed = json!({"model": "text-embedding-3-small",
            "input": ["Hello, world!", "Hello, world!"]});
        assert_eq!(exact(&embed), 8);
        let cjk = json!({"model": "gpt-4o",
            "messages": [{"role": "user", "content": "你好，世界Hello"}]});
        assert_eq!(estimate(&cjk), 13);
        assert_ne!(
            exact(&cjk),
            estimate(&cjk),
            "counted with o200k, not estimated"
        );
        assert_eq!(
            exact(&cjk),
            Counter::for_model("gpt-4o").count("你好，世界Hello") + 6
        );
    }
}
