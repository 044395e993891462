//! A filter's stat: the quota of its consume rows (exact, or extrapolated from sample hours
//! past [`STAT_SCAN_LIMIT`] candidates) and the last minute's requests and tokens.

use redb::ReadTransaction;

use super::check::Check;
use super::counters::add_consume;
use super::filter::LogFilter;
use super::plan::Plan;
use super::tables::Tables;
use crate::Result;
use crate::logs::keys;
use crate::logs::tally::Tally;

/// Candidates a stat checks at most (about) for a filter that no index range covers; past that
/// the quota is extrapolated from evenly spread sample hours.
pub const STAT_SCAN_LIMIT: usize = 10_000;

/// Matching rows a sampled stat reads at most for the quota of a matching row (the matches
/// themselves are counted on the postings, without reading rows).
pub const QUOTA_SAMPLE: usize = 1_000;

/// Quota and the last minute's request and token rates of a filter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogStat {
    /// Quota of the matching consume rows.
    pub quota: i64,
    /// False when `quota` is extrapolated from a sample (see the module doc).
    pub exact: bool,
    /// Matching consume rows created in the last 60 seconds.
    pub rpm: i64,
    /// Their prompt + completion tokens.
    pub tpm: i64,
}

/// The stat of `f` at `now` (unix seconds). The type filter is ignored: stats are about
/// consumption.
pub fn stat(rtx: &ReadTransaction, f: &LogFilter, now: i64) -> Result<LogStat> {
    let t = Tables::open(rtx)?;
    let f = LogFilter {
        log_type: None,
        ..f.clone()
    };
    let plan = t.plan(&f)?;
    let key = plan.key.as_deref();
    let (quota, exact) = if plan.covers_all {
        (t.covered_tally(key, f.start, f.end, true)?.quota, true)
    } else {
        sampled_quota(&t, &plan, &f)?
    };
    let recent = LogFilter {
        start: Some(now.saturating_sub(60)),
        end: None,
        ..f
    };
    let plan = t.plan(&recent)?;
    let last = sum_matching(&t, &plan, &recent)?;
    Ok(LogStat {
        quota,
        exact,
        rpm: last.requests,
        tpm: last.prompt.saturating_add(last.completion),
    })
}

/// The quota of an uncovered filter: exact over a small range, else extrapolated from whole
/// hours spread evenly over the range.
fn sampled_quota(t: &Tables, plan: &Plan, f: &LogFilter) -> Result<(i64, bool)> {
    let key = plan.key.as_deref();
    let candidates = t.covered_tally(key, f.start, f.end, false)?.rows;
    let limit = i64::try_from(STAT_SCAN_LIMIT).unwrap_or(i64::MAX);
    if candidates <= limit {
        return Ok((sum_matching(t, plan, f)?.quota, true));
    }
    // The hours of the range that hold candidates, oldest first.
    let lo = f.start.map_or(i64::MIN, keys::hour);
    let hi = f
        .end
        .map_or(i64::MAX, |e| keys::hour(e).saturating_add(keys::HOUR));
    let mut hours: Vec<i64> = t
        .key_counters(key.unwrap_or(keys::ALL), lo, hi)?
        .into_iter()
        .map(|(hour, _)| hour)
        .collect();
    hours.sort_unstable();
    hours.dedup();
    // Every `stride`-th hour (the middle one of each stride), about `limit` candidates in all.
    let stride = usize::try_from(candidates.div_euclid(limit).saturating_add(1)).unwrap_or(1);
    let picked: Vec<i64> = hours
        .iter()
        .skip(stride / 2)
        .step_by(stride)
        .copied()
        .collect();
    let per_hour = (STAT_SCAN_LIMIT / picked.len().max(1)).max(64);
    // The matching rows of the sample hours, found on the postings alone.
    let (mut matched, mut checked) = (Vec::new(), 0i64);
    for h in picked {
        let last = h.saturating_add(keys::HOUR - 1);
        let span = LogFilter {
            start: Some(f.start.map_or(h, |s| s.max(h))),
            end: Some(f.end.map_or(last, |e| e.min(last))),
            ..f.clone()
        };
        checked = checked.saturating_add(matching_ids(t, plan, &span, per_hour, &mut matched)?);
    }
    if checked == 0 || matched.is_empty() {
        return Ok((0, false));
    }
    // The quota of a matching row, averaged over at most QUOTA_SAMPLE of them spread evenly.
    let step = matched.len().div_ceil(QUOTA_SAMPLE).max(1);
    let (mut quota, mut read) = (0i64, 0i64);
    for &id in matched.iter().step_by(step) {
        if let Some(e) = t.row(id)? {
            read += 1;
            if f.matches(&e) {
                let mut one = Tally::default();
                add_consume(&mut one, &e);
                quota = quota.saturating_add(one.quota);
            }
        }
    }
    if read == 0 {
        return Ok((0, false));
    }
    let estimate =
        quota as f64 / read as f64 * matched.len() as f64 / checked as f64 * candidates as f64;
    Ok((estimate.round() as i64, false))
}

/// Adds to `ids` the matching rows among at most `budget` candidates of the plan's range
/// (newest first), checked on the postings only; returns the candidates checked.
fn matching_ids(
    t: &Tables,
    plan: &Plan,
    f: &LogFilter,
    budget: usize,
    ids: &mut Vec<i64>,
) -> Result<i64> {
    let mut n = 0i64;
    let mut check = Check::new(t, &plan.others, f);
    for r in t
        .ids_desc(plan.key.as_deref(), f.start, f.end)?
        .take(budget)
    {
        n += 1;
        let (ts, id) = r?;
        if check.passes(ts, id)? {
            ids.push(id);
        }
    }
    Ok(n)
}

/// Sums the matching rows of the plan's range.
fn sum_matching(t: &Tables, plan: &Plan, f: &LogFilter) -> Result<Tally> {
    let mut sum = Tally::default();
    let mut check = Check::new(t, &plan.others, f);
    for r in t.ids_desc(plan.key.as_deref(), f.start, f.end)? {
        let (ts, id) = r?;
        if check.passes(ts, id)?
            && let Some(e) = t.row(id)?
            && f.matches(&e)
        {
            sum.rows += 1;
            add_consume(&mut sum, &e);
        }
    }
    Ok(sum)
}
