//! Schema 1 → 2: users gain OAuth ids, invite data, access token, settings and soft delete;
//! the email index is built from the records.

use redb::{ReadableTable, TableDefinition, WriteTransaction};
use serde::Deserialize;

use crate::tables::{USER_BY_EMAIL, USERS};
use crate::users::User;
use crate::{Quota, Result, StorageError, UserId, codec};

/// The users table of schema 1.
const USERS_V1: TableDefinition<i64, &[u8]> = TableDefinition::new("users.v1");

/// A user record as schema 1 wrote it.
#[derive(Deserialize)]
struct UserV1 {
    id: i64,
    username: String,
    display_name: String,
    password_hash: String,
    email: String,
    group: String,
    quota: i64,
    used_quota: i64,
    request_count: i64,
    role: i32,
    status: i32,
    created_at: i64,
}

impl From<UserV1> for User {
    fn from(old: UserV1) -> User {
        User {
            id: UserId(old.id),
            username: old.username,
            display_name: old.display_name,
            password_hash: old.password_hash,
            email: old.email,
            github_id: String::new(),
            oidc_id: String::new(),
            wechat_id: String::new(),
            telegram_id: String::new(),
            linux_do_id: String::new(),
            group: old.group,
            quota: Quota(old.quota),
            used_quota: Quota(old.used_quota),
            request_count: old.request_count,
            aff_code: String::new(),
            aff_count: 0,
            aff_quota: Quota::ZERO,
            aff_history_quota: Quota::ZERO,
            inviter_id: 0,
            role: old.role,
            status: old.status,
            access_token_hash: None,
            setting: String::new(),
            created_at: old.created_at,
            deleted_at: None,
        }
    }
}

pub(super) fn run(wtx: &WriteTransaction) -> Result<()> {
    let old_table = wtx.open_table(USERS_V1)?;
    let mut users = wtx.open_table(USERS)?;
    let mut by_email = wtx.open_table(USER_BY_EMAIL)?;
    for entry in old_table.iter()? {
        let (_, bytes) = entry?;
        let old: UserV1 = codec::decode(bytes.value()).map_err(|e| StorageError::Migration {
            from: 1,
            reason: format!("unreadable user record: {e}"),
        })?;
        let user = User::from(old);
        let email = user.email.trim().to_lowercase();
        if !email.is_empty() {
            by_email.insert(email.as_str(), user.id.0)?;
        }
        users.insert(user.id.0, codec::encode(&user)?.as_slice())?;
    }
    drop(old_table);
    wtx.delete_table(USERS_V1)?;
    Ok(())
}
