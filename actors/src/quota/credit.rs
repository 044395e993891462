//! Balance changes outside requests: top-ups and admins' changes ([`QuotaBook::adjust`]),
//! one-shot credits committed with the state that makes them one-shot
//! ([`QuotaBook::credit_with`]) and task refunds ([`QuotaBook::refund_with`]).

use tollgate_storage::logs::{self, LogEntry};
use tollgate_storage::usage::{self, BalanceChange};
use tollgate_storage::{StorageError, UserId, WriteTransaction, tasks};

use super::book::QuotaBook;
use super::pin::lock;
use super::reserve::QuotaError;

/// A balance change decided inside [`QuotaBook::credit_with`]'s transaction.
#[derive(Debug, Clone)]
pub struct Credit {
    /// Quota added to the user's balance (negative: taken from it, e.g. an admin's decrease).
    pub amount: i64,
    /// The top-up log row recording it (its `created_at` is the change's time).
    pub log: LogEntry,
}

impl QuotaBook {
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
}
