//! Writing logs: a batch of rows with their index entries, hour counters and dashboard
//! aggregates in the caller's transaction; and deleting old rows a small batch at a time, with
//! every index entry and counter they contributed.
//!
//! Counter and aggregate changes of a batch are summed in memory first, so a batch of 512 rows
//! of a few users and models touches each counter once. New rows count in the hour-major
//! [`LOG_COUNTS_RECENT`] (a commit's counters share the leaves of its hours); an hour that falls
//! more than [`RECENT_HOURS`] behind the newest is moved into the key-major [`LOG_COUNTS`] in one
//! commit ([`seal`]), so each key's leaf there is rewritten about once an hour, not once a
//! commit.

use std::borrow::BorrowMut;
use std::collections::BTreeMap;

use redb::{ReadableTable, Table, WriteTransaction};

use super::{LOG_CONSUME, LogEntry, keys};
use crate::tables::{
    DASH_BY_MODEL, DASH_BY_USER, DASH_BY_USER_MODEL, DashAggregate, HourCount, LOG_BY_KEY,
    LOG_BY_TIME, LOG_COUNTS, LOG_COUNTS_RECENT, LOGS,
};

/// Hours of counters the hour-major [`LOG_COUNTS_RECENT`] keeps behind the newest before they
/// move into [`LOG_COUNTS`] (so a reader does at most about this many recent reads per key).
pub const RECENT_HOURS: i64 = 48;
use crate::{Result, StorageError, codec, meta};

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
    fn of(e: &LogEntry, sign: i64) -> Tally {
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

    fn add(&mut self, o: Tally) -> Result<()> {
        let add = |a: i64, b: i64| a.checked_add(b).ok_or(StorageError::Overflow);
        self.rows = add(self.rows, o.rows)?;
        self.requests = add(self.requests, o.requests)?;
        self.quota = add(self.quota, o.quota)?;
        self.prompt = add(self.prompt, o.prompt)?;
        self.completion = add(self.completion, o.completion)?;
        Ok(())
    }
}

/// Pending counter and aggregate changes of a batch.
#[derive(Default)]
struct Deltas {
    /// Hour counters by (hour, key), the order of [`LOG_COUNTS_RECENT`].
    counts: BTreeMap<(i64, String), Tally>,
    by_model: BTreeMap<(i64, String), Tally>,
    by_user_model: BTreeMap<(i64, i64, String), Tally>,
    by_user: BTreeMap<(i64, i64), Tally>,
}

