//! Backup-only tokens: what `tollgate backup` presents to a running server. Each is good for
//! `GET /api/backup` only, belongs to the root who made it, and is stored as the SHA-256 of
//! the token (shown once when made). A new table that starts empty: no migration.

use redb::{ReadTransaction, ReadableTable, WriteTransaction};
use serde::{Deserialize, Serialize};

use crate::tables::{BACKUP_TOKEN_BY_HASH, BACKUP_TOKENS};
use crate::{Result, StorageError, UserId, codec, meta};

/// One backup token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackupToken {
    /// Id, from the `backup_tokens` sequence.
    pub id: i64,
    /// The root user who made it.
    pub user_id: UserId,
    /// A name to tell tokens apart (where it is used).
    pub name: String,
    /// Lower-case hex SHA-256 of the token.
    pub token_hash: String,
    /// Unix seconds of creation.
    pub created_at: i64,
    /// Unix seconds of the last backup made with it (0: never).
    pub last_used_at: i64,
}

fn load(table: &impl ReadableTable<i64, &'static [u8]>, id: i64) -> Result<Option<BackupToken>> {
    match table.get(id)? {
        Some(guard) => Ok(Some(codec::decode(guard.value())?)),
        None => Ok(None),
    }
}

/// Stores a new token of `user` named `name` whose digest is `token_hash`.
pub fn create(
    wtx: &WriteTransaction,
    user: UserId,
    name: String,
    token_hash: String,
    now: i64,
) -> Result<BackupToken> {
    let mut index = wtx.open_table(BACKUP_TOKEN_BY_HASH)?;
    if index.get(token_hash.as_str())?.is_some() {
        return Err(StorageError::Duplicate {
            what: "backup token",
        });
    }
    let token = BackupToken {
        id: meta::next_id(wtx, "backup_tokens")?,
        user_id: user,
        name,
        token_hash,
        created_at: now,
        last_used_at: 0,
    };
    index.insert(token.token_hash.as_str(), token.id)?;
    let bytes = codec::encode(&token)?;
    wtx.open_table(BACKUP_TOKENS)?
        .insert(token.id, bytes.as_slice())?;
    Ok(token)
}

/// `user`'s tokens, oldest first.
pub fn list(rtx: &ReadTransaction, user: UserId) -> Result<Vec<BackupToken>> {
    let table = match rtx.open_table(BACKUP_TOKENS) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let mut out = Vec::new();
    for entry in table.iter()? {
        let (_, value) = entry?;
        let token: BackupToken = codec::decode(value.value())?;
        if token.user_id == user {
            out.push(token);
        }
    }
    Ok(out)
}

/// Removes `user`'s token `id`; false when `user` has no such token.
pub fn revoke(wtx: &WriteTransaction, user: UserId, id: i64) -> Result<bool> {
    let mut table = wtx.open_table(BACKUP_TOKENS)?;
    let Some(token) = load(&table, id)?.filter(|t| t.user_id == user) else {
        return Ok(false);
    };
    table.remove(id)?;
    wtx.open_table(BACKUP_TOKEN_BY_HASH)?
        .remove(token.token_hash.as_str())?;
    Ok(true)
}

/// The token whose digest is `token_hash`, if any.
pub fn find(rtx: &ReadTransaction, token_hash: &str) -> Result<Option<BackupToken>> {
    let index = match rtx.open_table(BACKUP_TOKEN_BY_HASH) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let Some(id) = index.get(token_hash)?.map(|v| v.value()) else {
        return Ok(None);
    };
    load(&rtx.open_table(BACKUP_TOKENS)?, id)
}

/// Records a backup made with token `id` at `now` (nothing when it was revoked meanwhile).
pub fn touch(wtx: &WriteTransaction, id: i64, now: i64) -> Result<()> {
    let mut table = wtx.open_table(BACKUP_TOKENS)?;
    let Some(mut token) = load(&table, id)? else {
        return Ok(());
    };
    token.last_used_at = now;
    let bytes = codec::encode(&token)?;
    table.insert(id, bytes.as_slice())?;
    Ok(())
}
