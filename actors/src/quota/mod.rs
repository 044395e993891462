//! `QuotaBook`: every user's ledger ([`ledger::Ledger`]) in memory, the only place balances are
//! decided. The relay reserves before forwarding and settles (or releases) after; console
//! operations that change a balance go through [`QuotaBook::adjust`]. Persistence is the log
//! writer's: every settled change is queued to it with its log row.
//!
//! Why not a mailbox actor per user (DESIGN.md step 4)? The same single-owner guarantee is kept
//! with a per-user mutex that is held for a few hundred nanoseconds and never across an
//! `.await`: different users never contend, and a reservation costs no cross-thread hand-off
//! (DESIGN.md measured those at tens of µs). A ledger is built from storage on a user's first
//! request and kept while used: [`QuotaBook::evict_idle`] drops idle ones ([`evict`]), and the
//! next request builds the ledger again, exactly.

pub mod budget;
mod evict;
pub mod ledger;
pub mod output;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use dashmap::DashMap;
use dashmap::mapref::entry::Entry;
use tollgate_storage::budgets::{self, KEEP_SECS, Owner};
use tollgate_storage::logs::{self, LogEntry};
use tollgate_storage::usage::{self, BalanceChange};
use tollgate_storage::{
    StorageError, Store, TokenId, UserId, WriteTransaction, tasks, tokens, users,
};

use crate::journal::HoldStart;
use crate::limiter;
use crate::log_writer::LogWriter;
use crate::options::Options;
use crate::storage_health::{StorageFault, StorageHealth};
use budget::BudgetBook;
use evict::Pinned;
pub use ledger::{Billed, BudgetView, Refusal};
use ledger::{HoldId, Ledger};
pub use output::OutputAsk;

/// Why a reservation failed.
#[derive(Debug, thiserror::Error)]
pub enum QuotaError {
    /// Not enough quota.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// A rate limit of the user (the model request limit among them) or of the key.
    #[error("{0}")]
    Limited(Box<limiter::Refusal>),
    /// The user (or token) could not be loaded.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// What a reservation checks inside the user's critical section before reserving: the user's
/// and the key's rate limits ([`limiter::Limiter::admit_caller`]), whose places the hold then
/// keeps (`None`: none apply).
pub trait Gate: FnOnce() -> Result<Option<limiter::Admission>, limiter::Refusal> {}

impl<F: FnOnce() -> Result<Option<limiter::Admission>, limiter::Refusal>> Gate for F {}

/// A gate that checks nothing.
pub fn no_gate() -> Result<Option<limiter::Admission>, limiter::Refusal> {
    Ok(None)
}

/// Handle on all ledgers. Cheap to clone.
#[derive(Clone)]
pub struct QuotaBook {
    /// Where ledgers are loaded from.
    store: Store,
    /// Persists settled changes.
    writer: LogWriter,
    /// user → ledger. A ledger's mutex is held only for in-memory arithmetic.
    ledgers: Arc<DashMap<UserId, Arc<Mutex<Ledger>>>>,
    /// Told about every settled charge (the quota reminder), once installed.
    watch: Arc<OnceLock<Arc<dyn SettleWatch>>>,
    /// The clock and time zone of budget windows, once installed (else the system clock, UTC).
    budget_env: Arc<OnceLock<BudgetEnv>>,
    /// Sweeps that dropped ledgers so far (a load that saw it change is made again).
    sweeps: Arc<AtomicU64>,
    /// Ledgers read from storage.
    loads: Arc<AtomicU64>,
    /// Ledgers dropped by sweeps.
    evicted: Arc<AtomicU64>,
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

/// What a request asks its user's ledger to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reservation {
    /// Held while the request runs: the most it is expected to cost.
    pub amount: i64,
    /// What must be available for the request to be admitted (at most `amount`): the rest of
    /// `amount`, if the answer uses it, may become a debt.
    pub needed: i64,
}

impl Reservation {
    /// Holds and needs the same `amount`.
    pub fn whole(amount: i64) -> Reservation {
        Reservation {
            amount,
            needed: amount,
        }
    }
}

/// A balance change decided inside [`QuotaBook::credit_with`]'s transaction.
#[derive(Debug, Clone)]
pub struct Credit {
    /// Quota added to the user's balance (negative: taken from it, e.g. an admin's decrease).
    pub amount: i64,
    /// The top-up log row recording it (its `created_at` is the change's time).
    pub log: LogEntry,
}

/// A running reservation. Dropping it without [`Hold::settle`] releases it, so a cancelled
/// request (client gone) never leaks reserved quota.
pub struct Hold {
    book: QuotaBook,
    /// The user's ledger, pinned while the request runs.
    ledger: Pinned,
    user: UserId,
    token: Option<TokenId>,
    id: HoldId,
    amount: i64,
    /// Its number in the crash journal, once journalled ([`Hold::journal`]).
    journal: Option<u64>,
    /// The rate limits' places the request holds ([`Hold::keep_limits`]): given back when the
    /// hold ends (settled, released or dropped), their tokens corrected at settlement.
    limits: Option<crate::limiter::Admission>,
    done: bool,
}

impl QuotaBook {
    /// A book over `store`, persisting through `writer`.
    pub fn new(store: Store, writer: LogWriter) -> QuotaBook {
        QuotaBook {
            store,
            writer,
            ledgers: Arc::new(DashMap::new()),
            watch: Arc::new(OnceLock::new()),
            budget_env: Arc::new(OnceLock::new()),
            sweeps: Arc::default(),
            loads: Arc::default(),
            evicted: Arc::default(),
        }
    }

