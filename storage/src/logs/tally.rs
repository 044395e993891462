//! Counter arithmetic of the log rows: the change one row makes to an hour counter
//! ([`Tally`]) and a stored counter shifted by it, checked (shared by the writer, the postings
//! and the queries).

use super::{LOG_CONSUME, LogEntry};
use crate::tables::HourCount;
use crate::{Result, StorageError};

/// A change to one hour counter: rows, consume rows, quota, prompt and completion tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Rows of any type.
    pub rows: i64,
    /// Consume rows (relayed requests).
    pub requests: i64,
    /// Quota of consume rows.
    pub quota: i64,
    /// Prompt tokens of consume rows.
    pub prompt: i64,
    /// Completion tokens of consume rows.
    pub completion: i64,
}

impl Tally {
    /// The tally of one row, negated when `sign` is -1.
    pub(crate) fn of(e: &LogEntry, sign: i64) -> Tally {
        let signed = |v: i64| {
            if e.log_type != LOG_CONSUME {
                0
            } else if sign < 0 {
                v.saturating_neg()
            } else {
                v
            }
        };
        Tally {
            rows: sign,
            requests: signed(1),
            quota: signed(e.quota),
            prompt: signed(e.prompt_tokens),
            completion: signed(e.completion_tokens),
        }
    }

    /// Adds `o` (checked: an overflow is an error).
    pub(crate) fn add(&mut self, o: Tally) -> Result<()> {
        let add = |a: i64, b: i64| a.checked_add(b).ok_or(StorageError::Overflow);
        self.rows = add(self.rows, o.rows)?;
        self.requests = add(self.requests, o.requests)?;
        self.quota = add(self.quota, o.quota)?;
        self.prompt = add(self.prompt, o.prompt)?;
        self.completion = add(self.completion, o.completion)?;
        Ok(())
    }
}

/// A stored counter as a (positive) tally.
pub(crate) fn tally(c: HourCount) -> Result<Tally> {
    let (rows, requests, quota, prompt, completion) = c;
    let signed = |v: u64| i64::try_from(v).map_err(|_| StorageError::Overflow);
    Ok(Tally {
        rows: signed(rows)?,
        requests: signed(requests)?,
        quota,
        prompt,
        completion,
    })
}

/// A counter plus `d`; `None` when it reaches zero rows.
pub(crate) fn shifted(old: Option<HourCount>, d: Tally) -> Result<Option<HourCount>> {
    let (rows, requests, quota, prompt, completion) = old.unwrap_or_default();
    let shift = |a: u64, b: i64| -> Result<u64> {
        let a = i64::try_from(a).map_err(|_| StorageError::Overflow)?;
        a.checked_add(b)
            .and_then(|v| u64::try_from(v).ok())
            .ok_or(StorageError::Overflow)
    };
    let add = |a: i64, b: i64| a.checked_add(b).ok_or(StorageError::Overflow);
    let next = (
        shift(rows, d.rows)?,
        shift(requests, d.requests)?,
        add(quota, d.quota)?,
        add(prompt, d.prompt)?,
        add(completion, d.completion)?,
    );
    Ok((next.0 != 0).then_some(next))
}
