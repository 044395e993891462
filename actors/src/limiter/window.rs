//! A sliding window of counts in fixed buckets (a ring): requests or tokens of the last minute
//! in 60 one-second buckets, of the last day in 1,440 one-minute buckets. A count leaves the
//! window when its whole bucket has, so the window never under-counts: a limit holds exactly,
//! and a freed slot shows at most one bucket late. Pure; times are Unix milliseconds passed in.

/// Counts over the last `buckets × bucket_ms` milliseconds.
#[derive(Debug, Clone)]
pub struct Window {
    /// Length of one bucket.
    bucket_ms: i64,
    /// The ring: bucket `b` (absolute, `time / bucket_ms`) lives at `b % len`.
    ring: Box<[u64]>,
    /// The newest bucket the ring holds (absolute).
    head: i64,
    /// Sum of the ring.
    sum: u64,
}

impl Window {
    /// A window of `buckets` buckets of `bucket_ms` each.
    pub fn new(bucket_ms: i64, buckets: usize) -> Window {
        Window {
            bucket_ms: bucket_ms.max(1),
            ring: vec![0; buckets.max(1)].into_boxed_slice(),
            head: 0,
            sum: 0,
        }
    }

    /// One minute in one-second buckets.
    pub fn minute() -> Window {
        Window::new(1_000, 60)
    }

    /// One day in one-minute buckets.
    pub fn day() -> Window {
        Window::new(60_000, 1_440)
    }

    fn len(&self) -> i64 {
        i64::try_from(self.ring.len()).unwrap_or(i64::MAX)
    }

    fn slot(&self, bucket: i64) -> usize {
        usize::try_from(bucket.rem_euclid(self.len())).unwrap_or(0)
    }

    /// Moves the window to `now`, dropping the buckets that left it.
    fn advance(&mut self, now: i64) {
        let bucket = now.div_euclid(self.bucket_ms);
        if bucket <= self.head {
            return;
        }
        if bucket - self.head >= self.len() {
            self.ring.iter_mut().for_each(|b| *b = 0);
            self.sum = 0;
        } else {
            for b in self.head + 1..=bucket {
                let slot = self.slot(b);
                self.sum -= self.ring[slot];
                self.ring[slot] = 0;
            }
        }
        self.head = bucket;
    }

    /// What the window holds at `now`.
    pub fn used(&mut self, now: i64) -> u64 {
        self.advance(now);
        self.sum
    }

    /// Whether the window holds nothing at `now`.
    pub fn is_empty(&mut self, now: i64) -> bool {
        self.used(now) == 0
    }

    /// Counts `n` at `now`.
    pub fn add(&mut self, now: i64, n: u64) {
        self.advance(now);
        let slot = self.slot(self.head);
        self.ring[slot] = self.ring[slot].saturating_add(n);
        self.sum = self.sum.saturating_add(n);
    }

    /// Corrects what was counted at `at` by `delta` (a reservation settled for less or more),
    /// if that bucket is still in the window; a bucket never goes below zero.
    pub fn adjust(&mut self, now: i64, at: i64, delta: i64) {
        self.advance(now);
        let bucket = at.div_euclid(self.bucket_ms);
        if bucket > self.head || self.head - bucket >= self.len() {
            return;
        }
        let slot = self.slot(bucket);
        let before = self.ring[slot];
        let after = if delta >= 0 {
            before.saturating_add(delta.unsigned_abs())
        } else {
            before.saturating_sub(delta.unsigned_abs())
        };
        self.ring[slot] = after;
        self.sum = self.sum - before + after;
    }

    /// Milliseconds from `now` until the window holds at most `limit - need` (so `need` more
    /// fit under `limit`); 0 when they fit now. `None` when they never fit (`need > limit`).
    pub fn wait_for(&mut self, now: i64, need: u64, limit: u64) -> Option<i64> {
        if need > limit {
            return None;
        }
        self.advance(now);
        let mut left = self.sum;
        if left + need <= limit {
            return Some(0);
        }
        let oldest = self.head - self.len() + 1;
        for b in oldest..=self.head {
            left -= self.ring[self.slot(b)];
            if left + need <= limit {
                let leaves_at = (b + self.len()).saturating_mul(self.bucket_ms);
                return Some((leaves_at - now).max(1));
            }
        }
        Some((self.len() * self.bucket_ms).max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_leave_the_window_a_minute_later_never_earlier() {
        let mut w = Window::minute();
        w.add(10_500, 1);
        w.add(30_000, 2);
        assert_eq!(w.used(69_999), 3, "the first request's bucket is still in");
        assert_eq!(w.used(70_000), 2, "its second left at 70 s");
        assert_eq!(w.used(90_000), 0);
        w.add(1_000_000, 5);
        assert_eq!(w.used(1_000_001), 5, "a long idle gap empties the ring");
    }

    #[test]
    fn wait_for_names_when_enough_has_left() {
        let mut w = Window::minute();
        w.add(0, 3);
        w.add(20_000, 2);
        assert_eq!(w.wait_for(30_000, 1, 10), Some(0));
        assert_eq!(
            w.wait_for(30_000, 6, 10),
            Some(30_000),
            "at 60 s the first 3 leave"
        );
        assert_eq!(
            w.wait_for(30_000, 9, 10),
            Some(50_000),
            "at 80 s the other 2"
        );
        assert_eq!(w.wait_for(30_000, 11, 10), None);
    }

    #[test]
    fn a_reservation_is_corrected_in_its_own_bucket() {
        let mut w = Window::minute();
        w.add(1_000, 1_000);
        w.adjust(5_000, 1_000, -700);
        assert_eq!(w.used(5_000), 300);
        w.adjust(5_000, 1_000, -5_000);
        assert_eq!(w.used(5_000), 0, "never below zero");
        w.adjust(70_000, 1_000, 400);
        assert_eq!(w.used(70_000), 0, "a bucket that left is not corrected");
    }

    #[test]
    fn a_day_window_is_in_minutes() {
        let mut w = Window::day();
        w.add(0, 1);
        assert_eq!(w.used(86_399_999), 1);
        assert_eq!(w.used(86_400_000), 0);
    }
}
