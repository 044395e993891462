//! What the poller tells `/metrics`: when its last round finished, whether tasks are open, and
//! the tasks per list and status (read from storage at the end of each round, so a scrape
//! reads memory only).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use arc_swap::ArcSwap;

/// The poller's published state. Written by the poller only.
#[derive(Debug, Default)]
pub struct TaskStats {
    /// Unix seconds the last round finished (0: none yet).
    last_round: AtomicI64,
    /// Unfinished tasks at the end of the last round.
    open: AtomicU64,
    /// (list prefix, status, tasks) at the end of the last round.
    counts: ArcSwap<Vec<(String, String, u64)>>,
}

impl TaskStats {
    /// Records a finished round at `now` with `open` unfinished tasks and the per-status
    /// `counts`.
    pub fn round(&self, now: i64, open: u64, counts: Vec<(String, String, u64)>) {
        self.last_round.store(now, Ordering::Relaxed);
        self.open.store(open, Ordering::Relaxed);
        self.counts.store(Arc::new(counts));
    }

    /// The poller's lag at `now`: seconds since its last finished round while tasks are open
    /// (0 when none is). A healthy poller stays near its interval; an upstream it backs off
    /// from, or a stuck round, makes it grow.
    pub fn lag(&self, now: i64) -> i64 {
        if self.open.load(Ordering::Relaxed) == 0 {
            return 0;
        }
        now.saturating_sub(self.last_round.load(Ordering::Relaxed))
            .max(0)
    }

    /// Tasks per (list, status), as of the last round.
    pub fn counts(&self) -> Arc<Vec<(String, String, u64)>> {
        self.counts.load_full()
    }
}
