//! An admitted request's places on its counters ([`Admission`]): given back when it is dropped
//! (concurrency), corrected at settlement (tokens per minute), taken back when the request is
//! refused after all; and the strictest rule's headroom as OpenAI's `x-ratelimit-*` headers.

use std::fmt;
use std::sync::Arc;

use super::clock::MillisClock;
use super::counter::{Counter, Taken};
use super::scope::Headroom;

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

    /// Holds `taken` on `counter` (one more rule admitted the request).
    pub(super) fn hold(&mut self, counter: Arc<Counter>, taken: Taken) {
        self.requests = tighter(self.requests, taken.requests);
        self.tokens = tighter(self.tokens, taken.tokens_room);
        self.taken.push((counter, taken));
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
