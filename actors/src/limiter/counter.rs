//! One scope's counter: requests in flight (an atomic, given back without a lock) and the
//! minute and day windows (and, on a user's counter, the model request limit's window,
//! [`super::span`]) behind a short lock held for one check-and-add (never across an await),
//! plus the places of its queue and the signal that wakes them.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;
use tollgate_storage::limits::Limits;

use super::scope::{Headroom, Kind};
use super::span::{Span, SpanFull};
use super::window::Window;
use crate::options::rate_limit::RateLimit;

/// What a refused check says: the kind, its limit, and milliseconds until it would fit.
pub(super) type Full = (Kind, u64, i64);

/// A scope's counter.
#[derive(Debug, Default)]
pub(super) struct Counter {
    /// Requests admitted and not yet dropped; raised under `windows`' lock, lowered without it.
    in_flight: AtomicU32,
    /// The windows, created on the first check of a limit that needs them.
    windows: Mutex<Windows>,
    /// Requests waiting in this counter's queue.
    waiting: AtomicU32,
    /// Woken when a request in flight ends.
    freed: Notify,
    /// The second of the last refusal's error row and the refusals since without one.
    rows: Mutex<(Option<i64>, u64)>,
}

#[derive(Debug, Default)]
struct Windows {
    rpm: Option<Window>,
    tpm: Option<Window>,
    rpd: Option<Window>,
    /// The model request limit's requests and successes (a user's counter).
    span: Option<Span>,
}

/// What one admission took from a counter.
#[derive(Debug, Clone, Copy)]
pub(super) struct Taken {
    /// A place in flight.
    concurrency: bool,
    /// When it was taken (the bucket a token correction goes to).
    at: i64,
    /// Whether the requests-per-minute window counted this request.
    rpm: bool,
    /// Whether the requests-per-day window counted this request.
    rpd: bool,
    /// Whether the tokens-per-minute window counted this request.
    tpm: bool,
    /// Tokens counted in the tokens-per-minute window.
    tokens: u64,
    /// Whether the model request limit's window counted this request.
    span: bool,
    /// The model request limit whose successes the settlement counts.
    pub(super) success: Option<RateLimit>,
    /// The tightest request window's headroom after this request.
    pub(super) requests: Option<Headroom>,
    /// The token window's headroom after this request.
    pub(super) tokens_room: Option<Headroom>,
}

fn check(
    window: &mut Option<Window>,
    make: fn() -> Window,
    now: i64,
    need: u64,
    limit: u32,
    kind: Kind,
) -> Result<(), Full> {
    if limit == 0 {
        return Ok(());
    }
    let limit = u64::from(limit);
    match window.get_or_insert_with(make).wait_for(now, need, limit) {
        Some(0) => Ok(()),
        Some(wait) => Err((kind, limit, wait)),
        // More than the whole limit: it never fits; a minute is what the client should wait
        // before asking differently.
        None => Err((kind, limit, 60_000)),
    }
}

fn room(window: &mut Option<Window>, now: i64, limit: u32) -> Option<Headroom> {
    let w = window.as_mut()?;
    let limit = u64::from(limit);
    let used = w.used(now);
    Some(Headroom {
        limit,
        remaining: limit.saturating_sub(used),
        reset_ms: w.wait_for(now, limit, limit).unwrap_or(0),
    })
}

impl Counter {
    /// Checks every limit of `limits` at `now` for one request of `tokens` tokens and, when all
    /// have room, counts it on each.
    /// `model` is the model request limit, checked and counted with them (a user's counter).
    pub(super) fn take(
        &self,
        now: i64,
        (limits, model): (&Limits, Option<&RateLimit>),
        tokens: u64,
    ) -> Result<Taken, Full> {
        let mut w = self
            .windows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let c = limits.concurrency_limit;
        if c > 0 && self.in_flight.load(Ordering::Acquire) >= c {
            return Err((Kind::Concurrency, u64::from(c), 1_000));
        }
        check(
            &mut w.rpm,
            Window::minute,
            now,
            1,
            limits.rpm_limit,
            Kind::Rpm,
        )?;
        check(
            &mut w.tpm,
            Window::minute,
            now,
            tokens,
            limits.tpm_limit,
            Kind::Tpm,
        )?;
        check(&mut w.rpd, Window::day, now, 1, limits.rpd_limit, Kind::Rpd)?;
        if let Some(model) = model {
            let minutes = model.window.as_secs() / 60;
            w.span
                .get_or_insert_with(Span::default)
                .check(model, now)
                .map_err(|full| match full {
                    SpanFull::Total(n, wait) => {
                        (Kind::ModelRequests { minutes }, u64::from(n), wait)
                    }
                    SpanFull::Success(n, wait) => {
                        (Kind::ModelSuccesses { minutes }, u64::from(n), wait)
                    }
                })?;
        }
        let mut taken = Taken {
            concurrency: c > 0,
            at: now,
            rpm: limits.rpm_limit > 0,
            rpd: limits.rpd_limit > 0,
            tpm: false,
            tokens: 0,
            span: false,
            success: model.filter(|m| m.success > 0).copied(),
            requests: None,
            tokens_room: None,
        };
        if limits.rpm_limit > 0 {
            w.rpm.get_or_insert_with(Window::minute).add(now, 1);
            taken.requests = room(&mut w.rpm, now, limits.rpm_limit);
        }
        if limits.rpd_limit > 0 {
            w.rpd.get_or_insert_with(Window::day).add(now, 1);
            let day = room(&mut w.rpd, now, limits.rpd_limit);
            if taken
                .requests
                .is_none_or(|r| day.is_some_and(|d| d.remaining < r.remaining))
            {
                taken.requests = day;
            }
        }
        if let Some((model, span)) = model.zip(w.span.as_mut())
            && let Some((remaining, reset_ms)) = span.add(model, now)
        {
            taken.span = true;
            if taken.requests.is_none_or(|r| remaining < r.remaining) {
                taken.requests = Some(Headroom {
                    limit: u64::from(model.total),
                    remaining,
                    reset_ms,
                });
            }
        }
        if limits.tpm_limit > 0 {
            w.tpm.get_or_insert_with(Window::minute).add(now, tokens);
            taken.tpm = true;
            taken.tokens = tokens;
            taken.tokens_room = room(&mut w.tpm, now, limits.tpm_limit);
        }
        if taken.concurrency {
            self.in_flight.fetch_add(1, Ordering::AcqRel);
        }
        Ok(taken)
    }

