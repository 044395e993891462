//! Writing logs: a batch of rows with their postings, hour counters and dashboard aggregates
//! in the caller's transaction; and deleting old rows a small batch at a time, with every
//! posting entry and counter they contributed.
//!
//! A batch's rows are grouped by (hour, filter key) in memory and appended to the postings
//! ([`super::postings`]): one B-tree insert per distinct (hour, key) of the commit, in the
//! leaves of its hour, and the posting carries that batch's share of the hour counter. Once an
//! hour falls more than [`RECENT_HOURS`] behind the newest row, [`seal`] sums its postings'
//! shares into the key-major [`LOG_COUNTS`] (one commit an hour) and moves the `sealed_before`
//! mark ([`LOG_MARKS`]) past it; rows for a sealed hour (imports, late rows) add to
//! [`LOG_COUNTS`] directly. Dashboard aggregate changes of a batch are summed in memory first.

use std::borrow::{Borrow, BorrowMut};
use std::collections::BTreeMap;

use redb::{ReadableTable, Table, WriteTransaction};

use super::grouped::Grouped;
use super::postings::{self, View};
use super::tally::{Tally, shifted, tally};
use super::{LOG_CONSUME, LogEntry, keys};
use crate::tables::{
    DASH_BY_MODEL, DASH_BY_USER, DASH_BY_USER_MODEL, DashAggregate, HourCount, LOG_BY_TIME,
    LOG_COUNTS, LOG_MARKS, LOG_POSTINGS, LOGS,
};
use crate::{Result, StorageError, codec, meta};

/// Hours behind the newest row whose counters stay in their postings before [`seal`] moves
/// them into [`LOG_COUNTS`] (so a reader sums the postings of at most about this many hours).
pub const RECENT_HOURS: i64 = 48;

/// The name of the `sealed_before` mark in [`LOG_MARKS`].
const SEALED_BEFORE: &str = "sealed_before";

/// The hour start below which counters are in [`LOG_COUNTS`] (`i64::MIN`: none yet).
pub fn sealed_before(marks: &impl ReadableTable<&'static str, i64>) -> Result<i64> {
    Ok(marks.get(SEALED_BEFORE)?.map_or(i64::MIN, |g| g.value()))
}

/// Pending counter and aggregate changes of a batch.
#[derive(Default)]
struct Deltas {
    /// Key-major hour counters of sealed hours by (key, hour), the order of [`LOG_COUNTS`].
    counts: BTreeMap<(String, i64), Tally>,
    by_model: BTreeMap<(i64, String), Tally>,
    by_user_model: BTreeMap<(i64, i64, String), Tally>,
    by_user: BTreeMap<(i64, i64), Tally>,
}

impl Deltas {
    /// Counts row `e` (`sign` 1: inserted, -1: deleted) under [`keys::ALL`] and `row_keys` in
    /// the key-major counters (rows of a sealed hour).
    fn count(&mut self, e: &LogEntry, row_keys: &[String], sign: i64) -> Result<()> {
        let hour = keys::hour(e.created_at);
        let tally = Tally::of(e, sign);
        for key in std::iter::once(keys::ALL).chain(row_keys.iter().map(String::as_str)) {
            self.counts
                .entry((key.to_owned(), hour))
                .or_default()
                .add(tally)?;
        }
        Ok(())
    }

    fn dashboard(&mut self, e: &LogEntry) -> Result<()> {
        if e.log_type != LOG_CONSUME {
            return Ok(());
        }
        let hour = keys::hour(e.created_at);
        let tally = Tally::of(e, 1);
        let user = e.user_id.0;
        self.by_model
            .entry((hour, e.model_name.clone()))
            .or_default()
            .add(tally)?;
        self.by_user_model
            .entry((user, hour, e.model_name.clone()))
            .or_default()
            .add(tally)?;
        self.by_user.entry((hour, user)).or_default().add(tally)?;
        Ok(())
    }

