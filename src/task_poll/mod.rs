//! The task poller (reference §7): every interval (15 s by default, `--task-poll-interval-ms`)
//! while unfinished tasks exist, it claims them with a lease
//! ([`tollgate_storage::tasks::claim`]), asks each channel about its tasks ([`fetch`]) and
//! stores what it learns; a task that failed upstream, outlived `TaskTimeoutMinutes`, missed
//! the Midjourney hour or lost its channel ends as FAILURE and is refunded once ([`rules`]),
//! through the quota book so the in-memory balances follow; a video that finished at another
//! length than it was charged for has the difference charged or refunded once, with its
//! completion ([`rules::rebill`]).
//!
//! A channel whose status call fails is left alone for twice as long each time, up to
//! [`BACKOFF_MAX`], and its tasks' leases are returned. Tasks live in the database, so a
//! restart loses none: the poller first returns the leases of its own node (nothing of a node
//! that just started is in flight) and polls them again at once.
//!
//! One task runs the loop (the single owner of the backoff table); the handle wakes it and
//! stops it.

pub mod fetch;
pub mod rules;
pub mod stats;
pub mod wire;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tollgate_actors::options::Options;
use tollgate_actors::quota::QuotaBook;
use tollgate_storage::tasks::{self, FAILURE, Task, TaskKind, TaskUpdate, query};
use tollgate_storage::{ChannelId, StorageError, Store, channels};

use self::stats::TaskStats;
use crate::upstream::HttpClients;

/// This node's name on the leases it takes. One node today; scale-out gives each its own.
pub const NODE: &str = "local";

/// How long a claim lasts, in seconds: longer than a round's status calls can take.
pub const LEASE_SECS: i64 = 120;

/// Most tasks claimed per round (the incumbent's TASK_QUERY_LIMIT order).
pub const ROUND_MAX: usize = 1_000;

/// The longest the poller leaves a failing channel alone.
pub const BACKOFF_MAX: Duration = Duration::from_secs(300);

/// What the poller needs.
#[derive(Clone)]
pub struct PollerDeps {
    /// The database.
    pub store: Store,
    /// Refunds go through it (ledgers follow storage).
    pub quota: QuotaBook,
    /// `TaskTimeoutMinutes`.
    pub options: Options,
    /// Outbound clients (per-channel proxies).
    pub http: HttpClients,
    /// Time between rounds.
    pub interval: Duration,
    /// Unix seconds now.
    pub clock: fn() -> i64,
}

/// Handle on the poller. Cheap to clone.
#[derive(Clone)]
pub struct TaskPoller {
    /// Published for `/metrics`.
    stats: Arc<TaskStats>,
    /// Wakes the loop for a round at once (and to see `stopping`).
    wake: Arc<Notify>,
    /// Set by [`TaskPoller::stop`]; the loop ends after its current round.
    stopping: Arc<AtomicBool>,
}

impl TaskPoller {
    /// Starts the loop; it runs until [`TaskPoller::stop`] (the returned task then ends after
    /// its current round) or until the task is aborted.
    pub fn spawn(deps: PollerDeps) -> (TaskPoller, JoinHandle<()>) {
        let poller = TaskPoller {
            stats: Arc::new(TaskStats::default()),
            wake: Arc::new(Notify::new()),
            stopping: Arc::new(AtomicBool::new(false)),
        };
        let task = tokio::spawn(run(deps, poller.clone()));
        (poller, task)
    }

    /// What `/metrics` shows.
    pub fn stats(&self) -> &Arc<TaskStats> {
        &self.stats
    }

    /// Asks for a round now (a submit just made a task; tests).
    pub fn poll_now(&self) {
        self.wake.notify_one();
    }

    /// Asks the loop to end after its current round: a round's storage writes run on the
    /// blocking pool, so aborting it mid-round would leave one holding the database after
    /// shutdown returned.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::Release);
        self.wake.notify_one();
    }
}

