//! Which commits of the log writer are made durable (fsync) and what is kept until they are.
//!
//! A durable commit's fsync and page writes cost about half a millisecond of CPU here whatever
//! the batch's size. Between two durable commits the writer commits without one (redb's
//! `Durability::None`: readers see the commit at once; the next durable commit persists it, a
//! crash rolls it back). So that nothing is lost, the settlements of those commits are kept
//! (and the crash journal is not trimmed past them) until a durable commit covers them; a
//! commit that fails takes them back into its batch (its reopen may have rolled them back).

use std::time::{Duration, Instant};

use super::Batch;
use crate::stats::WriterStats;

/// How many gather intervals may pass between two durable commits while settlements keep
/// coming (100 ms at the default [`super::GATHER`]; with an interval of 0 every commit is
/// durable). What a power loss (not a process crash: the journal) can lose grows from one
/// interval to about this many.
pub const DURABLE_EVERY_INTERVALS: u32 = 5;

/// The writer's commits not durable yet.
#[derive(Default)]
pub(super) struct Pending {
    /// Longest a commit may stay not durable.
    every: Duration,
    /// When the last durable commit was made (`None`: none yet).
    last: Option<Instant>,
    /// Settlements committed without an fsync since, in number order.
    kept: Batch,
    /// The highest number among them.
    through: Option<u64>,
}

impl Pending {
    /// For a writer gathering batches for `gather` (see [`DURABLE_EVERY_INTERVALS`]).
    pub(super) fn new(gather: Duration) -> Pending {
        Pending {
            every: gather.saturating_mul(DURABLE_EVERY_INTERVALS),
            ..Pending::default()
        }
    }

    /// Whether the next commit must be durable: when a flush waits for it (a shutdown's
    /// too), or when the last durable commit is [`DURABLE_EVERY_INTERVALS`] intervals old (or
    /// there was none: an idle system's lone settlement is durable at once).
    pub(super) fn durable_next(&self, flush_waits: bool, now: Instant) -> bool {
        flush_waits
            || self
                .last
                .is_none_or(|at| now.saturating_duration_since(at) >= self.every)
    }

    /// When a durable commit is due while commits wait for one (`None`: none waits).
    pub(super) fn due(&self) -> Option<Instant> {
        if self.kept.is_empty() {
            return None;
        }
        Some(self.last.map_or_else(Instant::now, |at| at + self.every))
    }

    /// Keeps a batch committed without an fsync (it is emptied), covering numbers up to
    /// `through`.
    pub(super) fn keep(&mut self, batch: &mut Batch, through: Option<u64>) {
        self.kept.append(batch);
        self.through = self.through.max(through);
    }

    /// Puts what is kept in front of `batch` (a failed commit's, to be retried durably): those
    /// settlements are back in the queue until then.
    pub(super) fn take_back(&mut self, batch: &mut Batch, stats: &WriterStats) {
        let mut all = std::mem::take(&mut self.kept);
        for _ in 0..all.len() {
            stats.queued();
        }
        all.append(batch);
        *batch = all;
        self.through = None;
    }

    /// A durable commit covering up to `through` succeeded: everything committed so far is in
    /// the file for good. Returns the number the journal may be trimmed through.
    pub(super) fn made_durable(&mut self, through: Option<u64>, now: Instant) -> Option<u64> {
        self.kept.clear();
        self.last = Some(now);
        through.max(self.through.take())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_is_durable_when_flushed_when_due_and_after_a_quiet_spell() {
        let start = Instant::now();
        let mut pending = Pending::new(Duration::from_millis(20));
        assert!(pending.durable_next(false, start), "the first commit");
        assert_eq!(pending.made_durable(Some(3), start), Some(3));
        let soon = start + Duration::from_millis(40);
        assert!(!pending.durable_next(false, soon), "under load");
        assert!(pending.durable_next(true, soon), "a flush waits");
        assert!(pending.due().is_none(), "nothing kept");
        pending.keep(&mut Vec::new(), Some(9));
        assert_eq!(pending.due(), None, "an empty batch keeps nothing");
        let late = start + Duration::from_millis(100);
        assert!(pending.durable_next(false, late), "5 intervals on");
        assert_eq!(
            pending.made_durable(None, late),
            Some(9),
            "the journal is trimmed through the kept numbers"
        );
        let every_commit = Pending::new(Duration::ZERO);
        assert!(every_commit.durable_next(false, start));
    }
}
