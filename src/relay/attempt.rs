//! The attempt loop of the protocol adaptors: Anthropic Messages and Gemini clients, and OpenAI
//! chat clients whose model is served by Claude or Gemini channels. Same phases as the OpenAI
//! path in [`super::chat`] — admission (price, reservation), channel choice with failover down
//! the priority tiers (RetryTimes, retryable failures only, every outcome reported to the channel
//! pool), settle exactly once — plus conversion between the client's wire and the channel's.
//!
//! A request whose wire is the channel's own is forwarded as received unless the model name is
//! mapped or the channel has a param_override (a Gemini request's model is in the URL, so its
//! body is never rewritten for a mapping), and its answer — whole or streamed — reaches the
//! client byte for byte.

use std::time::{Duration, Instant};

use axum::Json;
use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tollgate_actors::channel_pool::routing_table::{RoutedChannel, RoutingTable};
use tollgate_actors::options::pricing::ModelPricing;
use tollgate_actors::quota::Hold;

pub use super::adaptor::post;
use super::adaptor::{self, Credential};
use super::auth::Caller;
use super::chat::{
    mapped_model, mapped_status, no_channel, pick, quota_error, report, retryable, upstream_message,
};
use super::chat::{not_json, read_whole};
use super::durable;
use super::failure;
use super::keepalive;
use super::meter::Meter;
use super::pipe::{self, Mode};
use super::price::{self, OutputBound};
use super::prompt::Prompt;
use super::settle::{Attempt, SettleCtx};
use super::tokenize::Counter;
use super::wire::{self, EncodeCtx, Wire, anthropic};
use crate::channel_types::serve::Need;
use crate::error::RelayError;
use crate::state::AppState;

/// The longest model name a request may name (it is stored in every log row).
pub const MAX_MODEL_BYTES: usize = 256;

/// Headers of an Anthropic client that are passed on to Claude channels.
const ANTHROPIC_HEADERS: &[&str] = &["anthropic-version", "anthropic-beta"];

/// What admission decided: the price and the reservation.
pub struct Admission {
    /// How the request is priced.
    pub price: Price,
    /// The reservation.
    pub hold: Hold,
}

/// How an admitted request is priced (and the options it was admitted under).
#[derive(Debug, Clone, Copy)]
pub struct Price {
    /// How the model is priced.
    pub pricing: ModelPricing,
    /// The model has no price and was admitted at DefaultModelRatio.
    pub default_ratio: bool,
    /// The billing group's ratio.
    pub group_ratio: f64,
    /// QuotaPerUnit at request time.
    pub quota_per_unit: i64,
    /// LogConsumeEnabled at request time.
    pub log_enabled: bool,
    /// RetryTimes at request time.
    pub retries: usize,
    /// Prompt tokens by Tollgate's counter: channels whose `max_input_tokens` (> 0) is below it
    /// are never picked.
    pub prompt_estimate: i64,
    /// `global.pass_through_request_enabled` at request time.
    pub pass_through: bool,
    /// The keep-alive ping interval of streamed answers (`None`: off).
    pub ping: Option<Duration>,
}

/// What admission reads of a request.
#[derive(Debug, Clone, Copy)]
pub struct Ask<'a> {
    /// The model the client asked for.
    pub model: &'a str,
    /// Prompt tokens by Tollgate's counter.
    pub prompt_estimate: i64,
    /// The request's max_tokens, if any.
    pub max_tokens: Option<i64>,
    /// How many answers the request asks for (chat's `n`, the completions' `best_of`): each
    /// may be `max_tokens` long.
    pub answers: i64,
    /// How many calls' worth a per-call priced request costs (1 but for image requests: see
    /// [`price::image_calls`]).
    pub calls: f64,
    /// The prompt's texts (for the sensitive-word check).
    pub texts: &'a [&'a str],
}

