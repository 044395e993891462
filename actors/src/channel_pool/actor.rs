//! `ChannelPoolActor`: owns every channel and its health counters, publishes the routing table.
//!
//! State is built in `pre_start` from storage (a failure there fails the spawn). Storage work
//! runs on the blocking pool (`Store::read`/`write`); the actor awaits it, so messages are
//! applied strictly one after another and a status change is persisted before it is published.
//! Probes of the auto-enable re-test run in a separate task and come back as
//! [`ChannelPoolMsg::RetestDone`], so the actor is never blocked on an upstream.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use tollgate_storage::channels::other_info::{
    DisabledKey, fingerprint, with_disabled_key, with_status_reason, without_disabled_keys,
};
use tollgate_storage::channels::{self, Channel, STATUS_AUTO_DISABLED, STATUS_ENABLED};
use tollgate_storage::{ChannelId, Store};

use super::health::{Counters, HealthPolicy, Verdict, judge};
use super::msg::{ChannelPoolMsg, RetestSummary};
use super::outcome::{Outcome, OutcomeSource};
use super::routing_table::RoutingTable;
use super::{ChannelWatch, Prober};
use crate::ActorError;
use crate::options::{Options, OptionsSnapshot};
use crate::snapshot::Published;

/// The actor (stateless; see [`ChannelPoolState`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct ChannelPoolActor;

/// What the actor is started with.
pub struct ChannelPoolArgs {
    /// The database.
    pub store: Store,
    /// Options (health policy is read from the current snapshot on every outcome).
    pub options: Options,
    /// Sends the re-test probes.
    pub prober: Arc<dyn Prober>,
    /// Where the routing table is published (shared with the handle).
    pub published: Published<RoutingTable>,
    /// Period of the scheduled auto-enable re-test.
    pub retest_interval: Duration,
    /// How many channels have failures counted (shared with the handle).
    pub failing: Arc<AtomicUsize>,
    /// Told when a channel is auto-disabled, once installed (shared with the handle).
    pub watch: Arc<OnceLock<Arc<dyn ChannelWatch>>>,
    /// The route kinds a channel type serves (see [`RoutingTable::build_with`]).
    pub serves: fn(i32) -> u32,
}

/// The actor's state; only the actor touches it.
pub struct ChannelPoolState {
    /// The database.
    store: Store,
    /// Options publisher.
    options: Options,
    /// Re-test prober.
    prober: Arc<dyn Prober>,
    /// Every channel (all statuses), as last read or written by this actor.
    channels: BTreeMap<ChannelId, Arc<Channel>>,
    /// Key-rotation cursors, kept across rebuilds.
    cursors: HashMap<ChannelId, Arc<AtomicUsize>>,
    /// Consecutive transient failures.
    counters: Counters,
    /// The health policy and the options snapshot it was read from: rebuilt only when the
    /// options change, not on each of the relay's outcomes (it lower-cases every keyword).
    policy: Option<(Arc<OptionsSnapshot>, Arc<HealthPolicy>)>,
    /// The routing table readers use; written only here.
    published: Published<RoutingTable>,
    /// A scheduled re-test is in flight (scheduled runs never overlap).
    scheduled_retest_running: bool,
    /// Told when a channel is auto-disabled.
    watch: Arc<OnceLock<Arc<dyn ChannelWatch>>>,
    /// The route kinds a channel type serves.
    serves: fn(i32) -> u32,
}

fn now_unix() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Replaces any of the channel's key lines in `text`, so a reason never stores a key.
fn scrub(text: &str, channel: &Channel) -> String {
    channel
        .key_lines()
        .into_iter()
        .filter(|k| k.len() >= 4)
        .fold(text.to_owned(), |t, k| t.replace(k, "*****"))
}

impl ChannelPoolState {
    /// Publishes the routing table of `self.channels`, built from the published one (channels
    /// whose record kept its `Arc` keep their routed entry).
    fn republish(&mut self) {
        let cursors = &mut self.cursors;
        let table = self.published.load().rebuild(
            self.channels.values(),
            |id| Arc::clone(cursors.entry(id).or_default()),
            self.serves,
        );
        self.published.publish(table);
    }