/// A channel the poller leaves alone until `until`.
#[derive(Debug, Clone, Copy)]
struct Backoff {
    /// Failed calls in a row.
    failures: u32,
    /// Not asked before this.
    until: Instant,
}

async fn run(deps: PollerDeps, poller: TaskPoller) {
    let store = deps.store.clone();
    match store
        .write(|wtx| tasks::release_leases(wtx, NODE, None))
        .await
    {
        Ok(n) if n > 0 => tracing::info!(tasks = n, "task leases of the last run returned"),
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "cannot return the task leases of the last run"),
    }
    let mut backoff: HashMap<ChannelId, Backoff> = HashMap::new();
    while !poller.stopping.load(Ordering::Acquire) {
        if let Err(e) = round(&deps, &poller.stats, &mut backoff).await {
            tracing::warn!(error = %e, "task poll round failed");
        }
        // A stop during the round left a permit: the wait ends at once.
        tokio::select! {
            () = tokio::time::sleep(deps.interval) => {}
            () = poller.wake.notified() => {}
        }
    }
}

/// One round: claim, give up on what is past saving, ask each channel, store the answers.
async fn round(
    deps: &PollerDeps,
    stats: &TaskStats,
    backoff: &mut HashMap<ChannelId, Backoff>,
) -> Result<(), StorageError> {
    let now = (deps.clock)();
    let open = deps.store.read(query::open_ids).await?;
    if !open.is_empty() {
        let claimed = deps
            .store
            .write(move |wtx| tasks::claim(wtx, NODE, now, LEASE_SECS, ROUND_MAX))
            .await?;
        let mut by_channel: BTreeMap<(ChannelId, TaskKind), Vec<Task>> = BTreeMap::new();
        for task in claimed {
            by_channel
                .entry((task.channel_id, task.kind))
                .or_default()
                .push(task);
        }
        for ((channel_id, kind), batch) in by_channel {
            poll_channel(deps, backoff, channel_id, kind, batch, now).await?;
        }
    }
    let (open, counts) = deps
        .store
        .read(|rtx| Ok::<_, StorageError>((query::open_ids(rtx)?.len(), query::counts(rtx)?)))
        .await?;
    stats.round((deps.clock)(), open as u64, counts);
    Ok(())
}

/// Polls one channel's tasks of one kind.
async fn poll_channel(
    deps: &PollerDeps,
    backoff: &mut HashMap<ChannelId, Backoff>,
    channel_id: ChannelId,
    kind: TaskKind,
    batch: Vec<Task>,
    now: i64,
) -> Result<(), StorageError> {
    let channel = deps
        .store
        .read(move |rtx| channels::get(rtx, channel_id))
        .await?;
    let timeout = deps.options.current().int("TaskTimeoutMinutes");
    let mut ask = Vec::with_capacity(batch.len());
    for task in batch {
        match rules::give_up(&task, channel.is_some(), now, timeout) {
            Some(why) => fail(deps, &task, &why.reason(), now).await,
            None => ask.push(task),
        }
    }
    let Some(channel) = channel else {
        return Ok(());
    };
    if ask.is_empty() {
        return Ok(());
    }
    if backoff
        .get(&channel_id)
        .is_some_and(|b| b.until > Instant::now())
    {
        return release(deps, &ask).await;
    }
    let ids: Vec<String> = ask.iter().map(|t| t.upstream_id.clone()).collect();
    let answer = match deps.http.for_proxy(&channel.proxy) {
        Ok(client) => fetch::fetch(&client, &channel, kind, &ids).await,
        Err(e) => Err(fetch::FetchError::Setup(e)),
    };
    let updates = match answer {
        Ok(updates) => {
            backoff.remove(&channel_id);
            updates
        }
        Err(e) => {
            let failures = backoff.get(&channel_id).map_or(0, |b| b.failures) + 1;
            let pause = deps
                .interval
                .saturating_mul(2u32.saturating_pow(failures.min(16)))
                .min(BACKOFF_MAX);
            backoff.insert(
                channel_id,
                Backoff {
                    failures,
                    until: Instant::now() + pause,
                },
            );
            tracing::warn!(channel = %channel_id, error = %e, ?pause, "task status call failed; backing off");
            return release(deps, &ask).await;
        }
    };
    let mut by_id: HashMap<String, TaskUpdate> = updates.into_iter().collect();
    let mut plain = Vec::new();
    let mut unmentioned = Vec::new();
    for task in ask {
        match by_id.remove(&task.upstream_id) {
            Some(update) if update.status.as_deref() == Some(FAILURE) => {
                failed_upstream(deps, &task, update, now).await;
            }
            Some(update) => match rules::rebill(&task, &update) {
                Some(rebill) => rebilled(deps, &task, update, rebill, now).await,
                None => plain.push((task.id, update)),
            },
            None => unmentioned.push(task),
        }
    }
    if !plain.is_empty() {
        deps.store
            .write(move |wtx| {
                for (id, update) in plain {
                    tasks::update(wtx, id, NODE, update, now)?;
                }
                Ok::<_, StorageError>(())
            })
            .await?;
    }
    release(deps, &unmentioned).await
}

