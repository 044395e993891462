//! A task submit, the same for every family, relayed as one more plan on the relay's spine
//! ([`crate::relay::pipeline::spine::run`]): admission (the key may use the priced model, the
//! prompt has no sensitive words, the model has a price, the rate limits, the user's ledger
//! reserves it), the forward with failover to a channel whose type takes the family's tasks
//! (the channel pool hears every outcome, the attempt timeline goes into the consume row),
//! and the settlement when the upstream accepts ([`TaskPlan`]'s answer).
//!
//! Money: the price is reserved at admission; when the upstream accepts, the charge and its
//! task row are settled together ([`tollgate_actors::quota::Hold::settle_task`]): journalled in
//! one record, then written by the log writer in one transaction — a crash after the
//! acceptance replays both, never one. A refusal (or any failure before the acceptance) drops
//! the reservation, which releases it. The reservation is journalled with a crash charge of
//! nothing ([`crate::relay::pipeline::spine::Plan::crash_charge`]): a process that dies while
//! the upstream is still deciding leaves no charge without its task (the client never learnt a
//! task id either). After settling, the plan waits for the commit
//! ([`tollgate_actors::quota::QuotaBook::flush`]) so the task can be fetched as soon as its id
//! is answered, and wakes the poller.

use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tollgate_actors::channel_pool::routing_table::RoutedChannel;
use tollgate_actors::quota::Hold;
use tollgate_storage::logs::{LOG_CONSUME, LogEntry};
use tollgate_storage::tasks::{Task, TaskKind};
use tollgate_storage::{ChannelId, channels};

use super::error::TaskError;
use super::price::TaskPrice;
use crate::channel_types;
use crate::channel_types::serve::{Need, Serve};
use crate::clock::now_unix;
use crate::error::RelayError;
use crate::relay::adaptor::Credential;
use crate::relay::measure::prompt::Prompt;
use crate::relay::pipeline::admission::{Ask, Price};
use crate::relay::pipeline::attempt::Build;
use crate::relay::pipeline::auth::Caller;
use crate::relay::pipeline::detach::Presence;
use crate::relay::pipeline::redact;
use crate::relay::pipeline::settle::SettleCtx;
use crate::relay::pipeline::spine::{self, Plan};
use crate::relay::wire::Wire;
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
    /// A multipart form (a video with its `input_reference`), sent again part by part with its
    /// `model` field the channel's mapped name.
    Form(Vec<FormPart>),
}

/// One part of a multipart form as the client sent it.
#[derive(Debug, Clone)]
pub struct FormPart {
    /// The field name.
    pub name: String,
    /// The file name, for a file.
    pub file_name: Option<String>,
    /// Its `Content-Type`, when given.
    pub content_type: Option<String>,
    /// The content.
    pub bytes: Bytes,
}

