//! Redemption codes (spec 02 §3 "Redemption code") and their unique key index, kept in step in
//! one transaction.
//!
//! Redeeming is a compare-and-swap from unused to used inside the caller's write transaction
//! ([`redeem`]); the caller credits the balance and writes the top-up log in that same
//! transaction, so a code is credited exactly once however many requests race for it (redb
//! serialises write transactions).
//!
//! The code is kept in full (admins list and copy it), sealed in the record when a secret key
//! is configured, and the key index is then keyed by its HMAC ([`crate::sealing`]), as for API
//! keys: the file holds no redeemable code in the clear.

use redb::{ReadTransaction, ReadableTable, ReadableTableMetadata, WriteTransaction};
use serde::{Deserialize, Serialize};

use crate::tables::{REDEMPTION_BY_KEY, REDEMPTIONS};
use crate::{Quota, RedemptionId, Result, StorageError, UserId, codec, meta, sealing};

/// The key of `code` in the code index.
fn index_key(code: &str) -> Result<String> {
    Ok(sealing::current()?.index_key(code))
}

/// Redemption status: not used yet (redeemable).
pub const STATUS_UNUSED: i32 = 1;
/// Redemption status: switched off by an admin.
pub const STATUS_DISABLED: i32 = 2;
/// Redemption status: redeemed.
pub const STATUS_USED: i32 = 3;

/// A redemption code.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Redemption {
    /// Id.
    pub id: RedemptionId,
    /// Name chosen by the admin (1–20 characters).
    pub name: String,
    /// The code users type: 32 lower-case hex characters. Secret (sealed in storage).
    #[serde(with = "crate::sealing::string")]
    pub key: String,
    /// 1 unused, 2 disabled, 3 used.
    pub status: i32,
    /// Quota credited on redemption.
    pub quota: Quota,
    /// Unix seconds of creation.
    pub created_time: i64,
    /// Unix seconds of redemption, 0 when unused.
    pub redeemed_time: i64,
    /// Who redeemed it, 0 for nobody.
    pub used_user_id: UserId,
}

impl std::fmt::Debug for Redemption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redemption")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("key", &"*****")
            .field("status", &self.status)
            .field("quota", &self.quota)
            .finish_non_exhaustive()
    }
}

/// Why a code cannot be redeemed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedeemRefusal {
    /// No such code, or it is disabled (not told apart, so codes cannot be probed).
    Invalid,
    /// It was redeemed already.
    AlreadyUsed,
}

fn load(
    table: &impl ReadableTable<i64, &'static [u8]>,
    id: RedemptionId,
) -> Result<Option<Redemption>> {
    match table.get(id.0)? {
        Some(bytes) => Ok(Some(codec::decode(bytes.value())?)),
        None => Ok(None),
    }
}

/// Stores a new code (its `id` is assigned here) and indexes its key.
pub fn insert(wtx: &WriteTransaction, mut code: Redemption) -> Result<Redemption> {
    let mut by_key = wtx.open_table(REDEMPTION_BY_KEY)?;
    let indexed = index_key(&code.key)?;
    if by_key.get(indexed.as_str())?.is_some() {
        return Err(StorageError::Duplicate {
            what: "redemption code",
        });
    }
    code.id = RedemptionId(meta::next_id(wtx, "redemptions")?);
    by_key.insert(indexed.as_str(), code.id.0)?;
    wtx.open_table(REDEMPTIONS)?
        .insert(code.id.0, codec::encode(&code)?.as_slice())?;
    Ok(code)
}

/// Replaces a code (its key never changes).
pub fn update(wtx: &WriteTransaction, code: &Redemption) -> Result<()> {
    let mut table = wtx.open_table(REDEMPTIONS)?;
    let old = load(&table, code.id)?.ok_or(StorageError::NotFound {
        what: "redemption code",
    })?;
    if old.key != code.key {
        return Err(StorageError::NotFound {
            what: "redemption code",
        });
    }
    table.insert(code.id.0, codec::encode(code)?.as_slice())?;
    Ok(())
}

