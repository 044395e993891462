//! `StorageHealth`: whether settlements are reaching the database. The log writer sets a fault
//! when a commit fails and clears it once one succeeds again; the relay refuses paid requests
//! while it is set (an answer whose charge cannot be recorded is not sold), and `/api/status`
//! shows it.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Why settlements are not being committed, and since when.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StorageFault {
    /// What the last failed commit said (an I/O error, a full disk, a panic).
    pub message: String,
    /// Unix seconds of the first failure of this fault.
    pub since: i64,
}

impl std::fmt::Display for StorageFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "settlements cannot be saved: {}", self.message)
    }
}

impl std::error::Error for StorageFault {}

/// Where a fault was seen: each clears only by its own success.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultSource {
    /// The log writer's commits to the database.
    Commit,
    /// Appends to the crash journal.
    Journal,
}

impl FaultSource {
    fn index(self) -> usize {
        match self {
            FaultSource::Commit => 0,
            FaultSource::Journal => 1,
        }
    }
}

/// Shared fault flag. Cheap to clone; reading it is one atomic load while healthy.
#[derive(Debug, Clone, Default)]
pub struct StorageHealth {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// One bit per [`FaultSource`] with a fault set (the hot path reads only this).
    faulted: AtomicU8,
    faults: Mutex<[Option<StorageFault>; 2]>,
}

impl StorageHealth {
    /// The current fault (the commit's first), if any.
    pub fn fault(&self) -> Option<StorageFault> {
        if !self.is_faulted() {
            return None;
        }
        let faults = self.lock();
        faults.iter().flatten().next().cloned()
    }

    /// Whether a fault is set.
    pub fn is_faulted(&self) -> bool {
        self.inner.faulted.load(Ordering::Acquire) != 0
    }

    /// Whether `source` has a fault set.
    pub fn has(&self, source: FaultSource) -> bool {
        self.inner.faulted.load(Ordering::Acquire) & (1 << source.index()) != 0
    }

    /// Records a failure of `source` (`now`: unix seconds); keeps the first failure's time.
    /// Returns whether this started the source's fault.
    pub fn fail(&self, source: FaultSource, message: String, now: i64) -> bool {
        let mut faults = self.lock();
        let slot = &mut faults[source.index()];
        let started = slot.is_none();
        let since = slot.as_ref().map_or(now, |f| f.since);
        *slot = Some(StorageFault { message, since });
        self.inner
            .faulted
            .fetch_or(1 << source.index(), Ordering::AcqRel);
        started
    }

    /// Clears the fault of `source`; returns the one that was set.
    pub fn recover(&self, source: FaultSource) -> Option<StorageFault> {
        let bit = 1 << source.index();
        if self.inner.faulted.load(Ordering::Acquire) & bit == 0 {
            return None;
        }
        let mut faults = self.lock();
        self.inner.faulted.fetch_and(!bit, Ordering::AcqRel);
        faults[source.index()].take()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, [Option<StorageFault>; 2]> {
        self.inner
            .faults
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_keeps_its_first_time_until_its_source_recovers() {
        let health = StorageHealth::default();
        assert_eq!(health.fault(), None);
        assert!(health.fail(FaultSource::Commit, "disk full".into(), 10));
        assert!(!health.fail(FaultSource::Commit, "I/O error".into(), 20));
        assert_eq!(
            health.fault(),
            Some(StorageFault {
                message: "I/O error".into(),
                since: 10
            })
        );
        assert!(health.fail(FaultSource::Journal, "journal full".into(), 30));
        assert!(health.recover(FaultSource::Commit).is_some());
        assert!(health.is_faulted(), "the journal still fails");
        assert_eq!(
            health.fault().map(|f| f.message),
            Some("journal full".into())
        );
        assert!(health.recover(FaultSource::Journal).is_some());
        assert!(!health.is_faulted());
        assert_eq!(health.fault(), None);
        assert_eq!(health.recover(FaultSource::Commit), None);
    }
}
