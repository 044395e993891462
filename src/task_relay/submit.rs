//! A task submit, the same for every family: admission (the key may use the priced model, the
//! prompt has no sensitive words, the model has a price, the user's ledger reserves it),
//! the forward to a channel of the family (another channel on a connection failure, a 5xx or
//! a 429, up to RetryTimes), and the settlement when the upstream accepts.
//!
//! Money: the price is reserved at admission; when the upstream accepts, the charge and its
//! task row are settled together ([`tollgate_actors::quota::Hold::settle_task`]): journalled in
//! one record, then written by the log writer in one transaction — a crash after the
//! acceptance replays both, never one. A refusal (or any failure before the acceptance) drops
//! the reservation, which releases it. The reservation is journalled with a crash charge of
//! nothing: a process that dies while the upstream is still deciding leaves no charge without
//! its task (the client never learnt a task id either). After settling, the handler waits for
//! the commit ([`tollgate_actors::quota::QuotaBook::flush`]) so the task can be fetched as soon
//! as its id is answered, and wakes the poller.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderValue, header};
use serde_json::Value;
use tollgate_actors::channel_pool::routing_table::{RoutedChannel, select_for};
use tollgate_actors::journal::HoldStart;
use tollgate_actors::quota::{Hold, QuotaError, Refusal, Reservation};
use tollgate_storage::logs::{LOG_CONSUME, LogEntry};
use tollgate_storage::tasks::{Task, TaskKind};
use tollgate_storage::{ChannelId, channels};

use super::error::TaskError;
use super::price::TaskPrice;
use crate::channel_types;
use crate::clock::now_unix;
use crate::error::RelayError;
use crate::relay::pipeline::auth::Caller;
use crate::relay::pipeline::redact;
use crate::state::AppState;

/// The largest submit answer read, in bytes.
pub const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

/// The body sent upstream.
#[derive(Debug, Clone)]
pub enum Upstream {
    /// JSON (its `model`, when it has one, replaced by the channel's mapped name if `map_model`).
    Json {
        /// The body.
        body: Value,
        /// Whether the body names the model (videos) and the channel's mapping applies.
        map_model: bool,
    },
    /// Bytes as the client sent them, with their content type (a video's multipart form).
    Raw {
        /// The body.
        bytes: Bytes,
        /// Its `Content-Type`.
        content_type: HeaderValue,
    },
}

/// A submit to forward.
#[derive(Debug, Clone)]
pub struct Submit {
    /// The family.
    pub kind: TaskKind,
    /// The task page's platform label.
    pub platform: &'static str,
    /// The priced model name (`mj_imagine`, `suno_music`, `sora-2`).
    pub model: String,
    /// The task's action (IMAGINE, MUSIC, GENERATE…).
    pub action: String,
    /// The prompt (stored, and checked for sensitive words).
    pub prompt: String,
    /// Calls (seconds for a video) the reservation is for.
    pub calls: f64,
    /// The upstream path (`/mj/submit/imagine`, `/suno/submit/music`, `/v1/videos`).
    pub path: String,
    /// The body.
    pub body: Upstream,
    /// A channel the submit must go to (an action on an earlier task goes to its channel).
    pub channel: Option<ChannelId>,
}

/// What the upstream answered.
#[derive(Debug, Clone)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// The body.
    pub body: Bytes,
    /// Its `Content-Type`.
    pub content_type: Option<HeaderValue>,
}

/// What a family makes of an answer.
#[derive(Debug, Clone)]
pub enum Verdict {
    /// The upstream took the task.
    Accepted(Accepted),
    /// It did not: nothing is charged and the answer goes back to the client as it came.
    Refused,
}

/// An accepted submit.
#[derive(Debug, Clone, Default)]
pub struct Accepted {
    /// The upstream's task id.
    pub upstream_id: String,
    /// The submit code as answered (Midjourney: 1, 21, 22).
    pub code: i32,
    /// The first status stored.
    pub status: String,
    /// Calls (seconds) to settle, when the answer says otherwise than the request.
    pub calls: Option<f64>,
    /// Midjourney properties (JSON text).
    pub properties: String,
    /// The answer kept as the task's data (videos).
    pub data: String,
}

