//! Postings: the filter index of the log rows, one entry per (hour, filter key) holding up to
//! [`POSTING_ROWS`] rows, instead of one entry per row and key.
//!
//! A posting ([`crate::tables::LOG_POSTINGS`], key (hour start, filter key, first id)) holds
//! the posting's share of the (hour, key) counter (postcard), then its rows in id order, each
//! [`ENTRY_BYTES`] bytes: id − first id (u32, little-endian) and created_at − hour (u16). The
//! fixed width lets a reader find a row by binary search in the stored bytes, without decoding
//! the posting. The log writer appends a batch's rows to the newest posting of each (hour, key)
//! while it has room, so a key costs one B-tree insert per commit (not one per row) and, the
//! table being hour-major, a commit's postings share the leaves of its hour or two.
//!
//! Postings of one (hour, key) cover disjoint, ascending id spans (ids only grow, and a posting
//! only takes ids above every id already posted under its key), so the posting holding a row
//! is the last one whose first id is at most the row's id.
//!
//! The counters of the hours not yet sealed ([`crate::tables::LOG_MARKS`]) are the sum of their
//! postings' shares; older hours are counted in [`crate::tables::LOG_COUNTS`].

use redb::{ReadableTable, Table};

use super::tally::{Tally, shifted};
use crate::tables::HourCount;
use crate::{Result, StorageError, codec};

/// Rows a posting holds at most (a bigger batch or a full posting starts a new one).
pub const POSTING_ROWS: usize = 256;

/// Bytes of one row in a posting: u32 id offset, u16 time offset.
pub const ENTRY_BYTES: usize = 6;

/// One posting: its share of the (hour, key) counter, then its rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Posting {
    /// Rows, consume rows, quota, prompt and completion tokens of the rows listed.
    pub count: HourCount,
    /// Each row as (id − the posting's first id, created_at − the hour start), ids ascending.
    pub rows: Vec<(u32, u16)>,
}

/// A stored posting read in place: its counter share and its fixed-width rows.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    /// The posting's share of its (hour, key) counter.
    pub count: HourCount,
    rows: &'a [u8],
}

impl<'a> View<'a> {
    /// Reads a stored posting (its rows are not decoded).
    pub fn of(bytes: &'a [u8]) -> Result<View<'a>> {
        let (count, rows) = postcard::take_from_bytes::<HourCount>(bytes)?;
        if rows.len() % ENTRY_BYTES != 0 {
            return Err(postcard::Error::DeserializeBadEncoding.into());
        }
        Ok(View { count, rows })
    }

    /// Rows listed.
    pub fn len(&self) -> usize {
        self.rows.len() / ENTRY_BYTES
    }

    /// Whether it lists no row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    fn entry(&self, i: usize) -> (u32, u16) {
        let at = i * ENTRY_BYTES;
        let b = &self.rows[at..at + ENTRY_BYTES];
        (
            u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            u16::from_le_bytes([b[4], b[5]]),
        )
    }

    /// Whether row `id` is listed, given the posting's first id (a binary search).
    pub fn contains(&self, first: i64, id: i64) -> bool {
        let Some(d) = id.checked_sub(first).and_then(|d| u32::try_from(d).ok()) else {
            return false;
        };
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.entry(mid).0.cmp(&d) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return true,
            }
        }
        false
    }

    /// The rows as (created_at, id), given the posting's hour and first id.
    pub fn entries(&self, hour: i64, first: i64) -> impl Iterator<Item = (i64, i64)> + 'a {
        let view = *self;
        (0..view.len()).map(move |i| {
            let (d, off) = view.entry(i);
            (
                hour.saturating_add(i64::from(off)),
                first.saturating_add(i64::from(d)),
            )
        })
    }

    /// The whole posting, decoded (to be changed and written back).
    pub fn to_posting(&self) -> Posting {
        Posting {
            count: self.count,
            rows: (0..self.len()).map(|i| self.entry(i)).collect(),
        }
    }
}

impl Posting {
    /// The stored form.
    pub fn encode(&self) -> Result<Vec<u8>> {
        let mut out = codec::encode(&self.count)?;
        out.reserve(self.rows.len() * ENTRY_BYTES);
        for (d, off) in &self.rows {
            out.extend_from_slice(&d.to_le_bytes());
            out.extend_from_slice(&off.to_le_bytes());
        }
        Ok(out)
    }

    /// Whether row `id` can be added to a posting whose first id is `first` (room left and
    /// the id offset fits).
    fn takes(&self, first: i64, id: i64) -> bool {
        self.rows.len() < POSTING_ROWS
            && id
                .checked_sub(first)
                .is_some_and(|d| u32::try_from(d).is_ok())
    }

