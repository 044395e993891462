//! Log queries: one page of a [`LogFilter`], its total, and its stat (quota, rpm, tpm).
//!
//! **Plan.** Every filter dimension the query sets has an index range (its postings, hour by
//! hour, [`super::postings`]); user + model, user + token name, user + group and model +
//! channel also have composite ones, and rows other than consume are indexed under typed keys
//! ([`super::keys`]). The planner estimates each candidate range's size from the hour counters
//! (a range of the key-major counters plus the postings' shares of the hours not yet sealed,
//! at most about two days; a key whose sealed hours alone outnumber the smallest range found
//! cannot be chosen, and its open hours are not summed) and scans the smallest, newest first
//! (an hour's postings are read and ordered by (created_at, id) together). Each dimension the
//! range leaves out is checked on the smallest candidate key that holds it, composite ones
//! included (a row of the range already matches the dimensions it covers), most selective
//! first: a candidate is looked up in the key's posting of its hour (one seek and a binary
//! search), and once a key was looked up about as often in one hour as reading its whole hour
//! costs, its rows of that hour are read once and the hour's other candidates are searched in
//! memory. With no filter it scans the time index.
//!
//! **Totals.** When the chosen range covers every filter (one dimension, or a composite pair,
//! plus the time range), the total is EXACT and costs no scan: the hour counters give the full
//! hours and only the partial hours at the two ends of the time range are counted on the index
//! (at most two hours of that key's entries, keys only). Otherwise each candidate of the chosen
//! range is checked against the other filters on their postings as above (no row is read
//! until it is on the page), up to [`COUNT_SCAN_LIMIT`] candidates: if the range ends
//! within that budget the total is exact, else it is an estimate (matches ÷ candidates checked ×
//! candidates in range), flagged by `total_exact: false`. A range that covers every filter but
//! "type consume" is counted exactly without a scan: the range minus its typed ranges (the rows
//! of every other type).
//!
//! **Stats.** Quota sums consume rows (the type filter does not apply). Covered filters read the
//! counters plus the two partial hours (rows read for their quota): exact. Others sum the
//! matching rows of the chosen range when it holds at most [`STAT_SCAN_LIMIT`] candidates
//! (exact); a bigger range is sampled: whole hours spread evenly over the range (from the hour
//! counters) are checked on the postings alone, up to about [`STAT_SCAN_LIMIT`] candidates in
//! all, then at most [`QUOTA_SAMPLE`] of the matching rows, spread evenly, are read for the
//! quota of a matching row, and the quota is extrapolated (mean quota × matches ÷ candidates
//! checked × candidates in range), flagged by `exact: false`. So no stat reads more than a
//! bounded number of rows. rpm and tpm are the
//! consume rows (count, prompt + completion tokens) created in the last 60 seconds that match
//! the filter, time range aside (new-api's semantics).
//!
//! Files: `filter` (the filter and its keys), `tables` (the tables and point lookups), `walk`
//! (a range newest first), `check` (candidates against the other filters), `counters` (hour
//! counters and exact tallies), `plan` (the planner), `page` (pages and totals), `stats`
//! (stats).

mod check;
mod counters;
mod filter;
mod page;
mod plan;
mod stats;
mod tables;
mod walk;

use redb::ReadTransaction;

pub use filter::LogFilter;
pub use page::{COUNT_SCAN_LIMIT, LogPage, page};
pub use plan::Plan;
pub use stats::{LogStat, QUOTA_SAMPLE, STAT_SCAN_LIMIT, stat};
use tables::Tables;

use crate::Result;

/// The plan a filter would use (benchmarks and tests).
pub fn plan(rtx: &ReadTransaction, f: &LogFilter) -> Result<Plan> {
    Tables::open(rtx)?.plan(f)
}

/// The ids of the newest rows under filter key `key`, at most `limit`.
pub(crate) fn newest_under(rtx: &ReadTransaction, key: &str, limit: usize) -> Result<Vec<i64>> {
    let t = Tables::open(rtx)?;
    t.ids_desc(Some(key), None, None)?
        .take(limit)
        .map(|r| r.map(|(_, id)| id))
        .collect()
}

/// Rows created before `before` (what a deletion by time will remove), exact.
pub fn count_before(rtx: &ReadTransaction, before: i64) -> Result<u64> {
    let t = Tables::open(rtx)?;
    let rows = t
        .covered_tally(None, None, Some(before.saturating_sub(1)), false)?
        .rows;
    Ok(u64::try_from(rows).unwrap_or(0))
}