impl Deltas {
    /// Counts row `e` (`sign` 1: inserted, -1: deleted) under [`keys::ALL`] and `row_keys`
    /// (moved into the counters, not cloned).
    fn count(&mut self, e: &LogEntry, row_keys: Vec<String>, sign: i64) -> Result<()> {
        let hour = keys::hour(e.created_at);
        let tally = Tally::of(e, sign);
        for key in std::iter::once(keys::ALL.to_owned()).chain(row_keys) {
            self.counts.entry((hour, key)).or_default().add(tally)?;
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

    /// Writes the changes (row additions: the hour counters into [`LOG_COUNTS_RECENT`], then
    /// [`seal`]); returns the B-tree inserts and removals made.
    fn apply(self, wtx: &WriteTransaction) -> Result<u64> {
        let writes = self.counts.len() + self.by_model.len() + self.by_user_model.len();
        let writes = u64::try_from(writes + self.by_user.len()).unwrap_or(u64::MAX);
        {
            let mut recent = wtx.open_table(LOG_COUNTS_RECENT)?;
            for ((hour, key), d) in self.counts {
                let old = recent.get((hour, key.as_str()))?.map(|g| g.value());
                match shifted(old, d)? {
                    Some(next) => recent.insert((hour, key.as_str()), next)?,
                    None => recent.remove((hour, key.as_str()))?,
                };
            }
        }
        let writes = writes.saturating_add(seal(wtx)?);
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

/// Moves the hour counters more than [`RECENT_HOURS`] older than the newest from
/// [`LOG_COUNTS_RECENT`] into [`LOG_COUNTS`] (adding to what is there); returns the inserts and
/// removals made (0 when nothing moved). Under a steady stream that is one hour of counters
/// once an hour; rows for an older hour (imports, late rows) move at their own commit.
pub fn seal(wtx: &WriteTransaction) -> Result<u64> {
    let mut recent = wtx.open_table(LOG_COUNTS_RECENT)?;
    let (Some(oldest), Some(newest)) = (
        recent.first()?.map(|(k, _)| k.value().0),
        recent.last()?.map(|(k, _)| k.value().0),
    ) else {
        return Ok(0);
    };
    let cutoff = newest.saturating_sub(RECENT_HOURS.saturating_mul(keys::HOUR));
    if oldest >= cutoff {
        return Ok(0);
    }
    let mut moved = Vec::new();
    for entry in recent.extract_from_if(..(cutoff, ""), |_, _| true)? {
        let (k, v) = entry?;
        let (hour, key) = k.value();
        moved.push((key.to_owned(), hour, v.value()));
    }
    let mut counts = wtx.open_table(LOG_COUNTS)?;
    moved.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    for (key, hour, count) in &moved {
        apply_count(&mut counts, key, *hour, tally(*count)?)?;
    }
    Ok(u64::try_from(moved.len().saturating_mul(2)).unwrap_or(u64::MAX))
}

/// A stored counter as a (positive) tally.
fn tally(c: HourCount) -> Result<Tally> {
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

/// A counter plus `d`; `None` when it reaches zero rows.
fn shifted(old: Option<HourCount>, d: Tally) -> Result<Option<HourCount>> {
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
    let entries = entries.into_iter();
    if entries.len() == 0 {
        return Ok((Vec::new(), 0));
    }
    let first = meta::reserve_ids(wtx, "logs", entries.len())?;
    let mut inserts: u64 = 1;
    let mut deltas = Deltas::default();
    let mut ids = Vec::with_capacity(entries.len());
    {
        let mut logs = wtx.open_table(LOGS)?;
        let mut by_time = wtx.open_table(LOG_BY_TIME)?;
        let mut by_key = wtx.open_table(LOG_BY_KEY)?;
        for (id, mut entry) in (first..).zip(entries) {
            let entry = entry.borrow_mut();
            entry.id = id;
            entry.bound();
            logs.insert(id, codec::encode(&*entry)?.as_slice())?;
            by_time.insert((entry.created_at, id), ())?;
            let row_keys = keys::of(entry);
            for key in &row_keys {
                by_key.insert((key.as_str(), entry.created_at, id), ())?;
            }
            inserts += 2 + u64::try_from(row_keys.len()).unwrap_or(u64::MAX);
            deltas.count(entry, row_keys, 1)?;
            if dashboard {
                deltas.dashboard(entry)?;
            }
            ids.push(id);
        }
    }
    inserts = inserts.saturating_add(deltas.apply(wtx)?);
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
    let mut logs = wtx.open_table(LOGS)?;
    let mut by_key = wtx.open_table(LOG_BY_KEY)?;
    let mut deltas = Deltas::default();
    for &(ts, id) in &victims {
        by_time.remove((ts, id))?;
        let Some(bytes) = logs.remove(id)? else {
            continue;
        };
        let entry: LogEntry = codec::decode(bytes.value())?;
        drop(bytes);
        let row_keys = keys::of(&entry);
        for key in &row_keys {
            by_key.remove((key.as_str(), entry.created_at, id))?;
        }
        deltas.count(&entry, row_keys, -1)?;
    }
    drop((by_time, logs, by_key));
    // A deleted row's counter may be split between the two counter tables (rows added to an
    // hour after it moved): the recent part is moved first, then the removal applied.
    let mut recent = wtx.open_table(LOG_COUNTS_RECENT)?;
    let mut counts = wtx.open_table(LOG_COUNTS)?;
    for ((hour, key), d) in deltas.counts {
        if let Some(part) = recent.remove((hour, key.as_str()))? {
            let part = tally(part.value())?;
            apply_count(&mut counts, &key, hour, part)?;
        }
        apply_count(&mut counts, &key, hour, d)?;
    }
    Ok(victims.len())
}

/// Rebuilds every derived log table (indexes, counters, dashboard aggregates) from the rows: the
/// migration step for files written before they existed.
pub fn rebuild_derived(wtx: &WriteTransaction) -> Result<()> {
    rebuild(wtx, true)
}

/// Rebuilds the filter index and the hour counters from the rows (the time index and the
/// dashboard aggregates are kept): the migration step when the set of filter keys changes.
pub fn rebuild_filter_keys(wtx: &WriteTransaction) -> Result<()> {
    wtx.delete_table(LOG_BY_KEY)?;
    wtx.delete_table(LOG_COUNTS)?;
    wtx.delete_table(LOG_COUNTS_RECENT)?;
    rebuild(wtx, false)
}

fn rebuild(wtx: &WriteTransaction, everything: bool) -> Result<()> {
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
    {
        let mut by_time = wtx.open_table(LOG_BY_TIME)?;
        let mut by_key = wtx.open_table(LOG_BY_KEY)?;
        for entry in &entries {
            let row_keys = keys::of(entry);
            for key in &row_keys {
                by_key.insert((key.as_str(), entry.created_at, entry.id), ())?;
            }
            deltas.count(entry, row_keys, 1)?;
            if everything {
                by_time.insert((entry.created_at, entry.id), ())?;
                deltas.dashboard(entry)?;
            }
        }
    }
    deltas.apply(wtx).map(|_| ())
}
