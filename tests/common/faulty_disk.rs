//! A database file backend that fails on command: redb's own file backend behind a switch the
//! test flips. Armed, it fails the n-th write from then on (and every write and sync after it)
//! with "no space left on device", or every sync, or panics inside a write, until healed; or it
//! holds the next sync (a commit in progress, its write lock held) until released.
#![allow(
    dead_code,
    reason = "each test binary uses a different subset of the harness"
)]

use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use redb::backends::FileBackend;
use redb::{BackendError, StorageBackend};
use tollgate_storage::store::BackendWrap;

/// Healthy.
const OFF: u8 = 0;
/// Failing writes (from the n-th) and syncs with ENOSPC.
const FULL: u8 = 1;
/// Failing syncs only (writes reach the page cache).
const SYNC: u8 = 2;
/// Panicking on a write.
const PANIC: u8 = 3;

/// The switch shared by the test and every backend opened through [`FaultSwitch::wrap`].
#[derive(Debug, Default)]
pub struct FaultSwitch {
    mode: AtomicU8,
    /// Writes still allowed before the armed fault starts.
    writes_left: AtomicU64,
    /// Set once the armed fault has failed an operation.
    hit: AtomicBool,
    /// The next sync waits while this holds `Hold::Armed` or `Hold::Holding`.
    hold: Mutex<Hold>,
    /// Signalled when `hold` changes.
    hold_changed: Condvar,
}

/// The state of [`FaultSwitch::hold_next_sync`].
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Hold {
    /// Syncs go through.
    #[default]
    Off,
    /// The next sync will be held.
    Armed,
    /// A sync is being held.
    Holding,
}

impl FaultSwitch {
    /// A healthy switch.
    pub fn new() -> Arc<FaultSwitch> {
        Arc::new(FaultSwitch::default())
    }

    /// The wrapper to open the database with.
    pub fn wrap(self: &Arc<Self>) -> BackendWrap {
        let switch = Arc::clone(self);
        Arc::new(move |inner| {
            Box::new(FaultyBackend {
                inner,
                switch: Arc::clone(&switch),
            })
        })
    }

    /// The disk is full from the `n`-th write on (1: the next one): that write and every
    /// write and sync after it fail until [`FaultSwitch::heal`].
    pub fn fill_at_write(&self, n: u64) {
        self.writes_left
            .store(n.saturating_sub(1), Ordering::SeqCst);
        self.mode.store(FULL, Ordering::SeqCst);
    }

    /// Every sync fails (the writes themselves succeed) until healed.
    pub fn fail_syncs(&self) {
        self.writes_left.store(0, Ordering::SeqCst);
        self.mode.store(SYNC, Ordering::SeqCst);
    }

    /// The next write panics (and every one after it, until healed).
    pub fn panic_on_write(&self) {
        self.writes_left.store(0, Ordering::SeqCst);
        self.mode.store(PANIC, Ordering::SeqCst);
    }

    /// The disk works again.
    pub fn heal(&self) {
        self.mode.store(OFF, Ordering::SeqCst);
    }

    /// The next sync (inside a commit, with the database's write lock held) waits until
    /// [`FaultSwitch::release`].
    pub fn hold_next_sync(&self) {
        *self.hold.lock().unwrap_or_else(PoisonError::into_inner) = Hold::Armed;
    }

    /// Whether a sync is being held now.
    pub fn holding(&self) -> bool {
        *self.hold.lock().unwrap_or_else(PoisonError::into_inner) == Hold::Holding
    }

    /// Lets the held sync (if any) go on; syncs are not held any more.
    pub fn release(&self) {
        *self.hold.lock().unwrap_or_else(PoisonError::into_inner) = Hold::Off;
        self.hold_changed.notify_all();
    }

    /// Holds this sync when one was asked for.
    fn hold_here(&self) {
        let mut hold = self.hold.lock().unwrap_or_else(PoisonError::into_inner);
        if *hold != Hold::Armed {
            return;
        }
        *hold = Hold::Holding;
        self.hold_changed.notify_all();
        while *hold == Hold::Holding {
            hold = self
                .hold_changed
                .wait(hold)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Whether the armed fault has failed an operation.
    pub fn was_hit(&self) -> bool {
        self.hit.load(Ordering::SeqCst)
    }

    /// Whether a write may go through.
    fn write_allowed(&self) -> std::io::Result<()> {
        match self.mode.load(Ordering::SeqCst) {
            OFF | SYNC => Ok(()),
            mode => {
                let left = self.writes_left.load(Ordering::SeqCst);
                if left > 0 {
                    self.writes_left.store(left - 1, Ordering::SeqCst);
                    return Ok(());
                }
                self.hit.store(true, Ordering::SeqCst);
                if mode == PANIC {
                    #[expect(clippy::panic, reason = "the fault this backend injects")]
                    {
                        panic!("injected panic inside a database write");
                    }
                }
                Err(full())
            }
        }
    }

    /// Whether a sync may go through.
    fn sync_allowed(&self) -> std::io::Result<()> {
        match self.mode.load(Ordering::SeqCst) {
            OFF => Ok(()),
            FULL if self.writes_left.load(Ordering::SeqCst) > 0 => Ok(()),
            _ => {
                self.hit.store(true, Ordering::SeqCst);
                Err(full())
            }
        }
    }
}

/// ENOSPC.
fn full() -> std::io::Error {
    std::io::Error::from_raw_os_error(28)
}

/// redb's file backend behind a [`FaultSwitch`].
#[derive(Debug)]
struct FaultyBackend {
    inner: FileBackend,
    switch: Arc<FaultSwitch>,
}

impl StorageBackend for FaultyBackend {
    fn len(&self) -> std::io::Result<u64> {
        self.inner.len()
    }
    fn read(&self, offset: u64, out: &mut [u8]) -> std::io::Result<()> {
        self.inner.read(offset, out)
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        self.switch.write_allowed()?;
        self.inner.set_len(len)
    }
    fn sync_data(&self) -> std::io::Result<()> {
        self.switch.hold_here();
        self.switch.sync_allowed()?;
        self.inner.sync_data()
    }
    fn write(&self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        self.switch.write_allowed()?;
        self.inner.write(offset, data)
    }
    fn close(&self) -> std::io::Result<()> {
        self.inner.close()
    }
    fn try_lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<bool, BackendError> {
        self.inner.try_lock_range(start, end)
    }
    fn try_lock_shared_range(
        &self,
        start: Bound<u64>,
        end: Bound<u64>,
    ) -> Result<bool, BackendError> {
        self.inner.try_lock_shared_range(start, end)
    }
    fn lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        self.inner.lock_range(start, end)
    }
    fn lock_shared_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        self.inner.lock_shared_range(start, end)
    }
    fn unlock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        self.inner.unlock_range(start, end)
    }
    fn query_lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<bool, BackendError> {
        self.inner.query_lock_range(start, end)
    }
}
