//! A running reservation ([`Hold`]): its rate-limit places, its crash-journal record, and its
//! end — settled (the charge queued to the log writer with its log row), released, or dropped.

use tollgate_storage::TokenId;
use tollgate_storage::UserId;
use tollgate_storage::logs::LogEntry;
use tollgate_storage::usage::BalanceChange;

use super::book::QuotaBook;
use super::ledger::{Billed, HoldId};
use super::pin::{Pinned, lock};
use crate::journal::HoldStart;
use crate::limiter;

/// A running reservation. Dropping it without [`Hold::settle`] releases it, so a cancelled
/// request (client gone) never leaks reserved quota.
pub struct Hold {
    pub(super) book: QuotaBook,
    /// The user's ledger, pinned while the request runs.
    pub(super) ledger: Pinned,
    pub(super) user: UserId,
    pub(super) token: Option<TokenId>,
    pub(super) id: HoldId,
    pub(super) amount: i64,
    /// Its number in the crash journal, once journalled ([`Hold::journal`]).
    pub(super) journal: Option<u64>,
    /// The rate limits' places the request holds ([`Hold::keep_limits`]): given back when the
    /// hold ends (settled, released or dropped), their tokens corrected at settlement.
    pub(super) limits: Option<crate::limiter::Admission>,
    pub(super) done: bool,
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
    /// prompt's cost in `start`, plus the output of the last [`Hold::progress`]. The record is
    /// written with the journal's next append, at the latest by [`Hold::answering`].
    pub fn journal(&mut self, start: &HoldStart) {
        if self.journal.is_none() {
            self.journal = Some(self.book.writer.open_hold(start));
        }
    }

    /// The answer has output to send: the reservation's journal record is written now if it
    /// is not yet, before that output leaves (see [`crate::journal`]).
    pub fn answering(&self) {
        if let Some(hold) = self.journal {
            self.book.writer.hold_answering(hold);
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
