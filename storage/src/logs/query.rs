//! Log queries: one page of a [`LogFilter`], its total, and its stat (quota, rpm, tpm).
//!
//! **Plan.** Every filter dimension the query sets has an index range (key, created_at, id);
//! user + model, user + token name, user + group and model + channel also have composite ones,
//! and rows other than consume are indexed under typed keys ([`super::keys`]). The planner
//! estimates each candidate range's size from the hour counters (a range of the key-major
//! counters plus one read per hour of the newest two days, [`crate::tables::LOG_COUNTS_RECENT`])
//! and scans
//! the smallest, newest first, checking the remaining filters by point lookups in their index
//! ranges (most selective first). With no filter it scans the time index.
//!
//! **Totals.** When the chosen range covers every filter (one dimension, or a composite pair,
//! plus the time range), the total is EXACT and costs no scan: the hour counters give the full
//! hours and only the partial hours at the two ends of the time range are counted on the index
//! (at most two hours of that key's entries, keys only). Otherwise each candidate of the chosen
//! range is checked against the other filters by point lookups in their index ranges (no row is
//! read until it is on the page), up to [`COUNT_SCAN_LIMIT`] candidates: if the range ends
//! within that budget the total is exact, else it is an estimate (matches ÷ candidates checked ×
//! candidates in range), flagged by `total_exact: false`. A range that covers every filter but
//! "type consume" is counted exactly without a scan: the range minus its typed ranges (the rows
//! of every other type).
//!
//! **Stats.** Quota sums consume rows (the type filter does not apply). Covered filters read the
//! counters plus the two partial hours (rows read for their quota): exact. Others sum the
//! matching rows of the chosen range when it holds at most [`STAT_SCAN_LIMIT`] candidates
//! (exact); a bigger range is sampled: whole hours spread evenly over the range (from the hour
//! counters) are checked, up to about [`STAT_SCAN_LIMIT`] candidates in all, and the quota is
//! extrapolated (matched quota ÷ candidates checked × candidates in range), flagged by
//! `exact: false`. So no stat reads more than a bounded number of rows. rpm and tpm are the
//! consume rows (count, prompt + completion tokens) created in the last 60 seconds that match
//! the filter, time range aside (new-api's semantics).

use redb::{ReadOnlyTable, ReadTransaction};

use super::write::Tally;
use super::{LOG_CONSUME, LogEntry, keys};
use crate::tables::{HourCount, LOG_BY_KEY, LOG_BY_TIME, LOG_COUNTS, LOG_COUNTS_RECENT, LOGS};
use crate::{Result, UserId, codec};

/// Candidates checked when counting a filter that no index range covers; past that the total
/// is extrapolated.
pub const COUNT_SCAN_LIMIT: usize = 4_000;

/// Candidates a stat checks at most (about) for a filter that no index range covers; past that
/// the quota is extrapolated from evenly spread sample hours.
pub const STAT_SCAN_LIMIT: usize = 10_000;

/// What a log list or stat asks for. `None` (or type 0) means "any".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogFilter {
    /// Log type; 0 is "all".
    pub log_type: Option<i32>,
    /// Whose logs.
    pub user: Option<UserId>,
    /// Token name, exact.
    pub token_name: Option<String>,
    /// Model name, exact.
    pub model_name: Option<String>,
    /// Channel id.
    pub channel: Option<i64>,
    /// Billing group, exact.
    pub group: Option<String>,
    /// Created at or after (unix seconds).
    pub start: Option<i64>,
    /// Created at or before (unix seconds).
    pub end: Option<i64>,
}

const USER: u8 = 1;
const MODEL: u8 = 2;
const TOKEN: u8 = 4;
const CHANNEL: u8 = 8;
const TYPE: u8 = 16;
const GROUP: u8 = 32;

impl LogFilter {
    fn log_type(&self) -> Option<i32> {
        self.log_type.filter(|t| *t != 0)
    }

