//! A refusal ([`Refusal`]: the rule that had no room, its limit and when the request would
//! fit; its text is the client's error message) and the counts of refusals and queue waits by
//! scope and kind that `/metrics` reads ([`LimiterStats`]).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use super::scope::{KINDS, Kind, Scope};

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

    /// Counts a final refusal.
    pub(super) fn count_refused(&self, refusal: &Refusal) {
        Self::count(&self.refused, refusal);
    }

    /// Counts a request that starts waiting in a queue (`refusal`: what made it wait).
    pub(super) fn count_queued(&self, refusal: &Refusal) {
        Self::count(&self.queued, refusal);
    }

    fn count(cells: &[[AtomicU64; KINDS]; 5], refusal: &Refusal) {
        cells[refusal.scope.index()][refusal.kind.index()].fetch_add(1, Ordering::Relaxed);
    }
}
