//! Runtime options as stored: key → value text. Typing, defaults and validation live with the
//! options snapshot (crate `tollgate-actors`), not here.

use std::collections::BTreeMap;

use redb::{ReadTransaction, ReadableTable, WriteTransaction};

use crate::{Result, tables::OPTIONS};

/// Every stored option (only the keys an admin has saved; defaults are not stored).
pub fn load_all(rtx: &ReadTransaction) -> Result<BTreeMap<String, String>> {
    let table = match rtx.open_table(OPTIONS) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(BTreeMap::new()),
        Err(e) => return Err(e.into()),
    };
    let mut out = BTreeMap::new();
    for entry in table.iter()? {
        let (key, value) = entry?;
        out.insert(key.value().to_owned(), value.value().to_owned());
    }
    Ok(out)
}

/// Stores (or replaces) one option.
pub fn put(wtx: &WriteTransaction, key: &str, value: &str) -> Result<()> {
    wtx.open_table(OPTIONS)?.insert(key, value)?;
    Ok(())
}
