//! Idle ledgers leave memory (P17 item 3): a ledger is in memory while used and is rebuilt
//! exactly from storage on its user's next request.
//!
//! Exact, because a ledger is dropped only when storage holds everything it holds: no request
//! holds it ([`super::pin::Pinned`]: every user of a ledger pins it, a [`super::Hold`] for its whole life,
//! a credit across its commit, and a pin ends only after the change it made was queued to the
//! log writer), no reservation runs, and it was last pinned before the log writer's flush that
//! the sweep waits for began, so that flush committed its last change. What a ledger holds is
//! then all in storage: the balance, each key's remaining quota, and the budget windows'
//! spend (the writer's quarter-hour spend rows, which a load sums). A sweep marks a ledger it
//! drops as evicted ([`super::pin`]); whoever fetched it just before looks again and
//! loads a fresh one. A load that read storage while a sweep ran is discarded (the sweep count
//! changed), so a load never keeps a read older than a dropped ledger's last change.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::book::QuotaBook;

impl QuotaBook {
    /// Drops the ledgers unused for `idle` (see the module): waits for the log writer to commit
    /// everything settled so far, then drops those last used `idle` before the wait began.
    /// Returns how many were dropped; none while settlements cannot be committed.
    pub async fn evict_idle(&self, idle: Duration) -> usize {
        let began = Instant::now();
        if self.writer.flush().await.is_err() {
            return 0;
        }
        // The cutoff in nanoseconds since the book's start, as pins record their last use.
        let Some(cutoff) = began
            .checked_sub(idle)
            .and_then(|cutoff| cutoff.checked_duration_since(self.born))
        else {
            return 0;
        };
        let cutoff = u64::try_from(cutoff.as_nanos()).unwrap_or(u64::MAX);
        // Loads that read storage from here on are discarded and made again.
        self.sweeps.fetch_add(1, Ordering::AcqRel);
        let mut dropped = 0;
        self.ledgers.retain(|_, slot| {
            let evicted = slot.evict(cutoff);
            dropped += usize::from(evicted);
            !evicted
        });
        self.evicted.fetch_add(dropped as u64, Ordering::Relaxed);
        dropped
    }

    /// Ledgers in memory.
    pub fn ledgers_loaded(&self) -> usize {
        self.ledgers.len()
    }

    /// Ledgers read from storage since start (first use, or use after eviction).
    pub fn ledger_loads(&self) -> u64 {
        self.loads.load(Ordering::Relaxed)
    }

    /// Ledgers dropped for idleness since start.
    pub fn ledger_evictions(&self) -> u64 {
        self.evicted.load(Ordering::Relaxed)
    }
}
