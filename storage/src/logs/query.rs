//! Log queries: one page of a [`LogFilter`], its total, and its stat (quota, rpm, tpm).
//!
//! **Plan.** Every filter dimension the query sets has an index range (its postings, hour by
//! hour, [`super::postings`]); user + model, user + token name, user + group and model +
//! channel also have composite ones, and rows other than consume are indexed under typed keys
//! ([`super::keys`]). The planner estimates each candidate range's size from the hour counters
//! (a range of the key-major counters plus the postings' shares of the hours not yet sealed,
//! at most about two days) and scans the smallest, newest first (an hour's postings are read
//! and ordered by (created_at, id) together), checking the remaining filters by looking the
//! row up in their postings (most selective first; one seek and a binary search in the stored
//! posting each). With no filter it scans the time index.
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

use redb::{ReadOnlyTable, ReadTransaction, ReadableTable};

use super::postings::View;
use super::tally::Tally;
use super::write::sealed_before;
use super::{LOG_CONSUME, LogEntry, keys};
use crate::tables::{HourCount, LOG_BY_TIME, LOG_COUNTS, LOG_MARKS, LOG_POSTINGS, LOGS};
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
    postings: ReadOnlyTable<(i64, &'static str, i64), &'static [u8]>,
    counts: ReadOnlyTable<(&'static str, i64), HourCount>,
    /// Hours from here on are counted by their postings' shares.
    sealed_before: i64,
    /// created_at of the oldest and the newest row (`None`: no rows).
    span: Option<(i64, i64)>,
}

type Ids<'a> = Box<dyn Iterator<Item = Result<(i64, i64)>> + 'a>;

/// The rows of one key's postings, newest first, an hour at a time.
struct HourWalk<'a> {
    t: &'a Tables,
    key: String,
    start: i64,
    end: i64,
    /// The next hour to read (descending), until `low`.
    hour: i64,
    low: i64,
    /// The hour read, ascending (popped from the end).
    buf: Vec<(i64, i64)>,
    done: bool,
}

impl Iterator for HourWalk<'_> {
    type Item = Result<(i64, i64)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(x) = self.buf.pop() {
                return Some(Ok(x));
            }
            if self.done || self.hour < self.low {
                return None;
            }
            let hour = self.hour;
            match self.hour.checked_sub(keys::HOUR) {
                Some(h) => self.hour = h,
                None => self.done = true,
            }
            if let Err(e) = self.load(hour) {
                self.done = true;
                return Some(Err(e));
            }
        }
    }
}

impl HourWalk<'_> {
    fn load(&mut self, hour: i64) -> Result<()> {
        let key = self.key.as_str();
        for r in self
            .t
            .postings
            .range((hour, key, i64::MIN)..=(hour, key, i64::MAX))?
        {
            let (k, v) = r?;
            let first = k.value().2;
            let p = View::of(v.value())?;
            self.buf.extend(
                p.entries(hour, first)
                    .filter(|(ts, _)| *ts >= self.start && *ts <= self.end),
            );
        }
        self.buf.sort_unstable();
        Ok(())
    }
}

impl Tables {
    fn open(rtx: &ReadTransaction) -> Result<Tables> {
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

    fn row(&self, id: i64) -> Result<Option<LogEntry>> {
        match self.logs.get(id)? {
            Some(bytes) => Ok(Some(codec::decode(bytes.value())?)),
            None => Ok(None),
        }
    }

    /// (created_at, id) of the range, newest first.
    fn ids_desc(&self, key: Option<&str>, start: Option<i64>, end: Option<i64>) -> Result<Ids<'_>> {
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
            Some(key) => {
                let Some((oldest, newest)) = self.span else {
                    return Ok(Box::new(std::iter::empty()));
                };
                let (s, e) = (s.max(oldest), e.min(newest));
                if s > e {
                    return Ok(Box::new(std::iter::empty()));
                }
                Box::new(HourWalk {
                    t: self,
                    key: key.to_owned(),
                    start: s,
                    end: e,
                    hour: keys::hour(e),
                    low: keys::hour(s),
                    buf: Vec::new(),
                    done: false,
                })
            }
        })
    }

    /// Whether row `(ts, id)` is posted under `key` (one seek and a binary search in the
    /// stored posting).
    fn posted(&self, key: &str, ts: i64, id: i64) -> Result<bool> {
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
    fn open_hours(&self, lo: i64, hi: i64) -> Vec<i64> {
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

    /// The hour counters of `key` for hours in `[lo, hi)`: sealed hours from the key-major
    /// counters, the others summed from their postings.
    fn key_counters(&self, key: &str, lo: i64, hi: i64) -> Result<Vec<(i64, HourCount)>> {
        let mut out = Vec::new();
        if lo >= hi {
            return Ok(out);
        }
        for r in self.counts.range((key, lo)..(key, hi))? {
            let (k, v) = r?;
            out.push((k.value().1, v.value()));
        }
        for hour in self.open_hours(lo, hi) {
            let mut sum: Option<HourCount> = None;
            for r in self
                .postings
                .range((hour, key, i64::MIN)..=(hour, key, i64::MAX))?
            {
                let share = View::of(r?.1.value())?.count;
                sum = Some(add_counts(sum.unwrap_or_default(), share));
            }
            if let Some(sum) = sum {
                out.push((hour, sum));
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
        for hour in self.open_hours(i64::MIN, i64::MAX) {
            // "t:{type}" keys sort between "t:" and "t;"; each step skips past one key.
            let mut after = "t:".to_owned();
            while let Some(r) = self
                .postings
                .range((hour, after.as_str(), i64::MAX)..(hour, "t;", i64::MIN))?
                .next()
            {
                let next = r?.0.value().1.to_owned();
                if let Some(t) = next.strip_prefix("t:").and_then(|v| v.parse::<i32>().ok())
                    && keys::has_typed_keys(t)
                {
                    out.insert(t);
                }
                after = next;
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
            if !self.posted(key, ts, id)? {
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

/// Two counters summed (saturating: a reader never fails on a sum).
fn add_counts(a: HourCount, b: HourCount) -> HourCount {
    (
        a.0.saturating_add(b.0),
        a.1.saturating_add(b.1),
        a.2.saturating_add(b.2),
        a.3.saturating_add(b.3),
        a.4.saturating_add(b.4),
    )
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