/// A settled submit: the stored task and the upstream's answer.
#[derive(Debug)]
pub struct Done {
    /// The task as settled.
    pub task: Task,
    /// The upstream's answer.
    pub answer: Answer,
    /// Whether the upstream accepted (false: its refusal, nothing charged).
    pub accepted: bool,
}

/// Admits, forwards and settles `submit`; `judge` reads the upstream's 2xx answer.
pub async fn run(
    state: &AppState,
    caller: &Caller,
    submit: Submit,
    judge: impl Fn(&Answer) -> Verdict,
) -> Result<Done, TaskError> {
    let options = state.options.current();
    if submit.model.is_empty() {
        return Err(TaskError::bad_request("the task's model could not be told"));
    }
    if !caller.token.allows_model(&submit.model) {
        return Err(RelayError::Forbidden(format!(
            "this API key cannot use model {}",
            submit.model
        ))
        .into());
    }
    if options.flag("StopOnSensitiveEnabled") {
        let hits = options
            .sensitive_words()
            .find(std::iter::once(submit.prompt.as_str()));
        if !hits.is_empty() {
            return Err(RelayError::SensitiveWords(hits.join(", ")).into());
        }
    }
    let price = TaskPrice::of(
        &options,
        &submit.model,
        &caller.group,
        caller.user.accept_unset_price,
    )?;
    let reserved = price.quota(submit.calls)?;
    if reserved > 0 && !state.quota.storage_ok() {
        return Err(RelayError::StorageUnavailable.into());
    }
    let token = (!caller.playground).then_some(caller.token.id);
    let rate = options.rate_limits().for_group(&caller.group);
    let mut hold = state
        .quota
        .reserve_limited(caller.user.id, token, Reservation::whole(reserved), rate)
        .await
        .map_err(quota_error)?;
    hold.journal(&HoldStart {
        user: caller.user.id,
        token,
        prompt_tokens: 0,
        prompt_cost: 0,
        row: None,
    });
    let log_enabled = options.flag("LogConsumeEnabled");
    let retries = usize::try_from(options.int("RetryTimes")).unwrap_or(0);
    drop(options);
    let (channel, answer) = forward(state, caller, &submit, retries).await?;
    let verdict = if (200..300).contains(&answer.status) {
        judge(&answer)
    } else {
        Verdict::Refused
    };
    let Verdict::Accepted(accepted) = verdict else {
        drop(hold);
        let task = Task::default();
        return Ok(Done {
            task,
            answer,
            accepted: false,
        });
    };
    let task = settle(
        state,
        caller,
        &submit,
        &price,
        channel,
        accepted,
        hold,
        log_enabled,
    )?;
    if let Err(e) = state.quota.flush().await {
        tracing::warn!(error = %e, "a task's settlement is journalled but not yet committed");
    }
    state.task_poller.poll_now();
    Ok(Done {
        task,
        answer,
        accepted: true,
    })
}

/// Charges `hold` for the accepted submit and writes its task in the settlement.
#[expect(
    clippy::too_many_arguments,
    reason = "one call site, the submit's whole state"
)]
fn settle(
    state: &AppState,
    caller: &Caller,
    submit: &Submit,
    price: &TaskPrice,
    channel: ChannelId,
    accepted: Accepted,
    hold: Hold,
    log_enabled: bool,
) -> Result<Task, TaskError> {
    let _ = state;
    let calls = accepted.calls.unwrap_or(submit.calls);
    let cost = price.quota(calls).unwrap_or_else(|_| hold.amount());
    let now = now_unix();
    let task = Task {
        kind: submit.kind,
        platform: submit.platform.to_owned(),
        user_id: caller.user.id,
        token_id: (!caller.playground).then_some(caller.token.id),
        token_name: caller.token.name.clone(),
        username: caller.user.username.clone(),
        group: caller.group.clone(),
        model_name: submit.model.clone(),
        channel_id: channel,
        action: submit.action.clone(),
        upstream_id: accepted.upstream_id.clone(),
        code: accepted.code,
        status: accepted.status.clone(),
        progress: "0%".to_owned(),
        prompt: submit.prompt.clone(),
        properties: accepted.properties.clone(),
        data: accepted.data.clone(),
        created_at: now,
        submit_time: now,
        updated_at: now,
        ..Task::default()
    };
    let other = serde_json::json!({
        "model_price": price.model_price.unwrap_or(-1.0),
        "model_ratio": price.model_ratio.unwrap_or(0.0),
        "group_ratio": price.group_ratio,
        "calls": calls,
        "task_id": accepted.upstream_id,
        "task_kind": submit.kind.list().prefix(),
        "usage_source": "upstream",
        "price_unset": price.unset,
    })
    .to_string();
    let row = LogEntry {
        created_at: now,
        log_type: LOG_CONSUME,
        user_id: caller.user.id,
        username: caller.user.username.clone(),
        token_id: caller.token.id.0,
        token_name: caller.token.name.clone(),
        model_name: submit.model.clone(),
        channel_id: channel.0,
        group: caller.group.clone(),
        content: format!(
            "task {} submitted ({})",
            accepted.upstream_id, submit.action
        ),
        other,
        ..LogEntry::default()
    };
    let billed = hold.settle_task(cost, |_| log_enabled.then_some(row), task.clone(), now);
    Ok(Task {
        quota: billed.charged,
        ..task
    })
}