/// Admission, the same for every relay route: the key may use the model, the prompt has no
/// sensitive words (CheckSensitiveOnPromptEnabled with StopOnSensitiveEnabled), the model has
/// a price, and the user's quota actor counts the request against the model request rate
/// limit and reserves the most it can cost (the playground reserves on the user only).
pub async fn admit(
    state: &AppState,
    caller: &Caller,
    ask: Ask<'_>,
) -> Result<Admission, RelayError> {
    let model = ask.model;
    if model.is_empty() {
        return Err(RelayError::BadRequest("model is required".into()));
    }
    if !caller.token.allows_model(model) {
        return Err(RelayError::Forbidden(format!(
            "this API key cannot use model {model}"
        )));
    }
    let options = state.options.current();
    if options.flag("StopOnSensitiveEnabled") {
        let hits = options.sensitive_words().find(ask.texts.iter().copied());
        if !hits.is_empty() {
            return Err(RelayError::SensitiveWords(hits.join(", ")));
        }
    }
    if model.len() > MAX_MODEL_BYTES {
        return Err(RelayError::BadRequest(format!(
            "the model name is longer than {MAX_MODEL_BYTES} bytes"
        )));
    }
    if let Some(largest) = fits_no_channel(state, caller, model, ask.prompt_estimate) {
        return Err(RelayError::BadRequest(format!(
            "the prompt (about {} tokens) is longer than any channel serving {model} accepts \
             (at most {largest} input tokens)",
            ask.prompt_estimate
        )));
    }
    let prices = options.prices();
    let (pricing, default_ratio) = match prices.model(model) {
        Some(ModelPricing::PerCall { price }) => (
            ModelPricing::PerCall {
                price: price * ask.calls,
            },
            false,
        ),
        Some(p) => (p, false),
        None if options.flag("SelfUseModeEnabled") || caller.user.accept_unset_price => {
            let pricing = ModelPricing::Ratio {
                model: options.number("DefaultModelRatio"),
                completion: 1.0,
                cache: 1.0,
            };
            (pricing, true)
        }
        None => return Err(RelayError::ModelUnpriced(model.to_owned())),
    };
    let group_ratio = prices.group(&caller.group);
    let quota_per_unit = options.int("QuotaPerUnit");
    let output = OutputBound::new(
        ask.max_tokens,
        prices.max_output(model),
        options.int("DefaultOutputReserve"),
        ask.answers,
    );
    let reservation = price::reservation(
        pricing,
        group_ratio,
        quota_per_unit,
        ask.prompt_estimate,
        output,
        options.int("PreConsumedQuota"),
    )
    .map_err(|e| RelayError::BadRequest(e.to_string()))?;
    // An answer whose charge cannot be recorded is not sold (P13 item 9).
    if reservation.amount > 0 && !state.quota.storage_ok() {
        return Err(RelayError::StorageUnavailable);
    }
    let token = (!caller.playground).then_some(caller.token.id);
    let mut hold = state
        .quota
        .reserve_limited(
            caller.user.id,
            token,
            reservation,
            options.rate_limits().for_group(&caller.group),
        )
        .await
        .map_err(quota_error)?;
    let durable_price = durable::Pricing {
        pricing,
        group_ratio,
        quota_per_unit,
    };
    let log_enabled = options.flag("LogConsumeEnabled");
    durable::journal_hold(
        &mut hold,
        caller,
        model,
        durable_price,
        ask.prompt_estimate,
        log_enabled,
    );
    Ok(Admission {
        price: Price {
            pricing,
            default_ratio,
            group_ratio,
            quota_per_unit,
            log_enabled,
            retries: usize::try_from(options.int("RetryTimes")).unwrap_or(0),
            prompt_estimate: ask.prompt_estimate,
            pass_through: options.flag("global.pass_through_request_enabled"),
            ping: keepalive::interval(&options),
        },
        hold,
    })
}

