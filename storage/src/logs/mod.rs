//! Usage logs (spec 02 §3 "Log entry"): the rows, their indexes and counters, and the queries
//! the console runs on them.
//!
//! - [`write`]: inserting a batch (rows, postings, hour counters, dashboard aggregates in the
//!   caller's transaction) and deleting old rows in small batches.
//! - [`keys`]: the filter keys a row is indexed and counted under.
//! - [`postings`]: the filter index, up to 256 rows of a key and hour per entry.
//! - `grouped`: a batch's rows by (hour, key), as the writer appends them to the postings.
//! - [`tally`]: a row's change to an hour counter, checked.
//! - [`query`]: pages, totals and stats for a [`query::LogFilter`].
//! - [`dashboard`]: the per-hour aggregates of the /detail page.
//!
//! Rows are written in the same transaction as the balance changes they record (see
//! [`crate::usage`]).

pub mod dashboard;
mod grouped;
pub mod keys;
pub mod postings;
pub mod query;
pub mod tally;
pub mod write;

use redb::{ReadTransaction, ReadableTable, ReadableTableMetadata};
use serde::{Deserialize, Serialize};

pub use write::{delete_before, insert, insert_batch};

use crate::tables::LOGS;
use crate::{Result, UserId, codec};

/// Log type: top-up.
pub const LOG_TOPUP: i32 = 1;
/// Log type: consumption (a relayed request).
pub const LOG_CONSUME: i32 = 2;
/// Log type: admin action.
pub const LOG_MANAGE: i32 = 3;
/// Log type: system event.
pub const LOG_SYSTEM: i32 = 4;
/// Log type: failed request.
pub const LOG_ERROR: i32 = 5;

/// One log row.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LogEntry {
    /// Id, assigned on insert.
    pub id: i64,
    /// Unix seconds.
    pub created_at: i64,
    /// 1 top-up, 2 consume, 3 manage, 4 system, 5 error.
    pub log_type: i32,
    /// Whose request.
    pub user_id: UserId,
    /// Username at the time.
    pub username: String,
    /// Token id (0 for none).
    pub token_id: i64,
    /// Token name at the time.
    pub token_name: String,
    /// Model the client asked for.
    pub model_name: String,
    /// Channel that answered (0 for none).
    pub channel_id: i64,
    /// Billing group.
    pub group: String,
    /// Streamed answer.
    pub is_stream: bool,
    /// Whole request time in seconds.
    pub use_time: i64,
    /// Prompt tokens.
    pub prompt_tokens: i64,
    /// Completion tokens.
    pub completion_tokens: i64,
    /// Quota charged.
    pub quota: i64,
    /// Human-readable note.
    pub content: String,
    /// JSON text: ratios, frt, mapping, usage provenance, admin_info…
    pub other: String,
    /// Request id.
    pub request_id: String,
}

/// Longest `content` a row keeps (bytes): upstream error texts can be any size.
pub const MAX_CONTENT_BYTES: usize = 4 * 1024;
/// Longest `other` a row keeps (bytes); a longer one is replaced by `{"truncated": true}`.
pub const MAX_OTHER_BYTES: usize = 16 * 1024;
/// Longest name fields (model, username, token name, group, request id) a row keeps (bytes).
pub const MAX_NAME_BYTES: usize = 256;

/// Cuts `text` to at most `max` bytes on a character boundary.
fn cut(text: &mut String, max: usize) {
    if text.len() > max {
        let end = (0..=max)
            .rev()
            .find(|i| text.is_char_boundary(*i))
            .unwrap_or(0);
        text.truncate(end);
    }
}

impl LogEntry {
    /// Holds every stored field to its named limit ([`MAX_CONTENT_BYTES`], [`MAX_OTHER_BYTES`],
    /// [`MAX_NAME_BYTES`]), so no request can grow the database by sending long names or
    /// provoking long error texts.
    pub fn bound(&mut self) {
        cut(&mut self.content, MAX_CONTENT_BYTES);
        for name in [
            &mut self.model_name,
            &mut self.username,
            &mut self.token_name,
            &mut self.group,
            &mut self.request_id,
        ] {
            cut(name, MAX_NAME_BYTES);
        }
        if self.other.len() > MAX_OTHER_BYTES {
            self.other = r#"{"truncated":true}"#.to_owned();
        }
    }
}