/// `parts` as a form whose `model` field (a text field, added if missing and the name
/// changes) says `model` instead of `asked`.
fn form_of(
    parts: &[FormPart],
    asked: &str,
    model: &str,
) -> Result<reqwest::multipart::Form, RelayError> {
    let mut form = reqwest::multipart::Form::new();
    let mut named = false;
    for part in parts {
        if part.name == "model" && part.file_name.is_none() {
            form = form.text("model", model.to_owned());
            named = true;
            continue;
        }
        let length = u64::try_from(part.bytes.len()).unwrap_or(u64::MAX);
        let mut piece = reqwest::multipart::Part::stream_with_length(
            reqwest::Body::from(part.bytes.clone()),
            length,
        );
        if let Some(name) = &part.file_name {
            piece = piece.file_name(name.clone());
        }
        if let Some(ct) = &part.content_type {
            piece = piece.mime_str(ct).map_err(|e| {
                RelayError::BadRequest(format!("the part {}'s content type: {e}", part.name))
            })?;
        }
        form = form.part(part.name.clone(), piece);
    }
    if !named && model != asked {
        form = form.text("model", model.to_owned());
    }
    Ok(form)
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

/// A family's reading of the upstream's 2xx answer to `submit`.
pub type Judge = fn(&Answer, &Submit) -> Verdict;

/// A family's answer to the client for an accepted submit (the upstream's answer, the task
/// as settled).
pub type Respond = fn(Answer, &Task) -> Response;

/// Relays `submit` for `caller` ([`TaskPlan`] on the relay's spine): `judge` reads the
/// upstream's 2xx answer, `respond` answers an accepted one. A refusal in a 2xx answer goes
/// back as it came; any other failure is the relay's error (the family's shape is given by
/// [`super::error::reshape`]).
pub async fn run(
    state: &AppState,
    mut caller: Caller,
    submit: Submit,
    judge: Judge,
    respond: Respond,
) -> Result<Response, TaskError> {
    if submit.model.is_empty() {
        return Err(TaskError::bad_request("the task's model could not be told"));
    }
    let price = {
        let options = state.options.current();
        TaskPrice::of(
            &options,
            &submit.model,
            &caller.group,
            caller.user.accept_unset_price,
        )?
    };
    // The reservation and the settlement agree: a price admission would not hold is refused.
    price.quota(submit.calls)?;
    // An action on an earlier task goes to that task's channel (and to no other).
    if let Some(channel) = submit.channel {
        caller.pinned = Some(channel);
    }
    let plan = TaskPlan {
        submit,
        price,
        judge,
        respond,
        started: Instant::now(),
    };
    Ok(spine::run(state, caller, plan)
        .await
        .unwrap_or_else(IntoResponse::into_response))
}

/// A task submit as a plan of the relay's spine.
pub struct TaskPlan {
    submit: Submit,
    price: TaskPrice,
    judge: Judge,
    respond: Respond,
    started: Instant,
}

impl Plan for TaskPlan {
    fn model(&self) -> &str {
        &self.submit.model
    }

    fn ask(&self) -> Ask<'_> {
        // A task has no tokens: its price is per call (per second for a video), whatever its
        // model's pricing, and the reservation is that price, as the settlement charges it.
        Ask {
            calls: self.submit.calls,
            per_call: true,
            ..Ask::input_only(&self.submit.model, 0)
        }
    }

    fn texts(&self) -> Vec<&str> {
        vec![self.submit.prompt.as_str()]
    }

    fn need(&self) -> Need {
        match self.submit.kind {
            TaskKind::Midjourney => Need::new(Serve::Midjourney, "/mj/submit"),
            TaskKind::Suno => Need::new(Serve::Suno, "/suno/submit"),
            TaskKind::Video => Need::new(Serve::Video, "/v1/videos"),
        }
    }

    /// Task channels speak their family's API (the need picks only channels of the family);
    /// their error answers are read as OpenAI's are.
    fn wire(_channel_type: i32, _upstream_model: &str) -> Option<Wire> {
        Some(Wire::OpenAi)
    }

    fn crash_charge(&self) -> bool {
        false
    }

    fn started(&self) -> Instant {
        self.started
    }

    fn build(
        &self,
        state: &AppState,
        _price: &Price,
        channel: &RoutedChannel,
        _wire: Wire,
        upstream_model: &str,
        key: &Credential<'_>,
    ) -> Result<Build, RelayError> {
        let key = match key {
            Credential::Key(line) => *line,
            _ => "",
        };
        let call = match call(
            state,
            channel,
            self.submit.kind,
            reqwest::Method::POST,
            &self.submit.path,
            key,
        ) {
            Ok(call) => call,
            Err(e) => return Ok(Build::Skip(e)),
        };
        let call = match &self.submit.body {
            Upstream::Json { body, map_model } => {
                let mut body = body.clone();
                if *map_model && let Some(obj) = body.as_object_mut() {
                    obj.insert("model".into(), Value::String(upstream_model.to_owned()));
                }
                let bytes = serde_json::to_vec(&body)
                    .map_err(|e| RelayError::Internal(format!("a task body: {e}")))?;
                call.header(header::CONTENT_TYPE, "application/json")
                    .body(bytes)
            }
            Upstream::Form(parts) => {
                call.multipart(form_of(parts, &self.submit.model, upstream_model)?)
            }
        };
        Ok(Build::Send(Box::new(call)))
    }

    fn prompt(&mut self) -> Prompt {
        Prompt::known(0)
    }

    async fn answer(
        self,
        state: &AppState,
        won: spine::Answer,
        _presence: &Presence,
    ) -> Result<Response, RelayError> {
        let spine::Answer {
            resp,
            routed,
            meter,
            price,
            ..
        } = won;
        // Settled here with the task, never by usage: the meter gives the reservation up.
        let Some((ctx, hold)) = meter.into_hold() else {
            return Err(RelayError::Internal(
                "a task's reservation was settled".into(),
            ));
        };
        let answer = read_answer_of(resp, &routed).await.map_err(relay_error)?;
        let verdict = (self.judge)(&answer, &self.submit);
        let Verdict::Accepted(accepted) = verdict else {
            // Refused: the reservation is released.
            drop(hold);
            return Ok(passthrough(answer));
        };
        let task = settle(
            &self.submit,
            &self.price,
            &ctx,
            accepted,
            hold,
            price.log_enabled,
        );
        if let Err(e) = state.quota.flush().await {
            tracing::warn!(error = %e, "a task's settlement is journalled but not yet committed");
        }
        state.task_poller.poll_now();
        Ok((self.respond)(answer, &task))
    }
}

