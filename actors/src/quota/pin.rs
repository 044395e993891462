//! A ledger in memory and its pins ([`super::evict`] says why a ledger is pinned): the
//! [`Slot`] the book keeps per user is the ledger's mutex plus its life in memory — how many
//! hold it right now, when the last of them let go, whether a sweep dropped it — kept in
//! atomics beside the mutex, so pinning and unpinning take no lock.
//!
//! A pin and a sweep meet in one order (sequentially consistent atomics): a pin counts itself
//! and then looks at `evicted`; a sweep sets `evicted` and then looks at the count, undoing the
//! mark when someone pinned. So either the sweep sees the pin and keeps the ledger, or the pin
//! sees the mark and looks the user up again.

use std::ops::Deref;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use super::ledger::Ledger;

/// Locks a ledger. Poisoning cannot leave a ledger half-updated (its methods do not panic), so
/// a poisoned lock is taken as it is.
pub(super) fn lock(ledger: &Mutex<Ledger>) -> MutexGuard<'_, Ledger> {
    ledger.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One user's ledger as the book keeps it.
#[derive(Debug)]
pub(super) struct Slot {
    ledger: Mutex<Ledger>,
    /// Users of the ledger right now.
    pins: AtomicU32,
    /// When its last pin ended: nanoseconds since the book's start, plus one (0: never).
    used: AtomicU64,
    /// Dropped by a sweep: whoever holds it looks again.
    evicted: AtomicBool,
}

impl Slot {
    /// A slot for `ledger`, unpinned and never used.
    pub(super) fn new(ledger: Ledger) -> Arc<Slot> {
        Arc::new(Slot {
            ledger: Mutex::new(ledger),
            pins: AtomicU32::new(0),
            used: AtomicU64::new(0),
            evicted: AtomicBool::new(false),
        })
    }

    /// Marks the ledger dropped when a sweep may drop it: nobody holds it, nothing is
    /// reserved, and its last pin ended before `cutoff` (nanoseconds since the book's start).
    /// Returns whether it was marked.
    pub(super) fn evict(&self, cutoff: u64) -> bool {
        let guard = lock(&self.ledger);
        if !guard.holds_nothing() {
            return false;
        }
        self.evicted.store(true, SeqCst);
        let used = self.used.load(SeqCst);
        if self.pins.load(SeqCst) == 0 && used != 0 && used - 1 < cutoff {
            return true;
        }
        self.evicted.store(false, SeqCst);
        false
    }
}

impl Deref for Slot {
    type Target = Mutex<Ledger>;

    fn deref(&self) -> &Mutex<Ledger> {
        &self.ledger
    }
}

/// A ledger its holder uses: never evicted while held. Dropping it records the time.
#[derive(Debug)]
pub struct Pinned {
    slot: Arc<Slot>,
    /// The book's start, which `used` counts from.
    born: Instant,
}

impl Pinned {
    /// Pins `slot` (its book started at `born`), unless a sweep dropped it (then `None`: look
    /// the user up again).
    pub(super) fn new(slot: Arc<Slot>, born: Instant) -> Option<Pinned> {
        slot.pins.fetch_add(1, SeqCst);
        if slot.evicted.load(SeqCst) {
            slot.pins.fetch_sub(1, SeqCst);
            return None;
        }
        Some(Pinned { slot, born })
    }
}

impl Deref for Pinned {
    type Target = Mutex<Ledger>;

    fn deref(&self) -> &Mutex<Ledger> {
        &self.slot.ledger
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // The time first: a sweep that sees the count at zero sees this use.
        let ns = u64::try_from(self.born.elapsed().as_nanos()).unwrap_or(u64::MAX - 1);
        self.slot.used.fetch_max(ns + 1, SeqCst);
        self.slot.pins.fetch_sub(1, SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_or_recent_ledger_is_kept_and_an_evicted_one_refuses_pins() {
        let born = Instant::now();
        let slot = Slot::new(Ledger::new(5));
        assert!(!slot.evict(u64::MAX), "never used: kept");
        let pin = Pinned::new(Arc::clone(&slot), born).expect("pinned");
        assert!(!slot.evict(u64::MAX), "pinned: kept");
        assert!(!slot.evicted.load(SeqCst), "the sweep's mark is undone");
        drop(pin);
        let used = slot.used.load(SeqCst) - 1;
        assert!(!slot.evict(used), "used at the cutoff: kept");
        assert!(slot.evict(used + 1), "idle since the cutoff: dropped");
        assert!(
            Pinned::new(Arc::clone(&slot), born).is_none(),
            "dropped: look again"
        );
        assert_eq!(slot.pins.load(SeqCst), 0, "a refused pin counts nothing");
    }
}
