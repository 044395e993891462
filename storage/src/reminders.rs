//! When each user was last sent a reminder of a kind (e.g. the low-balance reminder), so a
//! reminder is sent at most once per window even across restarts.

use redb::{ReadTransaction, ReadableTable, WriteTransaction};

use crate::tables::REMINDERS;
use crate::{Result, UserId};

/// When `user` was last sent a reminder of `kind` (unix seconds), if ever.
pub fn last_sent(rtx: &ReadTransaction, user: UserId, kind: &str) -> Result<Option<i64>> {
    Ok(rtx
        .open_table(REMINDERS)?
        .get((user.0, kind))?
        .map(|v| v.value()))
}

/// Claims the reminder of `kind` for `user` at `now`: `true` (and `now` recorded) when none
/// was sent in the `window` seconds before `now`, `false` otherwise. Claiming inside the write
/// transaction makes concurrent claims exclusive: exactly one of them wins.
pub fn claim(
    wtx: &WriteTransaction,
    user: UserId,
    kind: &str,
    now: i64,
    window: i64,
) -> Result<bool> {
    let mut table = wtx.open_table(REMINDERS)?;
    let last = table.get((user.0, kind))?.map(|v| v.value());
    if last.is_some_and(|at| now.saturating_sub(at) < window) {
        return Ok(false);
    }
    table.insert((user.0, kind), now)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;

    #[test]
    fn a_claim_holds_for_its_window() -> Result<()> {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open_dir(dir.path())?;
        let user = UserId(7);
        let claim_at = |now| store.write_blocking(move |wtx| claim(wtx, user, "quota", now, 100));
        assert!(claim_at(1_000)?);
        assert!(!claim_at(1_050)?, "inside the window");
        assert!(claim_at(1_100)?, "the window has passed");
        let last = store.read_blocking(move |rtx| last_sent(rtx, user, "quota"))?;
        assert_eq!(last, Some(1_100));
        let other = store.read_blocking(move |rtx| last_sent(rtx, UserId(8), "quota"))?;
        assert_eq!(other, None);
        Ok(())
    }
}
