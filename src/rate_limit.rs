//! The relay's use of the rate-limit engine ([`tollgate_actors::limiter`], P15 item 1): before
//! the quota reservation, a request counts on every covering `RateLimitRules` rule's counters
//! (atomic counters, no actor), waiting in a rule's queue when it has one ([`admit`]); its
//! user's and its key's limits — the spec's model request limit is one more user-level rule —
//! are checked inside the quota book's critical section, with the reservation ([`gate`]). A
//! refusal is a 429 naming the rule ([`RelayError::Limited`], `Retry-After`). At the pick, each
//! candidate channel counts on its own and its key's counters ([`admit_channel`]): a channel or
//! key at its limit is skipped for the next candidate. The places are held with the
//! reservation ([`tollgate_actors::quota::Hold::keep_limits`]), so a stream's concurrency place
//! is given back at its last byte and its tokens per minute are corrected at settlement; the
//! `x-ratelimit-*` values of the caller's rules go on the answer.
//!
//! A refused request gets an error row (log type 5, ErrorLogEnabled) whose `other.limit` names
//! the rule ([`log_limit`]): written through the quota book's log queue by
//! [`crate::relay::pipeline::failure::record`], for a caller's refusal here and for the pick's
//! (every candidate full) by the attempt loop. Refusals and queue waits are counted by scope and
//! kind for `/metrics` ([`tollgate_actors::limiter::LimiterStats`]).

use axum::http::{HeaderName, HeaderValue};
use axum::response::Response;
use serde_json::{Value, json};
use tollgate_actors::channel_pool::routing_table::RoutedChannel;
use tollgate_actors::limiter::{self, Admission, Refusal, Scope};
use tollgate_storage::secret::Secret;

use crate::error::RelayError;
use crate::relay::pipeline::admission::{Ask, Price};
use crate::relay::pipeline::auth::Caller;
use crate::state::AppState;

/// What the engine reads of `ask` of `caller`: tokens per minute reserve the prompt estimate
/// and the output limit of every answer.
pub fn limits_ask<'a>(caller: &'a Caller, ask: &Ask<'a>) -> limiter::Ask<'a> {
    let output = ask
        .max_tokens
        .unwrap_or(0)
        .max(0)
        .saturating_mul(ask.answers.max(1));
    let tokens = u64::try_from(ask.prompt_estimate.max(0).saturating_add(output)).unwrap_or(0);
    limiter::Ask {
        user: caller.user.id,
        token: (!caller.playground).then_some(caller.token.id),
        group: &caller.group,
        model: ask.model,
        tokens,
    }
}

/// Admits `ask` of `caller` under the covering `RateLimitRules` rules (waiting in a rule's
/// queue), or refuses it naming the rule.
pub async fn admit(
    state: &AppState,
    caller: &Caller,
    ask: &Ask<'_>,
) -> Result<Admission, RelayError> {
    let options = state.options.current();
    state
        .limits
        .admit_queued(&limits_ask(caller, ask), options.limit_rules())
        .await
        .map_err(|refusal| refuse(state, caller, ask.model, &refusal))
}

/// The quota book's gate for `ask` of `caller` (run inside the user's critical section): the
/// user's limits with the model request limit of the caller's group
/// (ModelRequestRateLimit*, one user-level rule) and the key's limits.
pub fn gate<'a>(
    state: &'a AppState,
    caller: &'a Caller,
    ask: &Ask<'a>,
) -> impl FnOnce() -> Result<Option<Admission>, Refusal> + 'a {
    let limits = limits_ask(caller, ask);
    let model = state
        .options
        .current()
        .rate_limits()
        .for_group(&caller.group);
    move || state.limits.admit_caller(&limits, model).map(Some)
}

/// The client's answer to `refusal` of a request of `caller` for `model`, its error row queued
/// (naming the rule, [`log_limit`]).
pub fn refuse(state: &AppState, caller: &Caller, model: &str, refusal: &Refusal) -> RelayError {
    let error = refused(refusal);
    crate::relay::pipeline::failure::record(state, caller, model, &[], Vec::new(), &error);
    error
}

