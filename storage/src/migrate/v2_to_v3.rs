//! Schema 2 → 3: logs gain filter indexes, hour counters and dashboard aggregates; the user
//! index `log_by_user.v1` is replaced by the `u:` keys of `log_by_key.v1`. Everything is
//! rebuilt from the rows.

use redb::{TableDefinition, WriteTransaction};

use crate::Result;
use crate::logs::write::rebuild_derived;

/// The user index of schema 2.
const LOG_BY_USER_V1: TableDefinition<(i64, i64, i64), ()> = TableDefinition::new("log_by_user.v1");

pub(super) fn run(wtx: &WriteTransaction) -> Result<()> {
    wtx.delete_table(LOG_BY_USER_V1)?;
    rebuild_derived(wtx)
}