    async fn reload(&mut self) -> Result<(), ActorError> {
        let all = self.store.read(channels::list_all).await?;
        let before = std::mem::take(&mut self.channels);
        // An unchanged record keeps its `Arc`, so the rebuild keeps its routed entry.
        let fresh: BTreeMap<ChannelId, Arc<Channel>> = all
            .into_iter()
            .map(|c| match before.get(&c.id) {
                Some(old) if **old == c => (c.id, Arc::clone(old)),
                _ => (c.id, Arc::new(c)),
            })
            .collect();
        self.counters.retain(|id| {
            fresh.get(&id).is_some_and(|c| {
                before.get(&id).map(|b| b.status) == Some(c.status) && c.is_enabled()
            })
        });
        self.cursors.retain(|id, _| fresh.contains_key(id));
        self.channels = fresh;
        self.republish();
        Ok(())
    }

    /// Re-reads only the channels `ids`: a changed record replaces the kept one (its health
    /// counter dropped when its status changed or it is no longer enabled, as
    /// [`Self::reload`] does), a removed one is dropped with its counter and cursor.
    async fn reload_ids(&mut self, ids: Vec<ChannelId>) -> Result<(), ActorError> {
        let read = self
            .store
            .read(move |rtx| channels::get_many(rtx, &ids))
            .await?;
        for (id, record) in read {
            let before = self.channels.get(&id).map(|b| b.status);
            match record {
                Some(c) => {
                    if before != Some(c.status) || !c.is_enabled() {
                        self.counters.retain(|other| other != id);
                    }
                    // An unchanged record keeps its `Arc`, so the rebuild keeps its entry.
                    if self.channels.get(&id).is_none_or(|old| **old != c) {
                        self.channels.insert(id, Arc::new(c));
                    }
                }
                None => {
                    self.counters.retain(|other| other != id);
                    self.cursors.remove(&id);
                    self.channels.remove(&id);
                }
            }
        }
        self.republish();
        Ok(())
    }

    /// The health policy of the current options.
    fn policy(&mut self) -> Arc<HealthPolicy> {
        let options = self.options.current();
        match &self.policy {
            Some((read_from, policy)) if Arc::ptr_eq(read_from, &options) => Arc::clone(policy),
            _ => {
                let policy = Arc::new(HealthPolicy::from_options(&options));
                self.policy = Some((options, Arc::clone(&policy)));
                policy
            }
        }
    }

    /// Applies the health rules to `outcome`; persists the verdict (and, for tests, the
    /// response and test times) and republishes when the status changed.
    async fn apply(&mut self, outcome: Outcome) -> Result<Verdict, ActorError> {
        let Some(channel) = self.channels.get(&outcome.channel).cloned() else {
            self.counters.publish();
            return Ok(Verdict::Keep);
        };
        let policy = self.policy();
        let verdict = match judge(&policy, &channel, &outcome, &mut self.counters) {
            Verdict::Disable(reason) => Verdict::Disable(scrub(&reason, &channel)),
            Verdict::DisableKey { index, reason } => Verdict::DisableKey {
                index,
                reason: scrub(&reason, &channel),
            },
            other => other,
        };
        let record_times = outcome.source != OutcomeSource::Relay;
        if verdict == Verdict::Keep && !record_times {
            return Ok(verdict);
        }
        let id = channel.id;
        let latency_ms = i64::try_from(outcome.latency.as_millis()).unwrap_or(i64::MAX);
        let decided = verdict.clone();
        let updated = self
            .store
            .write(move |wtx| {
                let Some(mut c) = channels::get_rw(wtx, id)? else {
                    return Ok::<_, ActorError>(None);
                };
                let now = now_unix();
                if record_times {
                    c.response_time = latency_ms;
                    c.test_time = now;
                }
                match &decided {
                    Verdict::Disable(reason) if c.status == STATUS_ENABLED => {
                        c.status = STATUS_AUTO_DISABLED;
                        c.other_info = with_status_reason(&c.other_info, reason, now);
                    }
                    Verdict::Enable if c.status == STATUS_AUTO_DISABLED => {
                        c.status = STATUS_ENABLED;
                        c.other_info = without_disabled_keys(&c.other_info);
                    }
                    Verdict::DisableKey { index, reason } if c.status == STATUS_ENABLED => {
                        if let Some(key) = c.key_lines().get(*index) {
                            let record = DisabledKey {
                                index: *index,
                                fingerprint: fingerprint(key),
                                reason: reason.clone(),
                                time: now,
                            };
                            c.other_info = with_disabled_key(&c.other_info, record);
                        }
                    }
                    _ => {}
                }
                channels::update(wtx, &c)?;
                Ok(Some(c))
            })
            .await?;
        let Some(updated) = updated else {
            return Ok(Verdict::Keep);
        };
        let changed = updated.status != channel.status || updated.other_info != channel.other_info;
        match &verdict {
            Verdict::Disable(reason) if changed => {
                tracing::warn!(channel = %id, name = %updated.name, %reason, "channel auto-disabled");
                if let Some(watch) = self.watch.get() {
                    watch.auto_disabled(id, &updated.name, reason);
                }
            }
            Verdict::DisableKey { index, reason } if changed => {
                tracing::warn!(channel = %id, name = %updated.name, key_line = index + 1, %reason, "channel key auto-disabled");
            }
            Verdict::Enable if changed => {
                tracing::info!(channel = %id, name = %updated.name, "channel re-enabled");
            }
            _ => {}
        }
        self.channels.insert(id, Arc::new(updated));
        if changed {
            self.republish();
        }
        Ok(verdict)
    }

