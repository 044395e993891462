//! The window of the spec's per-user model request limit (ModelRequestRateLimit*, one user-level
//! rule of the engine; pure): the instants of recent requests and of recent successful requests,
//! pruned to the rule's window on every use. Exact (a request leaves the window when its instant
//! has), and never longer than its limit: a request is refused once the window holds `total`,
//! so the memory is bounded by the rule. Times are Unix milliseconds passed in.

use std::collections::VecDeque;

use crate::options::rate_limit::RateLimit;

/// Which of the two limits is full, its value and milliseconds until one place frees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SpanFull {
    /// ModelRequestRateLimitCount: every request counts.
    Total(u32, i64),
    /// ModelRequestRateLimitSuccessCount: successful requests count.
    Success(u32, i64),
}

/// Recent requests of one user.
#[derive(Debug, Default)]
pub(super) struct Span {
    requests: VecDeque<i64>,
    successes: VecDeque<i64>,
    /// The window last checked against (for [`Span::is_idle`]).
    window: i64,
}

fn window_ms(limit: &RateLimit) -> i64 {
    i64::try_from(limit.window.as_millis()).unwrap_or(i64::MAX)
}

fn prune(times: &mut VecDeque<i64>, window: i64, now: i64) {
    while times
        .front()
        .is_some_and(|t| now.saturating_sub(*t) >= window)
    {
        times.pop_front();
    }
}

/// Whether `times` holds `max` (> 0) or more; then the wait until its oldest leaves.
fn full(times: &VecDeque<i64>, max: u32, window: i64, now: i64) -> Option<i64> {
    let max = usize::try_from(max).unwrap_or(usize::MAX);
    if max == 0 || times.len() < max {
        return None;
    }
    let oldest = times.front().copied().unwrap_or(now);
    Some(oldest.saturating_add(window).saturating_sub(now).max(1))
}

impl Span {
    /// Checks one request at `now` under `limit` without counting it.
    pub(super) fn check(&mut self, limit: &RateLimit, now: i64) -> Result<(), SpanFull> {
        let window = window_ms(limit);
        self.window = window;
        prune(&mut self.requests, window, now);
        prune(&mut self.successes, window, now);
        if let Some(wait) = full(&self.requests, limit.total, window, now) {
            return Err(SpanFull::Total(limit.total, wait));
        }
        if let Some(wait) = full(&self.successes, limit.success, window, now) {
            return Err(SpanFull::Success(limit.success, wait));
        }
        Ok(())
    }

    /// Counts one request at `now` (only while a total limit applies); returns whether it was
    /// counted and the total limit's headroom `(remaining, reset_ms)`.
    pub(super) fn add(&mut self, limit: &RateLimit, now: i64) -> Option<(u64, i64)> {
        if limit.total == 0 {
            return None;
        }
        self.requests.push_back(now);
        let used = u64::try_from(self.requests.len()).unwrap_or(u64::MAX);
        let oldest = self.requests.front().copied().unwrap_or(now);
        let reset = oldest.saturating_add(window_ms(limit)).saturating_sub(now);
        Some((u64::from(limit.total).saturating_sub(used), reset))
    }

    /// Takes back the request counted at `at` (it was refused by a later check).
    pub(super) fn undo(&mut self, at: i64) {
        if let Some(i) = self.requests.iter().rposition(|t| *t == at) {
            self.requests.remove(i);
        }
    }

    /// Counts a successful request at `now` (only while a success limit applies).
    pub(super) fn succeeded(&mut self, limit: &RateLimit, now: i64) {
        prune(&mut self.successes, window_ms(limit), now);
        if limit.success > 0 {
            self.successes.push_back(now);
        }
    }

    /// Whether nothing counted is still in the window at `now`.
    pub(super) fn is_idle(&mut self, now: i64) -> bool {
        prune(&mut self.requests, self.window, now);
        prune(&mut self.successes, self.window, now);
        self.requests.is_empty() && self.successes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const MINUTE: i64 = 60_000;

    fn limit(total: u32, success: u32) -> RateLimit {
        RateLimit {
            window: Duration::from_secs(60),
            total,
            success,
        }
    }

    fn admit(w: &mut Span, limit: &RateLimit, now: i64) -> Result<(), SpanFull> {
        w.check(limit, now)?;
        w.add(limit, now);
        Ok(())
    }

    #[test]
    fn total_limit_counts_every_request_and_slides() {
        let limit = limit(2, 0);
        let mut w = Span::default();
        assert_eq!(admit(&mut w, &limit, 0), Ok(()));
        assert_eq!(admit(&mut w, &limit, 1_000), Ok(()));
        assert_eq!(
            admit(&mut w, &limit, 2_000),
            Err(SpanFull::Total(2, 58_000))
        );
        // The first request leaves the window after a minute.
        assert_eq!(admit(&mut w, &limit, MINUTE), Ok(()));
        w.undo(MINUTE);
        assert_eq!(
            admit(&mut w, &limit, MINUTE),
            Ok(()),
            "an undone request frees its place"
        );
    }

    #[test]
    fn success_limit_counts_only_successes() {
        let limit = limit(0, 1);
        let mut w = Span::default();
        assert_eq!(admit(&mut w, &limit, 0), Ok(()));
        assert_eq!(admit(&mut w, &limit, 0), Ok(()), "nothing succeeded yet");
        w.succeeded(&limit, 0);
        assert_eq!(admit(&mut w, &limit, 0), Err(SpanFull::Success(1, MINUTE)));
        assert_eq!(admit(&mut w, &limit, MINUTE), Ok(()));
        assert!(w.requests.is_empty(), "no total limit: nothing is recorded");
    }
}
