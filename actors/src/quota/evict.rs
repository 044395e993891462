//! Idle ledgers leave memory (P17 item 3): a ledger is in memory while used and is rebuilt
//! exactly from storage on its user's next request.
//!
//! Exact, because a ledger is dropped only when storage holds everything it holds: no request
//! holds it ([`Pinned`]: every user of a ledger pins it, a [`super::Hold`] for its whole life,
//! a credit across its commit, and a pin ends only after the change it made was queued to the
//! log writer), no reservation runs, and it was last pinned before the log writer's flush that
//! the sweep waits for began, so that flush committed its last change. What a ledger holds is
//! then all in storage: the balance, each key's remaining quota, and the budget windows'
//! spend (the writer's quarter-hour spend rows, which a load sums). A sweep marks a ledger it
//! drops as evicted under the ledger's lock; whoever fetched it just before looks again and
//! loads a fresh one. A load that read storage while a sweep ran is discarded (the sweep count
//! changed), so a load never keeps a read older than a dropped ledger's last change.

use std::ops::Deref;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::ledger::Ledger;
use super::{QuotaBook, lock};

/// Where a ledger stands in its life in memory (kept inside the ledger, under its lock).
#[derive(Debug, Default)]
pub struct Life {
    /// Users of the ledger right now.
    pins: u32,
    /// When its last pin ended.
    used: Option<Instant>,
    /// Dropped by a sweep: whoever holds it looks again.
    evicted: bool,
}

/// A ledger its holder uses: never evicted while held. Dropping it records the time.
pub struct Pinned(Arc<Mutex<Ledger>>);

impl Pinned {
    /// Pins `ledger`, unless a sweep dropped it (then `None`: look it up again).
    pub(super) fn new(ledger: Arc<Mutex<Ledger>>) -> Option<Pinned> {
        {
            let mut guard = lock(&ledger);
            let life = guard.life();
            if life.evicted {
                return None;
            }
            // The time is taken when the pin ends: a pinned ledger is never evictable.
            life.pins = life.pins.saturating_add(1);
        }
        Some(Pinned(ledger))
    }
}

impl Deref for Pinned {
    type Target = Mutex<Ledger>;

    fn deref(&self) -> &Mutex<Ledger> {
        &self.0
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        let mut guard = lock(&self.0);
        let life = guard.life();
        life.pins = life.pins.saturating_sub(1);
        life.used = Some(Instant::now());
    }
}

impl Ledger {
    /// Whether a sweep may drop the ledger: nobody holds it, nothing is reserved, and it was
    /// last used at or before `cutoff`.
    fn evictable(&mut self, cutoff: Instant) -> bool {
        let unheld = self.holds_nothing();
        let life = self.life();
        life.pins == 0 && unheld && life.used.is_some_and(|used| used <= cutoff)
    }
}

impl QuotaBook {
    /// Drops the ledgers unused for `idle` (see the module): waits for the log writer to commit
    /// everything settled so far, then drops those last used `idle` before the wait began.
    /// Returns how many were dropped; none while settlements cannot be committed.
    pub async fn evict_idle(&self, idle: Duration) -> usize {
        let began = Instant::now();
        if self.writer.flush().await.is_err() {
            return 0;
        }
        let Some(cutoff) = began.checked_sub(idle) else {
            return 0;
        };
        // Loads that read storage from here on are discarded and made again.
        self.sweeps.fetch_add(1, Ordering::AcqRel);
        let mut dropped = 0;
        self.ledgers.retain(|_, ledger| {
            let mut guard = lock(ledger);
            if guard.evictable(cutoff) {
                guard.life().evicted = true;
                dropped += 1;
                false
            } else {
                true
            }
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
