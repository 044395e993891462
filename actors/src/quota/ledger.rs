//! One user's ledger (pure): balance, reservations, and the remaining quota of their tokens.
//!
//! Admission checks the balance minus everything already reserved, so concurrent requests share
//! one balance instead of each spending it whole. A reservation holds the request's upper bound
//! (`amount`) while admission asks only that a smaller part of it (`needed`: the prompt and a
//! bounded share of the output) be available. A settlement charges the actual cost, always, in
//! full: a cost larger than what is left makes a debt (a negative balance, or a negative remaining
//! quota on the key), and a user or key in debt is refused until it is back above zero.

use foldhash::HashMap;
use jiff::tz::TimeZone;
use tollgate_storage::TokenId;

use super::budget::{BudgetBook, WindowState};
use super::output::OutputAsk;

/// Identifies one reservation inside a ledger.
pub type HoldId = u64;

/// Why a reservation was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The user's balance (minus running reservations) does not cover the request.
    #[error("insufficient user quota: {available} available, {needed} needed")]
    UserQuota {
        /// Balance minus reservations.
        available: i64,
        /// The reservation asked for.
        needed: i64,
    },
    /// The token's remaining quota (minus running reservations) does not cover the request.
    #[error("insufficient token quota: {available} available, {needed} needed")]
    TokenQuota {
        /// Token remaining minus reservations.
        available: i64,
        /// The reservation asked for.
        needed: i64,
    },
    /// A budget window of the user or of the key is spent (or has less left than needed).
    #[error("{} budget reached", if *key { "key" } else { "user" })]
    Budget {
        /// The key's budget (`false`: the user's).
        key: bool,
        /// The window, its spend and when it resets.
        state: WindowState,
        /// Units held by running requests besides the spend.
        reserved: i64,
        /// Seconds until the window resets (at least 1).
        retry_after: i64,
    },
}

/// What the budgets of a user and of one of their keys stand at (for dashboards and editors).
#[derive(Debug, Clone, Default)]
pub struct BudgetView {
    /// The user's windows in force.
    pub user: Vec<WindowState>,
    /// The key's windows in force.
    pub key: Vec<WindowState>,
}

#[derive(Debug, Clone)]
struct TokenBook {
    remain: i64,
    reserved: i64,
    unlimited: bool,
    budget: Option<BudgetBook>,
}

#[derive(Debug, Clone, Copy)]
struct Hold {
    amount: i64,
    token: Option<TokenId>,
}

/// What a settlement billed: always the whole cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Billed {
    /// Units taken from the balance (the cost, never capped).
    pub charged: i64,
    /// The user's balance after the charge (negative: a debt).
    pub balance: i64,
    /// The key's remaining quota after the charge, when the key has a limit (negative: a debt).
    pub token_remain: Option<i64>,
}

impl Billed {
    /// The charge left the user or the key in debt.
    pub fn debt(&self) -> bool {
        self.balance < 0 || self.token_remain.is_some_and(|r| r < 0)
    }
}

/// One user's balance and reservations.
#[derive(Debug, Default)]
pub struct Ledger {
    balance: i64,
    reserved: i64,
    tokens: HashMap<TokenId, TokenBook>,
    holds: HashMap<HoldId, Hold>,
    next_hold: HoldId,
    budget: Option<BudgetBook>,
    /// What the tightest budget window has left for the reservation being made (P16 item 3
    /// counts it as available).
    budget_cap: Option<i64>,
}

impl Ledger {
    /// A ledger with the stored balance.
    pub fn new(balance: i64) -> Ledger {
        Ledger {
            balance,
            ..Ledger::default()
        }
    }

    /// No reservation runs (nothing held that storage does not know).
    pub(super) fn holds_nothing(&self) -> bool {
        self.holds.is_empty()
    }

    /// Whether the token is known to this ledger.
    pub fn knows_token(&self, token: TokenId) -> bool {
        self.tokens.contains_key(&token)
    }

    /// Records a token's stored remaining quota and budgets (first sight only).
    pub fn add_token(
        &mut self,
        token: TokenId,
        remain: i64,
        unlimited: bool,
        budget: Option<BudgetBook>,
    ) {
        self.tokens.entry(token).or_insert(TokenBook {
            remain,
            reserved: 0,
            unlimited,
            budget,
        });
    }

    /// Sets the user's budgets (loaded with the ledger, or changed by an admin).
    pub fn with_budget(mut self, budget: Option<BudgetBook>) -> Ledger {
        self.budget = budget;
        self
    }

    /// The user's budget book (`token`: the key's, when the ledger knows the key).
    pub fn budget_mut(&mut self, token: Option<TokenId>) -> Option<&mut Option<BudgetBook>> {
        match token {
            None => Some(&mut self.budget),
            Some(t) => self.tokens.get_mut(&t).map(|b| &mut b.budget),
        }
    }

    /// Whether the user or `token` has a budget (only then is the clock read).
    pub fn has_budgets(&self, token: Option<TokenId>) -> bool {
        self.budget.is_some()
            || token
                .and_then(|t| self.tokens.get(&t))
                .is_some_and(|b| b.budget.is_some())
    }

