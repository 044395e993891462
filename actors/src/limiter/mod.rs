//! The rate-limit engine (P15 item 1): concurrent requests, requests per minute, tokens per
//! minute and requests per day, for users, API keys, channels and channel keys (their
//! [`Limits`], stored in `rate_limits.v1`) and for the group and model rules of the option
//! `RateLimitRules` ([`Rule`]); the spec's per-user model request limit (ModelRequestRateLimit*,
//! [`RateLimit`]: requests and successful requests per N minutes) is one more user-level rule,
//! counted on the user's counter ([`span`]). Every applicable rule is checked and the strictest wins: a
//! request is admitted only when every counter has room, and then counts on all of them; a
//! refusal names its rule ([`Refusal`]). Tokens per minute are reserved from the estimate at
//! admission and corrected at settlement ([`Admission::settle`]). A rule with a queue holds up
//! to N waiting requests for at most T ([`Limiter::admit_queued`]); a client that leaves drops
//! its future and so its place.
//!
//! Each counter ([`counter::Counter`]) is shared by every request of its scope: the in-flight
//! count is an atomic, the windows sit behind the counter's own short lock (held for the check
//! and the add, never across an await), so different scopes never contend and the hot path
//! makes no actor call. Counters are created on a scope's first request and dropped once idle
//! (nothing in flight or queued, every window empty): when a new counter is made, at most once
//! a minute, the idle ones are swept, so memory is bounded by the callers active within their
//! longest window (a day for requests per day). Not here: where the relay calls it (admission, the channel pick) and the
//! wire shape of a refusal.

mod counter;
mod span;
pub mod sticky;
pub mod window;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use dashmap::DashMap;
use tollgate_storage::limits::{Limits, Owner, OwnerLimits};
use tollgate_storage::{ChannelId, Store, TokenId, UserId};

use self::counter::{Counter, Taken};
use crate::ActorError;
use crate::options::limit_rules::Rule;
use crate::options::rate_limit::RateLimit;
use crate::snapshot::Published;

/// Reads the time in Unix milliseconds (injected in tests).
pub type MillisClock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// The least time between two sweeps of idle counters.
pub const SWEEP_MS: i64 = 60_000;

/// How many kinds of limit there are.
const KINDS: usize = 6;

/// What a rule limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Requests in flight at once.
    Concurrency,
    /// Requests per minute.
    Rpm,
    /// Tokens per minute.
    Tpm,
    /// Requests per day.
    Rpd,
    /// The model request limit (ModelRequestRateLimitCount): requests per `minutes`.
    ModelRequests {
        /// The window (ModelRequestRateLimitDurationMinutes).
        minutes: u64,
    },
    /// The model request limit on successful requests (ModelRequestRateLimitSuccessCount).
    ModelSuccesses {
        /// The window (ModelRequestRateLimitDurationMinutes).
        minutes: u64,
    },
}

impl Kind {
    /// Every kind, in the order of [`Kind::index`].
    /// (The model request kinds' windows are not part of their label: 0 here.)
    pub const ALL: [Kind; KINDS] = [
        Kind::Concurrency,
        Kind::Rpm,
        Kind::Tpm,
        Kind::Rpd,
        Kind::ModelRequests { minutes: 0 },
        Kind::ModelSuccesses { minutes: 0 },
    ];

    /// `concurrency`, `rpm`, `tpm`, `rpd`, `model_requests`, `model_successes` (metrics
    /// labels, log rows).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Concurrency => "concurrency",
            Kind::Rpm => "rpm",
            Kind::Tpm => "tpm",
            Kind::Rpd => "rpd",
            Kind::ModelRequests { .. } => "model_requests",
            Kind::ModelSuccesses { .. } => "model_successes",
        }
    }

    /// The window of a model request kind, in minutes.
    pub fn window_minutes(self) -> Option<u64> {
        match self {
            Kind::ModelRequests { minutes } | Kind::ModelSuccesses { minutes } => Some(minutes),
            _ => None,
        }
    }

    fn index(self) -> usize {
        match self {
            Kind::Concurrency => 0,
            Kind::Rpm => 1,
            Kind::Tpm => 2,
            Kind::Rpd => 3,
            Kind::ModelRequests { .. } => 4,
            Kind::ModelSuccesses { .. } => 5,
        }
    }
}

