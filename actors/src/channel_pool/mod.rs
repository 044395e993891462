//! The channel pool: one actor owns every channel and its health and publishes an immutable
//! [`RoutingTable`]; request tasks read the table lock-free and [`select`] a channel; outcomes
//! are cast back with [`ChannelPool::report`].
//!
//! - [`routing_table`]: the table and the pure selection function.
//! - [`channel_json`]: a channel's JSON fields, parsed once per table build.
//! - [`health`]: the pure auto-disable / auto-enable rules.
//! - [`msg`]: the messages and the [`Outcome`] type.
//! - `actor`: the actor itself (private; use the [`ChannelPool`] handle).
//!
//! Admin writes go to storage first (the console's service functions own those transactions),
//! then [`ChannelPool::reload_ids`] (the channels written: reads only those) or
//! [`ChannelPool::reload`] (bulk writes: reads every record) republishes. Status changes decided by the health rules are
//! persisted by the actor itself.

mod actor;
pub mod channel_json;
pub mod health;
pub mod msg;
pub mod outcome;
pub mod routing_table;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use ractor::rpc::CallResult;
use ractor::{Actor, ActorRef};
use tokio::task::JoinHandle;
use tollgate_storage::channels::Channel;
use tollgate_storage::{ChannelId, Store};

pub use health::Verdict;
pub use msg::{ChannelPoolMsg, RetestSummary};
pub use outcome::{Outcome, OutcomeSource};
pub use routing_table::{RoutedChannel, RoutingTable, select, select_for};

use self::actor::{ChannelPoolActor, ChannelPoolArgs};
use crate::ActorError;
use crate::options::Options;
use crate::snapshot::Published;

/// Period of the scheduled auto-enable re-test of auto-disabled channels (runs only while
/// AutomaticEnableChannelEnabled is on).
pub const RETEST_INTERVAL: Duration = Duration::from_secs(10 * 60);

/// How long a reload or a recorded test may wait for the actor.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a whole manual re-test run may take (probes are sequential).
const RETEST_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// A boxed probe future.
pub type ProbeFuture<'a> = Pin<Box<dyn Future<Output = Outcome> + Send + 'a>>;

/// Sends a minimal real request to a channel's upstream (implemented by the HTTP layer, which
/// owns the HTTP clients; this crate knows nothing about HTTP).
pub trait Prober: Send + Sync + 'static {
    /// Probes `channel` and reports what happened.
    fn probe(&self, channel: Arc<Channel>) -> ProbeFuture<'_>;
}

/// Handle on the channel pool actor. Cheap to clone.
#[derive(Clone)]
pub struct ChannelPool {
    /// The actor (unnamed; handed around explicitly).
    actor: ActorRef<ChannelPoolMsg>,
    /// The routing table the actor publishes.
    table: Published<RoutingTable>,
    /// How many channels have failures in a row counted (kept by the actor).
    failing: Arc<AtomicUsize>,
    /// Told when a channel is auto-disabled (root's alert), once installed.
    watch: Arc<OnceLock<Arc<dyn ChannelWatch>>>,
}

/// Told when the health rules auto-disable a channel (after the change is stored). Runs on the
/// actor, so it must only hand the work elsewhere.
pub trait ChannelWatch: Send + Sync {
    /// Channel `id` (`name`) was auto-disabled because of `reason`.
    fn auto_disabled(&self, id: ChannelId, name: &str, reason: &str);
}

fn rpc_error<T>(result: Result<CallResult<T>, impl std::fmt::Display>) -> Result<T, ActorError> {
    match result {
        Ok(CallResult::Success(value)) => Ok(value),
        Ok(CallResult::Timeout) => Err(ActorError::Rpc("the channel pool timed out".into())),
        Ok(CallResult::SenderError) => Err(ActorError::Rpc("the channel pool stopped".into())),
        Err(e) => Err(ActorError::Rpc(format!(
            "the channel pool is unreachable: {e}"
        ))),
    }
}