/// Sends `submit` to a channel of its family, trying another on a failure that is the
/// channel's; returns the channel and its answer.
async fn forward(
    state: &AppState,
    caller: &Caller,
    submit: &Submit,
    retries: usize,
) -> Result<(ChannelId, Answer), TaskError> {
    let table = state.channel_pool.table().load_full();
    let mut tried: Vec<ChannelId> = Vec::new();
    let mut attempts = 0usize;
    let mut last: Option<TaskError> = None;
    // Picks may land on channels of another family: they are skipped, without counting.
    for _ in 0..64 {
        if attempts > retries {
            break;
        }
        let channel: Option<Arc<RoutedChannel>> = match (submit.channel, caller.pinned) {
            (Some(id), _) | (None, Some(id)) => (attempts == 0)
                .then(|| table.channel(id).cloned())
                .flatten(),
            (None, None) => table
                .route(&caller.group, &submit.model)
                .and_then(|route| select_for(route, 0, attempts, &tried, &mut rand::rng()))
                .cloned(),
        };
        let Some(channel) = channel else {
            break;
        };
        tried.push(channel.id());
        if !serves(submit.kind, channel.channel.channel_type) {
            if submit.channel.is_some() || caller.pinned.is_some() {
                break;
            }
            continue;
        }
        attempts += 1;
        match send(state, &channel, submit).await {
            Ok(answer) if answer.status >= 500 || answer.status == 429 => {
                last = Some(TaskError::new(
                    axum::http::StatusCode::BAD_GATEWAY,
                    "upstream_error",
                    format!("the upstream answered HTTP {}", answer.status),
                ));
                if attempts > retries {
                    return Ok((channel.id(), answer));
                }
            }
            Ok(answer) => return Ok((channel.id(), answer)),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        if tried.is_empty() {
            RelayError::NoChannel {
                model: submit.model.clone(),
                group: caller.group.clone(),
            }
        } else {
            // The model has channels, but none of a type that takes this kind of task: the
            // client's mistake, as on the relay's routes (a 400 naming the route).
            RelayError::BadRequest(format!(
                "model {} has no channel whose type can serve {}",
                submit.model, submit.path
            ))
        }
        .into()
    }))
}

/// Whether a channel of `channel_type` takes tasks of `kind`: Midjourney Proxy (2) and
/// Midjourney Proxy Plus (5), Suno (36); videos on OpenAI channels only (1: Azure's
/// documentation does not show `/v1/videos`).
pub fn serves(kind: TaskKind, channel_type: i32) -> bool {
    match kind {
        TaskKind::Midjourney => matches!(channel_type, 2 | 5),
        TaskKind::Suno => channel_type == 36,
        TaskKind::Video => channel_type == 1,
    }
}

/// The base URL of `channel` (its own, else its type's default).
pub fn base_of(channel: &channels::Channel) -> String {
    channel_types::effective_base_url(channel.channel_type, &channel.base_url)
}

