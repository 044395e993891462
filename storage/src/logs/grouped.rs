//! A batch's rows grouped by (hour, filter key) for the postings ([`super::postings`]).
//!
//! The keys are the rows' own ([`keys::RowKey`], borrowed from them): a row is added without
//! formatting or allocating any key, and each distinct key of the batch is formatted once, when
//! its group is posted. Consecutive rows mostly share their keys (a client's requests come
//! together), so each key position first checks the group the previous row's key went to.

use std::collections::HashMap;

use redb::WriteTransaction;

use super::LogEntry;
use super::keys::{self, RowKey};
use super::postings;
use super::tally::Tally;
use crate::Result;
use crate::tables::LOG_POSTINGS;

/// A key of a group: a row's filter key, or `None` for [`keys::ALL`].
type GroupKey<'a> = (i64, Option<RowKey<'a>>);

/// A posted row: (id, created_at, its tally).
type Posted = (i64, i64, Tally);

/// Rows by (hour, filter key or [`keys::ALL`]), ids ascending within a group (rows are added in
/// id order).
#[derive(Default)]
pub(super) struct Grouped<'a> {
    /// Where each group is in `groups`.
    index: HashMap<GroupKey<'a>, usize>,
    /// The groups in the order they were first seen.
    groups: Vec<(GroupKey<'a>, Vec<Posted>)>,
    /// Per key position of a row ([`keys::ALL`] first, then [`keys::row_keys`]' order), the group
    /// the previous row's key at that position went to.
    last: Vec<Option<(GroupKey<'a>, usize)>>,
}

impl<'a> Grouped<'a> {
    /// Adds row `e` (already given its id; rows in ascending id order) under [`keys::ALL`] and
    /// each of its filter keys.
    pub(super) fn add(&mut self, e: &'a LogEntry) {
        let hour = keys::hour(e.created_at);
        let row = (e.id, e.created_at, Tally::of(e, 1));
        let row_keys = std::iter::once(None).chain(keys::row_keys(e).map(Some));
        for (position, key) in row_keys.enumerate() {
            let key = (hour, key);
            let at = match self.last.get(position) {
                Some(Some((last, at))) if *last == key => *at,
                _ => {
                    let groups = &mut self.groups;
                    let at = *self.index.entry(key).or_insert_with(|| {
                        groups.push((key, Vec::new()));
                        groups.len() - 1
                    });
                    if self.last.len() <= position {
                        self.last.resize(position + 1, None);
                    }
                    self.last[position] = Some((key, at));
                    at
                }
            };
            if let Some((_, rows)) = self.groups.get_mut(at) {
                rows.push(row);
            }
        }
    }

    /// Appends the groups to the postings in (hour, key) order, each key formatted once;
    /// returns the inserts made.
    pub(super) fn post(self, wtx: &WriteTransaction) -> Result<u64> {
        let mut groups: Vec<(i64, String, Vec<Posted>)> = self
            .groups
            .into_iter()
            .map(|((hour, key), rows)| {
                let text = key.map_or_else(|| keys::ALL.to_owned(), |k| k.text());
                (hour, text, rows)
            })
            .collect();
        groups.sort_unstable_by(|a, b| (a.0, a.1.as_str()).cmp(&(b.0, b.1.as_str())));
        // Distinct row keys never format alike (keys' prefixes and separators keep them apart);
        // were two to, their rows would still go to one posting run in id order.
        groups.dedup_by(|next, kept| {
            let same = next.0 == kept.0 && next.1 == kept.1;
            if same {
                kept.2.append(&mut next.2);
                kept.2.sort_unstable_by_key(|r| r.0);
            }
            same
        });
        let mut table = wtx.open_table(LOG_POSTINGS)?;
        let mut inserts = 0u64;
        for (hour, key, rows) in groups {
            inserts = inserts.saturating_add(postings::append(&mut table, hour, &key, &rows)?);
        }
        Ok(inserts)
    }
}