    /// The dimensions set, as bits.
    fn dims(&self) -> u8 {
        let mut d = 0;
        for (set, bit) in [
            (self.user.is_some(), USER),
            (self.model_name.is_some(), MODEL),
            (self.token_name.is_some(), TOKEN),
            (self.channel.is_some(), CHANNEL),
            (self.log_type().is_some(), TYPE),
            (self.group.is_some(), GROUP),
        ] {
            if set {
                d |= bit;
            }
        }
        d
    }

    /// Index keys that can serve this filter, with the dimensions each covers.
    fn candidates(&self) -> Vec<(String, u8)> {
        let mut out = Vec::new();
        if let Some(u) = self.user {
            out.push((keys::user(u.0), USER));
            if let Some(m) = &self.model_name {
                out.push((keys::user_model(u.0, m), USER | MODEL));
            }
            if let Some(k) = &self.token_name {
                out.push((keys::user_token(u.0, k), USER | TOKEN));
            }
            if let Some(g) = &self.group {
                out.push((keys::user_group(u.0, g), USER | GROUP));
            }
        }
        if let Some(m) = &self.model_name {
            out.push((keys::model(m), MODEL));
            if let Some(c) = self.channel {
                out.push((keys::model_channel(c, m), MODEL | CHANNEL));
            }
        }
        if let Some(k) = &self.token_name {
            out.push((keys::token(k), TOKEN));
        }
        if let Some(c) = self.channel {
            out.push((keys::channel(c), CHANNEL));
        }
        if let Some(g) = &self.group {
            out.push((keys::group(g), GROUP));
        }
        if let Some(t) = self.log_type() {
            if keys::has_typed_keys(t) {
                let typed: Vec<(String, u8)> = out
                    .iter()
                    .map(|(k, bits)| (keys::typed(t, k), bits | TYPE))
                    .collect();
                out.extend(typed);
            }
            out.push((keys::log_type(t), TYPE));
        }
        out
    }

    /// Whether `e` passes every filter.
    pub fn matches(&self, e: &LogEntry) -> bool {
        self.user.is_none_or(|u| e.user_id == u)
            && self.log_type().is_none_or(|t| e.log_type == t)
            && self.token_name.as_deref().is_none_or(|t| e.token_name == t)
            && self.model_name.as_deref().is_none_or(|m| e.model_name == m)
            && self.channel.is_none_or(|c| e.channel_id == c)
            && self.group.as_deref().is_none_or(|g| e.group == g)
            && self.start.is_none_or(|s| e.created_at >= s)
            && self.end.is_none_or(|t| e.created_at <= t)
    }
}

/// The index range a query scans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Filter key, or `None` for the time index.
    pub key: Option<String>,
    /// The range holds exactly the matching rows (no row checks needed).
    pub covers_all: bool,
    /// Rows in the overlapping hours (an upper bound of the range).
    pub estimate: u64,
    /// Keys of the filters the range does not cover, checked per candidate (most selective
    /// first).
    pub others: Vec<String>,
    /// The range covers every filter but "type consume": its consume rows are counted exactly
    /// as the range minus its typed ranges.
    pub consume_by_subtraction: bool,
}