/// A request to `channel` at `path` with its key in the family's header.
pub fn request(
    state: &AppState,
    channel: &RoutedChannel,
    kind: TaskKind,
    method: reqwest::Method,
    path: &str,
) -> Result<reqwest::RequestBuilder, TaskError> {
    let client = state
        .http
        .for_proxy(&channel.channel.proxy)
        .map_err(|e| TaskError::bad_gateway(format!("the channel's proxy: {e}")))?;
    let base = base_of(&channel.channel);
    if base.is_empty() {
        return Err(TaskError::bad_gateway("the channel has no base URL"));
    }
    let key = channel
        .next_key()
        .map(|(_, k)| k.expose().to_owned())
        .unwrap_or_default();
    let url = match kind {
        TaskKind::Video => channel_types::openai_url(channel.channel.channel_type, &base, path),
        _ => format!("{base}{path}"),
    };
    let call = client
        .request(method, url)
        .timeout(state.config.relay_timeout().max(Duration::from_secs(1)));
    Ok(match kind {
        TaskKind::Midjourney => call.header("mj-api-secret", key),
        TaskKind::Suno | TaskKind::Video => call.bearer_auth(key),
    })
}

/// Sends `submit` to `channel` and reads the answer.
async fn send(
    state: &AppState,
    channel: &RoutedChannel,
    submit: &Submit,
) -> Result<Answer, TaskError> {
    let call = request(
        state,
        channel,
        submit.kind,
        reqwest::Method::POST,
        &submit.path,
    )?;
    let call = match &submit.body {
        Upstream::Json { body, map_model } => {
            let mut body = body.clone();
            if *map_model && let Some(obj) = body.as_object_mut() {
                let mapped = channel.json.mapped_model(&submit.model).to_owned();
                obj.insert("model".into(), Value::String(mapped));
            }
            let bytes = serde_json::to_vec(&body).map_err(TaskError::internal)?;
            call.header(header::CONTENT_TYPE, "application/json")
                .body(bytes)
        }
        Upstream::Raw {
            bytes,
            content_type,
        } => call
            .header(header::CONTENT_TYPE, content_type.clone())
            .body(bytes.clone()),
    };
    read_answer(call, channel).await
}

/// Sends `call` to `channel` and reads its answer ([`read_answer_of`]).
pub async fn read_answer(
    call: reqwest::RequestBuilder,
    channel: &RoutedChannel,
) -> Result<Answer, TaskError> {
    let resp = call.send().await.map_err(unreachable)?;
    read_answer_of(resp, channel).await
}

/// Reads `resp` from `channel`, at most [`MAX_ANSWER_BYTES`]. Whatever of the channel's keys
/// the answer shows (an upstream's error text may quote the key it was sent) is masked: a
/// refusal goes back to the client as it came otherwise.
pub async fn read_answer_of(
    mut resp: reqwest::Response,
    channel: &RoutedChannel,
) -> Result<Answer, TaskError> {
    let status = resp.status().as_u16();
    let content_type = resp.headers().get(header::CONTENT_TYPE).cloned();
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(unreachable)? {
        if body.len().saturating_add(chunk.len()) > MAX_ANSWER_BYTES {
            return Err(TaskError::bad_gateway("the upstream's answer is too large"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Answer {
        status,
        body: masked(body, channel),
        content_type,
    })
}

/// An upstream that could not be reached (its URL left out: it may carry a key).
fn unreachable(e: reqwest::Error) -> TaskError {
    TaskError::from(RelayError::Unreachable(e.without_url().to_string()))
}

/// `body` with the channel's keys masked (a body that is not text is kept as it is).
pub fn masked(body: Vec<u8>, channel: &RoutedChannel) -> Bytes {
    match String::from_utf8(body) {
        Ok(text) => {
            let clean = redact::redact(&text, channel.channel.key_lines());
            Bytes::from(clean)
        }
        Err(e) => Bytes::from(e.into_bytes()),
    }
}

/// A reservation's refusal as the relay words it.
fn quota_error(e: QuotaError) -> TaskError {
    let relay = match e {
        QuotaError::Refused(r @ Refusal::UserQuota { .. }) => {
            RelayError::InsufficientUserQuota(r.to_string())
        }
        QuotaError::Refused(r @ Refusal::TokenQuota { .. }) => {
            RelayError::InsufficientTokenQuota(r.to_string())
        }
        QuotaError::Refused(r @ Refusal::RateLimited { .. }) => {
            RelayError::RateLimited(r.to_string())
        }
        QuotaError::Refused(r @ Refusal::Budget { retry_after, .. }) => RelayError::BudgetReached {
            message: r.to_string(),
            retry_after,
        },
        QuotaError::Storage(e) => RelayError::Internal(format!("loading the balance: {e}")),
    };
    relay.into()
}
