//! Schema 6 → 7: the log filter index becomes postings (`log_postings.v1`: up to 256 rows of
//! a key and hour per entry, [`crate::logs::postings`]) instead of one `log_by_key.v1` entry
//! per row and key, and the newest hours' counters are their postings' shares instead of
//! `log_counts_recent.v1`; both are rebuilt from the rows with `log_counts.v1`.

use redb::{TableDefinition, WriteTransaction};

use crate::Result;
use crate::logs::write::rebuild_filter_keys;
use crate::tables::HourCount;

/// The filter index of schema 6: (filter key, created_at, log id) → ().
const LOG_BY_KEY_V1: TableDefinition<(&str, i64, i64), ()> = TableDefinition::new("log_by_key.v1");

/// The recent hour counters of schema 6: (hour start, filter key) → counter.
const LOG_COUNTS_RECENT_V1: TableDefinition<(i64, &str), HourCount> =
    TableDefinition::new("log_counts_recent.v1");

pub(super) fn run(wtx: &WriteTransaction) -> Result<()> {
    wtx.delete_table(LOG_BY_KEY_V1)?;
    wtx.delete_table(LOG_COUNTS_RECENT_V1)?;
    rebuild_filter_keys(wtx)
}