/// The client's answer to `refusal`: 429 naming the rule, with `Retry-After`.
pub fn refused(refusal: &Refusal) -> RelayError {
    RelayError::Limited {
        message: refusal.to_string(),
        retry_after: refusal.retry_after_secs(),
        refusal: Box::new(refusal.clone()),
    }
}

/// The rule that refused a request, as its error row's `other.limit` says it (read by the
/// console's log page): `scope` (`user`, `token`, `rule`, `channel`, `channel_key`), `kind`
/// (`concurrency`, `rpm`, `tpm`, `rpd`, `model_requests`, `model_successes` — these two with
/// `window_minutes`), `limit`, and the owner (`user_id`, `token_id`, `channel_id` with
/// `key_index`, the key's 0-based line) or the rule's `group` and `model`; `repeated`: the
/// refusals of the same rule since its last row, which wrote none (one row per rule per second,
/// [`Refusal::row`]).
pub fn log_limit(refusal: &Refusal) -> Value {
    let mut limit = json!({
        "scope": refusal.scope.label(),
        "kind": refusal.kind.as_str(),
        "limit": refusal.limit,
    });
    if let Some(minutes) = refusal.kind.window_minutes() {
        limit["window_minutes"] = json!(minutes);
    }
    if let Some(repeated) = refusal.row.filter(|n| *n > 0) {
        limit["repeated"] = json!(repeated);
    }
    match &refusal.scope {
        Scope::User(user) => limit["user_id"] = json!(user.0),
        Scope::Token(token) => limit["token_id"] = json!(token.0),
        Scope::Channel(channel) => limit["channel_id"] = json!(channel.0),
        Scope::ChannelKey(channel, line) => {
            limit["channel_id"] = json!(channel.0);
            limit["key_index"] = json!(line);
        }
        Scope::Rule { group, model } => {
            if let Some(group) = group {
                limit["group"] = json!(group);
            }
            if let Some(model) = model {
                limit["model"] = json!(model);
            }
        }
    }
    limit
}

/// Tokens an attempt reserves on its channel's tokens-per-minute limits: the prompt estimate
/// and the output limit decided with the reservation.
pub fn channel_tokens(price: &Price) -> u64 {
    let output = price.output.tokens.unwrap_or(0).max(0);
    u64::try_from(price.prompt_estimate.max(0).saturating_add(output)).unwrap_or(0)
}

/// A channel's key with its 0-based line number.
pub type Key<'c> = (usize, &'c Secret);

/// The key an attempt on `channel` uses (the `preferred` line when it is usable — a sticky
/// conversation's — else the next in turn) with its places on the channel's and that key's
/// limits. A key at its limit gives way to the next key in turn; `Err` when the channel is at
/// its limit, or every key is (the last refusal).
pub fn admit_channel<'c>(
    state: &AppState,
    channel: &'c RoutedChannel,
    tokens: u64,
    preferred: Option<u32>,
) -> Result<(Option<Key<'c>>, Admission), Refusal> {
    let mut first_refused = None;
    let mut preferred = preferred
        .and_then(|line| usize::try_from(line).ok())
        .and_then(|line| channel.key_on_line(line));
    loop {
        let key = preferred.take().or_else(|| channel.next_key());
        let line = key.map(|(line, _)| u32::try_from(line).unwrap_or(u32::MAX));
        match state.limits.admit_channel(channel.id(), line, tokens) {
            Ok(admission) => return Ok((key, admission)),
            // The channel itself is full, or the rotation came back to the first key refused.
            Err(refusal)
                if !matches!(refusal.scope, Scope::ChannelKey(..)) || first_refused == line =>
            {
                return Err(refusal);
            }
            Err(_) => {
                first_refused = first_refused.or(line);
            }
        }
    }
}

/// Puts the strictest rules' `x-ratelimit-*` values on `response`.
pub fn add_headers(response: &mut Response, headers: &[(&'static str, String)]) {
    for (name, value) in headers {
        if let Ok(value) = HeaderValue::from_str(value) {
            response
                .headers_mut()
                .insert(HeaderName::from_static(name), value);
        }
    }
}