    /// Refuses when a window of the user's or of `token`'s budgets has less than `needed` left
    /// at `now` once the running reservations are held.
    pub fn check_budgets(
        &self,
        token: Option<TokenId>,
        needed: i64,
        now: i64,
        zone: &TimeZone,
    ) -> Result<(), Refusal> {
        if let Some(book) = &self.budget
            && let Some(state) = book.refusing(now, zone, self.reserved, needed)
        {
            return Err(Refusal::Budget {
                key: false,
                state,
                reserved: self.reserved,
                retry_after: state.resets_at.saturating_sub(now).max(1),
            });
        }
        if let Some(t) = token.and_then(|t| self.tokens.get(&t))
            && let Some(book) = &t.budget
            && let Some(state) = book.refusing(now, zone, t.reserved, needed)
        {
            return Err(Refusal::Budget {
                key: true,
                state,
                reserved: t.reserved,
                retry_after: state.resets_at.saturating_sub(now).max(1),
            });
        }
        Ok(())
    }

    /// The least left in any window of the user's or `token`'s budgets once the running
    /// reservations are held (`None`: no budget).
    pub fn budget_left(&self, token: Option<TokenId>, now: i64, zone: &TimeZone) -> Option<i64> {
        let user = self
            .budget
            .as_ref()
            .and_then(|b| b.least_left(now, zone, self.reserved));
        let key = token
            .and_then(|t| self.tokens.get(&t))
            .and_then(|t| Some((t.budget.as_ref()?, t.reserved)))
            .and_then(|(b, reserved)| b.least_left(now, zone, reserved));
        match (user, key) {
            (Some(u), Some(k)) => Some(u.min(k)),
            (u, k) => u.or(k),
        }
    }

    /// The windows of the user's and `token`'s budgets at `now`.
    pub fn budget_view(&self, token: Option<TokenId>, now: i64, zone: &TimeZone) -> BudgetView {
        let key = token
            .and_then(|t| self.tokens.get(&t))
            .and_then(|t| t.budget.as_ref())
            .map(|b| b.windows(now, zone))
            .unwrap_or_default();
        BudgetView {
            user: self
                .budget
                .as_ref()
                .map(|b| b.windows(now, zone))
                .unwrap_or_default(),
            key,
        }
    }

    /// Takes a refunded charge (made at `at`) out of the user's and `token`'s budget windows.
    pub fn budget_refunded(&mut self, token: Option<TokenId>, at: i64, amount: i64) {
        if let Some(book) = &mut self.budget {
            book.remove(at, amount);
        }
        if let Some(book) = token
            .and_then(|t| self.tokens.get_mut(&t))
            .and_then(|t| t.budget.as_mut())
        {
            book.remove(at, amount);
        }
    }

    /// Counts a settled charge in the user's and `token`'s budget windows.
    pub fn budget_spent(&mut self, token: Option<TokenId>, at: i64, charged: i64) {
        if let Some(book) = &mut self.budget {
            book.add(at, charged);
        }
        if let Some(book) = token
            .and_then(|t| self.tokens.get_mut(&t))
            .and_then(|t| t.budget.as_mut())
        {
            book.add(at, charged);
        }
    }

    /// Updates a token's limit kind (the owner switched it to or from unlimited).
    pub fn set_token_unlimited(&mut self, token: TokenId, unlimited: bool) {
        if let Some(book) = self.tokens.get_mut(&token) {
            book.unlimited = unlimited;
        }
    }

    /// The balance (settled charges applied).
    pub fn balance(&self) -> i64 {
        self.balance
    }

    /// Sum of running reservations.
    pub fn reserved(&self) -> i64 {
        self.reserved
    }

    /// The remaining quota of a known token.
    pub fn token_remain(&self, token: TokenId) -> Option<i64> {
        self.tokens.get(&token).map(|t| t.remain)
    }

    /// Reserves `amount` (≥ 0) for one request, admitted when at least `needed` (≤ `amount`) is
    /// available on the balance and on the key: what is left after every running reservation.
    /// A balance (or a limited key's remaining quota) at or below zero refuses any request.
    pub fn reserve(
        &mut self,
        token: Option<TokenId>,
        amount: i64,
        needed: i64,
    ) -> Result<HoldId, Refusal> {
        let amount = amount.max(0);
        let needed = needed.clamp(0, amount);
        let available = self.balance.saturating_sub(self.reserved);
        if self.balance <= 0 || available < needed {
            return Err(Refusal::UserQuota { available, needed });
        }
        if let Some(book) = token.and_then(|t| self.tokens.get(&t))
            && !book.unlimited
        {
            let available = book.remain.saturating_sub(book.reserved);
            if book.remain <= 0 || available < needed {
                return Err(Refusal::TokenQuota { available, needed });
            }
        }
        if let Some(book) = token.and_then(|t| self.tokens.get_mut(&t)) {
            book.reserved = book.reserved.saturating_add(amount);
        }
        self.reserved = self.reserved.saturating_add(amount);
        let id = self.next_hold;
        self.next_hold = self.next_hold.wrapping_add(1);
        self.holds.insert(id, Hold { amount, token });
        Ok(id)
    }