/// A request on its way through an adaptor.
pub struct Job {
    /// The client's wire.
    pub client: Wire,
    /// The client's body as received.
    pub body: Bytes,
    /// The client's body, parsed.
    pub parsed: Value,
    /// The client's request as a hub (OpenAI chat) request.
    pub hub: Value,
    /// The model the client asked for.
    pub model: String,
    /// Streamed answer.
    pub stream: bool,
    /// OpenAI clients: whether the usage chunk was asked for.
    pub include_usage: bool,
    /// Prompt tokens by Tollgate's estimator.
    pub prompt_estimate: i64,
    /// Client headers passed on to channels of the same wire.
    pub headers: HeaderMap,
    /// Who called.
    pub caller: Caller,
    /// When the request arrived.
    pub started: Instant,
}

impl Job {
    /// max_tokens of the request (the larger of max_tokens and max_completion_tokens).
    pub fn max_tokens(&self) -> Option<i64> {
        let a = self.hub["max_tokens"].as_i64();
        let b = self.hub["max_completion_tokens"].as_i64();
        match (a, b) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }
}

/// Whether a channel in the route of `model` (or the pinned channel) takes another body format
/// than OpenAI chat completions for it (Anthropic, Gemini, Bedrock Converse, Cohere, or the
/// Responses API of an OpenAI-compatible channel set to `upstream_api: "responses"`), so an
/// OpenAI chat request for it needs this path.
pub fn needs_adaptor(state: &AppState, caller: &Caller, model: &str) -> bool {
    let table = state.channel_pool.table().load();
    let foreign = |c: &RoutedChannel| {
        let upstream_model = c.json.mapped_model(model);
        adaptor::wire(c.channel.channel_type, upstream_model)
            .is_some_and(|wire| wire.upstream(c, Wire::OpenAi) != Wire::OpenAi)
    };
    if let Some(id) = caller.pinned {
        return table.channel(id).is_some_and(|c| foreign(c));
    }
    table.route(&caller.group, model).is_some_and(|route| {
        route
            .tiers
            .iter()
            .flat_map(|t| t.channels.iter())
            .any(|c| foreign(c))
    })
}

/// What the attempt loop should do with a channel.
pub enum Build {
    /// Send this request.
    Send(Box<reqwest::RequestBuilder>),
    /// The relay cannot use this channel (our limitation): try another, blame nobody.
    Skip(RelayError),
    /// No further attempt is possible (e.g. a streamed upload is already spent).
    Stop,
}

/// A successful upstream answer and how it was reached.
pub struct Won {
    /// The upstream's answer (2xx).
    pub resp: reqwest::Response,
    /// The upstream wire of the channel that answered.
    pub wire: Wire,
    /// The model name sent upstream.
    pub upstream_model: String,
    /// The channel that answered.
    pub channel: tollgate_storage::ChannelId,
    /// Every channel tried, in order.
    pub tried: Vec<tollgate_storage::ChannelId>,
    /// The attempt timeline (for the log's admin_info).
    pub attempts: Vec<Attempt>,
    /// The channel that answered (its keys are masked in in-band error text).
    pub routed: std::sync::Arc<RoutedChannel>,
}

