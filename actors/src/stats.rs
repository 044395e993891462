//! Lock-free measurements for `/metrics`: a fixed-bucket [`Histogram`] of durations and the log
//! writer's [`WriterStats`]. Recording is a few relaxed atomic additions (no lock, no
//! allocation); a scrape reads them with [`Histogram::snapshot`]. The exposition itself lives in
//! the server crate; this crate only counts.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

/// A histogram of durations over fixed upper bounds (in seconds, ascending), plus an overflow
/// bucket. Buckets hold their own counts (not cumulative); the sum is kept in microseconds.
#[derive(Debug)]
pub struct Histogram {
    /// Upper bounds in seconds, ascending.
    bounds: &'static [f64],
    /// One count per bound, then the overflow (`+Inf`) bucket.
    buckets: Box<[AtomicU64]>,
    /// Sum of the observations, in microseconds.
    sum_micros: AtomicU64,
}

/// What a histogram held when it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramSnapshot {
    /// `(upper bound in seconds, count in this bucket)`, the overflow bucket last with
    /// `f64::INFINITY`.
    pub buckets: Vec<(f64, u64)>,
    /// Number of observations (the sum of the buckets, so the two always agree).
    pub count: u64,
    /// Sum of the observations in seconds.
    pub sum_seconds: f64,
}

impl Histogram {
    /// An empty histogram over `bounds` (seconds, ascending).
    pub fn new(bounds: &'static [f64]) -> Histogram {
        Histogram {
            bounds,
            buckets: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            sum_micros: AtomicU64::new(0),
        }
    }

    /// Records one observation.
    pub fn observe(&self, value: Duration) {
        let seconds = value.as_secs_f64();
        let index = self.bounds.partition_point(|bound| *bound < seconds);
        if let Some(bucket) = self.buckets.get(index) {
            bucket.fetch_add(1, Ordering::Relaxed);
        }
        let micros = u64::try_from(value.as_micros()).unwrap_or(u64::MAX);
        self.sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    /// Number of observations so far.
    pub fn count(&self) -> u64 {
        self.buckets
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .fold(0, u64::saturating_add)
    }

    /// The current counts.
    pub fn snapshot(&self) -> HistogramSnapshot {
        let buckets: Vec<(f64, u64)> = self
            .bounds
            .iter()
            .copied()
            .chain(std::iter::once(f64::INFINITY))
            .zip(self.buckets.iter().map(|b| b.load(Ordering::Relaxed)))
            .collect();
        let count = buckets.iter().map(|(_, n)| *n).fold(0, u64::saturating_add);
        // Microseconds to seconds: exact below 2^53 µs (285 years of durations).
        let sum_seconds = self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        HistogramSnapshot {
            buckets,
            count,
            sum_seconds,
        }
    }
}

/// Upper bounds (seconds) of the commit-latency histogram: a commit takes about half a
/// millisecond of CPU and an fsync; a starved or failing one, much longer.
pub const COMMIT_BOUNDS: &[f64] = &[
    0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// What the log writer reports: settlements queued but not committed yet, and how long each
/// commit took.
#[derive(Debug)]
pub struct WriterStats {
    /// Settlements queued and not yet committed (or given up at shutdown).
    pending: AtomicI64,
    /// Duration of each successful commit (the write transaction and its fsync).
    commits: Histogram,
}

impl Default for WriterStats {
    fn default() -> Self {
        WriterStats {
            pending: AtomicI64::new(0),
            commits: Histogram::new(COMMIT_BOUNDS),
        }
    }
}

impl WriterStats {
    /// One more settlement queued.
    pub fn queued(&self) {
        self.pending.fetch_add(1, Ordering::Relaxed);
    }

    /// `settlements` left the queue (committed, dropped as unstorable, or given up).
    pub fn done(&self, settlements: usize) {
        let n = i64::try_from(settlements).unwrap_or(i64::MAX);
        self.pending.fetch_sub(n, Ordering::Relaxed);
    }

    /// A commit of some settlements took `took`.
    pub fn committed(&self, took: Duration) {
        self.commits.observe(took);
    }

    /// Settlements queued and not yet committed.
    pub fn queue_depth(&self) -> u64 {
        u64::try_from(self.pending.load(Ordering::Relaxed)).unwrap_or(0)
    }

    /// The commit durations.
    pub fn commits(&self) -> &Histogram {
        &self.commits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_land_in_the_first_bucket_whose_bound_holds_them() {
        static BOUNDS: &[f64] = &[0.1, 1.0];
        let h = Histogram::new(BOUNDS);
        h.observe(Duration::from_millis(100)); // le 0.1 (bounds are inclusive)
        h.observe(Duration::from_millis(500));
        h.observe(Duration::from_secs(3));
        let s = h.snapshot();
        assert_eq!(
            s.buckets,
            vec![(0.1, 1), (1.0, 1), (f64::INFINITY, 1)],
            "one in each bucket"
        );
        assert_eq!(s.count, 3);
        assert!((s.sum_seconds - 3.6).abs() < 1e-9, "{}", s.sum_seconds);
    }

    #[test]
    fn the_queue_depth_never_reads_below_zero() {
        let stats = WriterStats::default();
        stats.queued();
        stats.queued();
        stats.done(1);
        assert_eq!(stats.queue_depth(), 1);
        stats.done(5);
        assert_eq!(stats.queue_depth(), 0);
    }
}
