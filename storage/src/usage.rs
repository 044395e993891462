//! Applying settled usage to balances: the user's quota, used quota and request count, and the
//! token's remaining and used quota. Called by the log writer inside the transaction that also
//! inserts the log rows, so the database never shows a charge without its log or a log
//! without its charge.

use redb::WriteTransaction;

use crate::{Quota, Result, StorageError, TokenId, UserId, tokens, users};

/// One settled change to balances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BalanceChange {
    /// Whose balance.
    pub user_id: UserId,
    /// Token used, if any.
    pub token_id: Option<TokenId>,
    /// Quota charged (negative for a credit, e.g. an admin adding quota).
    pub charged: i64,
    /// Counts as a relayed request (increments request_count and used quota).
    pub is_request: bool,
    /// Unix seconds (the token's accessed_time).
    pub at: i64,
}

fn overflow() -> StorageError {
    StorageError::Overflow
}

/// Applies one change. A missing token (deleted meanwhile) only skips the token side.
pub fn apply(wtx: &WriteTransaction, change: BalanceChange) -> Result<()> {
    let mut user =
        users::get_rw(wtx, change.user_id)?.ok_or(StorageError::NotFound { what: "user" })?;
    let charged = Quota(change.charged);
    user.quota = user.quota.checked_sub(charged).ok_or_else(overflow)?;
    if change.is_request {
        user.used_quota = user.used_quota.checked_add(charged).ok_or_else(overflow)?;
        user.request_count = user.request_count.saturating_add(1);
    }
    users::update(wtx, &user)?;
    if let Some(id) = change.token_id
        && let Some(mut token) = tokens::get_rw(wtx, id)?
    {
        if !token.unlimited_quota {
            token.remain_quota = token
                .remain_quota
                .checked_sub(charged)
                .ok_or_else(overflow)?;
        }
        token.used_quota = token.used_quota.checked_add(charged).ok_or_else(overflow)?;
        token.accessed_time = change.at;
        tokens::update(wtx, &token)?;
    }
    Ok(())
}
