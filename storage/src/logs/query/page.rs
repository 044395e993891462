//! One page of a filter's rows, newest first, and its total (exact, or estimated past
//! [`COUNT_SCAN_LIMIT`] candidates).

use redb::ReadTransaction;

use super::check::Check;
use super::filter::LogFilter;
use super::tables::Tables;
use crate::Result;
use crate::logs::LogEntry;

/// Candidates checked when counting a filter that no index range covers; past that the total
/// is extrapolated.
pub const COUNT_SCAN_LIMIT: usize = 4_000;

/// One page of logs, newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct LogPage {
    /// The rows of the page.
    pub items: Vec<LogEntry>,
    /// Rows matching the filter (see the module doc for when it is an estimate).
    pub total: u64,
    /// False when `total` is an estimate.
    pub total_exact: bool,
}

/// The rows `offset..offset + limit` of the filter, newest first, and the total.
pub fn page(rtx: &ReadTransaction, f: &LogFilter, offset: usize, limit: usize) -> Result<LogPage> {
    let t = Tables::open(rtx)?;
    let plan = t.plan(f)?;
    let key = plan.key.as_deref();
    let mut items = Vec::with_capacity(limit);
    let end = offset.saturating_add(limit);
    if plan.covers_all {
        for r in t.ids_desc(key, f.start, f.end)?.skip(offset).take(limit) {
            if let Some(e) = t.row(r?.1)? {
                items.push(e);
            }
        }
        let total = t.covered_tally(key, f.start, f.end, false)?.rows;
        return Ok(LogPage {
            items,
            total: u64::try_from(total).unwrap_or(0),
            total_exact: true,
        });
    }
    // One pass: collect the page and count matches within the budget.
    let (mut matched, mut checked) = (0usize, 0usize);
    let mut exhausted = true;
    let mut check = Check::new(&t, &plan.others, f);
    for r in t.ids_desc(key, f.start, f.end)? {
        if matched >= end && (checked >= COUNT_SCAN_LIMIT || plan.consume_by_subtraction) {
            exhausted = false;
            break;
        }
        checked += 1;
        let (ts, id) = r?;
        if !check.passes(ts, id)? {
            continue;
        }
        if matched >= offset
            && matched < end
            && let Some(e) = t.row(id)?
        {
            items.push(e);
        }
        matched += 1;
    }
    let matched_u = u64::try_from(matched).unwrap_or(u64::MAX);
    if plan.consume_by_subtraction
        && let Some(key) = key
    {
        return Ok(LogPage {
            items,
            total: u64::try_from(t.consume_count(key, f)?).unwrap_or(0),
            total_exact: true,
        });
    }
    if exhausted {
        return Ok(LogPage {
            items,
            total: matched_u,
            total_exact: true,
        });
    }
    let candidates = t.covered_tally(key, f.start, f.end, false)?.rows;
    let ratio = matched as f64 / checked.max(1) as f64;
    let estimate = (ratio * candidates as f64).round() as u64;
    Ok(LogPage {
        items,
        total: estimate.max(matched_u),
        total_exact: false,
    })
}