/// An upstream's answer as it came.
pub fn passthrough(answer: Answer) -> Response {
    let status = axum::http::StatusCode::from_u16(answer.status)
        .unwrap_or(axum::http::StatusCode::BAD_GATEWAY);
    let mut response = (status, answer.body).into_response();
    if let Some(ct) = answer.content_type {
        response.headers_mut().insert(header::CONTENT_TYPE, ct);
    }
    response
}

/// A task route's error as the relay's (its status and message kept).
fn relay_error(e: TaskError) -> RelayError {
    RelayError::Upstream {
        status: e.status.as_u16(),
        message: e.message,
    }
}

/// Charges `hold` for the accepted submit and writes its task in the settlement; the consume
/// row carries the attempt timeline as every relayed request's does.
fn settle(
    submit: &Submit,
    price: &TaskPrice,
    ctx: &SettleCtx,
    accepted: Accepted,
    hold: Hold,
    log_enabled: bool,
) -> Task {
    let caller = &ctx.caller;
    let channel = ctx.channel;
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
        // A video keeps the seconds it was charged for: the poller corrects the charge to the
        // finished duration (`crate::task_poll::rules::rebill`).
        properties: match submit.kind {
            TaskKind::Video => serde_json::json!({ "seconds": calls }).to_string(),
            _ => accepted.properties.clone(),
        },
        data: accepted.data.clone(),
        created_at: now,
        submit_time: now,
        updated_at: now,
        ..Task::default()
    };
    let other = serde_json::json!({
        "admin_info": {"attempts": ctx.attempts, "use_channel": ctx.tried},
        "model_price": price.model_price.unwrap_or(-1.0),
        "model_ratio": price.model_ratio.unwrap_or(0.0),
        "group_ratio": price.group_ratio,
        "calls": calls,
        "task_id": accepted.upstream_id,
        "task_kind": submit.kind.list().prefix(),
        "upstream_model_name": ctx.upstream_model,
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
        use_time: i64::try_from(ctx.started.elapsed().as_secs()).unwrap_or(i64::MAX),
        content: format!(
            "task {} submitted ({})",
            accepted.upstream_id, submit.action
        ),
        other,
        ..LogEntry::default()
    };
    let billed = hold.settle_task(cost, |_| log_enabled.then_some(row), task.clone(), now);
    ctx.cell
        .settled(billed.charged, ctx.started.elapsed(), None);
    Task {
        quota: billed.charged,
        ..task
    }
}

/// The base URL of `channel` (its own, else its type's default).
pub fn base_of(channel: &channels::Channel) -> String {
    channel_types::effective_base_url(channel.channel_type, &channel.base_url)
}

/// A request to `channel` at `path` with `key` in the family's header.
fn call(
    state: &AppState,
    channel: &RoutedChannel,
    kind: TaskKind,
    method: reqwest::Method,
    path: &str,
    key: &str,
) -> Result<reqwest::RequestBuilder, RelayError> {
    let client = state
        .http
        .for_proxy(&channel.channel.proxy)
        .map_err(|e| RelayError::Unreachable(format!("the channel's proxy: {e}")))?;
    let base = base_of(&channel.channel);
    if base.is_empty() {
        return Err(RelayError::Unreachable(
            "the channel has no base URL".into(),
        ));
    }
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

/// A request to `channel` at `path` with its next key in the family's header (the fetches
/// that ask a task's channel: image-seed, a video's content).
pub fn request(
    state: &AppState,
    channel: &RoutedChannel,
    kind: TaskKind,
    method: reqwest::Method,
    path: &str,
) -> Result<reqwest::RequestBuilder, TaskError> {
    let key = channel
        .next_key()
        .map(|(_, k)| k.expose().to_owned())
        .unwrap_or_default();
    call(state, channel, kind, method, path, &key)
        .map_err(|e| TaskError::bad_gateway(e.to_string()))
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
