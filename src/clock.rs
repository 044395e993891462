//! Wall-clock helpers (Unix seconds), the unit every stored timestamp uses, and [`Clock`], the
//! clock of rules whose waits last minutes or hours (so tests move it instead of sleeping).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch (0 if the clock is before 1970).
pub fn now_unix() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The system's wall clock plus an offset that only tests move ([`Clock::advance`]), or for
/// tests a stopped clock ([`Clock::stopped`]). Cheap to clone; clones share the offset, so a
/// test holding the clock it put in the [`Config`](crate::Config) moves the server's.
#[derive(Debug, Clone, Default)]
pub struct Clock {
    /// Seconds added to the system time (0 outside tests), or the time itself when stopped;
    /// written by `advance` only.
    offset: Arc<AtomicI64>,
    /// Whether the clock stands still between `advance`s (tests only).
    stopped: bool,
}

impl Clock {
    /// A clock standing at the system's time now, moving only when advanced (tests whose
    /// rules count single seconds).
    pub fn stopped() -> Clock {
        Clock {
            offset: Arc::new(AtomicI64::new(now_unix())),
            stopped: true,
        }
    }

    /// Seconds since the Unix epoch, as this clock reads them.
    pub fn now_unix(&self) -> i64 {
        let offset = self.offset.load(Ordering::Relaxed);
        if self.stopped {
            offset
        } else {
            now_unix().saturating_add(offset)
        }
    }

    /// Moves this clock (and its clones) `secs` seconds forward.
    pub fn advance(&self, secs: i64) {
        self.offset.fetch_add(secs, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_advanced_clock_moves_its_clones() {
        let clock = Clock::default();
        let other = clock.clone();
        let before = other.now_unix();
        clock.advance(3_600);
        assert!(other.now_unix() >= before + 3_600);
        let stopped = Clock::stopped();
        let at = stopped.now_unix();
        assert!(at >= before);
        stopped.advance(2);
        assert_eq!(stopped.now_unix(), at + 2);
    }
}
