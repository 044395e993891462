//! The book: every loaded ledger by user, the clock of budget windows, the settlement watcher,
//! and [`QuotaBook::ledger`], which finds a user's ledger (loading it from storage on first use,
//! or first use after a sweep dropped it) and pins it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use dashmap::DashMap;
use dashmap::mapref::entry::Entry;
use tollgate_storage::budgets::{self, KEEP_SECS, Owner};
use tollgate_storage::logs::LogEntry;
use tollgate_storage::{StorageError, Store, TokenId, UserId, tokens, users};

use super::budget::BudgetBook;
use super::ledger::Ledger;
use super::pin::{Pinned, Slot, lock};
use crate::log_writer::LogWriter;
use crate::options::Options;
use crate::storage_health::{StorageFault, StorageHealth};

/// Handle on all ledgers. Cheap to clone.
#[derive(Clone)]
pub struct QuotaBook {
    /// Where ledgers are loaded from.
    pub(super) store: Store,
    /// Persists settled changes.
    pub(super) writer: LogWriter,
    /// user → ledger. A ledger's mutex is held only for in-memory arithmetic.
    pub(super) ledgers: Arc<DashMap<UserId, Arc<Slot>, foldhash::fast::RandomState>>,
    /// Told about every settled charge (the quota reminder), once installed.
    pub(super) watch: Arc<OnceLock<Arc<dyn SettleWatch>>>,
    /// The clock and time zone of budget windows, once installed (else the system clock, UTC).
    budget_env: Arc<OnceLock<BudgetEnv>>,
    /// Sweeps that dropped ledgers so far (a load that saw it change is made again).
    pub(super) sweeps: Arc<AtomicU64>,
    /// Ledgers read from storage.
    pub(super) loads: Arc<AtomicU64>,
    /// Ledgers dropped by sweeps.
    pub(super) evicted: Arc<AtomicU64>,
    /// When the book started: ledgers' last uses are counted from it ([`Pinned`]).
    pub(super) born: Instant,
}

/// Seconds since the Unix epoch, as a clock tells them.
pub type UnixClock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// Where budget windows read the time: the server's clock (tests move it) and the options'
/// BudgetTimeZone.
#[derive(Clone)]
struct BudgetEnv {
    options: Options,
    clock: UnixClock,
}

/// Told about every request settlement that charged something, right after it (no lock held).
/// Runs on the request's task, so it must only decide and hand real work elsewhere.
pub trait SettleWatch: Send + Sync {
    /// `user`'s balance is now `balance`.
    fn settled(&self, user: UserId, balance: i64);
}

impl QuotaBook {
    /// A book over `store`, persisting through `writer`.
    pub fn new(store: Store, writer: LogWriter) -> QuotaBook {
        QuotaBook {
            store,
            writer,
            ledgers: Arc::new(DashMap::default()),
            watch: Arc::new(OnceLock::new()),
            budget_env: Arc::new(OnceLock::new()),
            sweeps: Arc::default(),
            loads: Arc::default(),
            evicted: Arc::default(),
            born: Instant::now(),
        }
    }

    /// Installs the clock and options budget windows read (once; later calls are ignored).
    pub fn use_budget_env(&self, options: Options, clock: UnixClock) {
        let _ = self.budget_env.set(BudgetEnv { options, clock });
    }

    /// Now, and the time zone of calendar windows.
    pub(super) fn budget_now(&self) -> (i64, jiff::tz::TimeZone) {
        match self.budget_env.get() {
            Some(env) => ((env.clock)(), env.options.current().budget_zone().clone()),
            None => (jiff::Timestamp::now().as_second(), jiff::tz::TimeZone::UTC),
        }
    }

    /// Now, as budget windows read it.
    pub fn budget_clock(&self) -> i64 {
        match self.budget_env.get() {
            Some(env) => (env.clock)(),
            None => jiff::Timestamp::now().as_second(),
        }
    }

    /// Installs the settlement watcher (once; later calls are ignored).
    pub fn watch_settlements(&self, watch: Arc<dyn SettleWatch>) {
        let _ = self.watch.set(watch);
    }