    fn start_retest(
        &mut self,
        myself: &ActorRef<ChannelPoolMsg>,
        scheduled: bool,
        reply: Option<RpcReplyPort<Result<RetestSummary, ActorError>>>,
    ) {
        if scheduled
            && (self.scheduled_retest_running
                || !self.options.current().flag("AutomaticEnableChannelEnabled"))
        {
            return;
        }
        self.scheduled_retest_running |= scheduled;
        let candidates: Vec<Arc<Channel>> = self
            .channels
            .values()
            .filter(|c| c.status == STATUS_AUTO_DISABLED)
            .cloned()
            .collect();
        let prober = Arc::clone(&self.prober);
        let myself = myself.clone();
        tokio::spawn(async move {
            let mut outcomes = Vec::with_capacity(candidates.len());
            for channel in candidates {
                let mut outcome = prober.probe(channel).await;
                outcome.source = OutcomeSource::Retest;
                outcomes.push(outcome);
            }
            if let Err(e) = myself.cast(ChannelPoolMsg::RetestDone { outcomes, reply }) {
                tracing::debug!(error = %e, "channel pool stopped before a re-test finished");
            }
        });
    }

    async fn finish_retest(&mut self, outcomes: Vec<Outcome>) -> Result<RetestSummary, ActorError> {
        let mut summary = RetestSummary {
            tested: outcomes.len(),
            enabled: 0,
        };
        for outcome in outcomes {
            if self.apply(outcome).await? == Verdict::Enable {
                summary.enabled += 1;
            }
        }
        Ok(summary)
    }
}

fn answer<T: Send + 'static>(reply: Option<RpcReplyPort<T>>, value: T) {
    if let Some(reply) = reply
        && reply.send(value).is_err()
    {
        tracing::debug!("a channel pool caller went away before its answer");
    }
}

impl Actor for ChannelPoolActor {
    type Msg = ChannelPoolMsg;
    type State = ChannelPoolState;
    type Arguments = ChannelPoolArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        let mut state = ChannelPoolState {
            store: args.store,
            options: args.options,
            prober: args.prober,
            channels: BTreeMap::new(),
            cursors: HashMap::new(),
            counters: Counters::new(args.failing),
            policy: None,
            published: args.published,
            scheduled_retest_running: false,
            watch: args.watch,
            serves: args.serves,
        };
        state.reload().await?;
        myself.send_interval(args.retest_interval, || ChannelPoolMsg::Retest {
            scheduled: true,
            reply: None,
        });
        Ok(state)
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            ChannelPoolMsg::Reload { reply } => {
                let result = state.reload().await;
                if let Err(e) = &result {
                    tracing::error!(error = %e, "reloading channels failed");
                }
                answer(reply, result);
            }
            ChannelPoolMsg::ReloadIds { ids, reply } => {
                let result = state.reload_ids(ids).await;
                if let Err(e) = &result {
                    tracing::error!(error = %e, "reloading channels failed");
                }
                answer(Some(reply), result);
            }
            ChannelPoolMsg::Report(outcome) => {
                if let Err(e) = state.apply(outcome).await {
                    tracing::error!(error = %e, "applying a channel outcome failed");
                }
            }
            ChannelPoolMsg::RecordTest { outcome, reply } => {
                answer(Some(reply), state.apply(outcome).await);
            }
            ChannelPoolMsg::Retest { scheduled, reply } => {
                state.start_retest(&myself, scheduled, reply);
            }
            ChannelPoolMsg::RetestDone { outcomes, reply } => {
                if reply.is_none() {
                    state.scheduled_retest_running = false;
                }
                let result = state.finish_retest(outcomes).await;
                if let Err(e) = &result {
                    tracing::error!(error = %e, "applying re-test outcomes failed");
                }
                answer(reply, result);
            }
        }
        Ok(())
    }
}