    /// Writes the changes; returns the B-tree inserts and removals made.
    fn apply(self, wtx: &WriteTransaction) -> Result<u64> {
        let writes = self.counts.len() + self.by_model.len() + self.by_user_model.len();
        let writes = u64::try_from(writes + self.by_user.len()).unwrap_or(u64::MAX);
        if !self.counts.is_empty() {
            let mut counts = wtx.open_table(LOG_COUNTS)?;
            for ((key, hour), d) in self.counts {
                apply_count(&mut counts, &key, hour, d)?;
            }
        }
        let mut table = wtx.open_table(DASH_BY_MODEL)?;
        for ((hour, model), d) in self.by_model {
            let old = table.get((hour, model.as_str()))?.map(|g| g.value());
            table.insert((hour, model.as_str()), add_dash(old, d)?)?;
        }
        let mut table = wtx.open_table(DASH_BY_USER_MODEL)?;
        for ((user, hour, model), d) in self.by_user_model {
            let old = table.get((user, hour, model.as_str()))?.map(|g| g.value());
            table.insert((user, hour, model.as_str()), add_dash(old, d)?)?;
        }
        let mut table = wtx.open_table(DASH_BY_USER)?;
        for ((hour, user), d) in self.by_user {
            let old = table.get((hour, user))?.map(|g| g.value());
            table.insert((hour, user), add_dash(old, d)?)?;
        }
        Ok(writes)
    }
}

/// Seals the hours more than [`RECENT_HOURS`] older than the newest row: sums their postings'
/// counter shares into [`LOG_COUNTS`] (adding to what is there) and moves the `sealed_before`
/// mark past them. Returns the inserts made (0 when nothing moved). Under a steady stream that
/// is one hour of counters once an hour.
pub fn seal(wtx: &WriteTransaction) -> Result<u64> {
    let Some(newest) = wtx
        .open_table(LOG_BY_TIME)?
        .last()?
        .map(|(k, _)| keys::hour(k.value().0))
    else {
        return Ok(0);
    };
    let cutoff = newest.saturating_sub(RECENT_HOURS.saturating_mul(keys::HOUR));
    let mut marks = wtx.open_table(LOG_MARKS)?;
    let mark = sealed_before(&marks)?;
    if mark >= cutoff {
        return Ok(0);
    }
    let mut sums: BTreeMap<(String, i64), Tally> = BTreeMap::new();
    {
        let table = wtx.open_table(LOG_POSTINGS)?;
        for r in table.range((mark, "", i64::MIN)..(cutoff, "", i64::MIN))? {
            let (k, v) = r?;
            let (hour, key, _) = k.value();
            let share = tally(View::of(v.value())?.count)?;
            sums.entry((key.to_owned(), hour)).or_default().add(share)?;
        }
    }
    if sums.is_empty() {
        return Ok(0);
    }
    let mut counts = wtx.open_table(LOG_COUNTS)?;
    let moved = u64::try_from(sums.len()).unwrap_or(u64::MAX);
    for ((key, hour), d) in sums {
        apply_count(&mut counts, &key, hour, d)?;
    }
    marks.insert(SEALED_BEFORE, cutoff)?;
    Ok(moved.saturating_add(1))
}

/// A dashboard aggregate plus a (positive) tally.
fn add_dash(old: Option<DashAggregate>, d: Tally) -> Result<DashAggregate> {
    let (n, q, p, c) = old.unwrap_or_default();
    let n = u64::try_from(d.requests)
        .ok()
        .and_then(|r| n.checked_add(r))
        .ok_or(StorageError::Overflow)?;
    let add = |a: i64, b: i64| a.checked_add(b).ok_or(StorageError::Overflow);
    Ok((
        n,
        add(q, d.quota)?,
        add(p, d.prompt)?,
        add(c, d.completion)?,
    ))
}

