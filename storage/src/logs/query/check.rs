//! Checking a range's candidates against the filters the range does not cover: is the row
//! posted under each of the plan's other keys?
//!
//! A candidate is first looked up in the key's posting of its hour (one seek and a binary
//! search in the stored posting). Candidates come an hour at a time, so once a key has been
//! looked up about as many times in one hour as reading its whole hour costs (one lookup per
//! [`ROWS_PER_LOOKUP`] rows the key holds in an average hour of the range: none for a key whose
//! hour fits in a posting or two, as reading them is one seek too), the key's
//! rows of that hour are read once (its postings of the hour, in id order) and the hour's later
//! candidates are binary searches in memory: a scan that checks thousands of candidates
//! touches each hour's postings once instead of seeking once per candidate, while a scan that
//! checks a few per hour never reads a whole hour of a big key.

use super::filter::LogFilter;
use super::tables::Tables;
use crate::Result;
use crate::logs::keys;
use crate::logs::postings::View;

/// Rows of a key's hour worth one point lookup when deciding to read the whole hour (a posting
/// page holds about 680 rows; a lookup reads about one and a half pages).
pub(super) const ROWS_PER_LOOKUP: u64 = 1_024;

/// One key to check and what is known of its current hour.
struct KeyCheck {
    key: String,
    /// Point lookups in one hour before the whole hour is read.
    load_after: u32,
    /// The hour `lookups` and `ids` are about.
    hour: i64,
    /// Point lookups made in `hour`.
    lookups: u32,
    /// Every id posted under the key in `hour`, ascending, once read.
    ids: Option<Vec<i64>>,
}

/// The checks of a plan's other keys, most selective first.
pub(super) struct Check<'a> {
    t: &'a Tables,
    keys: Vec<KeyCheck>,
}

impl<'a> Check<'a> {
    /// Checks against every key of `others` (with its rows in the hours of `f`'s range).
    pub(super) fn new(t: &'a Tables, others: &[(String, u64)], f: &LogFilter) -> Check<'a> {
        let hours = t.hours_in(f.start, f.end).max(1);
        Check {
            t,
            keys: others
                .iter()
                .map(|(key, rows)| KeyCheck {
                    key: key.clone(),
                    load_after: u32::try_from(rows / hours / ROWS_PER_LOOKUP).unwrap_or(u32::MAX),
                    hour: i64::MIN,
                    lookups: 0,
                    ids: None,
                })
                .collect(),
        }
    }

    /// Whether row `(ts, id)` is posted under every key.
    pub(super) fn passes(&mut self, ts: i64, id: i64) -> Result<bool> {
        let hour = keys::hour(ts);
        for k in &mut self.keys {
            if k.hour != hour {
                k.hour = hour;
                k.lookups = 0;
                k.ids = None;
            }
            if k.ids.is_none() && k.lookups >= k.load_after {
                k.ids = Some(self.t.hour_ids(&k.key, hour)?);
            }
            let posted = match &k.ids {
                Some(ids) => ids.binary_search(&id).is_ok(),
                None => {
                    k.lookups += 1;
                    self.t.posted(&k.key, ts, id)?
                }
            };
            if !posted {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

impl Tables {
    /// Every id posted under `key` in the hour starting at `hour`, ascending.
    pub(super) fn hour_ids(&self, key: &str, hour: i64) -> Result<Vec<i64>> {
        let mut ids = Vec::new();
        for r in self
            .postings
            .range((hour, key, i64::MIN)..=(hour, key, i64::MAX))?
        {
            let (k, v) = r?;
            let first = k.value().2;
            ids.extend(View::of(v.value())?.entries(hour, first).map(|(_, id)| id));
        }
        // Postings of an (hour, key) hold ascending, disjoint id spans: already sorted.
        ids.sort_unstable();
        Ok(ids)
    }

    /// Hours holding rows within `[start, end]` (at least the hours the rows span).
    pub(super) fn hours_in(&self, start: Option<i64>, end: Option<i64>) -> u64 {
        let Some((oldest, newest)) = self.span else {
            return 0;
        };
        let lo = keys::hour(start.unwrap_or(i64::MIN).max(oldest));
        let hi = keys::hour(end.unwrap_or(i64::MAX).min(newest));
        u64::try_from(hi.saturating_sub(lo) / keys::HOUR).map_or(0, |h| h.saturating_add(1))
    }
}
