//! The engine ([`Limiter`]): owners' limits published whole on every edit, one counter per
//! scope made on first use and swept once idle, and taking a place on every applicable rule's
//! counter or on none ([`Limiter::take_all`]). Which rules apply to a request, and the public
//! admissions, are in [`super::admit`].

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use dashmap::DashMap;
use tollgate_storage::Store;
use tollgate_storage::limits::{Limits, Owner, OwnerLimits};

use super::admission::Admission;
use super::clock::MillisClock;
use super::counter::Counter;
use super::refusal::{LimiterStats, Refusal};
use super::scope::Scope;
use super::sticky;
use crate::ActorError;
use crate::options::rate_limit::RateLimit;
use crate::snapshot::Published;

/// The least time between two sweeps of idle counters.
pub const SWEEP_MS: i64 = 60_000;

/// Limits configured per owner, published whole on every edit.
#[derive(Debug, Default)]
pub(super) struct Table {
    /// Each owner's limits.
    pub(super) owners: HashMap<Owner, OwnerLimits>,
}

/// The engine. Cheap to clone.
#[derive(Clone)]
pub struct Limiter {
    pub(super) inner: Arc<Inner>,
}

/// The engine's state, shared by its clones.
pub(super) struct Inner {
    /// Owners' limits; written by [`Limiter::set`] (console edits), read by every admission.
    pub(super) table: Published<Table>,
    /// One counter per scope that has had a limit; created on first use, swept once idle.
    pub(super) counters: DashMap<Scope, Arc<Counter>>,
    /// When idle counters were last swept (Unix ms).
    pub(super) swept: AtomicI64,
    /// The time.
    pub(super) clock: MillisClock,
    /// Refusals and waits.
    pub(super) stats: LimiterStats,
    /// Sticky routing's conversations (P15 item 4).
    pub(super) sticky: sticky::Sticky,
}

impl fmt::Debug for Limiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Limiter")
            .field("counters", &self.inner.counters.len())
            .finish_non_exhaustive()
    }
}

impl Limiter {
    /// An engine with no owner limits.
    pub fn new(clock: MillisClock) -> Limiter {
        Limiter {
            inner: Arc::new(Inner {
                table: Published::new(Table::default()),
                counters: DashMap::new(),
                swept: AtomicI64::new(i64::MIN),
                sticky: sticky::Sticky::new(Arc::clone(&clock)),
                clock,
                stats: LimiterStats::default(),
            }),
        }
    }

    /// An engine with the stored owner limits (blocking: call at start).
    pub fn load(store: &Store, clock: MillisClock) -> Result<Limiter, ActorError> {
        let owners = store.read_blocking(tollgate_storage::limits::all)?;
        let limiter = Limiter::new(clock);
        limiter.inner.table.publish(Table {
            owners: owners.into_iter().collect(),
        });
        Ok(limiter)
    }

    /// Replaces `owner`'s limits (a console edit); the next admission uses them. A channel
    /// whose per-key limits changed (or moved with their keys to other lines) starts its keys'
    /// counters afresh, so no key inherits another's counts.
    pub fn set(&self, owner: Owner, limits: OwnerLimits) {
        let current = self.inner.table.load_full();
        if let Owner::Channel(channel) = owner
            && current.owners.get(&owner).map(|l| &l.key_limits) != Some(&limits.key_limits)
        {
            self.inner
                .counters
                .retain(|scope, _| !matches!(scope, Scope::ChannelKey(c, _) if *c == channel));
        }
        let mut owners = current.owners.clone();
        if limits.is_empty() {
            owners.remove(&owner);
        } else {
            owners.insert(owner, limits);
        }
        self.inner.table.publish(Table { owners });
    }

    /// The limits of `owner`.
    pub fn limits_of(&self, owner: Owner) -> OwnerLimits {
        self.inner
            .table
            .load()
            .owners
            .get(&owner)
            .cloned()
            .unwrap_or_default()
    }

    /// Sticky routing's map of conversations to channels.
    pub fn sticky(&self) -> &sticky::Sticky {
        &self.inner.sticky
    }

    /// Refusals and queue waits so far.
    pub fn stats(&self) -> &LimiterStats {
        &self.inner.stats
    }

    /// How many counters are kept (scopes with something counted or recently swept).
    pub fn counters(&self) -> usize {
        self.inner.counters.len()
    }

    /// Drops the counters that hold nothing at `now`, at most once per [`SWEEP_MS`]. A counter
    /// some admission or queued request still holds (its `Arc` shared) is kept.
    fn sweep(&self, now: i64) {
        let last = self.inner.swept.load(Ordering::Acquire);
        if now.saturating_sub(last) < SWEEP_MS
            || self
                .inner
                .swept
                .compare_exchange(last, now, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
        {
            return;
        }
        self.inner
            .counters
            .retain(|_, counter| Arc::strong_count(counter) > 1 || !counter.is_idle(now));
    }

    /// The counter of `scope`, made on its first use (sweeping idle ones first, at most once a
    /// [`SWEEP_MS`]).
    fn counter(&self, scope: &Scope) -> Arc<Counter> {
        if let Some(c) = self.inner.counters.get(scope) {
            return Arc::clone(&c);
        }
        self.sweep((self.inner.clock)());
        Arc::clone(
            &self
                .inner
                .counters
                .entry(scope.clone())
                .or_insert_with(|| Arc::new(Counter::default())),
        )
    }

    /// Takes a place on every rule's counter or on none; the first refusal is returned.
    pub(super) fn take_all(
        &self,
        rules: Vec<Check>,
        tokens: u64,
    ) -> Result<Admission, (Refusal, Queue, Arc<Counter>)> {
        let now = (self.inner.clock)();
        let mut admission = Admission::empty(Arc::clone(&self.inner.clock));
        for Check {
            scope,
            limits,
            model,
            queue,
        } in rules
        {
            let counter = self.counter(&scope);
            match counter.take(now, (&limits, model.as_ref()), tokens) {
                Ok(taken) => admission.hold(counter, taken),
                Err((kind, limit, retry_after_ms)) => {
                    admission.undo();
                    let refusal = Refusal {
                        scope,
                        kind,
                        limit,
                        retry_after_ms,
                        row: Some(0),
                    };
                    return Err((refusal, queue, counter));
                }
            }
        }
        Ok(admission)
    }

    /// Counts `refusal` (a final one: not a queued request's retry) and hands it back.
    /// Whether it writes an error row is the rule's counter's to say ([`Refusal::row`]).
    pub(super) fn refused(&self, mut refusal: Refusal, counter: &Counter) -> Refusal {
        self.inner.stats.count_refused(&refusal);
        refusal.row = counter.row_due((self.inner.clock)());
        refusal
    }
}

/// One rule to check: its scope (whose counter), its limits, the model request limit (on a
/// user's counter) and its queue.
pub(super) struct Check {
    pub(super) scope: Scope,
    pub(super) limits: Limits,
    pub(super) model: Option<RateLimit>,
    pub(super) queue: Queue,
}

impl Check {
    /// A rule without a model request limit.
    pub(super) fn of(scope: Scope, limits: Limits, queue: Queue) -> Check {
        Check {
            scope,
            limits,
            model: None,
            queue,
        }
    }
}

/// A rule's queue: at most `size` waiting, each at most `wait_ms`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Queue {
    pub(super) size: u32,
    pub(super) wait_ms: u32,
}

impl Queue {
    /// No queue: a refusal is final.
    pub(super) const NONE: Queue = Queue {
        size: 0,
        wait_ms: 0,
    };
}
