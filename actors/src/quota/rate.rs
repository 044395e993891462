//! One user's request window for the model request rate limit (pure): the instants of recent
//! requests and of recent successful requests, pruned to the window on every use. Nothing is
//! recorded while no limit applies, so the limit costs nothing when it is off.

use std::collections::VecDeque;
use std::time::Instant;

use crate::options::rate_limit::RateLimit;

/// Which of the two limits refused a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateKind {
    /// ModelRequestRateLimitCount: every request counts.
    Total,
    /// ModelRequestRateLimitSuccessCount: successful requests count.
    Success,
}

/// Recent requests of one user.
#[derive(Debug, Default)]
pub struct RequestWindow {
    requests: VecDeque<Instant>,
    successes: VecDeque<Instant>,
}

fn prune(times: &mut VecDeque<Instant>, limit: &RateLimit, now: Instant) {
    while times
        .front()
        .is_some_and(|t| now.saturating_duration_since(*t) >= limit.window)
    {
        times.pop_front();
    }
}

fn full(times: &VecDeque<Instant>, max: u32) -> bool {
    max > 0 && times.len() >= usize::try_from(max).unwrap_or(usize::MAX)
}

impl RequestWindow {
    /// Admits one request at `now` under `limit` (and counts it), or names the limit reached.
    pub fn admit(&mut self, limit: &RateLimit, now: Instant) -> Result<(), RateKind> {
        prune(&mut self.requests, limit, now);
        prune(&mut self.successes, limit, now);
        if full(&self.requests, limit.total) {
            return Err(RateKind::Total);
        }
        if full(&self.successes, limit.success) {
            return Err(RateKind::Success);
        }
        if limit.total > 0 {
            self.requests.push_back(now);
        }
        Ok(())
    }

    /// Counts a successful request at `now` (only while a success limit applies).
    pub fn succeeded(&mut self, limit: &RateLimit, now: Instant) {
        prune(&mut self.successes, limit, now);
        if limit.success > 0 {
            self.successes.push_back(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    #[test]
    fn total_limit_counts_every_request_and_slides() {
        let limit = RateLimit {
            window: MINUTE,
            total: 2,
            success: 0,
        };
        let mut w = RequestWindow::default();
        let t0 = Instant::now();
        assert_eq!(w.admit(&limit, t0), Ok(()));
        assert_eq!(w.admit(&limit, t0 + Duration::from_secs(1)), Ok(()));
        assert_eq!(
            w.admit(&limit, t0 + Duration::from_secs(2)),
            Err(RateKind::Total)
        );
        // The first request leaves the window after a minute.
        assert_eq!(w.admit(&limit, t0 + MINUTE), Ok(()));
    }

    #[test]
    fn success_limit_counts_only_successes() {
        let limit = RateLimit {
            window: MINUTE,
            total: 0,
            success: 1,
        };
        let mut w = RequestWindow::default();
        let t0 = Instant::now();
        assert_eq!(w.admit(&limit, t0), Ok(()));
        assert_eq!(w.admit(&limit, t0), Ok(()), "nothing succeeded yet");
        w.succeeded(&limit, t0);
        assert_eq!(w.admit(&limit, t0), Err(RateKind::Success));
        assert_eq!(w.admit(&limit, t0 + MINUTE), Ok(()));
    }
}
