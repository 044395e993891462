//! Schema 5 → 6: option values move from `options.v1` (text) to `options.v2` (bytes, sealed
//! when a secret key is configured), and the session secret to its sealed metadata entry.

use redb::{ReadableTable, TableDefinition, WriteTransaction};

use crate::tables::OPTIONS;
use crate::{Result, meta, sealing};

/// The option table of schema 5.
const OPTIONS_V1: TableDefinition<&str, &str> = TableDefinition::new("options.v1");

pub(super) fn run(wtx: &WriteTransaction) -> Result<()> {
    let keyring = sealing::current()?;
    {
        let old = wtx.open_table(OPTIONS_V1)?;
        let mut new = wtx.open_table(OPTIONS)?;
        for entry in old.iter()? {
            let (key, value) = entry?;
            new.insert(key.value(), keyring.seal_str(value.value())?.as_slice())?;
        }
    }
    wtx.delete_table(OPTIONS_V1)?;
    meta::move_session_secret(wtx)
}
