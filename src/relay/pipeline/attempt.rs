//! The attempt loop every relay route shares ([`forward`]): picks channels ([`crate::relay::pipeline::pick`])
//! with failover down the priority tiers (RetryTimes, retryable failures only, only before any
//! byte reached the client), makes each channel's key usable ([`crate::relay::adaptor::authorize`]),
//! sends what the route builds for it, and reports every outcome to the channel pool
//! ([`crate::relay::pipeline::outcome`]). The winner ([`Won`]) owns the reservation and the settlement context,
//! so a route only meters and answers it; a failed forward drops the reservation, releasing it.

use std::time::{Duration, Instant};

use tollgate_actors::channel_pool::routing_table::RoutedChannel;
use tollgate_actors::limiter::sticky::Stuck;
use tollgate_actors::quota::Hold;

use crate::channel_types::serve::Need;
use crate::error::RelayError;
use crate::relay::adaptor::{self, Conversation, Credential, Outbound};
use crate::relay::pipeline::admission::Price;
use crate::relay::pipeline::auth::Caller;
use crate::relay::pipeline::failure;
use crate::relay::pipeline::outcome::{mapped_status, report, retryable, upstream_message};
use crate::relay::pipeline::pick::{mapped_model, no_channel, pick_stuck, too_small};
use crate::relay::pipeline::settle::{Attempt, SettleCtx};
use crate::relay::wire::{self, Wire};
use crate::state::AppState;
use crate::upstream::no_answer;

/// What the attempt loop should do with a channel.
pub enum Build {
    /// Send this request.
    Send(Box<reqwest::RequestBuilder>),
    /// The relay cannot use this channel (our limitation): try another, blame nobody.
    Skip(RelayError),
    /// No further attempt is possible (e.g. a streamed upload is already spent).
    Stop,
}

/// What a request brings to the attempt loop besides its route: the reservation admission
/// made and what its settlement needs to know.
pub struct Pending {
    /// The reservation (released when the forward fails).
    pub hold: Hold,
    /// The client asked for a streamed answer.
    pub stream: bool,
    /// When the request arrived.
    pub started: Instant,
    /// The body format of a channel type for a model, `None`: not one the route speaks to
    /// ([`crate::relay::pipeline::spine::Plan::wire`]).
    pub wire: fn(i32, &str) -> Option<Wire>,
    /// The conversation sticky routing keeps on one channel ([`crate::sticky::conversation`]).
    pub conversation: Option<u64>,
}

/// A successful upstream answer, how it was reached, and what settles it.
pub struct Won {
    /// The upstream's answer (2xx).
    pub resp: reqwest::Response,
    /// The upstream wire of the channel that answered.
    pub wire: Wire,
    /// The channel that answered (its keys are masked in in-band error text).
    pub routed: std::sync::Arc<RoutedChannel>,
    /// The settlement context: model names, channel, attempts, price, counters.
    pub ctx: SettleCtx,
    /// The reservation the answer settles.
    pub hold: Hold,
}

