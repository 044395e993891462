//! The audit log: one row per admin action that moves money or touches a secret (quota edits,
//! redemption codes created, top-ups completed, channel keys revealed or changed, options
//! changed, roles and statuses changed, price tables reset, logs deleted, backups taken,
//! channels deleted, users created), with who did it, to what, the values before and after
//! (secrets redacted by the caller) and from where.
//!
//! Its own table, append-only: nothing in Tollgate updates or deletes a row (log deletion and
//! retention touch only the usage log tables). Readers page newest first; filters scan, since
//! admin actions are few.

use redb::{ReadTransaction, ReadableTable, ReadableTableMetadata, WriteTransaction};
use serde::{Deserialize, Serialize};

use crate::tables::AUDIT;
use crate::{Result, codec, meta};

/// One audited action.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// Id (given by [`append`]; ascending in time).
    pub id: i64,
    /// Unix seconds.
    pub created_at: i64,
    /// Who acted (0: the system, e.g. a payment gateway's notification).
    pub actor_id: i64,
    /// Their username at the time (empty for the system).
    pub actor_name: String,
    /// What was done, e.g. `user.quota`, `option.update`, `channel.key.reveal`.
    pub action: String,
    /// To what, e.g. `user:7`, `channel:3`, `option:SMTPServer`, `topup:<trade no>`.
    pub target: String,
    /// The values before (JSON text; secrets redacted; empty when nothing existed).
    pub before: String,
    /// The values after (JSON text; secrets redacted).
    pub after: String,
    /// The client's address (empty when not from a request).
    pub ip: String,
}

/// Appends `entry` (its `id` is replaced) and returns its id.
pub fn append(wtx: &WriteTransaction, mut entry: AuditEntry) -> Result<i64> {
    let id = meta::next_id(wtx, "audit")?;
    entry.id = id;
    let bytes = codec::encode(&entry)?;
    wtx.open_table(AUDIT)?.insert(id, bytes.as_slice())?;
    Ok(id)
}

/// Appends `entry` in a transaction of its own, for actions that are not one transaction
/// (a log deletion runs in batches; a backup is a copy of the file).
pub async fn record(store: &crate::Store, entry: AuditEntry) -> Result<i64> {
    store.write(move |wtx| append(wtx, entry)).await
}

/// What to list.
#[derive(Debug, Clone, Default)]
pub struct AuditFilter {
    /// Only this action (exact), or actions under this prefix when it ends with `.`.
    pub action: Option<String>,
    /// Only this actor.
    pub actor_id: Option<i64>,
    /// Only this target (exact).
    pub target: Option<String>,
    /// Only rows at or after this time (unix seconds).
    pub start: Option<i64>,
    /// Only rows at or before this time.
    pub end: Option<i64>,
}

impl AuditFilter {
    fn is_empty(&self) -> bool {
        self.action.is_none()
            && self.actor_id.is_none()
            && self.target.is_none()
            && self.start.is_none()
            && self.end.is_none()
    }

    /// Whether `entry` passes.
    pub fn matches(&self, entry: &AuditEntry) -> bool {
        let action = self.action.as_deref().is_none_or(|a| {
            if a.ends_with('.') {
                entry.action.starts_with(a)
            } else {
                entry.action == a
            }
        });
        action
            && self.actor_id.is_none_or(|id| entry.actor_id == id)
            && self.target.as_deref().is_none_or(|t| entry.target == t)
            && self.start.is_none_or(|s| entry.created_at >= s)
            && self.end.is_none_or(|e| entry.created_at <= e)
    }
}

/// One page of rows passing `filter`, newest first, and how many pass in all.
pub fn list(
    rtx: &ReadTransaction,
    filter: &AuditFilter,
    offset: usize,
    limit: usize,
) -> Result<(Vec<AuditEntry>, u64)> {
    let table = match rtx.open_table(AUDIT) {
        Ok(table) => table,
        // A file no action was audited in yet.
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok((Vec::new(), 0)),
        Err(e) => return Err(e.into()),
    };
    let mut items = Vec::with_capacity(limit.min(128));
    if filter.is_empty() {
        let total = table.len()?;
        for entry in table.iter()?.rev().skip(offset).take(limit) {
            let (_, bytes) = entry?;
            items.push(codec::decode(bytes.value())?);
        }
        return Ok((items, total));
    }
    let mut total = 0u64;
    for entry in table.iter()?.rev() {
        let (_, bytes) = entry?;
        let row: AuditEntry = codec::decode(bytes.value())?;
        if !filter.matches(&row) {
            continue;
        }
        let index = usize::try_from(total).unwrap_or(usize::MAX);
        if index >= offset && items.len() < limit {
            items.push(row);
        }
        total += 1;
    }
    Ok((items, total))
}
