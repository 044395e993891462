//! The tables a log query reads, opened once per query, and the point lookups on them: a
//! row, a row's membership in a key's postings, the hours still counted by their postings.

use redb::{ReadOnlyTable, ReadTransaction, ReadableTable};

use crate::logs::postings::View;
use crate::logs::write::sealed_before;
use crate::logs::{LogEntry, keys};
use crate::tables::{HourCount, LOG_BY_TIME, LOG_COUNTS, LOG_MARKS, LOG_POSTINGS, LOGS};
use crate::{Result, codec};

/// The tables a query reads.
pub(super) struct Tables {
    pub(super) logs: ReadOnlyTable<i64, &'static [u8]>,
    pub(super) by_time: ReadOnlyTable<(i64, i64), ()>,
    pub(super) postings: ReadOnlyTable<(i64, &'static str, i64), &'static [u8]>,
    pub(super) counts: ReadOnlyTable<(&'static str, i64), HourCount>,
    /// Hours from here on are counted by their postings' shares.
    pub(super) sealed_before: i64,
    /// created_at of the oldest and the newest row (`None`: no rows).
    pub(super) span: Option<(i64, i64)>,
}

impl Tables {
    pub(super) fn open(rtx: &ReadTransaction) -> Result<Tables> {
        let by_time = rtx.open_table(LOG_BY_TIME)?;
        let span = match (by_time.first()?, by_time.last()?) {
            (Some((a, _)), Some((b, _))) => Some((a.value().0, b.value().0)),
            _ => None,
        };
        Ok(Tables {
            logs: rtx.open_table(LOGS)?,
            by_time,
            postings: rtx.open_table(LOG_POSTINGS)?,
            counts: rtx.open_table(LOG_COUNTS)?,
            sealed_before: sealed_before(&rtx.open_table(LOG_MARKS)?)?,
            span,
        })
    }

    pub(super) fn row(&self, id: i64) -> Result<Option<LogEntry>> {
        match self.logs.get(id)? {
            Some(bytes) => Ok(Some(codec::decode(bytes.value())?)),
            None => Ok(None),
        }
    }

    /// Whether row `(ts, id)` is posted under `key` (one seek and a binary search in the
    /// stored posting).
    pub(super) fn posted(&self, key: &str, ts: i64, id: i64) -> Result<bool> {
        let hour = keys::hour(ts);
        let Some(r) = self
            .postings
            .range((hour, key, i64::MIN)..=(hour, key, id))?
            .next_back()
        else {
            return Ok(false);
        };
        let (k, v) = r?;
        Ok(View::of(v.value())?.contains(k.value().2, id))
    }

    /// The hours in `[lo, hi)` counted by their postings (not sealed, holding rows),
    /// ascending.
    pub(super) fn open_hours(&self, lo: i64, hi: i64) -> Vec<i64> {
        let Some((oldest, newest)) = self.span else {
            return Vec::new();
        };
        let from = keys::hour(lo.max(self.sealed_before).max(oldest));
        let to = hi.min(keys::hour(newest).saturating_add(keys::HOUR));
        let mut out = Vec::new();
        let mut h = from;
        while h < to {
            out.push(h);
            match h.checked_add(keys::HOUR) {
                Some(next) => h = next,
                None => break,
            }
        }
        out
    }
}