/// The attempt loop: picks channels that can serve `need` (pinned, else down the priority tiers
/// skipping those tried and those whose `max_input_tokens` is below the prompt, and — without
/// using an attempt — those whose rate limits or whose keys' are full,
/// [`crate::rate_limit::admit_channel`]), makes the
/// channel's key usable ([`adaptor::authorize`]: a Vertex token, AWS credentials), sends what
/// `build` makes for each, reports every outcome to the channel pool, and retries retryable
/// failures up to `price.retries` times. `Err` is the last upstream's error (or why no channel
/// could be tried: a 400 when the model has channels but none can serve the route), and
/// `pending`'s reservation is then dropped, which releases it; `Ok` carries it with the
/// settlement context ([`Won`]).
pub async fn forward<F>(
    state: &AppState,
    caller: &Caller,
    model: &str,
    (need, price): (Need, &Price),
    pending: Pending,
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
    // A channel or key at its rate limit is skipped without using an attempt; when no channel
    // could be tried, the client gets the limit's refusal.
    let tokens = crate::rate_limit::channel_tokens(price);
    let mut at_limit = None;
    // Sticky routing: (the conversation, the most conversations held) and where it went last.
    let sticky = pending
        .conversation
        .zip(crate::sticky::settings(state))
        .map(|(conversation, (entries, ttl))| (conversation, entries, ttl));
    let stuck = sticky.and_then(|(c, _, ttl)| state.limits.sticky().get(c, ttl));
    let mut attempt = 0;
    while attempt <= price.retries {
        let Some(channel) = pick_stuck(
            &table,
            caller,
            model,
            (need.bits, attempt),
            &excluded,
            stuck,
        ) else {
            break;
        };
        excluded.push(channel.id());
        let preferred = match stuck {
            Some(Stuck::To(id, line)) if id == channel.id() => line,
            _ => None,
        };
        let admitted = crate::rate_limit::admit_channel(state, &channel, tokens, preferred);
        let (key, limited) = match admitted {
            Ok(admitted) => admitted,
            Err(refusal) => {
                at_limit = Some(refusal);
                if caller.pinned.is_some() {
                    break;
                }
                continue;
            }
        };
        attempt += 1;
        tried.push(channel.id());
        let upstream_model = mapped_model(&channel, model);
        let Some(wire) = (pending.wire)(channel.channel.channel_type, &upstream_model) else {
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
        let key_text = key.map_or("", |(_, k)| k.expose());
        let started = Instant::now();
        let credential = match adaptor::authorize(&state.http, &channel, key_text).await {
            Ok(credential) => credential,
            Err(failure) => {
                // The key could not be made usable (a refused token grant, a malformed key):
                // the channel's fault, reported like an upstream answer of that status.
                let message = crate::relay::pipeline::redact::redact(
                    &failure.message,
                    channel.channel.key_lines(),
                );
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
            Build::Send(req) => req,
            Build::Skip(e) => {
                attempts.push(timeline(&channel, 0, Instant::now(), "unsupported"));
                last_error = Some(e);
                continue;
            }
            Build::Stop => break,
        };
        let sent = Instant::now();
        // The native types' answers come out as OpenAI's (`adaptor::receive`); Spark's
        // WebSocket conversation answers as an HTTP upstream would (`adaptor::outbound`).
        let channel_type = channel.channel.channel_type;
        let answered = match adaptor::outbound(channel_type, req, &upstream_model, pending.stream) {
            Outbound::Http(req) => {
                match send(state.http.direct_for(&channel.channel.proxy), *req, timeout).await {
                    Ok(resp) => {
                        Ok(adaptor::receive(channel_type, resp, &upstream_model, timeout).await)
                    }
                    Err(e) => Err(e),
                }
            }
            Outbound::Conversation(talk) => converse(talk, timeout).await,
        };
        if let Some((conversation, entries, _)) = sticky {
            let map = state.limits.sticky();
            match &answered {
                Ok(resp) if resp.status().is_success() => {
                    let line = key.and_then(|(line, _)| u32::try_from(line).ok());
                    map.answered(conversation, channel.id(), line, entries);
                }
                Ok(resp) if resp.status().as_u16() != 429 && !resp.status().is_server_error() => {}
                _ => map.failed(conversation, channel.id(), entries),
            }
        }
        match answered {
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
                let cell = count_attempts(state, Some(channel.id()), model, &attempts);
                let ctx = SettleCtx {
                    caller: caller.clone(),
                    model: model.to_owned(),
                    upstream_model,
                    channel: channel.id(),
                    tried,
                    attempts,
                    pricing: price.pricing,
                    components: price.components,
                    default_ratio: price.default_ratio,
                    group_ratio: price.group_ratio,
                    quota_per_unit: price.quota_per_unit,
                    stream: pending.stream,
                    started: pending.started,
                    first_byte: None,
                    log_enabled: price.log_enabled,
                    cell,
                    output_limit: price.output.tokens.map(|t| (t, price.output.write)),
                    ceiling: price.output.ceiling.filter(|_| pending.stream),
                };
                // The channel's places end with the reservation, as the caller's do.
                let mut hold = pending.hold;
                hold.keep_limits(limited);
                return Ok(Won {
                    resp,
                    wire,
                    routed: channel,
                    ctx,
                    hold,
                });
            }
            Ok(resp) => {
                let status = wire::error_status(wire, resp.status().as_u16());
                let health =
                    adaptor::health_status(channel.channel.channel_type, status, resp.headers());
                let text = failure::error_body(resp, timeout).await;
                adaptor::refused(&state.http, &channel, key_text, &credential, &text);
                // A provider's documented error code says more than its status (an account in
                // arrears answered 429 like a rate limit): `channel_types::errors`.
                let (status, health, retry) = match crate::channel_types::errors::judge(
                    channel.channel.channel_type,
                    status,
                    &text,
                ) {
                    Some(judged) => (judged.client, judged.health, judged.retry),
                    None => (status, health, retryable(status)),
                };
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
                if !retry {
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
    let error = last_error
        .or_else(|| at_limit.as_ref().map(crate::rate_limit::refused))
        .unwrap_or_else(|| no_channel(&table, caller, model, need));
    let cell = count_attempts(state, tried.last().copied(), model, &attempts);
    cell.failed
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    failure::record(state, caller, model, &tried, attempts, &error);
    Err(error)
}

/// Counts a request's failed attempts by class and its retries for `/metrics`, and returns
/// the counters of `(channel, model)` (`channel`: the one that answered or was tried last).
fn count_attempts(
    state: &AppState,
    channel: Option<tollgate_storage::ChannelId>,
    model: &str,
    attempts: &[Attempt],
) -> std::sync::Arc<crate::metrics::relay::Cell> {
    let relay = state.metrics.relay();
    for attempt in attempts.iter().filter(|a| !a.e.is_empty()) {
        relay.upstream_error(attempt.e);
    }
    let cell = relay.cell(state.channel_pool.table(), channel, model);
    relay.retried(&cell, attempts.len());
    cell
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

/// Sends the request (on `direct`, the channel's direct client, when it has one and the body
/// is in memory; see [`crate::upstream::DirectClient`]); `Err` carries a description and the
/// error class (`connect`, `timeout`, `network`) when no HTTP answer came back in time.
pub async fn send(
    direct: Option<&crate::upstream::DirectClient>,
    req: reqwest::RequestBuilder,
    timeout: Duration,
) -> Result<reqwest::Response, (String, &'static str)> {
    let answered = async {
        let Some(direct) = direct else {
            return req.send().await.map_err(no_answer);
        };
        let (client, built) = req.build_split();
        let built = built.map_err(no_answer)?;
        // A copy to send through reqwest if the upstream answers with a redirect.
        let Some(again) = built.try_clone() else {
            return client.execute(built).await.map_err(no_answer);
        };
        match direct.send(built).await {
            Ok(Some(resp)) => Ok(resp),
            Ok(None) => client.execute(again).await.map_err(no_answer),
            Err(e) => Err(e.described()),
        }
    };
    within(timeout, answered).await
}

/// `answered`, or a `timeout` failure when it takes longer than `timeout`.
async fn within(
    timeout: Duration,
    answered: impl Future<Output = Result<reqwest::Response, (String, &'static str)>>,
) -> Result<reqwest::Response, (String, &'static str)> {
    tokio::time::timeout(timeout, answered)
        .await
        .unwrap_or_else(|_| {
            Err((
                format!("no answer within {} s", timeout.as_secs()),
                "timeout",
            ))
        })
}

/// Awaits a conversation ([`Outbound::Conversation`]) within `timeout`, erring as [`send`].
pub async fn converse(
    talk: Conversation,
    timeout: Duration,
) -> Result<reqwest::Response, (String, &'static str)> {
    within(timeout, talk).await
}