    /// Installs the clock and options budget windows read (once; later calls are ignored).
    pub fn use_budget_env(&self, options: Options, clock: UnixClock) {
        let _ = self.budget_env.set(BudgetEnv { options, clock });
    }

    /// Now, and the time zone of calendar windows.
    fn budget_now(&self) -> (i64, jiff::tz::TimeZone) {
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
    async fn ledger(&self, user: UserId, token: Option<TokenId>) -> Result<Pinned, StorageError> {
        let needs_token = |l: &Pinned| token.is_some_and(|t| !lock(l).knows_token(t));
        loop {
            // A ledger a sweep just dropped is not pinned: it is looked up (or loaded) again.
            let existing = self
                .ledgers
                .get(&user)
                .map(|l| Arc::clone(l.value()))
                .and_then(Pinned::new);
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
                    Entry::Occupied(kept) => match Pinned::new(Arc::clone(kept.get())) {
                        Some(ledger) => ledger,
                        None => continue,
                    },
                    Entry::Vacant(slot) => {
                        if self.sweeps.load(Ordering::Acquire) != sweeps {
                            continue;
                        }
                        let fresh = Arc::new(Mutex::new(
                            Ledger::new(balance).with_budget(book(user_budget)),
                        ));
                        slot.insert(Arc::clone(&fresh));
                        match Pinned::new(fresh) {
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

    /// Reserves `amount` for a request of `user` with `token` (all of it must be available).
    pub async fn reserve(
        &self,
        user: UserId,
        token: Option<TokenId>,
        amount: i64,
    ) -> Result<Hold, QuotaError> {
        self.reserve_limited(user, token, Reservation::whole(amount), no_gate)
            .await
    }

    /// Like [`QuotaBook::reserve`], inside the user's critical section: first `gate` (the
    /// user's and the key's rate limits, the model request limit among them: a request over a
    /// limit is refused), then the budgets and the balance; a request refused by those takes
    /// back what `gate` counted. The hold keeps the gate's places.
    pub async fn reserve_limited(
        &self,
        user: UserId,
        token: Option<TokenId>,
        ask: Reservation,
        gate: impl Gate,
    ) -> Result<Hold, QuotaError> {
        let ledger = self.ledger(user, token).await?;
        let (id, limits) = {
            let mut guard = lock(&ledger);
            let mut limits = gate().map_err(|r| QuotaError::Limited(Box::new(r)))?;
            let reserved = (|| {
                if guard.has_budgets(token) {
                    let (now, zone) = self.budget_now();
                    let needed = ask.needed.clamp(0, ask.amount.max(0));
                    guard.check_budgets(token, needed, now, &zone)?;
                }
                guard.reserve(token, ask.amount, ask.needed)
            })();
            (undo_if_refused(reserved, &mut limits)?, limits)
        };
        Ok(Hold {
            book: self.clone(),
            ledger,
            user,
            token,
            id,
            amount: ask.amount,
            journal: None,
            limits,
            done: false,
        })
    }

    /// Reserves for a request priced by its output (see [`output`]): inside the user's critical
    /// section, after `gate` (as [`QuotaBook::reserve_limited`]'s), decides the output limit L
    /// the available balance covers and holds the prompt and L. Returns the hold and L.
    pub async fn reserve_output(
        &self,
        user: UserId,
        token: Option<TokenId>,
        ask: OutputAsk,
        gate: impl Gate,
    ) -> Result<(Hold, i64), QuotaError> {
        let ledger = self.ledger(user, token).await?;
        let ((id, tokens, amount), limits) = {
            let mut guard = lock(&ledger);
            let mut limits = gate().map_err(|r| QuotaError::Limited(Box::new(r)))?;
            let reserved = (|| {
                let mut cap = None;
                if guard.has_budgets(token) {
                    let (now, zone) = self.budget_now();
                    guard.check_budgets(token, ask.needed(), now, &zone)?;
                    cap = guard.budget_left(token, now, &zone);
                }
                guard.cap_by_budget(cap);
                guard.reserve_output(token, &ask)
            })();
            (undo_if_refused(reserved, &mut limits)?, limits)
        };
        Ok((
            Hold {
                book: self.clone(),
                ledger,
                user,
                token,
                id,
                amount,
                journal: None,
                limits,
                done: false,
            },
            tokens,
        ))
    }

    /// Queues a log row that changes no balance (e.g. a failed request's error row).
    pub fn log(&self, log: LogEntry) {
        self.writer.record(None, Some(log));
    }

    /// Adds `delta` to a user's balance (top-up, admin change) and persists it with `log`.
    pub async fn adjust(
        &self,
        user: UserId,
        delta: i64,
        log: Option<LogEntry>,
        at: i64,
    ) -> Result<(), QuotaError> {
        let ledger = self.ledger(user, None).await?;
        lock(&ledger).adjust(delta);
        let change = BalanceChange {
            user_id: user,
            token_id: None,
            charged: delta.saturating_neg(),
            is_request: false,
            at,
        };
        self.writer.record(Some(change), log);
        Ok(())
    }

    /// Runs `decide` in one write transaction and applies the balance change it returns (if
    /// any) to the stored balance, with its log row, in that same transaction; right after the
    /// commit, on the same blocking thread, the change is applied to the in-memory ledger.
    ///
    /// This is how one-shot credits (a redemption code, a paid order, an invite transfer) and
    /// admins' edits stay exactly-once: the state change that makes them one-shot, the balance
    /// change and the log row commit together or not at all. The ledger is loaded before the
    /// transaction and ledgers live for the whole process, so the in-memory balance never
    /// counts the change twice (it was read before) and never misses it: the ledger is adjusted
    /// by the blocking task itself, so a caller that goes away (its HTTP client disconnected)
    /// while the commit runs cannot leave memory behind storage. Balance changes are deltas on
    /// both sides, so settlements still queued at the log writer compose with this one in any
    /// order.
    pub async fn credit_with<T, E, F>(&self, user: UserId, decide: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StorageError> + Send + 'static,
        F: FnOnce(&WriteTransaction) -> Result<(T, Option<Credit>), E> + Send + 'static,
    {
        let ledger = self.ledger(user, None).await?;
        let store = self.store.clone();
        let commit = move || {
            let (value, amount) = store.write_blocking(move |wtx| {
                let (value, credit) = decide(wtx)?;
                let Some(credit) = credit else {
                    return Ok((value, None));
                };
                let charged = credit.amount.checked_neg().ok_or(StorageError::Overflow)?;
                usage::apply(
                    wtx,
                    BalanceChange {
                        user_id: user,
                        token_id: None,
                        charged,
                        is_request: false,
                        at: credit.log.created_at,
                    },
                )?;
                logs::insert(wtx, credit.log)?;
                Ok::<_, E>((value, Some(credit.amount)))
            })?;
            if let Some(amount) = amount {
                lock(&ledger).adjust(amount);
            }
            Ok::<_, E>(value)
        };
        tokio::task::spawn_blocking(commit)
            .await
            .map_err(|e| E::from(StorageError::Join(e)))?
    }

    /// Runs `decide` in one write transaction; the refund it returns (made by
    /// [`tollgate_storage::tasks::refund`] in that transaction, with its log row) is then
    /// applied to `user`'s in-memory ledger — the balance, the token's remaining quota when
    /// the refund says it has a limit, and the budget windows of the user and the key — on the
    /// same blocking thread, right after the commit, as
    /// [`QuotaBook::credit_with`] does for credits (the ledger is loaded before the
    /// transaction, so the refund is counted exactly once).
    pub async fn refund_with<T, E, F>(&self, user: UserId, decide: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StorageError> + Send + 'static,
        F: FnOnce(&WriteTransaction) -> Result<(T, Option<tasks::Refunded>), E> + Send + 'static,
    {
        let ledger = self.ledger(user, None).await?;
        let store = self.store.clone();
        let commit = move || {
            let (value, refunded) = store.write_blocking(decide)?;
            if let Some(r) = refunded.filter(|r| r.user == user) {
                let mut ledger = lock(&ledger);
                ledger.adjust(r.amount);
                if let Some(token) = r.token {
                    ledger.adjust_token(token, r.amount);
                }
                if r.amount >= 0 {
                    ledger.budget_refunded(r.key, r.charged_at, r.amount);
                } else {
                    // A correction that charged more (`tasks::recharge`) counts as spent.
                    ledger.budget_spent(r.key, r.charged_at, r.amount.saturating_neg());
                }
            }
            Ok::<_, E>(value)
        };
        tokio::task::spawn_blocking(commit)
            .await
            .map_err(|e| E::from(StorageError::Join(e)))?
    }

    /// The remaining quota the ledger holds for `token` of `user` (loading both if needed):
    /// the base for an owner's edit of the token's remaining quota.
    pub async fn token_remain(&self, user: UserId, token: TokenId) -> Result<i64, StorageError> {
        let ledger = self.ledger(user, Some(token)).await?;
        let remain = lock(&ledger).token_remain(token);
        Ok(remain.unwrap_or(0))
    }

    /// Applies an owner's edit of a token to the ledger: `delta` added to its remaining quota
    /// (already committed to storage as the same delta) and its limit kind.
    pub fn edit_token(&self, user: UserId, token: TokenId, delta: i64, unlimited: bool) {
        self.with_ledger(user, |l| {
            l.adjust_token(token, delta);
            l.set_token_unlimited(token, unlimited);
        });
    }

    /// The balance of `user` as the ledger holds it (loading it if needed): settled charges
    /// included, even those the log writer has not committed yet.
    pub async fn current_balance(&self, user: UserId) -> Result<i64, StorageError> {
        let ledger = self.ledger(user, None).await?;
        let balance = lock(&ledger).balance();
        Ok(balance)
    }

    /// Whether `user` (and `token`, when it has a limit) has anything available beyond the
    /// running reservations ([`Ledger::check_available`]); reserves nothing. Loads the ledger on
    /// first sight, then reads memory only: the relay asks it before reading a request's body.
    pub async fn check_available(
        &self,
        user: UserId,
        token: Option<TokenId>,
    ) -> Result<(), QuotaError> {
        let ledger = self.ledger(user, token).await?;
        let guard = lock(&ledger);
        guard.check_available(token)?;
        if guard.has_budgets(token) {
            let (now, zone) = self.budget_now();
            guard.check_budgets(token, 1, now, &zone)?;
        }
        Ok(())
    }

    /// The budget windows of `user` and `token` as admission sees them (loading the ledger if
    /// needed): for dashboards and editors.
    pub async fn budget_view(
        &self,
        user: UserId,
        token: Option<TokenId>,
    ) -> Result<BudgetView, StorageError> {
        let ledger = self.ledger(user, token).await?;
        let (now, zone) = self.budget_now();
        let view = lock(&ledger).budget_view(token, now, &zone);
        Ok(view)
    }

    /// Applies budgets an admin or owner just stored for `owner` (a user, or a key of `user`) to
    /// a loaded ledger: the windows are replaced and the spend kept; an owner that had no
    /// budget gets its stored spend (after the log writer's pending charges are committed).
    /// A ledger not loaded yet reads them when it is.
    pub async fn budgets_changed(&self, user: UserId, owner: Owner) -> Result<(), StorageError> {
        let Some(ledger) = self.ledgers.get(&user).map(|l| Arc::clone(l.value())) else {
            return Ok(());
        };
        let token = match owner {
            Owner::User(_) => None,
            Owner::Token(t) => Some(t),
        };
        let tracked = match lock(&ledger).budget_mut(token) {
            None => return Ok(()),
            Some(book) => book.is_some(),
        };
        if !tracked {
            // Charges still queued would be missing from the stored spend.
            let _ = self.writer.flush().await;
        }
        let since = self.budget_clock().saturating_sub(KEEP_SECS);
        let loaded = self
            .store
            .read(move |rtx| budgets::load(rtx, owner, since))
            .await?;
        let mut guard = lock(&ledger);
        if let Some(slot) = guard.budget_mut(token) {
            *slot = match (slot.take(), loaded) {
                (_, None) => None,
                (Some(mut book), Some((b, _))) => {
                    book.set_budgets(b);
                    Some(book)
                }
                (None, Some((b, spend))) => Some(BudgetBook::new(b, spend)),
            };
        }
        Ok(())
    }

    /// The in-memory balance of `user`, if loaded.
    pub fn balance(&self, user: UserId) -> Option<i64> {
        let ledger = self.ledgers.get(&user).map(|l| Arc::clone(l.value()))?;
        Some(lock(&ledger).balance())
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

    fn with_ledger<T>(&self, user: UserId, f: impl FnOnce(&mut Ledger) -> T) -> Option<T> {
        let ledger = self.ledgers.get(&user).map(|l| Arc::clone(l.value()))?;
        Some(f(&mut lock(&ledger)))
    }
}

/// `reserved`, or its refusal after taking back what the gate's `limits` counted.
fn undo_if_refused<T>(
    reserved: Result<T, Refusal>,
    limits: &mut Option<limiter::Admission>,
) -> Result<T, Refusal> {
    if reserved.is_err()
        && let Some(limits) = limits.take()
    {
        limits.undo();
    }
    reserved
}

/// Locks a ledger. Poisoning cannot leave a ledger half-updated (its methods do not panic), so
/// a poisoned lock is taken as it is.
fn lock(ledger: &Mutex<Ledger>) -> std::sync::MutexGuard<'_, Ledger> {
    ledger
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Hold {
    /// The reserved amount.
    pub fn amount(&self) -> i64 {
        self.amount
    }

    /// Holds `admission`'s rate-limit places with the reservation (joined to any held
    /// already): a concurrency place is given back when the hold ends — for a stream, at its
    /// last byte, when the meter settles — and reserved tokens are corrected by
    /// [`Hold::settle_limits`].
    pub fn keep_limits(&mut self, admission: crate::limiter::Admission) {
        if admission.is_empty() {
            return;
        }
        match &mut self.limits {
            Some(held) => held.join(admission),
            None => self.limits = Some(admission),
        }
    }

    /// OpenAI's `x-ratelimit-*` headers for the strictest of the rate limits held.
    pub fn limit_headers(&self) -> Vec<(&'static str, String)> {
        self.limits
            .as_ref()
            .map(limiter::Admission::headers)
            .unwrap_or_default()
    }

    /// Corrects the tokens-per-minute places held to the `tokens` the request really used.
    pub fn settle_limits(&mut self, tokens: u64) {
        if let Some(limits) = &mut self.limits {
            limits.settle(tokens);
        }
    }

    /// Journals the reservation, so a process crash before it settles still charges it: the
    /// prompt's cost in `start`, plus the output of the last [`Hold::progress`].
    pub fn journal(&mut self, start: &HoldStart) {
        if self.journal.is_none() {
            self.journal = Some(self.book.writer.open_hold(start));
        }
    }

    /// Journals the output so far (`completion_tokens`) and what it costs with the prompt: what
    /// a crash now would charge. Streams call it every few seconds.
    pub fn progress(&self, completion_tokens: i64, cost: i64) {
        if let Some(hold) = self.journal {
            self.book
                .writer
                .hold_progress(hold, completion_tokens, cost);
        }
    }

    /// Charges `cost` in full (into debt if need be) and queues the change with the log row
    /// `log` makes of what was billed (its `quota` is set to the charge). Returns what was billed.
    pub fn settle(
        self,
        cost: i64,
        log: impl FnOnce(&Billed) -> Option<LogEntry>,
        at: i64,
    ) -> Billed {
        self.settle_inner(cost, log, None, at)
    }

    /// [`Hold::settle`] of a task submit the upstream accepted: `task` is journalled with the
    /// charge and written in the settlement's transaction (its `quota` set to what was billed),
    /// never one without the other.
    pub fn settle_task(
        self,
        cost: i64,
        log: impl FnOnce(&Billed) -> Option<LogEntry>,
        task: tollgate_storage::tasks::Task,
        at: i64,
    ) -> Billed {
        self.settle_inner(cost, log, Some(task), at)
    }

    fn settle_inner(
        mut self,
        cost: i64,
        log: impl FnOnce(&Billed) -> Option<LogEntry>,
        task: Option<tollgate_storage::tasks::Task>,
        at: i64,
    ) -> Billed {
        self.done = true;
        let billed = {
            let mut l = lock(&self.ledger);
            let billed = l.settle(self.id, cost);
            if let Some(b) = &billed {
                l.budget_spent(self.token, at, b.charged);
            }
            billed
        }
        .unwrap_or(Billed {
            charged: 0,
            balance: 0,
            token_remain: None,
        });
        if let Some(limits) = &self.limits {
            limits.succeeded();
        }
        let mut log = log(&billed);
        if let Some(log) = &mut log {
            log.quota = billed.charged;
        }
        let change = BalanceChange {
            user_id: self.user,
            token_id: self.token,
            charged: billed.charged,
            is_request: true,
            at,
        };
        match task {
            Some(mut task) => {
                task.quota = billed.charged;
                self.book
                    .writer
                    .record_task(self.journal, Some(change), log, task);
            }
            None => self.book.writer.record_for(self.journal, Some(change), log),
        }
        if billed.charged > 0
            && let Some(watch) = self.book.watch.get()
        {
            watch.settled(self.user, billed.balance);
        }
        billed
    }

    /// Ends the reservation without charging.
    pub fn release(mut self) {
        self.done = true;
        self.end_unsettled();
    }

    /// Releases the reservation in the ledger and closes it in the journal.
    fn end_unsettled(&self) {
        lock(&self.ledger).release(self.id);
        if let Some(hold) = self.journal {
            self.book.writer.hold_released(hold);
        }
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        if !self.done {
            self.end_unsettled();
        }
    }
}