/// Whose counter.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Every request of a user.
    User(UserId),
    /// Every request through an API key.
    Token(TokenId),
    /// Every request sent to a channel.
    Channel(ChannelId),
    /// Every request sent with one upstream key (its line) of a channel.
    ChannelKey(ChannelId, u32),
    /// A RateLimitRules rule: every request of its group, its model, or both.
    Rule {
        /// The rule's group.
        group: Option<String>,
        /// The rule's model.
        model: Option<String>,
    },
}

impl Scope {
    /// Every scope's label, in the order of [`Scope::index`].
    pub const LABELS: [&'static str; 5] = ["user", "token", "rule", "channel", "channel_key"];

    /// `user`, `token`, `rule`, `channel` or `channel_key` (metrics labels, log rows).
    pub fn label(&self) -> &'static str {
        Scope::LABELS[self.index()]
    }

    fn index(&self) -> usize {
        match self {
            Scope::User(_) => 0,
            Scope::Token(_) => 1,
            Scope::Rule { .. } => 2,
            Scope::Channel(_) => 3,
            Scope::ChannelKey(..) => 4,
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::User(u) => write!(f, "user {u}"),
            Scope::Token(t) => write!(f, "API key {t}"),
            Scope::Channel(c) => write!(f, "channel {c}"),
            Scope::ChannelKey(c, k) => write!(f, "key {k} of channel {c}"),
            Scope::Rule {
                group: Some(g),
                model: Some(m),
            } => write!(f, "group {g} with model {m}"),
            Scope::Rule { group: Some(g), .. } => write!(f, "group {g}"),
            Scope::Rule { model: Some(m), .. } => write!(f, "model {m}"),
            Scope::Rule { .. } => write!(f, "every request"),
        }
    }
}

/// A request refused by one rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Whose limit.
    pub scope: Scope,
    /// Which limit.
    pub kind: Kind,
    /// Its value.
    pub limit: u64,
    /// When the request would fit (milliseconds; for concurrency, a guess of one second).
    pub retry_after_ms: i64,
    /// Whether the refusal writes an error row: one per rule (scope) per second, so a client
    /// hammering a limit costs no row per request. `Some(n)`: a row, after `n` refusals of the
    /// same rule that had none; `None`: no row (counted into the next one).
    pub row: Option<u64>,
}

impl Refusal {
    /// Whole seconds for `Retry-After` (at least 1).
    pub fn retry_after_secs(&self) -> u64 {
        u64::try_from(self.retry_after_ms.max(1))
            .unwrap_or(1)
            .div_ceil(1000)
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            Kind::Concurrency => "concurrent requests",
            Kind::Rpm => "requests per minute",
            Kind::Tpm => "tokens per minute",
            Kind::Rpd => "requests per day",
            Kind::ModelRequests { minutes } | Kind::ModelSuccesses { minutes } => {
                let what = match self.kind {
                    Kind::ModelRequests { .. } => "requests",
                    _ => "successful requests",
                };
                return write!(
                    f,
                    "rate limit reached for {}: at most {} {what} per {minutes} minute(s) \
                     (model request limit); retry after {} s",
                    self.scope,
                    self.limit,
                    self.retry_after_secs()
                );
            }
        };
        write!(
            f,
            "rate limit reached for {}: {} {what} ({} limit); retry after {} s",
            self.scope,
            self.limit,
            self.kind.as_str(),
            self.retry_after_secs()
        )
    }
}

/// What one request asks for.
#[derive(Debug, Clone, Copy)]
pub struct Ask<'a> {
    /// The caller.
    pub user: UserId,
    /// The caller's key.
    pub token: Option<TokenId>,
    /// The group the request is billed to.
    pub group: &'a str,
    /// The model asked for.
    pub model: &'a str,
    /// Estimated tokens (prompt + output limit), reserved against tokens-per-minute limits.
    pub tokens: u64,
}

/// Limits configured per owner, published whole on every edit.
#[derive(Debug, Default)]
struct Table {
    owners: HashMap<Owner, OwnerLimits>,
}

/// Refusals and queue waits by kind, for `/metrics`.
#[derive(Debug, Default)]
pub struct LimiterStats {
    /// Refusals by scope ([`Scope::LABELS`]) and [`Kind`]: each request (or, at the pick,
    /// each candidate channel or key) turned away once, whatever it waited in a queue before.
    refused: [[AtomicU64; KINDS]; 5],
    /// Requests that waited in a queue, by the scope and kind that made them wait.
    queued: [[AtomicU64; KINDS]; 5],
}

impl LimiterStats {
    /// Refusals of scope `scope` ([`Scope::label`]) by a `kind` limit.
    pub fn refused(&self, scope: &str, kind: Kind) -> u64 {
        Self::read(&self.refused, scope, kind)
    }