    /// Replaces the tokens reserved by `taken` with the `used` ones.
    pub(super) fn correct(&self, now: i64, taken: &mut Taken, used: u64) {
        if !taken.tpm {
            return;
        }
        let mut w = self
            .windows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(tpm) = w.tpm.as_mut() {
            let delta = i64::try_from(used)
                .unwrap_or(i64::MAX)
                .saturating_sub(i64::try_from(taken.tokens).unwrap_or(i64::MAX));
            tpm.adjust(now, taken.at, delta);
            taken.tokens = used;
        }
    }

    /// Takes back everything `taken` counted (the request was refused by a later rule).
    pub(super) fn undo(&self, taken: &Taken) {
        {
            let mut w = self
                .windows
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let now = taken.at;
            if let Some(rpm) = w.rpm.as_mut().filter(|_| taken.rpm) {
                rpm.adjust(now, taken.at, -1);
            }
            if let Some(rpd) = w.rpd.as_mut().filter(|_| taken.rpd) {
                rpd.adjust(now, taken.at, -1);
            }
            if let Some(span) = w.span.as_mut().filter(|_| taken.span) {
                span.undo(taken.at);
            }
            if let Some(tpm) = w.tpm.as_mut().filter(|_| taken.tpm) {
                tpm.adjust(
                    now,
                    taken.at,
                    -i64::try_from(taken.tokens).unwrap_or(i64::MAX),
                );
            }
        }
        self.release(taken);
    }

    /// Counts a successful request at `now` on the model request limit `taken` was admitted
    /// under (when it has a success limit).
    pub(super) fn succeeded(&self, now: i64, taken: &Taken) {
        let Some(model) = &taken.success else {
            return;
        };
        let mut w = self
            .windows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        w.span
            .get_or_insert_with(Span::default)
            .succeeded(model, now);
    }

    /// Gives back the place in flight `taken` holds and wakes one waiting request.
    pub(super) fn release(&self, taken: &Taken) {
        if taken.concurrency {
            self.in_flight.fetch_sub(1, Ordering::AcqRel);
            self.freed.notify_one();
        }
    }

    /// Whether the counter holds nothing at `now`: no request in flight or waiting, and every
    /// window empty (so dropping it and starting afresh later changes no decision).
    pub(super) fn is_idle(&self, now: i64) -> bool {
        if self.in_flight.load(Ordering::Acquire) > 0 || self.waiting.load(Ordering::Acquire) > 0 {
            return false;
        }
        let mut w = self
            .windows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let empty = |window: &mut Option<Window>| window.as_mut().is_none_or(|w| w.is_empty(now));
        empty(&mut w.rpm)
            && empty(&mut w.tpm)
            && empty(&mut w.rpd)
            && w.span.as_mut().is_none_or(|s| s.is_idle(now))
    }

    /// Whether a refusal at `now` writes an error row: the first of each second does, carrying
    /// the number of refusals since the last row (`Some(n)`); the others do not (`None`).
    pub(super) fn row_due(&self, now: i64) -> Option<u64> {
        let second = now.div_euclid(1_000);
        let mut rows = self
            .rows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if rows.0 == Some(second) {
            rows.1 = rows.1.saturating_add(1);
            return None;
        }
        let skipped = rows.1;
        *rows = (Some(second), 0);
        Some(skipped)
    }

    /// Resolves when a request in flight ends.
    pub(super) async fn freed(&self) {
        self.freed.notified().await;
    }
}

/// A place in a counter's queue, left when dropped.
pub(super) struct Place {
    counter: Arc<Counter>,
}

impl Place {
    /// A place when fewer than `size` wait.
    pub(super) fn join(counter: &Arc<Counter>, size: u32) -> Option<Place> {
        counter
            .waiting
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < size).then_some(n + 1)
            })
            .ok()
            .map(|_| Place {
                counter: Arc::clone(counter),
            })
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.counter.waiting.fetch_sub(1, Ordering::AcqRel);
    }
}
