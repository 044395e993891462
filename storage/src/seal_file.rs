//! The file's secrets as a whole: the file records whether it is sealed and under which key (a
//! sealed check value in the metadata); [`settle`] refuses a sealed file opened without its key
//! or with another key, and seals a plain file opened with a key ([`reseal`], also used to
//! change the key). Each table that holds secrets is re-encoded here, so a new one is added to
//! [`reseal`].

use redb::{ReadableTable, TableDefinition, WriteTransaction};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::sealing::{Keyring, scoped};
use crate::tables::{
    CHANNELS, META, REDEMPTION_BY_KEY, REDEMPTIONS, TOKEN_BY_KEY, TOKENS, USER_TWO_FACTOR,
};
use crate::{Result, StorageError, codec};

/// The metadata entry holding the check value of a sealed file.
const CHECK_KEY: &str = "secrets_check";
/// What the check value seals.
const CHECK_TEXT: &[u8] = b"tollgate secrets at rest v1";

/// What opening the file found about its secrets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// No key: secrets are plain text.
    Plain,
    /// Sealed under the configured key already.
    Sealed,
    /// The file was plain and has just been sealed: its freed pages still hold the plain
    /// values until the file is compacted.
    JustSealed,
}

/// Checks the file's secrets against `keyring` inside the opening transaction: refuses a sealed
/// file without its key ([`StorageError::SecretKeyRequired`]) or under another key
/// ([`StorageError::WrongSecretKey`]); seals a plain file when a key is given.
pub fn settle(wtx: &WriteTransaction, keyring: &Keyring) -> Result<Settled> {
    let check = wtx
        .open_table(META)?
        .get(CHECK_KEY)?
        .map(|v| v.value().to_vec());
    match (check, keyring.is_sealing()) {
        (Some(_), false) => Err(StorageError::SecretKeyRequired),
        (Some(check), true) => {
            if keyring.open(&check)? == CHECK_TEXT {
                Ok(Settled::Sealed)
            } else {
                Err(StorageError::WrongSecretKey)
            }
        }
        (None, false) => Ok(Settled::Plain),
        (None, true) => {
            reseal(wtx, keyring, keyring)?;
            Ok(Settled::JustSealed)
        }
    }
}

/// Re-encodes every secret of the file: opened under `from`, sealed under `to` (a plain value
/// opens under any keyring), the API-key and redemption-code indexes rebuilt under `to`, and
/// the check value written for `to` (removed when `to` is plain). Used to seal a plain file and to change the key.
pub fn reseal(wtx: &WriteTransaction, from: &Keyring, to: &Keyring) -> Result<()> {
    reseal_records::<crate::channels::Channel>(wtx, CHANNELS, from, to)?;
    let tokens = reseal_records::<crate::tokens::Token>(wtx, TOKENS, from, to)?;
    {
        let mut index = wtx.open_table(TOKEN_BY_KEY)?;
        index.retain(|_, _| false)?;
        for token in &tokens {
            index.insert(to.index_key(&token.key).as_str(), token.id.0)?;
        }
    }
    reseal_records::<crate::two_factor::TwoFactor>(wtx, USER_TWO_FACTOR, from, to)?;
    let codes = reseal_records::<crate::redemptions::Redemption>(wtx, REDEMPTIONS, from, to)?;
    {
        let mut index = wtx.open_table(REDEMPTION_BY_KEY)?;
        index.retain(|_, _| false)?;
        for code in &codes {
            index.insert(to.index_key(&code.key).as_str(), code.id.0)?;
        }
    }
    crate::options::reseal(wtx, from, to)?;
    crate::meta::reseal(wtx, from, to)?;
    let mut meta = wtx.open_table(META)?;
    if to.is_sealing() {
        meta.insert(CHECK_KEY, to.seal(CHECK_TEXT)?.as_slice())?;
    } else {
        meta.remove(CHECK_KEY)?;
    }
    Ok(())
}

/// Decodes every record of `table` under `from` and writes it back encoded under `to`; returns
/// the records.
fn reseal_records<T: Serialize + DeserializeOwned>(
    wtx: &WriteTransaction,
    table: TableDefinition<i64, &[u8]>,
    from: &Keyring,
    to: &Keyring,
) -> Result<Vec<T>> {
    let mut table = wtx.open_table(table)?;
    let mut records = Vec::new();
    scoped(from, || -> Result<()> {
        for entry in table.iter()? {
            let (id, bytes) = entry?;
            records.push((id.value(), codec::decode::<T>(bytes.value())?));
        }
        Ok(())
    })?;
    scoped(to, || -> Result<()> {
        for (id, record) in &records {
            table.insert(*id, codec::encode(record)?.as_slice())?;
        }
        Ok(())
    })?;
    Ok(records.into_iter().map(|(_, r)| r).collect())
}
