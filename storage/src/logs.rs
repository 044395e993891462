//! Usage logs (spec 02 §3 "Log entry") and their time and user indexes, written in the same
//! transaction as the balance changes they record (see [`crate::usage`]).

use redb::{ReadTransaction, ReadableTable, ReadableTableMetadata, WriteTransaction};
use serde::{Deserialize, Serialize};

use crate::tables::{LOG_BY_TIME, LOG_BY_USER, LOGS};
use crate::{Result, UserId, codec, meta};

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

/// Inserts a log row (assigning its id) with its index entries.
pub fn insert(wtx: &WriteTransaction, mut entry: LogEntry) -> Result<i64> {
    entry.id = meta::next_id(wtx, "logs")?;
    wtx.open_table(LOGS)?
        .insert(entry.id, codec::encode(&entry)?.as_slice())?;
    wtx.open_table(LOG_BY_TIME)?
        .insert((entry.created_at, entry.id), ())?;
    wtx.open_table(LOG_BY_USER)?
        .insert((entry.user_id.0, entry.created_at, entry.id), ())?;
    Ok(entry.id)
}

/// Number of log rows.
pub fn count(rtx: &ReadTransaction) -> Result<u64> {
    Ok(rtx.open_table(LOGS)?.len()?)
}

/// A user's logs, newest first, at most `limit`.
pub fn recent_for_user(rtx: &ReadTransaction, user: UserId, limit: usize) -> Result<Vec<LogEntry>> {
    let index = rtx.open_table(LOG_BY_USER)?;
    let logs = rtx.open_table(LOGS)?;
    let mut out = Vec::new();
    for entry in index
        .range((user.0, i64::MIN, i64::MIN)..=(user.0, i64::MAX, i64::MAX))?
        .rev()
        .take(limit)
    {
        let (key, _) = entry?;
        let (_, _, id) = key.value();
        if let Some(bytes) = logs.get(id)? {
            out.push(codec::decode(bytes.value())?);
        }
    }
    Ok(out)
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
