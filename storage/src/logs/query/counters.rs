//! Counting a range: the hour counters of a key (sealed hours key-major, open hours from their
//! postings' shares), exact tallies of covered ranges (counters plus the two partial hours at
//! the ends), and the consume rows of a range counted by subtraction.

use super::filter::LogFilter;
use super::tables::Tables;
use crate::Result;
use crate::logs::postings::View;
use crate::logs::tally::Tally;
use crate::logs::{LOG_CONSUME, LogEntry, keys};
use crate::tables::HourCount;

impl Tables {
    /// The hour counters of `key` for hours in `[lo, hi)`: sealed hours from the key-major
    /// counters, the others summed from their postings.
    pub(super) fn key_counters(
        &self,
        key: &str,
        lo: i64,
        hi: i64,
    ) -> Result<Vec<(i64, HourCount)>> {
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

    /// Rows of `key` in the sealed hours of `[lo, hi)` (the key-major counters only).
    pub(super) fn sealed_rows(&self, key: &str, lo: i64, hi: i64) -> Result<i64> {
        let mut rows = 0i64;
        if lo >= hi {
            return Ok(rows);
        }
        for r in self.counts.range((key, lo)..(key, hi))? {
            let n = r?.1.value().0;
            rows = rows.saturating_add(i64::try_from(n).unwrap_or(i64::MAX));
        }
        Ok(rows)
    }

    /// Sum of the hour counters of `key` for hours in `[lo, hi)`.
    pub(super) fn counters(&self, key: &str, lo: i64, hi: i64) -> Result<Tally> {
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

    /// The log types other than consume that have rows (a few seeks in the counters).
    pub(super) fn other_types(&self) -> Result<Vec<i32>> {
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
    pub(super) fn consume_count(&self, key: &str, f: &LogFilter) -> Result<i64> {
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

    /// Exact tally of a covered range: counters for the full hours inside `[start, end]`, and
    /// the partial hours at the ends read on the index (`rows_too`: and on the rows, for sums).
    pub(super) fn covered_tally(
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
    pub(super) fn scan_tally(
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

pub(super) fn add(t: &mut Tally, o: Tally) {
    t.rows = t.rows.saturating_add(o.rows);
    t.requests = t.requests.saturating_add(o.requests);
    t.quota = t.quota.saturating_add(o.quota);
    t.prompt = t.prompt.saturating_add(o.prompt);
    t.completion = t.completion.saturating_add(o.completion);
}

pub(super) fn add_consume(t: &mut Tally, e: &LogEntry) {
    if e.log_type == LOG_CONSUME {
        t.requests = t.requests.saturating_add(1);
        t.quota = t.quota.saturating_add(e.quota);
        t.prompt = t.prompt.saturating_add(e.prompt_tokens);
        t.completion = t.completion.saturating_add(e.completion_tokens);
    }
}
