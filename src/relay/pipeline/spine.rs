//! The relay's spine, written once ([`run`]): admit → detach → pick → forward → meter → answer.
//! Every route family that relays a request for money is a [`Plan`]; the spine owns the
//! reservation from admission until the meter settles it, and answers exactly once.
//!
//! | phase | where | what the plan says |
//! |---|---|---|
//! | admit | [`crate::relay::pipeline::admission::admit`] | [`Plan::ask`] (model, prompt estimate, output bound, needs), [`Plan::texts`] |
//! | detach | [`crate::relay::pipeline::detach::run`] | — (the rest runs in a task the client cannot cancel) |
//! | prepare | [`Plan::prepare`] | work before the first attempt (remote media inlined) |
//! | pick, forward | [`crate::relay::pipeline::attempt::forward`] | [`Plan::need`] (capability, route), [`Plan::build`] per channel |
//! | meter | [`crate::relay::pipeline::meter::Meter::new`] | [`Plan::prompt`] (the prompt count settlement uses) |
//! | answer, settle | [`Plan::answer`] | reads the answer into the meter, settles, answers the client |
//!
//! Token counts, which are free, are the spine's second kind of plan ([`count::Count`], run by
//! [`count::run`]): their own rate guard instead of the reservation, no meter, no failover.

use std::future::Future;
use std::time::Instant;

use axum::response::Response;
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use crate::channel_types::serve::Need;
use crate::error::RelayError;
use crate::relay::adaptor::Credential;
use crate::relay::measure::prompt::Prompt;
use crate::relay::pipeline::admission::{self, Admission, Ask, Price};
use crate::relay::pipeline::attempt::{self, Build, Pending, Won};
use crate::relay::pipeline::auth::Caller;
use crate::relay::pipeline::detach::{self, Presence};
use crate::relay::pipeline::meter::Meter;
use crate::relay::wire::Wire;
use crate::state::AppState;

/// One route family's part of a relayed request: what it asks, what a channel must serve, how
/// it builds the upstream request for a channel and how it answers. [`run`] does the rest.
///
/// Extending the spine:
/// - **Admission rules** (rate limits, budgets, concurrency): a check on the request goes into
///   [`crate::relay::pipeline::admission::admit`], which every plan passes through once with its [`Ask`]; a
///   channel that must not be used (e.g. at its limit) is skipped where the attempt loop picks
///   ([`crate::relay::pipeline::pick::pick`] / the loop's `excluded` list in [`crate::relay::pipeline::attempt::forward`]), so no
///   plan changes.
/// - **Asynchronous task submits** (Midjourney, Suno, video): a plan whose [`Plan::answer`]
///   reads the upstream's task id and settles the meter together with the task row — the
///   charge and the row in the settlement's one transaction — instead of
///   [`Meter::settle`]; admission, failover and the reservation's release on failure are the
///   spine's as for every plan.
pub trait Plan: Send + Sync + Sized + 'static {
    /// The model the client asked for.
    fn model(&self) -> &str;

    /// What admission reads (called once).
    fn ask(&self) -> Ask<'_>;

    /// The prompt's texts for the sensitive-word check (called only when it runs).
    fn texts(&self) -> Vec<&str>;

    /// What a channel must serve for this request (capability and client route).
    fn need(&self) -> Need;

    /// The body format a channel of `channel_type` takes for `upstream_model` (the model after
    /// the channel's mapping), `None` when the plan cannot speak to it (the attempt loop skips
    /// the channel). Default: the adaptor's ([`crate::relay::adaptor::wire`]); a task submit
    /// speaks its family's own API.
    fn wire(channel_type: i32, upstream_model: &str) -> Option<Wire> {
        crate::relay::adaptor::wire(channel_type, upstream_model)
    }

    /// Whether a crash before the answer settles charges the request's prompt (the crash
    /// journal's record of the reservation). A task submit says no: the client never learnt
    /// of a task, so nothing is charged for it; once accepted, its settlement is journalled
    /// with the task.
    fn crash_charge(&self) -> bool {
        true
    }

    /// The spend ceiling in US dollars of the body's `max_cost`, which the plan took out of
    /// the body it forwards ([`crate::relay::pipeline::max_cost`]); the `X-Max-Cost` header wins
    /// over it.
    fn max_cost(&self) -> Option<f64> {
        None
    }

    /// The client asked for a streamed answer.
    fn stream(&self) -> bool {
        false
    }

    /// When the request arrived.
    fn started(&self) -> Instant;

    /// The client's body as received, for sticky routing's conversation key
    /// ([`crate::sticky`]); `None`: the plan's requests are not routed by conversation.
    fn sticky_body(&self) -> Option<&[u8]> {
        None
    }

    /// Work between admission and the first attempt (in the detached task); an error releases
    /// the reservation and is answered.
    fn prepare(
        &mut self,
        _state: &AppState,
        _caller: &Caller,
    ) -> impl Future<Output = Result<(), RelayError>> + Send {
        async { Ok(()) }
    }

    /// The upstream request for `channel` (of upstream `wire`, the model mapped to
    /// `upstream_model`, its credential `key`), or why this channel cannot take it.
    fn build(
        &self,
        state: &AppState,
        price: &Price,
        channel: &RoutedChannel,
        wire: Wire,
        upstream_model: &str,
        key: &Credential<'_>,
    ) -> Result<Build, RelayError>;

    /// The prompt count the meter settles with (taken once, after the forward won).
    fn prompt(&mut self) -> Prompt;

    /// Answers the client from the upstream's answer, settling through its meter.
    fn answer(
        self,
        state: &AppState,
        won: Answer,
        presence: &Presence,
    ) -> impl Future<Output = Result<Response, RelayError>> + Send;
}

