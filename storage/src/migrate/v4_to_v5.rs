//! Schema 4 → 5: every user gets a credited total ([`crate::tables::USER_CREDITED`]), filled as
//! balance + used quota: what was credited minus what was spent, plus what was spent.

use redb::{ReadableTable, WriteTransaction};

use crate::tables::{USER_CREDITED, USERS};
use crate::{Result, StorageError, codec, users::User};

pub(super) fn run(wtx: &WriteTransaction) -> Result<()> {
    let users = wtx.open_table(USERS)?;
    let mut credited = wtx.open_table(USER_CREDITED)?;
    for entry in users.iter()? {
        let (id, bytes) = entry?;
        let user: User = codec::decode(bytes.value())?;
        let total = user
            .quota
            .0
            .checked_add(user.used_quota.0)
            .ok_or(StorageError::Overflow)?;
        credited.insert(id.value(), total)?;
    }
    Ok(())
}
