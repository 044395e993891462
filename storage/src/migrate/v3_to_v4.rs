//! Schema 3 → 4: logs gain the filter keys user + group, model + channel and the typed keys of
//! rows other than consume ([`crate::logs::keys`]); the filter index and the hour counters are
//! rebuilt from the rows (the dashboard aggregates are kept as they are).

use redb::WriteTransaction;

use crate::Result;
use crate::logs::write::rebuild_filter_keys;

pub(super) fn run(wtx: &WriteTransaction) -> Result<()> {
    rebuild_filter_keys(wtx)
}