/// Returns the leases of `batch` (not asked, or not answered about).
async fn release(deps: &PollerDeps, batch: &[Task]) -> Result<(), StorageError> {
    if batch.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = batch.iter().map(|t| t.id).collect();
    deps.store
        .write(move |wtx| tasks::release_leases(wtx, NODE, Some(&ids)))
        .await?;
    Ok(())
}

/// Stores an upstream's FAILURE report and refunds the task, in one transaction.
async fn failed_upstream(deps: &PollerDeps, task: &Task, update: TaskUpdate, now: i64) {
    let id = task.id;
    let reason = update
        .fail_reason
        .clone()
        .unwrap_or_else(|| "failed upstream".to_owned());
    let done = deps
        .quota
        .refund_with(task.user_id, move |wtx| {
            if tasks::update(wtx, id, NODE, update, now)?.is_none() {
                return Ok::<_, StorageError>(((), None));
            }
            Ok(((), tasks::refund(wtx, id, &reason, now)?))
        })
        .await;
    if let Err(e) = done {
        tracing::warn!(task = id, error = %e, "a failed task could not be refunded; retried next round");
    }
}

/// Stores a video's completion and corrects its charge to the finished duration, in one
/// transaction with the difference's consume row.
async fn rebilled(
    deps: &PollerDeps,
    task: &Task,
    update: TaskUpdate,
    rebill: rules::Rebill,
    now: i64,
) {
    let id = task.id;
    let note = format!("billed for {} seconds as finished", rebill.seconds);
    let done = deps
        .quota
        .refund_with(task.user_id, move |wtx| {
            if tasks::update(wtx, id, NODE, update, now)?.is_none() {
                return Ok::<_, StorageError>(((), None));
            }
            let fixed = tasks::recharge(wtx, id, rebill.quota, rebill.properties, &note, now)?;
            Ok(((), fixed))
        })
        .await;
    if let Err(e) = done {
        tracing::warn!(task = id, error = %e, "a finished video could not be rebilled; retried next round");
    }
}

/// Ends `task` as FAILURE with `reason` and refunds it.
async fn fail(deps: &PollerDeps, task: &Task, reason: &str, now: i64) {
    let (id, why) = (task.id, reason.to_owned());
    let done = deps
        .quota
        .refund_with(task.user_id, move |wtx| {
            Ok::<_, StorageError>(((), tasks::refund(wtx, id, &why, now)?))
        })
        .await;
    match done {
        Ok(()) => tracing::info!(task = id, reason, "task given up and refunded"),
        Err(e) => {
            tracing::warn!(task = id, error = %e, "a task could not be ended; retried next round")
        }
    }
}
