//! Applying settled usage to balances: the user's quota, used quota and request count, and the
//! token's remaining and used quota, and the user's credited total (so that balance + used ==
//! credited after every transaction). Called by the log writer inside the transaction that also
//! inserts the log rows, so the database never shows a charge without its log or a log
//! without its charge.

use std::collections::BTreeMap;

use redb::WriteTransaction;

use crate::{Quota, Result, StorageError, TokenId, UserId, tokens, users};

pub use crate::balance_change::BalanceChange;

fn overflow() -> StorageError {
    StorageError::Overflow
}

/// Applies one change ([`apply_batch`] of one). A missing user is an error; a missing token
/// (deleted meanwhile) only skips the token side.
pub fn apply(wtx: &WriteTransaction, change: BalanceChange) -> Result<()> {
    if apply_batch(wtx, &[change])?.is_empty() {
        Ok(())
    } else {
        Err(StorageError::NotFound { what: "user" })
    }
}

/// A user's share of a batch: the sums of its changes.
#[derive(Debug, Default)]
struct UserSum {
    /// Quota taken from the balance (every change).
    charged: i64,
    /// Quota of relayed requests (added to used quota).
    used: i64,
    /// Relayed requests.
    requests: i64,
    /// Quota credited (or, negative, taken back) by changes that are not requests.
    credited: i64,
}

/// A token's share of a batch.
#[derive(Debug, Default)]
struct TokenSum {
    /// Quota charged through the token.
    charged: i64,
    /// The last change's time.
    at: i64,
}

/// Applies `changes` as [`apply`] would one by one, but reads and writes each user and token
/// once: the log writer's batches are mostly many requests of few users, and every user write
/// also checks four unique indexes. Returns the users that no longer exist (their changes are
/// skipped, and their tokens' with them); the other users' changes are applied.
pub fn apply_batch(wtx: &WriteTransaction, changes: &[BalanceChange]) -> Result<Vec<UserId>> {
    let add = |a: i64, b: i64| a.checked_add(b).ok_or_else(overflow);
    let mut per_user: BTreeMap<UserId, UserSum> = BTreeMap::new();
    let mut per_token: BTreeMap<(UserId, TokenId), TokenSum> = BTreeMap::new();
    for change in changes {
        let sum = per_user.entry(change.user_id).or_default();
        sum.charged = add(sum.charged, change.charged)?;
        if change.is_request {
            sum.used = add(sum.used, change.charged)?;
            sum.requests = add(sum.requests, 1)?;
        } else {
            sum.credited = add(
                sum.credited,
                change.charged.checked_neg().ok_or_else(overflow)?,
            )?;
        }
        if let Some(token) = change.token_id {
            let sum = per_token.entry((change.user_id, token)).or_default();
            sum.charged = add(sum.charged, change.charged)?;
            sum.at = change.at;
        }
    }
    let mut missing = Vec::new();
    for (id, sum) in &per_user {
        let Some(mut user) = users::get_rw(wtx, *id)? else {
            missing.push(*id);
            continue;
        };
        user.quota = user
            .quota
            .checked_sub(Quota(sum.charged))
            .ok_or_else(overflow)?;
        user.used_quota = user
            .used_quota
            .checked_add(Quota(sum.used))
            .ok_or_else(overflow)?;
        user.request_count = user.request_count.saturating_add(sum.requests);
        users::update(wtx, &user)?;
        if sum.credited != 0 {
            users::add_credited(wtx, *id, sum.credited)?;
        }
    }
    for ((user, id), sum) in per_token {
        if missing.contains(&user) {
            continue;
        }
        let Some(mut token) = tokens::get_rw(wtx, id)? else {
            continue;
        };
        let charged = Quota(sum.charged);
        if !token.unlimited_quota {
            token.remain_quota = token
                .remain_quota
                .checked_sub(charged)
                .ok_or_else(overflow)?;
        }
        token.used_quota = token.used_quota.checked_add(charged).ok_or_else(overflow)?;
        token.accessed_time = sum.at;
        tokens::update(wtx, &token)?;
    }
    Ok(missing)
}

/// Returns `amount` of a charged request (a failed task): added back to the user's balance and
/// taken off its used quota (the credited total is unchanged, so balance + used == credited
/// still holds), and likewise for `token` — its remaining quota only when it has a limit. The
/// request count is kept (the request was made). Returns the token when its remaining quota
/// was raised. The caller writes the negative consume row in the same transaction.
pub fn refund(
    wtx: &WriteTransaction,
    user_id: UserId,
    token_id: Option<TokenId>,
    amount: i64,
    at: i64,
) -> Result<Option<TokenId>> {
    let back = Quota(amount);
    let mut user = users::get_rw(wtx, user_id)?.ok_or(StorageError::NotFound { what: "user" })?;
    user.quota = user.quota.checked_add(back).ok_or_else(overflow)?;
    user.used_quota = user.used_quota.checked_sub(back).ok_or_else(overflow)?;
    users::update(wtx, &user)?;
    let Some(id) = token_id else {
        return Ok(None);
    };
    let Some(mut token) = tokens::get_rw(wtx, id)? else {
        return Ok(None);
    };
    let limited = !token.unlimited_quota;
    if limited {
        token.remain_quota = token.remain_quota.checked_add(back).ok_or_else(overflow)?;
    }
    token.used_quota = token.used_quota.checked_sub(back).ok_or_else(overflow)?;
    token.accessed_time = token.accessed_time.max(at);
    tokens::update(wtx, &token)?;
    Ok(limited.then_some(id))
}
