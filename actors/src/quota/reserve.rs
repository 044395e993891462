//! Reservations: what a request asks its user's ledger to hold before it is forwarded, checked
//! with the user's and the key's rate limits (the [`Gate`]), the budgets and the balance in one
//! critical section.

use tollgate_storage::{StorageError, TokenId, UserId};

use super::book::QuotaBook;
use super::hold::Hold;
use super::ledger::Refusal;
use super::output::OutputAsk;
use super::pin::lock;
use crate::limiter;

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

impl QuotaBook {
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