/// Deletes a code and its index entry; returns it.
pub fn delete(wtx: &WriteTransaction, id: RedemptionId) -> Result<Option<Redemption>> {
    let Some(old) = load(&wtx.open_table(REDEMPTIONS)?, id)? else {
        return Ok(None);
    };
    wtx.open_table(REDEMPTIONS)?.remove(id.0)?;
    wtx.open_table(REDEMPTION_BY_KEY)?
        .remove(index_key(&old.key)?.as_str())?;
    Ok(Some(old))
}

/// Deletes every code that can no longer be redeemed (disabled or used); returns how many.
pub fn delete_invalid(wtx: &WriteTransaction) -> Result<u64> {
    let mut doomed = Vec::new();
    for entry in wtx.open_table(REDEMPTIONS)?.iter()? {
        let (_, bytes) = entry?;
        let code: Redemption = codec::decode(bytes.value())?;
        if code.status != STATUS_UNUSED {
            doomed.push(code.id);
        }
    }
    for id in &doomed {
        delete(wtx, *id)?;
    }
    Ok(doomed.len() as u64)
}

/// Reads a code.
pub fn get(rtx: &ReadTransaction, id: RedemptionId) -> Result<Option<Redemption>> {
    load(&rtx.open_table(REDEMPTIONS)?, id)
}

/// Reads a code inside a write transaction.
pub fn get_rw(wtx: &WriteTransaction, id: RedemptionId) -> Result<Option<Redemption>> {
    load(&wtx.open_table(REDEMPTIONS)?, id)
}

/// Marks the code `key` used by `user` at `now` and returns it, or says why it cannot be
/// redeemed. The caller credits `quota` in the same transaction.
pub fn redeem(
    wtx: &WriteTransaction,
    key: &str,
    user: UserId,
    now: i64,
) -> Result<std::result::Result<Redemption, RedeemRefusal>> {
    let by_key = wtx.open_table(REDEMPTION_BY_KEY)?;
    let Some(id) = by_key
        .get(index_key(key)?.as_str())?
        .map(|id| RedemptionId(id.value()))
    else {
        return Ok(Err(RedeemRefusal::Invalid));
    };
    drop(by_key);
    let Some(mut code) = get_rw(wtx, id)? else {
        return Ok(Err(RedeemRefusal::Invalid));
    };
    match code.status {
        STATUS_UNUSED => {}
        STATUS_USED => return Ok(Err(RedeemRefusal::AlreadyUsed)),
        _ => return Ok(Err(RedeemRefusal::Invalid)),
    }
    code.status = STATUS_USED;
    code.used_user_id = user;
    code.redeemed_time = now;
    update(wtx, &code)?;
    Ok(Ok(code))
}

/// Codes matching `keep`, newest first: one page and the number of matches.
///
/// A scan of the codes table: admins keep thousands of codes, not millions, and the search
/// matches substrings of the name, which no index serves.
pub fn search(
    rtx: &ReadTransaction,
    keep: impl Fn(&Redemption) -> bool,
    offset: usize,
    limit: usize,
) -> Result<(Vec<Redemption>, u64)> {
    let table = rtx.open_table(REDEMPTIONS)?;
    let mut items = Vec::with_capacity(limit.min(128));
    let mut total = 0u64;
    for entry in table.iter()?.rev() {
        let (_, bytes) = entry?;
        let code: Redemption = codec::decode(bytes.value())?;
        if keep(&code) {
            if total >= offset as u64 && items.len() < limit {
                items.push(code);
            }
            total += 1;
        }
    }
    Ok((items, total))
}

/// One page of codes, newest first, and the number of codes (no scan past the page).
pub fn list(rtx: &ReadTransaction, offset: usize, limit: usize) -> Result<(Vec<Redemption>, u64)> {
    let table = rtx.open_table(REDEMPTIONS)?;
    let total = table.len()?;
    let mut items = Vec::with_capacity(limit.min(128));
    for entry in table.iter()?.rev().skip(offset).take(limit) {
        let (_, bytes) = entry?;
        items.push(codec::decode(bytes.value())?);
    }
    Ok((items, total))
}