    /// Adds row `(id, created_at)` with its tally (ids must come in ascending order).
    fn push(&mut self, hour: i64, first: i64, id: i64, created_at: i64, t: Tally) -> Result<()> {
        let d = id
            .checked_sub(first)
            .and_then(|d| u32::try_from(d).ok())
            .ok_or(StorageError::Overflow)?;
        let off = created_at
            .checked_sub(hour)
            .and_then(|o| u16::try_from(o).ok())
            .ok_or(StorageError::Overflow)?;
        self.rows.push((d, off));
        self.count = shifted(Some(self.count), t)?.unwrap_or_default();
        Ok(())
    }
}

/// The postings table as the writer opens it.
pub type PostingTable<'t> = Table<'t, (i64, &'static str, i64), &'static [u8]>;

/// Appends rows `(id, created_at, tally)` (ascending ids, all in `hour`) under `key`: to the
/// newest posting of (hour, key) while it has room, then to new ones. Returns the inserts made.
pub fn append(
    table: &mut PostingTable<'_>,
    hour: i64,
    key: &str,
    rows: &[(i64, i64, Tally)],
) -> Result<u64> {
    let last = match table
        .range((hour, key, i64::MIN)..=(hour, key, i64::MAX))?
        .next_back()
    {
        Some(r) => {
            let (k, v) = r?;
            Some((k.value().2, View::of(v.value())?.to_posting()))
        }
        None => None,
    };
    let mut current = last.filter(|(_, p)| p.rows.len() < POSTING_ROWS);
    let mut inserts = 0u64;
    for &(id, created_at, tally) in rows {
        if current
            .as_ref()
            .is_none_or(|(first, p)| !p.takes(*first, id))
        {
            if let Some((first, p)) = current.take() {
                table.insert((hour, key, first), p.encode()?.as_slice())?;
                inserts += 1;
            }
            current = Some((id, Posting::default()));
        }
        if let Some((first, p)) = current.as_mut() {
            p.push(hour, *first, id, created_at, tally)?;
        }
    }
    if let Some((first, p)) = current {
        table.insert((hour, key, first), p.encode()?.as_slice())?;
        inserts += 1;
    }
    Ok(inserts)
}

/// Removes rows (`gone`: id → the row's tally, negated) from the postings of (hour, key);
/// returns the inserts and removals made.
pub fn remove(
    table: &mut PostingTable<'_>,
    hour: i64,
    key: &str,
    gone: &std::collections::BTreeMap<i64, Tally>,
) -> Result<u64> {
    let Some(&max) = gone.keys().next_back() else {
        return Ok(0);
    };
    let mut touched = Vec::new();
    for r in table.range((hour, key, i64::MIN)..=(hour, key, max))? {
        let (k, v) = r?;
        touched.push((k.value().2, View::of(v.value())?.to_posting()));
    }
    let mut writes = 0u64;
    for (first, mut p) in touched {
        let before = p.rows.len();
        let mut count = Some(p.count);
        let mut kept = Vec::with_capacity(before);
        for row in &p.rows {
            let id = first.saturating_add(i64::from(row.0));
            match gone.get(&id) {
                Some(t) => count = shifted(count, *t)?,
                None => kept.push(*row),
            }
        }
        if kept.len() == before {
            continue;
        }
        writes += 1;
        if kept.is_empty() {
            table.remove((hour, key, first))?;
        } else {
            p.rows = kept;
            p.count = count.unwrap_or_default();
            table.insert((hour, key, first), p.encode()?.as_slice())?;
        }
    }
    Ok(writes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_posting_reads_back_and_finds_its_rows_in_place() {
        let p = Posting {
            count: (3, 2, -5, 7, 9),
            rows: vec![(0, 1), (5, 3599), (u32::MAX, 0)],
        };
        let bytes = p.encode().expect("encode");
        let view = View::of(&bytes).expect("view");
        assert_eq!(view.count, (3, 2, -5, 7, 9));
        assert_eq!(view.to_posting(), p);
        let entries: Vec<_> = view.entries(7200, 100).collect();
        assert_eq!(entries[1], (7200 + 3599, 105));
        for (id, listed) in [(100, true), (105, true), (101, false), (99, false)] {
            assert_eq!(view.contains(100, id), listed, "{id}");
        }
        assert!(view.contains(100, 100 + i64::from(u32::MAX)));
        assert!(
            View::of(&bytes[..bytes.len() - 1]).is_err(),
            "a cut posting"
        );
    }
}