/// The attempt loop: picks channels that can serve `need` (pinned, else down the priority tiers
/// skipping those tried and those whose `max_input_tokens` is below the prompt), makes the
/// channel's key usable ([`adaptor::authorize`]: a Vertex token, AWS credentials), sends what
/// `build` makes for each, reports every outcome to the channel pool, and retries retryable
/// failures up to `price.retries` times. `Err` is the last upstream's error (or why no channel
/// could be tried: a 400 when the model has channels but none can serve the route); the caller
/// releases its reservation then.
pub async fn forward<F>(
    state: &AppState,
    caller: &Caller,
    model: &str,
    need: Need,
    price: &Price,
    mut build: F,
) -> Result<Won, RelayError>
where
    F: FnMut(&RoutedChannel, Wire, &str, &Credential<'_>) -> Result<Build, RelayError>,
{
    let table = state.channel_pool.table().load_full();
    let timeout = state.config.relay_timeout();
    let mut tried = Vec::new();
    // Never picked: the tried channels and those too small for the prompt (admission already
    // answered 400 when no channel fits).
    let mut excluded = too_small(&table, caller, model, price.prompt_estimate);
    let mut attempts = Vec::new();
    let mut last_error = None;
    for attempt in 0..=price.retries {
        let Some(channel) = pick(&table, caller, model, need.bits, attempt, &excluded) else {
            break;
        };
        tried.push(channel.id());
        excluded.push(channel.id());
        let upstream_model = mapped_model(&channel, model);
        let Some(wire) = adaptor::wire(channel.channel.channel_type, &upstream_model) else {
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
        };
        let key = channel.next_key();
        let key_text = key.map_or("", |(_, k)| k.expose());
        let started = Instant::now();
        let credential = match adaptor::authorize(&state.http, &channel, key_text).await {
            Ok(credential) => credential,
            Err(failure) => {
                // The key could not be made usable (a refused token grant, a malformed key):
                // the channel's fault, reported like an upstream answer of that status.
                let message = super::redact::redact(&failure.message, channel.channel.key_lines());
                report(
                    state,
                    &channel,
                    key,
                    failure.status,
                    started,
                    Some(message.clone()),
                );
                let class = failure.status.map_or("network", Attempt::class_of);
                attempts.push(timeline(
                    &channel,
                    failure.status.unwrap_or(0),
                    started,
                    class,
                ));
                last_error = Some(match failure.status {
                    Some(status) => RelayError::Upstream {
                        status: mapped_status(&channel, status),
                        message,
                    },
                    None => RelayError::Unreachable(message),
                });
                if failure.status.is_some_and(|s| !retryable(s)) {
                    break;
                }
                continue;
            }
        };
        let req = match build(&channel, wire, &upstream_model, &credential)? {
            Build::Send(req) => *req,
            Build::Skip(e) => {
                attempts.push(timeline(&channel, 0, Instant::now(), "unsupported"));
                last_error = Some(e);
                continue;
            }
            Build::Stop => break,
        };
        let sent = Instant::now();
        match send(req, timeout).await {
            Ok(resp) if resp.status().is_success() => {
                report(
                    state,
                    &channel,
                    key,
                    Some(resp.status().as_u16()),
                    sent,
                    None,
                );
                attempts.push(timeline(&channel, resp.status().as_u16(), sent, ""));
                return Ok(Won {
                    resp,
                    wire,
                    upstream_model,
                    channel: channel.id(),
                    tried,
                    attempts,
                    routed: channel,
                });
            }
            Ok(resp) => {
                let status = wire::error_status(wire, resp.status().as_u16());
                let health =
                    adaptor::health_status(channel.channel.channel_type, status, resp.headers());
                let text = resp.text().await.unwrap_or_default();
                let message = upstream_message(&text, status, &channel);
                report(
                    state,
                    &channel,
                    key,
                    Some(health),
                    sent,
                    Some(message.clone()),
                );
                attempts.push(timeline(&channel, status, sent, Attempt::class_of(status)));
                last_error = Some(RelayError::Upstream {
                    status: mapped_status(&channel, status),
                    message,
                });
                if !retryable(status) {
                    break;
                }
            }
            Err((e, class)) => {
                report(state, &channel, key, None, sent, Some(e.clone()));
                attempts.push(timeline(&channel, 0, sent, class));
                last_error = Some(RelayError::Unreachable(e));
            }
        }
    }
    let error = last_error.unwrap_or_else(|| no_channel(&table, caller, model, need));
    failure::record(state, caller, model, &tried, attempts, &error);
    Err(error)
}

/// The largest `max_input_tokens` among the channels that could serve `model` to `caller`, when
/// every one of them has a limit (> 0) below `prompt`: no channel can take the request, which is
/// the client's to shorten (400). `None` when some channel fits, or none serves the model (the
/// attempt loop reports that).
fn fits_no_channel(state: &AppState, caller: &Caller, model: &str, prompt: i64) -> Option<i64> {
    let table = state.channel_pool.table().load();
    let fits = |limit: i64| limit <= 0 || limit >= prompt;
    if let Some(id) = caller.pinned {
        let limit = table.channel(id)?.channel.max_input_tokens;
        return (!fits(limit)).then_some(limit);
    }
    let mut largest = None;
    for channel in table
        .route(&caller.group, model)?
        .tiers
        .iter()
        .flat_map(|tier| tier.channels.iter())
    {
        let limit = channel.channel.max_input_tokens;
        if fits(limit) {
            return None;
        }
        largest = largest.max(Some(limit));
    }
    largest
}

/// The channels serving `model` to `caller` whose `max_input_tokens` (> 0) is below `prompt`
/// (empty for a pinned channel: admission checked that one).
fn too_small(
    table: &RoutingTable,
    caller: &Caller,
    model: &str,
    prompt: i64,
) -> Vec<tollgate_storage::ChannelId> {
    if caller.pinned.is_some() {
        return Vec::new();
    }
    let Some(route) = table.route(&caller.group, model) else {
        return Vec::new();
    };
    route
        .tiers
        .iter()
        .flat_map(|tier| tier.channels.iter())
        .filter(|channel| (1..prompt).contains(&channel.channel.max_input_tokens))
        .map(|channel| channel.id())
        .collect()
}

/// One entry of the attempt timeline.
fn timeline(channel: &RoutedChannel, status: u16, sent: Instant, class: &'static str) -> Attempt {
    Attempt {
        c: channel.id().0,
        s: status,
        ms: u64::try_from(sent.elapsed().as_millis()).unwrap_or(u64::MAX),
        e: class,
    }
}

/// The settlement context of a request that `won`.
pub fn settle_ctx(
    caller: &Caller,
    model: &str,
    price: Price,
    won: &Won,
    stream: bool,
    started: Instant,
) -> SettleCtx {
    SettleCtx {
        caller: caller.clone(),
        model: model.to_owned(),
        upstream_model: won.upstream_model.clone(),
        channel: won.channel,
        tried: won.tried.clone(),
        attempts: won.attempts.clone(),
        pricing: price.pricing,
        default_ratio: price.default_ratio,
        group_ratio: price.group_ratio,
        quota_per_unit: price.quota_per_unit,
        stream,
        started,
        first_byte: None,
        log_enabled: price.log_enabled,
    }
}

/// Admits, forwards with failover, and answers `job` in the client's wire.
pub async fn relay(state: &AppState, job: Job) -> Result<Response, RelayError> {
    let texts = job.hub["messages"]
        .as_array()
        .map(|m| message_texts(m))
        .unwrap_or_default();
    let Admission { price, hold } = admit(
        state,
        &job.caller,
        Ask {
            model: &job.model,
            prompt_estimate: job.prompt_estimate.max(super::estimate::request(
                &job.hub,
                super::estimate::ImageRule::for_model(&job.model),
            )),
            max_tokens: job.max_tokens(),
            answers: job.hub["n"].as_i64().unwrap_or(1),
            calls: 1.0,
            texts: &texts,
        },
    )
    .await?;
    let worker = state.clone();
    super::detach::run(state, move |presence| {
        forward_job(worker, job, price, hold, presence)
    })
    .await
}

/// Forwards an admitted `job` with failover and answers it (in its own task, see
/// [`super::detach`]), settling `hold`.
async fn forward_job(
    state: AppState,
    job: Job,
    price: Price,
    hold: Hold,
    presence: super::detach::Presence,
) -> Result<Response, RelayError> {
    let state = &state;
    let pass_through = price.pass_through;
    let route = match job.client {
        Wire::OpenAi => "/v1/chat/completions",
        Wire::Anthropic => "/v1/messages",
        Wire::Gemini => "/v1beta/models/{model}:generateContent",
        Wire::Responses => "/v1/responses",
        // No client speaks these; named for completeness.
        Wire::Converse | Wire::Cohere => "/v1/chat/completions",
    };
    let won = forward(
        state,
        &job.caller,
        &job.model,
        Need::chat(job.stream, route),
        &price,
        |channel, wire, upstream_model, key| {
            let wire = wire.upstream(channel, job.client);
            let body = match upstream_body(&job, channel, wire, upstream_model, pass_through) {
                Ok(body) => body,
                Err(Refused::Client(e)) => return Err(e),
                // This channel cannot take the request; another may.
                Err(Refused::Channel(e)) => return Ok(Build::Skip(e)),
            };
            request(state, &job, channel, wire, upstream_model, key, body)
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
    let ctx = settle_ctx(
        &job.caller,
        &job.model,
        price,
        &won,
        job.stream,
        job.started,
    );
    answer(
        &job,
        won,
        ctx,
        hold,
        state.config.relay_timeout(),
        price.ping,
        &presence,
    )
    .await
}

/// Why [`upstream_body`] made no body.
enum Refused {
    /// The request is wrong whatever the channel (answered to the client).
    Client(RelayError),
    /// This channel's format cannot carry the request (another channel may).
    Channel(RelayError),
}

/// The body for `upstream`: the client's bytes when nothing needs to change, or when the
/// wires match and pass-through is on (`pass_through`: the global option, or the channel's) and
/// the channel's transport takes the format as it is (Vertex and Bedrock move Claude's model into
/// the URL and want `anthropic_version` in the body).
fn upstream_body(
    job: &Job,
    channel: &RoutedChannel,
    upstream: Wire,
    upstream_model: &str,
    pass_through: bool,
) -> Result<Bytes, Refused> {
    let channel_type = channel.channel.channel_type;
    let overrides = channel.json.param_override();
    let prompt = channel.json.system_prompt();
    let untouched = overrides.is_empty() && prompt.is_none();
    let as_is = !adaptor::changes_body(channel_type, upstream);
    if upstream == job.client && as_is && (pass_through || channel.json.pass_through()) {
        return Ok(job.body.clone());
    }
    let mut value = if upstream == job.client {
        match upstream {
            Wire::Anthropic if upstream_model == job.model && untouched && as_is => {
                return Ok(job.body.clone());
            }
            Wire::Gemini if untouched => return Ok(job.body.clone()),
            Wire::Responses if upstream_model == job.model && untouched => {
                return Ok(job.body.clone());
            }
            Wire::Responses => {
                let mut value = job.parsed.clone();
                value["model"] = Value::String(upstream_model.to_owned());
                value
            }
            Wire::Anthropic => {
                let mut value = job.parsed.clone();
                value["model"] = Value::String(upstream_model.to_owned());
                value
            }
            Wire::Gemini => job.parsed.clone(),
            Wire::OpenAi | Wire::Converse => {
                wire::openai::request_for_upstream(&job.hub, upstream_model, job.stream)
            }
            // No client speaks Cohere.
            Wire::Cohere => wire::from_hub_request(upstream, &job.hub, upstream_model, job.stream)
                .map_err(|e| Refused::Channel(RelayError::BadRequest(e.0)))?,
        }
    } else {
        wire::from_hub_request(upstream, &job.hub, upstream_model, job.stream)
            .map_err(|e| Refused::Channel(RelayError::BadRequest(e.0)))?
    };
    if let Some((prompt, override_client)) = prompt {
        super::system_prompt::apply(upstream, &mut value, prompt, override_client);
    }
    if let Value::Object(map) = &mut value {
        map.extend(overrides.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    adaptor::fix_body(channel_type, upstream, &mut value, job.stream);
    if upstream == Wire::Anthropic
        && job.client == Wire::Anthropic
        && adaptor::Transport::of(channel_type) == adaptor::Transport::Bedrock
        && let Some(betas) = job
            .headers
            .get("anthropic-beta")
            .and_then(|v| v.to_str().ok())
    {
        adaptor::bedrock::add_betas(&mut value, betas);
    }
    serde_json::to_vec(&value)
        .map(Bytes::from)
        .map_err(|e| Refused::Client(RelayError::Internal(e.to_string())))
}

/// The upstream request of `job` for `channel`, or why this channel cannot take it.
fn request(
    state: &AppState,
    job: &Job,
    channel: &RoutedChannel,
    wire: Wire,
    upstream_model: &str,
    key: &Credential<'_>,
    body: Bytes,
) -> Result<Build, RelayError> {
    let Some(url) = adaptor::generate_url(channel, key, wire, upstream_model, job.stream) else {
        return Ok(Build::Skip(RelayError::NotImplemented(format!(
            "relaying this request to channel type {}",
            channel.channel.channel_type
        ))));
    };
    let mut headers = Vec::new();
    if wire == Wire::Anthropic {
        let own = job.client == Wire::Anthropic;
        // Vertex and Bedrock take the version in the body; only Anthropic's API takes the header.
        let direct =
            adaptor::Transport::of(channel.channel.channel_type) == adaptor::Transport::Direct;
        for name in ANTHROPIC_HEADERS {
            if let Some(v) = job.headers.get(*name).filter(|_| own) {
                if direct || *name == "anthropic-beta" {
                    headers.push((*name, v.clone()));
                }
            } else if *name == "anthropic-version" && direct {
                headers.push((*name, HeaderValue::from_static(anthropic::DEFAULT_VERSION)));
            }
        }
    }
    adaptor::request(&state.http, channel, wire, url, key, &headers, body)
        .map(|req| Build::Send(Box::new(req)))
}

/// Sends the request; `Err` carries a description and the error class (`connect`,
/// `timeout`, `network`) when no HTTP answer came back in time.
pub async fn send(
    req: reqwest::RequestBuilder,
    timeout: Duration,
) -> Result<reqwest::Response, (String, &'static str)> {
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

/// Answers the client from a successful upstream response, settling the bill.
async fn answer(
    job: &Job,
    won: Won,
    ctx: SettleCtx,
    hold: Hold,
    timeout: Duration,
    ping: Option<Duration>,
    presence: &super::detach::Presence,
) -> Result<Response, RelayError> {
    let upstream = won.wire.upstream(&won.routed, job.client);
    let resp = won.resp;
    let same = upstream == job.client;
    if job.stream && same && upstream == Wire::OpenAi {
        // An OpenAI client reaching an OpenAI channel of a mixed route: the OpenAI path's
        // pipe, which forwards every event as the upstream sent it (only the usage chunk the
        // client did not ask for is held back) — no re-encoding, no field lost.
        return Ok(super::stream::respond(
            resp,
            Meter::new(ctx, hold, Prompt::known(job.prompt_estimate)),
            job.include_usage,
            std::sync::Arc::clone(&won.routed),
            timeout,
            ping,
        ));
    }
    if job.stream {
        let mode = if same && upstream != Wire::OpenAi {
            Mode::PassThrough
        } else {
            Mode::Convert(wire::encoder(
                job.client,
                EncodeCtx {
                    model: job.model.clone(),
                    prompt_estimate: job.prompt_estimate,
                    include_usage: job.include_usage,
                },
            ))
        };
        let meter = Meter::new(ctx, hold, Prompt::known(job.prompt_estimate));
        let ping = ping.map(|every| {
            let bytes = match job.client {
                Wire::Anthropic => keepalive::ANTHROPIC_PING,
                Wire::OpenAi | Wire::Gemini | Wire::Converse | Wire::Cohere | Wire::Responses => {
                    keepalive::COMMENT_PING
                }
            };
            (every, bytes)
        });
        let framing = adaptor::framing(won.routed.channel.channel_type);
        return Ok(pipe::respond(
            adaptor::chunks(resp, framing),
            wire::decoder(upstream),
            mode,
            meter,
            std::sync::Arc::clone(&won.routed),
            timeout,
            ping,
        ));
    }
    let status = resp.status();
    let content_type = resp.headers().get(header::CONTENT_TYPE).cloned();
    let mut meter = Meter::new(ctx, hold, Prompt::known(job.prompt_estimate));
    let bytes = read_whole(resp, timeout, &mut meter).await?;
    let Ok(value) = serde_json::from_slice::<Value>(&bytes) else {
        return Err(not_json(&mut meter).await);
    };
    let hub = wire::to_hub_answer(upstream, &value);
    match wire::answer_usage(upstream, &value) {
        Some(usage) => meter.reported(usage),
        None => meter.output(&wire::hub_answer_text(&hub)),
    }
    let usage = meter.settle(presence.ending()).await.unwrap_or_default();
    let mut hub = hub;
    if hub.get("usage").is_none_or(Value::is_null) {
        hub["usage"] = wire::openai::usage_json(&usage);
    }
    if same {
        let mut response = (status, bytes).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            content_type.unwrap_or(HeaderValue::from_static("application/json")),
        );
        return Ok(response);
    }
    Ok(Json(wire::from_hub_answer(job.client, &hub, &job.model)).into_response())
}

/// The `model` field of a request body, borrowed when it has no escapes.
#[derive(serde::Deserialize)]
struct ModelName<'a> {
    #[serde(borrow)]
    model: std::borrow::Cow<'a, str>,
}

/// An OpenAI chat request whose model is served by a Claude or Gemini channel, as a [`Job`]
/// (`None`: the OpenAI path handles it; a body that is not JSON is left to it too).
pub fn foreign_chat(
    state: &AppState,
    caller: &Caller,
    body: &Bytes,
) -> Option<Result<Job, RelayError>> {
    let started = Instant::now();
    // Most requests go to OpenAI-compatible channels: read only the model name (no JSON tree)
    // before deciding, so the common path parses the body once, in chat.rs.
    let head: ModelName<'_> = serde_json::from_slice(body).ok()?;
    if !needs_adaptor(state, caller, &head.model) {
        return None;
    }
    let model = head.model.into_owned();
    let parsed: Value = serde_json::from_slice(body).ok()?;
    let Some(messages) = parsed["messages"].as_array() else {
        return Some(Err(RelayError::BadRequest(
            "messages must be an array".into(),
        )));
    };
    let prompt_estimate = prompt_tokens(&model, messages);
    Some(Ok(Job {
        client: Wire::OpenAi,
        body: body.clone(),
        stream: parsed["stream"] == true,
        include_usage: parsed["stream_options"]["include_usage"] == true,
        hub: parsed.clone(),
        parsed,
        model,
        prompt_estimate,
        headers: HeaderMap::new(),
        caller: caller.clone(),
        started,
    }))
}

/// Every text part of chat `messages`.
pub fn message_texts(messages: &[Value]) -> Vec<&str> {
    let mut texts = Vec::new();
    for message in messages {
        super::chat::each_text(&message["content"], &mut |t| texts.push(t));
    }
    texts
}

/// Prompt tokens of chat `messages` as the OpenAI path counts them: the text parts with the
/// model's counter (exact for OpenAI-family models), plus 3 per message and 3 for the reply.
pub fn prompt_tokens(model: &str, messages: &[Value]) -> i64 {
    count_prompt(model, &message_texts(messages), Some(messages.len()))
}

/// Prompt tokens of `texts` with the model's counter (exact for OpenAI-family models, by
/// Tollgate's estimator otherwise), plus OpenAI's chat framing when `messages` is given: 3 per
/// message and 3 for the reply priming.
pub fn count_prompt(model: &str, texts: &[&str], messages: Option<usize>) -> i64 {
    count_prompt_with(Counter::for_model(model), texts, messages)
}

/// [`count_prompt`] with a given counter (e.g. [`Counter::Estimate`] for a reservation).
pub fn count_prompt_with(counter: Counter, texts: &[&str], messages: Option<usize>) -> i64 {
    let tokens = texts
        .iter()
        .fold(0i64, |n, t| n.saturating_add(counter.count(t)));
    let Some(messages) = messages else {
        return tokens;
    };
    let framing = i64::try_from(messages)
        .unwrap_or(i64::MAX)
        .saturating_mul(3)
        .saturating_add(3);
    tokens.saturating_add(framing)
}
