//! Runtime options as stored: key → value text, sealed when a secret key is configured (the
//! SMTP password, OAuth client secrets and payment keys are options; every value is sealed
//! rather than a list of secret keys kept here). Typing, defaults and validation live with the
//! options snapshot (crate `tollgate-actors`), not here.

use std::collections::BTreeMap;

use redb::{ReadTransaction, ReadableTable, WriteTransaction};

use crate::sealing::{self, Keyring};
use crate::{Result, tables::OPTIONS};

/// Every stored option (only the keys an admin has saved; defaults are not stored).
pub fn load_all(rtx: &ReadTransaction) -> Result<BTreeMap<String, String>> {
    let table = match rtx.open_table(OPTIONS) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(BTreeMap::new()),
        Err(e) => return Err(e.into()),
    };
    let keyring = sealing::current()?;
    let mut out = BTreeMap::new();
    for entry in table.iter()? {
        let (key, value) = entry?;
        out.insert(key.value().to_owned(), keyring.open_str(value.value())?);
    }
    Ok(out)
}

/// Stores (or replaces) one option.
pub fn put(wtx: &WriteTransaction, key: &str, value: &str) -> Result<()> {
    let sealed = sealing::current()?.seal_str(value)?;
    wtx.open_table(OPTIONS)?.insert(key, sealed.as_slice())?;
    Ok(())
}

/// Re-encodes every value: opened under `from`, sealed under `to`.
pub(crate) fn reseal(wtx: &WriteTransaction, from: &Keyring, to: &Keyring) -> Result<()> {
    let mut table = wtx.open_table(OPTIONS)?;
    let mut values = Vec::new();
    for entry in table.iter()? {
        let (key, value) = entry?;
        values.push((key.value().to_owned(), from.open(value.value())?));
    }
    for (key, value) in values {
        table.insert(key.as_str(), to.seal(&value)?.as_slice())?;
    }
    Ok(())
}