    /// The ledger of `user`, pinned, loading it (and `token`) from storage on first use (or
    /// first use after a sweep dropped it).
    pub(super) async fn ledger(
        &self,
        user: UserId,
        token: Option<TokenId>,
    ) -> Result<Pinned, StorageError> {
        let needs_token = |l: &Pinned| token.is_some_and(|t| !lock(l).knows_token(t));
        loop {
            // A ledger a sweep is dropping is not pinned: it is looked up again (the sweep
            // decides under the map's lock, so the next look finds it gone or kept).
            let found = self.ledgers.get(&user).map(|l| Arc::clone(l.value()));
            let existing = match found {
                Some(slot) => match Pinned::new(slot, self.born) {
                    Some(ledger) => Some(ledger),
                    None => continue,
                },
                None => None,
            };
            let existing = match existing {
                Some(ledger) if !needs_token(&ledger) => return Ok(ledger),
                other => other,
            };
            let sweeps = self.sweeps.load(Ordering::Acquire);
            let since = self.budget_clock().saturating_sub(KEEP_SECS);
            self.loads.fetch_add(1, Ordering::Relaxed);
            let (balance, user_budget, token_row) = self
                .store
                .read(move |rtx| {
                    let user =
                        users::get(rtx, user)?.ok_or(StorageError::NotFound { what: "user" })?;
                    let user_budget = budgets::load(rtx, Owner::User(user.id), since)?;
                    let token = match token {
                        Some(id) => match tokens::get(rtx, id)? {
                            Some(row) => Some((row, budgets::load(rtx, Owner::Token(id), since)?)),
                            None => None,
                        },
                        None => None,
                    };
                    Ok::<_, StorageError>((user.quota.0, user_budget, token))
                })
                .await?;
            let book = |loaded: Option<budgets::Loaded>| {
                loaded.map(|(b, spend)| BudgetBook::new(b, spend))
            };
            let ledger = match existing {
                Some(ledger) => ledger,
                // Race-safe get-or-insert: whoever inserted first wins; the other's load is
                // discarded. A load that read storage while a sweep ran is made again: the
                // sweep may have dropped a ledger whose last change that read missed.
                None => match self.ledgers.entry(user) {
                    Entry::Occupied(kept) => match Pinned::new(Arc::clone(kept.get()), self.born) {
                        Some(ledger) => ledger,
                        None => continue,
                    },
                    Entry::Vacant(slot) => {
                        if self.sweeps.load(Ordering::Acquire) != sweeps {
                            continue;
                        }
                        let fresh = Slot::new(Ledger::new(balance).with_budget(book(user_budget)));
                        slot.insert(Arc::clone(&fresh));
                        match Pinned::new(fresh, self.born) {
                            Some(ledger) => ledger,
                            None => continue,
                        }
                    }
                },
            };
            if let Some((row, budget)) = token_row {
                lock(&ledger).add_token(
                    row.id,
                    row.remain_quota.0,
                    row.unlimited_quota,
                    book(budget),
                );
            }
            return Ok(ledger);
        }
    }

    /// Queues a log row that changes no balance (e.g. a failed request's error row).
    pub fn log(&self, log: LogEntry) {
        self.writer.record(None, Some(log));
    }

    /// Waits until every settled change so far is committed; the storage fault instead when
    /// a commit failed (the changes are kept and retried).
    pub async fn flush(&self) -> Result<(), StorageFault> {
        self.writer.flush().await
    }

    /// Whether paid requests may be served (no storage fault; see [`LogWriter::storage_ok`]).
    pub fn storage_ok(&self) -> bool {
        self.writer.storage_ok()
    }

    /// Whether settlements reach the database: the fault while they do not.
    pub fn storage_health(&self) -> &StorageHealth {
        self.writer.health()
    }

    /// Runs `f` on the ledger of `user` if it is loaded.
    pub(super) fn with_ledger<T>(
        &self,
        user: UserId,
        f: impl FnOnce(&mut Ledger) -> T,
    ) -> Option<T> {
        let ledger = self.ledgers.get(&user).map(|l| Arc::clone(l.value()))?;
        Some(f(&mut lock(&ledger)))
    }
}