/// The upstream's successful answer as a plan receives it.
pub struct Answer {
    /// The upstream's answer (2xx).
    pub resp: reqwest::Response,
    /// The upstream wire of the channel that answered.
    pub wire: Wire,
    /// The channel that answered.
    pub routed: std::sync::Arc<RoutedChannel>,
    /// The request's money until it settles.
    pub meter: Meter,
    /// How the request was priced at admission.
    pub price: Price,
}

/// Relays one request of `caller` as `plan` says: admits it, then — in a task of its own the
/// client cannot cancel — forwards it with failover and answers it through the meter. A failed
/// forward (or preparation) drops the reservation, which releases it.
pub async fn run<P: Plan>(
    state: &AppState,
    caller: Caller,
    plan: P,
) -> Result<Response, RelayError> {
    // Asked once: on the adaptor paths it estimates the prompt.
    let ask = plan.ask();
    // The group and model rules (their queues); the user's and the key's limits are checked
    // in the reservation's critical section.
    let limited = crate::rate_limit::admit(state, &caller, &ask).await?;
    let crash_charge = plan.crash_charge();
    let max_cost = caller.max_cost.or_else(|| plan.max_cost());
    let admitted = Box::pin(admission::admit(
        state,
        &caller,
        (ask, max_cost),
        crash_charge,
        || plan.texts(),
    ))
    .await;
    let Admission { price, mut hold } = match admitted {
        Ok(admitted) => admitted,
        Err(e) => {
            // A refused request uses nothing of the rules' windows.
            limited.undo();
            return Err(e);
        }
    };
    // The rate limits' places end with the reservation (a stream's at its last byte).
    hold.keep_limits(limited);
    let headers = hold.limit_headers();
    let worker = state.clone();
    let mut response = detach::run(state, move |presence| async move {
        forward(worker, caller, plan, (price, hold), presence).await
    })
    .await?;
    crate::rate_limit::add_headers(&mut response, &headers);
    Ok(response)
}

/// The detached part of [`run`].
async fn forward<P: Plan>(
    state: AppState,
    caller: Caller,
    mut plan: P,
    (price, hold): (Price, tollgate_actors::quota::Hold),
    presence: Presence,
) -> Result<Response, RelayError> {
    let state = &state;
    plan.prepare(state, &caller).await?;
    let conversation =
        crate::sticky::conversation(state, &caller, plan.model(), plan.sticky_body());
    let pending = Pending {
        hold,
        stream: plan.stream(),
        started: plan.started(),
        wire: P::wire,
        conversation,
    };
    // The attempt loop's and the answer's futures are boxed: held inline they made this task's
    // future ~10 KB, copied whole at its spawn and at every await that moved one in.
    let won = Box::pin(attempt::forward(
        state,
        &caller,
        plan.model(),
        (plan.need(), &price),
        pending,
        |channel, wire, upstream_model, key| {
            plan.build(state, &price, channel, wire, upstream_model, key)
        },
    ))
    .await?;
    let Won {
        resp,
        wire,
        routed,
        ctx,
        hold,
    } = won;
    let meter = Meter::new(ctx, hold, plan.prompt());
    let answer = Answer {
        resp,
        wire,
        routed,
        meter,
        price,
    };
    Box::pin(plan.answer(state, answer, &presence)).await
}

pub mod count;

#[cfg(test)]
mod tests;
