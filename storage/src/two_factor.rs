//! Two-factor (TOTP) records, one per user who has started or finished turning it on.
//!
//! The TOTP secret is sealed like every other stored secret ([`crate::sealing`]); the recovery
//! codes are kept only as SHA-256 digests (they are random and long, so a fast hash is enough)
//! and each is removed when used. `last_step` is the highest TOTP time step ever accepted, so
//! a code (and any older one) is accepted at most once.

use redb::{ReadTransaction, ReadableTable, WriteTransaction};
use serde::{Deserialize, Serialize};

use crate::tables::USER_TWO_FACTOR;
use crate::{Result, UserId, codec};

/// One user's two-factor state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TwoFactor {
    /// Whose it is.
    pub user_id: UserId,
    /// The TOTP secret, base32 (RFC 4648, no padding); sealed in the file.
    #[serde(with = "crate::sealing::string")]
    pub secret: String,
    /// Whether sign-in asks for a code (false: set up, not yet confirmed with a code).
    pub enabled: bool,
    /// Lower-case hex SHA-256 of each recovery code not used yet.
    pub recovery: Vec<String>,
    /// The highest TOTP time step accepted so far (0: none).
    pub last_step: u64,
    /// Unix seconds of the setup (a new secret).
    pub created_at: i64,
    /// Unix seconds of the confirmation, 0 while not enabled.
    pub enabled_at: i64,
}

/// `user`'s record, if any.
pub fn get(rtx: &ReadTransaction, user: UserId) -> Result<Option<TwoFactor>> {
    let table = match rtx.open_table(USER_TWO_FACTOR) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    load(&table, user)
}

/// `user`'s record, if any, inside a write transaction.
pub fn get_rw(wtx: &WriteTransaction, user: UserId) -> Result<Option<TwoFactor>> {
    load(&wtx.open_table(USER_TWO_FACTOR)?, user)
}

fn load(table: &impl ReadableTable<i64, &'static [u8]>, user: UserId) -> Result<Option<TwoFactor>> {
    match table.get(user.0)? {
        Some(guard) => Ok(Some(codec::decode(guard.value())?)),
        None => Ok(None),
    }
}

/// Stores (inserts or replaces) a record.
pub fn put(wtx: &WriteTransaction, record: &TwoFactor) -> Result<()> {
    let bytes = codec::encode(record)?;
    wtx.open_table(USER_TWO_FACTOR)?
        .insert(record.user_id.0, bytes.as_slice())?;
    Ok(())
}

/// Removes `user`'s record (nothing when there is none).
pub fn remove(wtx: &WriteTransaction, user: UserId) -> Result<()> {
    wtx.open_table(USER_TWO_FACTOR)?.remove(user.0)?;
    Ok(())
}

/// Whether `user` has two-factor sign-in on.
pub fn enabled(rtx: &ReadTransaction, user: UserId) -> Result<bool> {
    Ok(get(rtx, user)?.is_some_and(|r| r.enabled))
}

/// How many users have two-factor sign-in on.
pub fn count_enabled(rtx: &ReadTransaction) -> Result<u64> {
    let table = match rtx.open_table(USER_TWO_FACTOR) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(0),
        Err(e) => return Err(e.into()),
    };
    let mut n = 0u64;
    for entry in table.iter()? {
        let (_, bytes) = entry?;
        if codec::decode::<TwoFactor>(bytes.value())?.enabled {
            n = n.saturating_add(1);
        }
    }
    Ok(n)
}