    /// Queue waits of scope `scope` ([`Scope::label`]) for a `kind` limit.
    pub fn queued(&self, scope: &str, kind: Kind) -> u64 {
        Self::read(&self.queued, scope, kind)
    }

    fn read(cells: &[[AtomicU64; KINDS]; 5], scope: &str, kind: Kind) -> u64 {
        Scope::LABELS
            .iter()
            .position(|l| *l == scope)
            .map_or(0, |i| cells[i][kind.index()].load(Ordering::Relaxed))
    }

    fn count(cells: &[[AtomicU64; KINDS]; 5], refusal: &Refusal) {
        cells[refusal.scope.index()][refusal.kind.index()].fetch_add(1, Ordering::Relaxed);
    }
}

/// The engine. Cheap to clone.
#[derive(Clone)]
pub struct Limiter {
    inner: Arc<Inner>,
}

struct Inner {
    /// Owners' limits; written by [`Limiter::set`] (console edits), read by every admission.
    table: Published<Table>,
    /// One counter per scope that has had a limit; created on first use, swept once idle.
    counters: DashMap<Scope, Arc<Counter>>,
    /// When idle counters were last swept (Unix ms).
    swept: AtomicI64,
    /// The time.
    clock: MillisClock,
    /// Refusals and waits.
    stats: LimiterStats,
    /// Sticky routing's conversations (P15 item 4).
    sticky: sticky::Sticky,
}

impl fmt::Debug for Limiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Limiter")
            .field("counters", &self.inner.counters.len())
            .finish_non_exhaustive()
    }
}