/// Number of log rows.
pub fn count(rtx: &ReadTransaction) -> Result<u64> {
    Ok(rtx.open_table(LOGS)?.len()?)
}

/// One row by id.
pub fn get(rtx: &ReadTransaction, id: i64) -> Result<Option<LogEntry>> {
    match rtx.open_table(LOGS)?.get(id)? {
        Some(bytes) => Ok(Some(codec::decode(bytes.value())?)),
        None => Ok(None),
    }
}

/// A user's logs, newest first, at most `limit`.
pub fn recent_for_user(rtx: &ReadTransaction, user: UserId, limit: usize) -> Result<Vec<LogEntry>> {
    let logs = rtx.open_table(LOGS)?;
    let mut out = Vec::new();
    for id in query::newest_under(rtx, &keys::user(user.0), limit)? {
        if let Some(bytes) = logs.get(id)? {
            out.push(codec::decode(bytes.value())?);
        }
    }
    Ok(out)
}

/// What one log table holds on disk (the log benchmark prints it per row).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableFootprint {
    /// The table's name.
    pub name: &'static str,
    /// Entries.
    pub entries: u64,
    /// Bytes of keys and values stored in its leaves.
    pub stored_bytes: u64,
    /// Bytes of its leaf and branch pages (what it occupies in the file).
    pub page_bytes: u64,
}

/// The footprint of every log table: rows, time and filter indexes, hour counters and the
/// dashboard aggregates.
pub fn footprint(rtx: &ReadTransaction) -> Result<Vec<TableFootprint>> {
    use crate::tables::{
        DASH_BY_MODEL, DASH_BY_USER, DASH_BY_USER_MODEL, LOG_BY_TIME, LOG_COUNTS, LOG_POSTINGS,
    };
    // redb's page size (the default; the store does not change it).
    let page: u64 = 4096;
    let of = |name: &'static str, entries: u64, stats: redb::TableStats| TableFootprint {
        name,
        entries,
        stored_bytes: stats.stored_bytes(),
        page_bytes: (stats.leaf_pages() + stats.branch_pages()).saturating_mul(page),
    };
    let logs = rtx.open_table(LOGS)?;
    let by_time = rtx.open_table(LOG_BY_TIME)?;
    let postings = rtx.open_table(LOG_POSTINGS)?;
    let counts = rtx.open_table(LOG_COUNTS)?;
    let dash_model = rtx.open_table(DASH_BY_MODEL)?;
    let dash_user_model = rtx.open_table(DASH_BY_USER_MODEL)?;
    let dash_user = rtx.open_table(DASH_BY_USER)?;
    Ok(vec![
        of("rows", logs.len()?, logs.stats()?),
        of("time index", by_time.len()?, by_time.stats()?),
        of(
            "postings (filter index)",
            postings.len()?,
            postings.stats()?,
        ),
        of("hour counters", counts.len()?, counts.stats()?),
        of("dashboard by model", dash_model.len()?, dash_model.stats()?),
        of(
            "dashboard by user and model",
            dash_user_model.len()?,
            dash_user_model.stats()?,
        ),
        of("dashboard by user", dash_user.len()?, dash_user.stats()?),
    ])
}

/// Every log row, oldest first (tests and exports).
pub fn all(rtx: &ReadTransaction) -> Result<Vec<LogEntry>> {
    let logs = rtx.open_table(LOGS)?;
    let mut out = Vec::new();
    for entry in logs.iter()? {
        let (_, bytes) = entry?;
        out.push(codec::decode(bytes.value())?);
    }
    Ok(out)
}

#[cfg(test)]
mod bound_tests {
    use super::*;

    #[test]
    fn stored_fields_are_held_to_their_limits() {
        let mut entry = LogEntry {
            content: "é".repeat(3_000),
            model_name: "m".repeat(1_000),
            other: format!("{{\"x\":\"{}\"}}", "y".repeat(MAX_OTHER_BYTES)),
            ..LogEntry::default()
        };
        entry.bound();
        assert!(entry.content.len() <= MAX_CONTENT_BYTES);
        assert!(
            entry.content.chars().all(|c| c == 'é'),
            "cut on a character boundary"
        );
        assert_eq!(entry.model_name.len(), MAX_NAME_BYTES);
        assert_eq!(entry.other, r#"{"truncated":true}"#);
    }
}