/// Adds `d` to one key-major hour counter; a counter that reaches zero rows is removed.
fn apply_count(
    counts: &mut Table<(&str, i64), HourCount>,
    key: &str,
    hour: i64,
    d: Tally,
) -> Result<()> {
    let old = counts.get((key, hour))?.map(|g| g.value());
    match shifted(old, d)? {
        Some(next) => counts.insert((key, hour), next)?,
        None => counts.remove((key, hour))?,
    };
    Ok(())
}

/// Inserts one log row (assigning its id); see [`insert_batch`].
pub fn insert(wtx: &WriteTransaction, entry: LogEntry) -> Result<i64> {
    let ids = insert_batch(wtx, vec![entry], true)?;
    ids.first()
        .copied()
        .ok_or(StorageError::NotFound { what: "log" })
}

/// Inserts rows (assigning ids in order, also into the entries) with their index entries and
/// hour counters; when `dashboard` is true (DataExportEnabled) consume rows also add to the
/// dashboard aggregates. Returns the ids. Takes the rows or `&mut` borrows of them, so a caller
/// that keeps its rows (the log writer, for a retry) need not copy them.
pub fn insert_batch<E: BorrowMut<LogEntry>>(
    wtx: &WriteTransaction,
    entries: impl IntoIterator<Item = E, IntoIter: ExactSizeIterator>,
    dashboard: bool,
) -> Result<Vec<i64>> {
    Ok(insert_batch_counted(wtx, entries, dashboard)?.0)
}

/// [`insert_batch`], also returning the B-tree inserts (and removals) it made in all tables:
/// the id sequence, rows, indexes, counters and aggregates (the log benchmark's insert phase
/// prints them per row).
pub fn insert_batch_counted<E: BorrowMut<LogEntry>>(
    wtx: &WriteTransaction,
    entries: impl IntoIterator<Item = E, IntoIter: ExactSizeIterator>,
    dashboard: bool,
) -> Result<(Vec<i64>, u64)> {
    let mut entries: Vec<E> = entries.into_iter().collect();
    if entries.is_empty() {
        return Ok((Vec::new(), 0));
    }
    let first = meta::reserve_ids(wtx, "logs", entries.len())?;
    let mark = sealed_before(&wtx.open_table(LOG_MARKS)?)?;
    let mut inserts: u64 = 1;
    let mut deltas = Deltas::default();
    let mut ids = Vec::with_capacity(entries.len());
    {
        let mut logs = wtx.open_table(LOGS)?;
        let mut by_time = wtx.open_table(LOG_BY_TIME)?;
        let mut encoded = Vec::new();
        for (id, entry) in (first..).zip(entries.iter_mut()) {
            let entry = entry.borrow_mut();
            entry.id = id;
            entry.bound();
            codec::encode_into(&*entry, &mut encoded)?;
            logs.insert(id, encoded.as_slice())?;
            by_time.insert((entry.created_at, id), ())?;
            inserts += 2;
            if keys::hour(entry.created_at) < mark {
                deltas.count(entry, &keys::of(entry), 1)?;
            }
            if dashboard {
                deltas.dashboard(entry)?;
            }
            ids.push(id);
        }
    }
    let mut grouped = Grouped::default();
    for entry in &entries {
        grouped.add(Borrow::<LogEntry>::borrow(entry));
    }
    inserts = inserts.saturating_add(grouped.post(wtx)?);
    inserts = inserts.saturating_add(deltas.apply(wtx)?);
    inserts = inserts.saturating_add(seal(wtx)?);
    Ok((ids, inserts))
}

