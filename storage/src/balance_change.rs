//! One settled change to balances: the value the quota book journals and the log writer
//! applies. Apart from [`crate::usage`] (which applies it to users and tokens) so that
//! [`crate::budgets`] can sum it without importing the token table's module, which itself
//! removes a deleted token's budgets.

use crate::{TokenId, UserId};

/// One settled change to balances.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