impl ChannelPool {
    /// Loads every channel and starts the actor (unnamed). The join handle completes when the
    /// actor has stopped (and released its storage handle). `serves` gives the route kinds a
    /// channel type serves (capability routing; this crate knows nothing about channel types).
    pub async fn spawn(
        store: Store,
        options: Options,
        prober: Arc<dyn Prober>,
        serves: fn(i32) -> u32,
    ) -> Result<(ChannelPool, JoinHandle<()>), ActorError> {
        let table = Published::new(RoutingTable::default());
        let failing = Arc::new(AtomicUsize::new(0));
        let watch = Arc::new(OnceLock::new());
        let args = ChannelPoolArgs {
            watch: Arc::clone(&watch),
            store,
            options,
            prober,
            published: table.clone(),
            retest_interval: RETEST_INTERVAL,
            failing: failing.clone(),
            serves,
        };
        let (actor, join) = Actor::spawn(None, ChannelPoolActor, args)
            .await
            .map_err(|e| ActorError::Spawn(e.to_string()))?;
        Ok((
            ChannelPool {
                actor,
                table,
                failing,
                watch,
            },
            join,
        ))
    }

    /// Installs what is told about auto-disabled channels (the first call wins).
    pub fn watch_channels(&self, watch: Arc<dyn ChannelWatch>) {
        let _ = self.watch.set(watch);
    }

    /// The published routing table.
    pub fn table(&self) -> &Published<RoutingTable> {
        &self.table
    }

    /// Casts an upstream outcome of a relayed request (never waits). A relayed success is not
    /// sent while no channel has failures counted: it could only reset a count (there is none)
    /// or re-enable an auto-disabled channel, which routing never picks (re-tests do that). So
    /// the common request costs the actor nothing: no message, no wake-up, no channel copy.
    pub fn report(&self, outcome: Outcome) {
        if outcome.error.is_some() {
            // Counted at once, so the successes that follow go to the actor (to reset the
            // count) even before it has taken this failure in; it then publishes the true
            // number.
            self.failing.fetch_add(1, Ordering::Relaxed);
        } else if outcome.source == OutcomeSource::Relay
            && self.failing.load(Ordering::Relaxed) == 0
        {
            return;
        }
        if let Err(e) = self.actor.cast(ChannelPoolMsg::Report(outcome)) {
            tracing::warn!(error = %e, "channel pool unreachable; outcome dropped");
        }
    }

    /// Re-reads the channels from storage; returns once the new table is published.
    pub async fn reload(&self) -> Result<(), ActorError> {
        let call = self
            .actor
            .call(
                |reply| ChannelPoolMsg::Reload { reply: Some(reply) },
                Some(CALL_TIMEOUT),
            )
            .await;
        rpc_error(call)?
    }

    /// Re-reads only the channels `ids` from storage (created, edited or deleted ones: a
    /// removed id is dropped) and returns once the new table is published. Equivalent to
    /// [`ChannelPool::reload`] when nothing else changed in storage since the last reload.
    pub async fn reload_ids(&self, ids: &[ChannelId]) -> Result<(), ActorError> {
        let ids = ids.to_vec();
        let call = self
            .actor
            .call(
                |reply| ChannelPoolMsg::ReloadIds { ids, reply },
                Some(CALL_TIMEOUT),
            )
            .await;
        rpc_error(call)?
    }

    /// Records an admin test's outcome (response time, test time, health rules).
    pub async fn record_test(&self, outcome: Outcome) -> Result<Verdict, ActorError> {
        let call = self
            .actor
            .call(
                |reply| ChannelPoolMsg::RecordTest { outcome, reply },
                Some(CALL_TIMEOUT),
            )
            .await;
        rpc_error(call)?
    }

    /// Re-tests every auto-disabled channel now and waits for the outcomes to be applied
    /// (re-enabling needs AutomaticEnableChannelEnabled). The scheduled run does the same
    /// every [`RETEST_INTERVAL`].
    pub async fn retest_now(&self) -> Result<RetestSummary, ActorError> {
        let call = self
            .actor
            .call(
                |reply| ChannelPoolMsg::Retest {
                    scheduled: false,
                    reply: Some(reply),
                },
                Some(RETEST_TIMEOUT),
            )
            .await;
        rpc_error(call)?
    }

    /// Whether the actor is running (its status read, no message sent).
    pub fn is_alive(&self) -> bool {
        self.actor.get_status() == ractor::ActorStatus::Running
    }

    /// Asks the actor to stop; await the join handle from [`ChannelPool::spawn`] to know when.
    pub fn stop(&self) {
        self.actor.stop(None);
    }
}