/// The tables a query reads.
struct Tables {
    logs: ReadOnlyTable<i64, &'static [u8]>,
    by_time: ReadOnlyTable<(i64, i64), ()>,
    by_key: ReadOnlyTable<(&'static str, i64, i64), ()>,
    counts: ReadOnlyTable<(&'static str, i64), HourCount>,
    recent: ReadOnlyTable<(i64, &'static str), HourCount>,
}

type Ids = Box<dyn Iterator<Item = Result<(i64, i64)>>>;

impl Tables {
    fn open(rtx: &ReadTransaction) -> Result<Tables> {
        Ok(Tables {
            logs: rtx.open_table(LOGS)?,
            by_time: rtx.open_table(LOG_BY_TIME)?,
            by_key: rtx.open_table(LOG_BY_KEY)?,
            counts: rtx.open_table(LOG_COUNTS)?,
            recent: rtx.open_table(LOG_COUNTS_RECENT)?,
        })
    }

    fn row(&self, id: i64) -> Result<Option<LogEntry>> {
        match self.logs.get(id)? {
            Some(bytes) => Ok(Some(codec::decode(bytes.value())?)),
            None => Ok(None),
        }
    }

    /// (created_at, id) of the range, newest first.
    fn ids_desc(&self, key: Option<&str>, start: Option<i64>, end: Option<i64>) -> Result<Ids> {
        let (s, e) = (start.unwrap_or(i64::MIN), end.unwrap_or(i64::MAX));
        if s > e {
            return Ok(Box::new(std::iter::empty()));
        }
        Ok(match key {
            None => Box::new(
                self.by_time
                    .range((s, i64::MIN)..=(e, i64::MAX))?
                    .rev()
                    .map(|r| Ok(r?.0.value())),
            ),
            Some(key) => Box::new(
                self.by_key
                    .range((key, s, i64::MIN)..=(key, e, i64::MAX))?
                    .rev()
                    .map(|r| {
                        let (_, ts, id) = r?.0.value();
                        Ok((ts, id))
                    }),
            ),
        })
    }

    /// The hours in `[lo, hi)` that hold recent counters, ascending (one seek each).
    fn recent_hours(&self, lo: i64, hi: i64) -> Result<Vec<i64>> {
        let mut out = Vec::new();
        let mut from = lo;
        while from < hi {
            let Some(r) = self.recent.range((from, "")..)?.next() else {
                break;
            };
            let hour = r?.0.value().0;
            if hour >= hi {
                break;
            }
            out.push(hour);
            match hour.checked_add(keys::HOUR) {
                Some(next) => from = next,
                None => break,
            }
        }
        Ok(out)
    }

    /// The hour counters of `key` for hours in `[lo, hi)`, from both counter tables (an hour
    /// may have a part in each).
    fn key_counters(&self, key: &str, lo: i64, hi: i64) -> Result<Vec<(i64, HourCount)>> {
        let mut out = Vec::new();
        if lo >= hi {
            return Ok(out);
        }
        for r in self.counts.range((key, lo)..(key, hi))? {
            let (k, v) = r?;
            out.push((k.value().1, v.value()));
        }
        for hour in self.recent_hours(lo, hi)? {
            if let Some(v) = self.recent.get((hour, key))? {
                out.push((hour, v.value()));
            }
        }
        Ok(out)
    }

    /// Sum of the hour counters of `key` for hours in `[lo, hi)`.
    fn counters(&self, key: &str, lo: i64, hi: i64) -> Result<Tally> {
        let mut t = Tally::default();
        for (_, (rows, requests, quota, prompt, completion)) in self.key_counters(key, lo, hi)? {
            t.rows = t
                .rows
                .saturating_add(i64::try_from(rows).unwrap_or(i64::MAX));
            t.requests = t
                .requests
                .saturating_add(i64::try_from(requests).unwrap_or(i64::MAX));
            t.quota = t.quota.saturating_add(quota);
            t.prompt = t.prompt.saturating_add(prompt);
            t.completion = t.completion.saturating_add(completion);
        }
        Ok(t)
    }

    fn plan(&self, f: &LogFilter) -> Result<Plan> {
        let lo = f.start.map_or(i64::MIN, keys::hour);
        let hi = f
            .end
            .map_or(i64::MAX, |e| keys::hour(e).saturating_add(keys::HOUR));
        let dims = f.dims();
        let mut sized = Vec::new();
        for (key, covers) in f.candidates() {
            let n = u64::try_from(self.counters(&key, lo, hi)?.rows).unwrap_or(0);
            sized.push((key, covers, n));
        }
        let best = sized
            .iter()
            .min_by_key(|(_, covers, n)| (*n, u8::BITS - covers.count_ones()));
        Ok(match best {
            Some((key, covers, estimate)) => {
                let mut others: Vec<&(String, u8, u64)> = sized
                    .iter()
                    .filter(|(_, bits, _)| bits.count_ones() == 1 && bits & covers == 0)
                    .collect();
                others.sort_by_key(|(_, _, n)| *n);
                Plan {
                    key: Some(key.clone()),
                    covers_all: *covers == dims,
                    estimate: *estimate,
                    others: others.into_iter().map(|(k, _, _)| k.clone()).collect(),
                    consume_by_subtraction: f.log_type() == Some(LOG_CONSUME)
                        && *covers == dims & !TYPE,
                }
            }
            None => Plan {
                key: None,
                covers_all: true,
                estimate: u64::try_from(self.counters(keys::ALL, lo, hi)?.rows).unwrap_or(0),
                others: Vec::new(),
                consume_by_subtraction: false,
            },
        })
    }

    /// The log types other than consume that have rows (a few seeks in the counters).
    fn other_types(&self) -> Result<Vec<i32>> {
        let mut out = std::collections::BTreeSet::new();
        for hour in self.recent_hours(i64::MIN, i64::MAX)? {
            // "t:{type}" keys sort between "t:" and "t;".
            for r in self.recent.range((hour, "t:")..(hour, "t;"))? {
                let (k, _) = r?;
                if let Some(t) = k.value().1.strip_prefix("t:").and_then(|v| v.parse().ok())
                    && keys::has_typed_keys(t)
                {
                    out.insert(t);
                }
            }
        }
        // "t:{type}" keys sort between "t:" and "t;"; each step skips past one key's hours.
        let mut after = "t:".to_owned();
        for _ in 0..64 {
            let Some(r) = self
                .counts
                .range((after.as_str(), i64::MAX)..("t;", i64::MIN))?
                .next()
            else {
                break;
            };
            let next = r?.0.value().0.to_owned();
            if let Some(t) = next.strip_prefix("t:").and_then(|v| v.parse::<i32>().ok())
                && keys::has_typed_keys(t)
            {
                out.insert(t);
            }
            after = next;
        }
        Ok(out.into_iter().collect())
    }

    /// Exact count of the consume rows of a range that covers every other filter.
    fn consume_count(&self, key: &str, f: &LogFilter) -> Result<i64> {
        let mut n = self.covered_tally(Some(key), f.start, f.end, false)?.rows;
        for t in self.other_types()? {
            let typed = keys::typed(t, key);
            n = n.saturating_sub(
                self.covered_tally(Some(&typed), f.start, f.end, false)?
                    .rows,
            );
        }
        Ok(n.max(0))
    }

    /// Whether the row `(ts, id)` is in every range of `others`.
    fn in_all(&self, others: &[String], ts: i64, id: i64) -> Result<bool> {
        for key in others {
            if self.by_key.get((key.as_str(), ts, id))?.is_none() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Exact tally of a covered range: counters for the full hours inside `[start, end]`, and
    /// the partial hours at the ends read on the index (`rows_too`: and on the rows, for sums).
    fn covered_tally(
        &self,
        key: Option<&str>,
        start: Option<i64>,
        end: Option<i64>,
        rows_too: bool,
    ) -> Result<Tally> {
        let lo = start.map_or(i64::MIN, |s| {
            let h = keys::hour(s);
            if h == s {
                h
            } else {
                h.saturating_add(keys::HOUR)
            }
        });
        let hi = end.map_or(i64::MAX, |e| keys::hour(e.saturating_add(1)));
        if lo >= hi {
            return self.scan_tally(key, start, end, rows_too);
        }
        let mut t = self.counters(key.unwrap_or(keys::ALL), lo, hi)?;
        if let Some(s) = start.filter(|s| *s < lo) {
            add(
                &mut t,
                self.scan_tally(key, Some(s), Some(lo - 1), rows_too)?,
            );
        }
        if let Some(e) = end.filter(|e| *e >= hi) {
            add(&mut t, self.scan_tally(key, Some(hi), Some(e), rows_too)?);
        }
        Ok(t)
    }

    /// Tally of every entry of the range (rows read only when `rows_too`).
    fn scan_tally(
        &self,
        key: Option<&str>,
        start: Option<i64>,
        end: Option<i64>,
        rows_too: bool,
    ) -> Result<Tally> {
        let mut t = Tally::default();
        for r in self.ids_desc(key, start, end)? {
            let (_, id) = r?;
            t.rows += 1;
            if rows_too && let Some(e) = self.row(id)? {
                add_consume(&mut t, &e);
            }
        }
        Ok(t)
    }
}

fn add(t: &mut Tally, o: Tally) {
    t.rows = t.rows.saturating_add(o.rows);
    t.requests = t.requests.saturating_add(o.requests);
    t.quota = t.quota.saturating_add(o.quota);
    t.prompt = t.prompt.saturating_add(o.prompt);
    t.completion = t.completion.saturating_add(o.completion);
}

fn add_consume(t: &mut Tally, e: &LogEntry) {
    if e.log_type == LOG_CONSUME {
        t.requests = t.requests.saturating_add(1);
        t.quota = t.quota.saturating_add(e.quota);
        t.prompt = t.prompt.saturating_add(e.prompt_tokens);
        t.completion = t.completion.saturating_add(e.completion_tokens);
    }
}

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

/// The plan a filter would use (benchmarks and tests).
pub fn plan(rtx: &ReadTransaction, f: &LogFilter) -> Result<Plan> {
    Tables::open(rtx)?.plan(f)
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
    for r in t.ids_desc(key, f.start, f.end)? {
        if matched >= end && (checked >= COUNT_SCAN_LIMIT || plan.consume_by_subtraction) {
            exhausted = false;
            break;
        }
        checked += 1;
        let (ts, id) = r?;
        if !t.in_all(&plan.others, ts, id)? {
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
    let last = sum_matching(&t, &plan, &recent, None, usize::MAX)?;
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
        return Ok((sum_matching(t, plan, f, None, usize::MAX)?.quota, true));
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
    let (mut quota, mut checked) = (0i64, 0i64);
    for h in picked {
        let last = h.saturating_add(keys::HOUR - 1);
        let span = LogFilter {
            start: Some(f.start.map_or(h, |s| s.max(h))),
            end: Some(f.end.map_or(last, |e| e.min(last))),
            ..f.clone()
        };
        let sum = sum_matching(t, plan, &span, Some(&mut checked), per_hour)?;
        quota = quota.saturating_add(sum.quota);
    }
    if checked == 0 {
        return Ok((0, false));
    }
    let estimate = quota as f64 / checked as f64 * candidates as f64;
    Ok((estimate.round() as i64, false))
}

/// Sums the matching rows among at most `budget` candidates of the plan's range (newest first),
/// adding the number of candidates checked to `checked`.
fn sum_matching(
    t: &Tables,
    plan: &Plan,
    f: &LogFilter,
    checked: Option<&mut i64>,
    budget: usize,
) -> Result<Tally> {
    let mut sum = Tally::default();
    let mut n = 0i64;
    for r in t
        .ids_desc(plan.key.as_deref(), f.start, f.end)?
        .take(budget)
    {
        n += 1;
        let (ts, id) = r?;
        if t.in_all(&plan.others, ts, id)?
            && let Some(e) = t.row(id)?
            && f.matches(&e)
        {
            sum.rows += 1;
            add_consume(&mut sum, &e);
        }
    }
    if let Some(c) = checked {
        *c = c.saturating_add(n);
    }
    Ok(sum)
}

/// Rows created before `before` (what a deletion by time will remove), exact.
pub fn count_before(rtx: &ReadTransaction, before: i64) -> Result<u64> {
    let t = Tables::open(rtx)?;
    let rows = t
        .covered_tally(None, None, Some(before.saturating_sub(1)), false)?
        .rows;
    Ok(u64::try_from(rows).unwrap_or(0))
}