/// The wall clock in Unix milliseconds.
pub fn system_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
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
    fn take_all(
        &self,
        rules: Vec<Check>,
        tokens: u64,
    ) -> Result<Admission, (Refusal, Queue, Arc<Counter>)> {
        let now = (self.inner.clock)();
        let mut admission = Admission {
            taken: Vec::with_capacity(rules.len()),
            clock: Arc::clone(&self.inner.clock),
            requests: None,
            tokens: None,
        };
        for Check {
            scope,
            limits,
            model,
            queue,
        } in rules
        {
            let counter = self.counter(&scope);
            match counter.take(now, (&limits, model.as_ref()), tokens) {
                Ok(taken) => {
                    admission.note_headroom(&taken);
                    admission.taken.push((counter, taken));
                }
                Err((kind, limit, retry_after_ms)) => {
                    for (counter, taken) in admission.taken.drain(..) {
                        counter.undo(&taken);
                    }
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

    /// The user's (with the model request limit `model`) and the key's limits for `ask`.
    fn owner_rules(&self, ask: &Ask<'_>, model: Option<RateLimit>) -> Vec<Check> {
        let table = self.inner.table.load();
        let mut out = Vec::new();
        let limits = |owner: Owner| {
            table
                .owners
                .get(&owner)
                .map(|l| l.limits)
                .filter(|l| !l.is_none())
        };
        let user = limits(Owner::User(ask.user));
        if user.is_some() || model.is_some() {
            out.push(Check {
                scope: Scope::User(ask.user),
                limits: user.unwrap_or_default(),
                model,
                queue: Queue::NONE,
            });
        }
        if let Some((t, limits)) = ask.token.and_then(|t| Some((t, limits(Owner::Token(t))?))) {
            out.push(Check::of(Scope::Token(t), limits, Queue::NONE));
        }
        out
    }

    /// Every `RateLimitRules` rule covering `ask`.
    fn group_rules(ask: &Ask<'_>, rules: &[Rule]) -> Vec<Check> {
        let mut out = Vec::new();
        for rule in rules.iter().filter(|r| r.covers(ask.group, ask.model)) {
            let scope = Scope::Rule {
                group: rule.group.clone(),
                model: rule.model.clone(),
            };
            let queue = Queue {
                size: rule.queue,
                wait_ms: rule.queue_timeout_ms,
            };
            out.push(Check::of(scope, rule.limits(), queue));
        }
        out
    }

    /// Admits `ask` under the user's, the key's and the covering rules' limits at once (no
    /// queue), or refuses it with the first rule that has no room.
    pub fn admit(&self, ask: &Ask<'_>, rules: &[Rule]) -> Result<Admission, Refusal> {
        let mut all = self.owner_rules(ask, None);
        all.extend(Self::group_rules(ask, rules));
        self.take_all(all, ask.tokens)
            .map_err(|(refusal, _, counter)| self.refused(refusal, &counter))
    }

    /// Admits `ask` under its user's limits, the model request limit `model` (a user-level
    /// rule) and its key's limits, or refuses it naming the first that has no room. Never
    /// waits: the quota book runs it inside the user's critical section, with the reservation
    /// ([`crate::quota::QuotaBook::reserve_limited`]).
    pub fn admit_caller(
        &self,
        ask: &Ask<'_>,
        model: Option<RateLimit>,
    ) -> Result<Admission, Refusal> {
        self.take_all(self.owner_rules(ask, model), ask.tokens)
            .map_err(|(refusal, _, counter)| self.refused(refusal, &counter))
    }

    /// Counts `refusal` (a final one: not a queued request's retry) and hands it back.
    /// Whether it writes an error row is the rule's counter's to say ([`Refusal::row`]).
    fn refused(&self, mut refusal: Refusal, counter: &Counter) -> Refusal {
        LimiterStats::count(&self.inner.stats.refused, &refusal);
        refusal.row = counter.row_due((self.inner.clock)());
        refusal
    }

    /// Admits `ask` under the covering `RateLimitRules` rules (group and model; the user's and
    /// the key's are [`Limiter::admit_caller`]'s): a refusal by a rule with a queue waits in it
    /// (when it has a free place) until the rule has room or the rule's wait is over. Dropping
    /// the future leaves the queue.
    pub async fn admit_queued(&self, ask: &Ask<'_>, rules: &[Rule]) -> Result<Admission, Refusal> {
        let mut place: Option<counter::Place> = None;
        let mut deadline: Option<tokio::time::Instant> = None;
        loop {
            let (refusal, queue, counter) =
                match self.take_all(Self::group_rules(ask, rules), ask.tokens) {
                    Ok(admission) => return Ok(admission),
                    Err(refused) => refused,
                };
            if queue.size == 0 {
                return Err(self.refused(refusal, &counter));
            }
            if place.is_none() {
                match counter::Place::join(&counter, queue.size) {
                    Some(p) => {
                        LimiterStats::count(&self.inner.stats.queued, &refusal);
                        place = Some(p);
                        deadline = Some(
                            tokio::time::Instant::now()
                                + Duration::from_millis(u64::from(queue.wait_ms)),
                        );
                    }
                    None => return Err(self.refused(refusal, &counter)),
                }
            }
            let end = deadline.unwrap_or_else(tokio::time::Instant::now);
            let retry =
                Duration::from_millis(u64::try_from(refusal.retry_after_ms.max(1)).unwrap_or(1));
            let wake = (tokio::time::Instant::now() + retry).min(end);
            if tokio::time::Instant::now() >= end {
                return Err(self.refused(refusal, &counter));
            }
            tokio::select! {
                () = counter.freed() => {}
                () = tokio::time::sleep_until(wake) => {}
            }
        }
    }

    /// Admits one attempt on `channel` (and its key on line `key`): a channel or key at its
    /// limit refuses, and the caller moves on to the next candidate.
    pub fn admit_channel(
        &self,
        channel: ChannelId,
        key: Option<u32>,
        tokens: u64,
    ) -> Result<Admission, Refusal> {
        let table = self.inner.table.load();
        let Some(limits) = table.owners.get(&Owner::Channel(channel)) else {
            return Ok(Admission::empty(Arc::clone(&self.inner.clock)));
        };
        let mut rules = Vec::new();
        if !limits.limits.is_none() {
            rules.push(Check::of(
                Scope::Channel(channel),
                limits.limits,
                Queue::NONE,
            ));
        }
        if let Some(k) = key
            .map(|k| (k, limits.key(k)))
            .filter(|(_, l)| !l.is_none())
        {
            rules.push(Check::of(Scope::ChannelKey(channel, k.0), k.1, Queue::NONE));
        }
        drop(table);
        self.take_all(rules, tokens)
            .map_err(|(refusal, _, counter)| self.refused(refusal, &counter))
    }
}

/// One rule to check: its scope (whose counter), its limits, the model request limit (on a
/// user's counter) and its queue.
struct Check {
    scope: Scope,
    limits: Limits,
    model: Option<RateLimit>,
    queue: Queue,
}

impl Check {
    fn of(scope: Scope, limits: Limits, queue: Queue) -> Check {
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
struct Queue {
    size: u32,
    wait_ms: u32,
}

impl Queue {
    const NONE: Queue = Queue {
        size: 0,
        wait_ms: 0,
    };
}

/// The headroom of the strictest applicable rule, for `x-ratelimit-*` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headroom {
    /// The limit.
    pub limit: u64,
    /// What is left of it after this request.
    pub remaining: u64,
    /// Milliseconds until it is whole again.
    pub reset_ms: i64,
}

/// A request's places on its counters, given back when dropped (concurrency) and corrected
/// when settled (tokens per minute).
pub struct Admission {
    /// The counters taken and what was taken on each.
    taken: Vec<(Arc<Counter>, Taken)>,
    /// The time (for the settlement's correction).
    clock: MillisClock,
    /// The strictest request limit (per minute or per day) of the taken counters.
    requests: Option<Headroom>,
    /// The strictest token limit of the taken counters.
    tokens: Option<Headroom>,
}

impl fmt::Debug for Admission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Admission")
            .field("counters", &self.taken.len())
            .field("requests", &self.requests)
            .field("tokens", &self.tokens)
            .finish()
    }
}

impl Admission {
    /// An admission that holds nothing (no limit applies).
    pub fn empty(clock: MillisClock) -> Admission {
        Admission {
            taken: Vec::new(),
            clock,
            requests: None,
            tokens: None,
        }
    }

    fn note_headroom(&mut self, taken: &Taken) {
        self.requests = tighter(self.requests, taken.requests);
        self.tokens = tighter(self.tokens, taken.tokens_room);
    }

    /// Whether no limit applied.
    pub fn is_empty(&self) -> bool {
        self.taken.is_empty()
    }

    /// The strictest request limit's headroom.
    pub fn requests(&self) -> Option<Headroom> {
        self.requests
    }

    /// The strictest token limit's headroom.
    pub fn tokens(&self) -> Option<Headroom> {
        self.tokens
    }

    /// OpenAI's `x-ratelimit-*` headers for the strictest applicable rules.
    pub fn headers(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if let Some(r) = self.requests {
            out.push(("x-ratelimit-limit-requests", r.limit.to_string()));
            out.push(("x-ratelimit-remaining-requests", r.remaining.to_string()));
            out.push(("x-ratelimit-reset-requests", duration_text(r.reset_ms)));
        }
        if let Some(t) = self.tokens {
            out.push(("x-ratelimit-limit-tokens", t.limit.to_string()));
            out.push(("x-ratelimit-remaining-tokens", t.remaining.to_string()));
            out.push(("x-ratelimit-reset-tokens", duration_text(t.reset_ms)));
        }
        out
    }

    /// Corrects the tokens reserved at admission to the `used` ones (the settlement).
    pub fn settle(&mut self, used: u64) {
        let now = (self.clock)();
        for (counter, taken) in &mut self.taken {
            counter.correct(now, taken, used);
        }
    }

    /// Takes `other`'s places too (a channel's beside the caller's); the headroom is the
    /// tighter of the two.
    pub fn join(&mut self, mut other: Admission) {
        self.taken.append(&mut other.taken);
        self.requests = tighter(self.requests, other.requests);
        self.tokens = tighter(self.tokens, other.tokens);
    }

    /// Counts the request's success on the model request limit it was admitted under (the
    /// settlement of an answer).
    pub fn succeeded(&self) {
        let now = (self.clock)();
        for (counter, taken) in &self.taken {
            counter.succeeded(now, taken);
        }
    }

    /// Takes back everything the request counted (it was refused after all, e.g. by its
    /// balance): a refused request uses no request or token of any window.
    pub fn undo(mut self) {
        for (counter, taken) in self.taken.drain(..) {
            counter.undo(&taken);
        }
    }
}

/// The tighter (less remaining) of two headrooms.
fn tighter(old: Option<Headroom>, new: Option<Headroom>) -> Option<Headroom> {
    match (old, new) {
        (Some(o), Some(n)) if o.remaining <= n.remaining => Some(o),
        (o, None) => o,
        (_, n) => n,
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        for (counter, taken) in &self.taken {
            counter.release(taken);
        }
    }
}

/// OpenAI's duration text: `20ms`, `1s`, `6m0s`.
pub fn duration_text(ms: i64) -> String {
    let ms = ms.max(0);
    if ms < 1_000 {
        return format!("{ms}ms");
    }
    let secs = (ms + 999) / 1_000;
    if secs < 60 {
        format!("{secs}s")
    } else if secs < 3_600 {
        format!("{}m{}s", secs / 60, secs % 60)
    } else {
        format!("{}h{}m{}s", secs / 3_600, secs % 3_600 / 60, secs % 60)
    }
}

#[cfg(test)]
mod tests;