    /// What is available to a new request: the balance (and a limited key's remaining quota)
    /// less every running reservation, and whether the key is what limits it.
    fn available(&self, token: Option<TokenId>) -> (i64, bool) {
        let user = self.balance.saturating_sub(self.reserved);
        match token.and_then(|t| self.tokens.get(&t)) {
            Some(book) if !book.unlimited => {
                let key = book.remain.saturating_sub(book.reserved);
                if key < user {
                    (key, true)
                } else {
                    (user, false)
                }
            }
            _ => (user, false),
        }
    }

    /// Reserves for a request priced by its output ([`super::output`]): the output limit L is
    /// what the available balance covers (at most `ask.most`), and the reservation is the
    /// prompt and L. Refused when less than [`OutputAsk::needed`] is available. Returns the
    /// hold, L and the amount held.
    pub fn reserve_output(
        &mut self,
        token: Option<TokenId>,
        ask: &OutputAsk,
    ) -> Result<(HoldId, i64, i64), Refusal> {
        let needed = ask.needed();
        let (available, by_key) = self.available(token);
        let key_empty = token
            .and_then(|t| self.tokens.get(&t))
            .is_some_and(|b| !b.unlimited && b.remain <= 0);
        if self.balance <= 0 || (!by_key && available < needed) {
            let user = self.balance.saturating_sub(self.reserved);
            return Err(Refusal::UserQuota {
                available: user,
                needed,
            });
        }
        if key_empty || available < needed {
            return Err(Refusal::TokenQuota { available, needed });
        }
        let tokens = ask.limit(available.min(self.budget_cap.unwrap_or(i64::MAX)));
        let amount = ask.units(tokens);
        let id = self.reserve(token, amount, 0)?;
        Ok((id, tokens, amount))
    }

    /// Sets what is left in the tightest budget window (checked just before, in the same
    /// critical section), which [`Ledger::reserve_output`] then counts as available; `None`
    /// when no budget applies.
    pub fn cap_by_budget(&mut self, left: Option<i64>) {
        self.budget_cap = left;
    }

    fn drop_hold(&mut self, id: HoldId) -> Option<Hold> {
        let hold = self.holds.remove(&id)?;
        self.reserved = self.reserved.saturating_sub(hold.amount);
        if let Some(book) = hold.token.and_then(|t| self.tokens.get_mut(&t)) {
            book.reserved = book.reserved.saturating_sub(hold.amount);
        }
        Some(hold)
    }

    /// Ends a reservation without charging (the request failed). Unknown ids are ignored, so a
    /// release after a settle is harmless.
    pub fn release(&mut self, id: HoldId) {
        self.drop_hold(id);
    }

    /// Ends a reservation and charges `cost` (≥ 0) in full, into debt if need be; `None` for an
    /// unknown (already settled or released) hold, which charges nothing: exactly once.
    pub fn settle(&mut self, id: HoldId, cost: i64) -> Option<Billed> {
        let hold = self.drop_hold(id)?;
        let charged = cost.max(0);
        self.balance = self.balance.saturating_sub(charged);
        let token_remain = match hold.token.and_then(|t| self.tokens.get_mut(&t)) {
            Some(book) if !book.unlimited => {
                book.remain = book.remain.saturating_sub(charged);
                Some(book.remain)
            }
            _ => None,
        };
        Some(Billed {
            charged,
            balance: self.balance,
            token_remain,
        })
    }

    /// Adds `delta` (may be negative) to the balance: top-ups, admin changes.
    pub fn adjust(&mut self, delta: i64) {
        self.balance = self.balance.saturating_add(delta);
    }

    /// Refuses, without reserving anything, when nothing is available: a balance at or below
    /// zero or wholly held by running reservations, or the same of `token` when it has a limit.
    /// The relay asks this before it reads a request's body (a refusal's `needed` is 1).
    pub fn check_available(&self, token: Option<TokenId>) -> Result<(), Refusal> {
        let available = self.balance.saturating_sub(self.reserved);
        if self.balance <= 0 || available <= 0 {
            return Err(Refusal::UserQuota {
                available,
                needed: 1,
            });
        }
        if let Some(book) = token.and_then(|t| self.tokens.get(&t))
            && !book.unlimited
        {
            let available = book.remain.saturating_sub(book.reserved);
            if book.remain <= 0 || available <= 0 {
                return Err(Refusal::TokenQuota {
                    available,
                    needed: 1,
                });
            }
        }
        Ok(())
    }

    /// Adds `delta` to a token's remaining quota (the owner edited it).
    pub fn adjust_token(&mut self, token: TokenId, delta: i64) {
        if let Some(book) = self.tokens.get_mut(&token) {
            book.remain = book.remain.saturating_add(delta);
        }
    }
}

#[cfg(test)]
mod tests;