/// Deletes at most `max_rows` of the oldest rows created before `before` (unix seconds), with
/// their index entries and counters. Returns how many were deleted (0: nothing older is left).
/// Dashboard aggregates are kept: they are history, not rows.
pub fn delete_before(wtx: &WriteTransaction, before: i64, max_rows: usize) -> Result<usize> {
    let mut by_time = wtx.open_table(LOG_BY_TIME)?;
    let victims: Vec<(i64, i64)> = by_time
        .range(..(before, i64::MIN))?
        .take(max_rows)
        .map(|r| r.map(|(k, _)| k.value()))
        .collect::<std::result::Result<_, _>>()?;
    let mark = sealed_before(&wtx.open_table(LOG_MARKS)?)?;
    let mut logs = wtx.open_table(LOGS)?;
    let mut deltas = Deltas::default();
    let mut gone: BTreeMap<(i64, String), BTreeMap<i64, Tally>> = BTreeMap::new();
    for &(ts, id) in &victims {
        by_time.remove((ts, id))?;
        let Some(bytes) = logs.remove(id)? else {
            continue;
        };
        let entry: LogEntry = codec::decode(bytes.value())?;
        drop(bytes);
        let row_keys = keys::of(&entry);
        let hour = keys::hour(entry.created_at);
        if hour < mark {
            deltas.count(&entry, &row_keys, -1)?;
        }
        let tally = Tally::of(&entry, -1);
        for key in std::iter::once(keys::ALL.to_owned()).chain(row_keys) {
            gone.entry((hour, key)).or_default().insert(id, tally);
        }
    }
    drop((by_time, logs));
    {
        let mut table = wtx.open_table(LOG_POSTINGS)?;
        for ((hour, key), rows) in &gone {
            postings::remove(&mut table, *hour, key, rows)?;
        }
    }
    deltas.apply(wtx)?;
    Ok(victims.len())
}

/// Rebuilds every derived log table (time index, postings, counters, dashboard aggregates)
/// from the rows: the migration step for files written before they existed.
pub fn rebuild_derived(wtx: &WriteTransaction) -> Result<()> {
    rebuild(wtx, true)
}

/// Rebuilds the postings and the hour counters from the rows (the time index and the
/// dashboard aggregates are kept): the migration step when the set of filter keys or the
/// index's format changes.
pub fn rebuild_filter_keys(wtx: &WriteTransaction) -> Result<()> {
    rebuild(wtx, false)
}

/// Rows a rebuild posts at a time (the log writer's batch at its largest).
const REBUILD_CHUNK: usize = 512;

fn rebuild(wtx: &WriteTransaction, everything: bool) -> Result<()> {
    wtx.delete_table(LOG_POSTINGS)?;
    wtx.delete_table(LOG_COUNTS)?;
    wtx.delete_table(LOG_MARKS)?;
    let entries: Vec<LogEntry> = {
        let logs = wtx.open_table(LOGS)?;
        let mut out = Vec::new();
        for row in logs.iter()? {
            let (_, bytes) = row?;
            out.push(codec::decode(bytes.value())?);
        }
        out
    };
    let mut deltas = Deltas::default();
    if everything {
        let mut by_time = wtx.open_table(LOG_BY_TIME)?;
        for entry in &entries {
            by_time.insert((entry.created_at, entry.id), ())?;
            deltas.dashboard(entry)?;
        }
    }
    // Hours this far behind the newest row are counted key-major from the start.
    let mark = entries
        .iter()
        .map(|e| keys::hour(e.created_at))
        .max()
        .map(|newest| newest.saturating_sub(RECENT_HOURS.saturating_mul(keys::HOUR)));
    if let Some(mark) = mark {
        wtx.open_table(LOG_MARKS)?.insert(SEALED_BEFORE, mark)?;
    }
    let mark = mark.unwrap_or(i64::MIN);
    for chunk in entries.chunks(REBUILD_CHUNK) {
        let mut grouped = Grouped::default();
        for entry in chunk {
            if keys::hour(entry.created_at) < mark {
                deltas.count(entry, &keys::of(entry), 1)?;
            }
            grouped.add(entry);
        }
        grouped.post(wtx)?;
        if deltas.counts.len() > 100_000 {
            std::mem::take(&mut deltas).apply(wtx)?;
        }
    }
    deltas.apply(wtx).map(|_| ())
}
