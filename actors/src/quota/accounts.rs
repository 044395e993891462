//! What the console and admission read or edit of a user's ledger: a key's remaining quota, the
//! balance, whether anything is available, the budget windows and their changes.

use std::sync::Arc;

use tollgate_storage::budgets::{self, KEEP_SECS, Owner};
use tollgate_storage::{StorageError, TokenId, UserId};

use super::book::QuotaBook;
use super::budget::BudgetBook;
use super::ledger::BudgetView;
use super::pin::lock;
use super::reserve::QuotaError;

impl QuotaBook {
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
}
