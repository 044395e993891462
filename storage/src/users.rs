//! User records and their unique indexes (username, email), kept in step in one transaction.

use redb::{ReadTransaction, ReadableTable, ReadableTableMetadata, WriteTransaction};
use serde::{Deserialize, Serialize};

use crate::tables::{
    USER_BY_ACCESS_TOKEN, USER_BY_AFF_CODE, USER_BY_EMAIL, USER_BY_IDENTITY, USER_BY_USERNAME,
    USER_CREDITED, USER_SESSIONS, USERS,
};
use crate::{Quota, Result, StorageError, UserId, codec, meta};

/// Role of an ordinary user.
pub const ROLE_COMMON: i32 = 1;
/// Role of an admin.
pub const ROLE_ADMIN: i32 = 10;
/// Role of the super admin (root).
pub const ROLE_ROOT: i32 = 100;

/// Status of an activated user.
pub const STATUS_ENABLED: i32 = 1;
/// Status of a banned user.
pub const STATUS_DISABLED: i32 = 2;

/// A user account (spec 01 §3 "User").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct User {
    /// Id, allocated from the `users` sequence.
    pub id: UserId,
    /// Login name, unique case-insensitively.
    pub username: String,
    /// Name shown in the console.
    pub display_name: String,
    /// argon2id PHC string; never leaves the server.
    pub password_hash: String,
    /// Email address, unique case-insensitively when not empty.
    pub email: String,
    /// GitHub account id when bound.
    pub github_id: String,
    /// OIDC subject when bound.
    pub oidc_id: String,
    /// WeChat id when bound.
    pub wechat_id: String,
    /// Telegram id when bound.
    pub telegram_id: String,
    /// LinuxDO id when bound.
    pub linux_do_id: String,
    /// Billing group (a key of GroupRatio), "default" for new users.
    pub group: String,
    /// Spendable balance.
    pub quota: Quota,
    /// Total spent.
    pub used_quota: Quota,
    /// Number of relayed requests.
    pub request_count: i64,
    /// This user's invite code.
    pub aff_code: String,
    /// Number of users invited.
    pub aff_count: i64,
    /// Invite earnings not yet transferred to `quota`.
    pub aff_quota: Quota,
    /// All invite earnings ever.
    pub aff_history_quota: Quota,
    /// Who invited this user, 0 for nobody.
    pub inviter_id: i64,
    /// 1 common, 10 admin, 100 root.
    pub role: i32,
    /// 1 enabled, 2 banned.
    pub status: i32,
    /// Hash of the system access token, when one was issued.
    pub access_token_hash: Option<String>,
    /// Personal settings as JSON text (notify_type, quota_warning_threshold, …).
    pub setting: String,
    /// Unix seconds of creation.
    pub created_at: i64,
    /// Unix seconds of deregistration (soft delete), if deleted.
    pub deleted_at: Option<i64>,
}

/// A third-party sign-in method whose identity a user can bind (spec 01 §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// GitHub (numeric account id).
    GitHub,
    /// A generic OpenID Connect provider (issuer and subject).
    Oidc,
    /// LinuxDO (numeric account id).
    LinuxDo,
    /// Telegram (numeric user id).
    Telegram,
    /// WeChat through a WeChat server (open id).
    WeChat,
}

impl Provider {
    /// Every provider.
    pub const ALL: [Provider; 5] = [
        Provider::GitHub,
        Provider::Oidc,
        Provider::LinuxDo,
        Provider::Telegram,
        Provider::WeChat,
    ];

    /// The provider's name in routes, index keys and generated usernames.
    pub fn name(self) -> &'static str {
        match self {
            Provider::GitHub => "github",
            Provider::Oidc => "oidc",
            Provider::LinuxDo => "linuxdo",
            Provider::Telegram => "telegram",
            Provider::WeChat => "wechat",
        }
    }

    /// The user's bound identity for this provider ("" when not bound).
    pub fn bound(self, user: &User) -> &str {
        match self {
            Provider::GitHub => &user.github_id,
            Provider::Oidc => &user.oidc_id,
            Provider::LinuxDo => &user.linux_do_id,
            Provider::Telegram => &user.telegram_id,
            Provider::WeChat => &user.wechat_id,
        }
    }

    /// The field holding this provider's identity.
    pub fn bound_mut(self, user: &mut User) -> &mut String {
        match self {
            Provider::GitHub => &mut user.github_id,
            Provider::Oidc => &mut user.oidc_id,
            Provider::LinuxDo => &mut user.linux_do_id,
            Provider::Telegram => &mut user.telegram_id,
            Provider::WeChat => &mut user.wechat_id,
        }
    }

    /// The key of `external_id` in the identity index ("" for an empty id).
    fn index_key(self, external_id: &str) -> String {
        if external_id.is_empty() {
            String::new()
        } else {
            format!("{}:{external_id}", self.name())
        }
    }
}

/// The fields needed to create a user; the rest start at their zero values.
#[derive(Debug, Clone)]
pub struct NewUser {
    /// Login name.
    pub username: String,
    /// Display name; the username when empty.
    pub display_name: String,
    /// argon2id PHC string.
    pub password_hash: String,
    /// Email, may be empty.
    pub email: String,
    /// Role (1, 10 or 100).
    pub role: i32,
    /// Billing group.
    pub group: String,
    /// Starting balance.
    pub quota: Quota,
    /// Invite code to give the user.
    pub aff_code: String,
    /// Inviter id, 0 for none.
    pub inviter_id: i64,
    /// Unix seconds of creation.
    pub created_at: i64,
}

fn index_key(value: &str) -> String {
    value.trim().to_lowercase()
}

fn load(table: &impl ReadableTable<i64, &'static [u8]>, id: UserId) -> Result<Option<User>> {
    match table.get(id.0)? {
        Some(guard) => Ok(Some(codec::decode(guard.value())?)),
        None => Ok(None),
    }
}

/// Creates a user, enforcing unique username and email.
pub fn insert(wtx: &WriteTransaction, new: NewUser) -> Result<User> {
    let mut by_name = wtx.open_table(USER_BY_USERNAME)?;
    let name_key = index_key(&new.username);
    if by_name.get(name_key.as_str())?.is_some() {
        return Err(StorageError::Duplicate { what: "username" });
    }
    let mut by_email = wtx.open_table(USER_BY_EMAIL)?;
    let email_key = index_key(&new.email);
    if !email_key.is_empty() && by_email.get(email_key.as_str())?.is_some() {
        return Err(StorageError::Duplicate { what: "email" });
    }
    let mut by_aff = wtx.open_table(USER_BY_AFF_CODE)?;
    let aff_key = index_key(&new.aff_code);
    if !aff_key.is_empty() && by_aff.get(aff_key.as_str())?.is_some() {
        return Err(StorageError::Duplicate {
            what: "invite code",
        });
    }
    let id = UserId(meta::next_id(wtx, "users")?);
    let user = User {
        id,
        display_name: if new.display_name.is_empty() {
            new.username.clone()
        } else {
            new.display_name
        },
        username: new.username,
        password_hash: new.password_hash,
        email: new.email,
        github_id: String::new(),
        oidc_id: String::new(),
        wechat_id: String::new(),
        telegram_id: String::new(),
        linux_do_id: String::new(),
        group: new.group,
        quota: new.quota,
        used_quota: Quota::ZERO,
        request_count: 0,
        aff_code: new.aff_code,
        aff_count: 0,
        aff_quota: Quota::ZERO,
        aff_history_quota: Quota::ZERO,
        inviter_id: new.inviter_id,
        role: new.role,
        status: STATUS_ENABLED,
        access_token_hash: None,
        setting: String::new(),
        created_at: new.created_at,
        deleted_at: None,
    };
    by_name.insert(name_key.as_str(), id.0)?;
    if !email_key.is_empty() {
        by_email.insert(email_key.as_str(), id.0)?;
    }
    if !aff_key.is_empty() {
        by_aff.insert(aff_key.as_str(), id.0)?;
    }
    let bytes = codec::encode(&user)?;
    wtx.open_table(USERS)?.insert(id.0, bytes.as_slice())?;
    wtx.open_table(USER_CREDITED)?.insert(id.0, user.quota.0)?;
    Ok(user)
}

/// All quota ever credited to `id` ([`USER_CREDITED`]; 0 for an unknown user).
pub fn credited(rtx: &ReadTransaction, id: UserId) -> Result<i64> {
    let table = rtx.open_table(USER_CREDITED)?;
    Ok(table.get(id.0)?.map_or(0, |v| v.value()))
}

/// Adds `delta` (negative: an admin's decrease) to the credited total of `id`.
pub fn add_credited(wtx: &WriteTransaction, id: UserId, delta: i64) -> Result<()> {
    let mut table = wtx.open_table(USER_CREDITED)?;
    let current = table.get(id.0)?.map_or(0, |v| v.value());
    let total = current.checked_add(delta).ok_or(StorageError::Overflow)?;
    table.insert(id.0, total)?;
    Ok(())
}

/// The session generation of `id` ([`USER_SESSIONS`]; 0 when none was ever ended).
pub fn session_generation(rtx: &ReadTransaction, id: UserId) -> Result<u64> {
    let table = match rtx.open_table(USER_SESSIONS) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(0),
        Err(e) => return Err(e.into()),
    };
    Ok(table.get(id.0)?.map_or(0, |v| v.value()))
}

/// Ends every session of `id`: raises its session generation (every cookie stops working)
/// and forgets its system access token (the token stops working; a new one must be issued).
/// Returns the new generation.
pub fn end_sessions(wtx: &WriteTransaction, id: UserId) -> Result<u64> {
    let next = raise_generation(wtx, id)?;
    let mut users = wtx.open_table(USERS)?;
    if let Some(mut user) = load(&users, id)?
        && let Some(hash) = user.access_token_hash.take()
    {
        let key = index_key(&hash);
        wtx.open_table(USER_BY_ACCESS_TOKEN)?.remove(key.as_str())?;
        let bytes = codec::encode(&user)?;
        users.insert(id.0, bytes.as_slice())?;
    }
    Ok(next)
}

/// Raises the session generation of `id`; returns the new one.
fn raise_generation(wtx: &WriteTransaction, id: UserId) -> Result<u64> {
    let mut table = wtx.open_table(USER_SESSIONS)?;
    let next = table
        .get(id.0)?
        .map_or(0, |v| v.value())
        .checked_add(1)
        .ok_or(StorageError::Overflow)?;
    table.insert(id.0, next)?;
    Ok(next)
}

/// Whether a change from `old` to `new` must end the user's sessions: a new password, a new
/// role, a ban or unban, a deletion.
fn ends_sessions(old: &User, new: &User) -> bool {
    old.password_hash != new.password_hash
        || old.role != new.role
        || old.status != new.status
        || old.deleted_at != new.deleted_at
}

/// Replaces a user record, moving its unique index entries (username, email, invite code,
/// access token) when those values changed. A change of password, role, status or deletion
/// ends every session of the user and forgets the access token ([`end_sessions`]), whatever
/// route made it.
pub fn update(wtx: &WriteTransaction, user: &User) -> Result<()> {
    let mut users = wtx.open_table(USERS)?;
    let old = load(&users, user.id)?.ok_or(StorageError::NotFound { what: "user" })?;
    let ended;
    let user = if ends_sessions(&old, user) {
        raise_generation(wtx, user.id)?;
        ended = User {
            access_token_hash: None,
            ..user.clone()
        };
        &ended
    } else {
        user
    };
    reindex(
        wtx,
        USER_BY_USERNAME,
        "username",
        &old.username,
        &user.username,
        user.id,
    )?;
    reindex(
        wtx,
        USER_BY_EMAIL,
        "email",
        &old.email,
        &user.email,
        user.id,
    )?;
    reindex(
        wtx,
        USER_BY_AFF_CODE,
        "invite code",
        &old.aff_code,
        &user.aff_code,
        user.id,
    )?;
    reindex(
        wtx,
        USER_BY_ACCESS_TOKEN,
        "access token",
        old.access_token_hash.as_deref().unwrap_or_default(),
        user.access_token_hash.as_deref().unwrap_or_default(),
        user.id,
    )?;
    for provider in Provider::ALL {
        reindex_identity(
            wtx,
            &provider.index_key(provider.bound(&old)),
            &provider.index_key(provider.bound(user)),
            user.id,
        )?;
    }
    let bytes = codec::encode(user)?;
    users.insert(user.id.0, bytes.as_slice())?;
    Ok(())
}

/// Moves an identity index entry; identities are compared exactly (not case-folded).
fn reindex_identity(wtx: &WriteTransaction, old: &str, new: &str, id: UserId) -> Result<()> {
    if old == new {
        return Ok(());
    }
    let mut index = wtx.open_table(USER_BY_IDENTITY)?;
    if !new.is_empty() {
        if let Some(owner) = index.get(new)?
            && owner.value() != id.0
        {
            return Err(StorageError::Duplicate { what: "identity" });
        }
        index.insert(new, id.0)?;
    }
    if !old.is_empty() {
        index.remove(old)?;
    }
    Ok(())
}

/// Finds the user bound to `external_id` at `provider`, inside a write transaction (sign-in,
/// binding and sign-up through a provider decide in one transaction).
pub fn find_by_identity_rw(
    wtx: &WriteTransaction,
    provider: Provider,
    external_id: &str,
) -> Result<Option<User>> {
    let key = provider.index_key(external_id);
    if key.is_empty() {
        return Ok(None);
    }
    let id = match wtx.open_table(USER_BY_IDENTITY)?.get(key.as_str())? {
        Some(id) => UserId(id.value()),
        None => return Ok(None),
    };
    get_rw(wtx, id)
}

/// Finds a user by username inside a write transaction.
pub fn find_by_username_rw(wtx: &WriteTransaction, username: &str) -> Result<Option<User>> {
    let key = index_key(username);
    if key.is_empty() {
        return Ok(None);
    }
    let id = match wtx.open_table(USER_BY_USERNAME)?.get(key.as_str())? {
        Some(id) => UserId(id.value()),
        None => return Ok(None),
    };
    get_rw(wtx, id)
}

fn reindex(
    wtx: &WriteTransaction,
    def: redb::TableDefinition<&str, i64>,
    what: &'static str,
    old: &str,
    new: &str,
    id: UserId,
) -> Result<()> {
    let (old_key, new_key) = (index_key(old), index_key(new));
    if old_key == new_key {
        return Ok(());
    }
    let mut index = wtx.open_table(def)?;
    if !new_key.is_empty() {
        if let Some(owner) = index.get(new_key.as_str())?
            && owner.value() != id.0
        {
            return Err(StorageError::Duplicate { what });
        }
        index.insert(new_key.as_str(), id.0)?;
    }
    if !old_key.is_empty() {
        index.remove(old_key.as_str())?;
    }
    Ok(())
}

/// Reads a user by id.
pub fn get(rtx: &ReadTransaction, id: UserId) -> Result<Option<User>> {
    load(&rtx.open_table(USERS)?, id)
}

/// Reads a user by id inside a write transaction.
pub fn get_rw(wtx: &WriteTransaction, id: UserId) -> Result<Option<User>> {
    load(&wtx.open_table(USERS)?, id)
}

/// Finds a user by username (case-insensitive).
pub fn find_by_username(rtx: &ReadTransaction, username: &str) -> Result<Option<User>> {
    find(rtx, USER_BY_USERNAME, username)
}

/// Finds a user by email (case-insensitive).
pub fn find_by_email(rtx: &ReadTransaction, email: &str) -> Result<Option<User>> {
    find(rtx, USER_BY_EMAIL, email)
}

fn find(
    rtx: &ReadTransaction,
    def: redb::TableDefinition<&str, i64>,
    value: &str,
) -> Result<Option<User>> {
    let key = index_key(value);
    if key.is_empty() {
        return Ok(None);
    }
    let id = match rtx.open_table(def)?.get(key.as_str())? {
        Some(id) => UserId(id.value()),
        None => return Ok(None),
    };
    get(rtx, id)
}

/// Finds a user by email inside a write transaction.
pub fn find_by_email_rw(wtx: &WriteTransaction, email: &str) -> Result<Option<User>> {
    let key = index_key(email);
    if key.is_empty() {
        return Ok(None);
    }
    let id = match wtx.open_table(USER_BY_EMAIL)?.get(key.as_str())? {
        Some(id) => UserId(id.value()),
        None => return Ok(None),
    };
    get_rw(wtx, id)
}

/// Finds a user by the SHA-256 (hex) of their system access token.
pub fn find_by_access_token(rtx: &ReadTransaction, token_hash: &str) -> Result<Option<User>> {
    find(rtx, USER_BY_ACCESS_TOKEN, token_hash)
}

/// Finds a user by invite code, inside a write transaction (registration credits the inviter).
pub fn find_by_aff_code_rw(wtx: &WriteTransaction, code: &str) -> Result<Option<User>> {
    let key = index_key(code);
    if key.is_empty() {
        return Ok(None);
    }
    let id = match wtx.open_table(USER_BY_AFF_CODE)?.get(key.as_str())? {
        Some(id) => UserId(id.value()),
        None => return Ok(None),
    };
    get_rw(wtx, id)
}

/// Whether an invite code is taken.
pub fn aff_code_taken(wtx: &WriteTransaction, code: &str) -> Result<bool> {
    Ok(wtx
        .open_table(USER_BY_AFF_CODE)?
        .get(index_key(code).as_str())?
        .is_some())
}

/// One page of users, newest first, and the total number of users.
pub fn list(rtx: &ReadTransaction, offset: usize, limit: usize) -> Result<(Vec<User>, u64)> {
    let table = rtx.open_table(USERS)?;
    let total = table.len()?;
    let mut items = Vec::with_capacity(limit);
    for entry in table.iter()?.rev().skip(offset).take(limit) {
        let (_, bytes) = entry?;
        items.push(codec::decode(bytes.value())?);
    }
    Ok((items, total))
}

/// Users matching `keep`, newest first: one page and the number of matches.
///
/// A scan of the users table: fine for the user counts a gateway has (100k users decode in
/// well under a second); logs, which grow without bound, use indexes instead.
pub fn search(
    rtx: &ReadTransaction,
    keep: impl Fn(&User) -> bool,
    offset: usize,
    limit: usize,
) -> Result<(Vec<User>, u64)> {
    let table = rtx.open_table(USERS)?;
    let mut items = Vec::with_capacity(limit);
    let mut total = 0u64;
    for entry in table.iter()?.rev() {
        let (_, bytes) = entry?;
        let user: User = codec::decode(bytes.value())?;
        if keep(&user) {
            if total >= offset as u64 && items.len() < limit {
                items.push(user);
            }
            total += 1;
        }
    }
    Ok((items, total))
}

/// Whether a super admin (role ≥ 100) exists. A scan, used only by setup.
pub fn root_exists(rtx: &ReadTransaction) -> Result<bool> {
    root_in(&rtx.open_table(USERS)?)
}

/// [`root_exists`] inside a write transaction.
pub fn root_exists_rw(wtx: &WriteTransaction) -> Result<bool> {
    root_in(&wtx.open_table(USERS)?)
}

fn root_in(table: &impl ReadableTable<i64, &'static [u8]>) -> Result<bool> {
    for entry in table.iter()? {
        let (_, bytes) = entry?;
        let user: User = codec::decode(bytes.value())?;
        if user.role >= ROLE_ROOT && user.deleted_at.is_none() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Number of user records (deleted ones included).
pub fn count(rtx: &ReadTransaction) -> Result<u64> {
    Ok(rtx.open_table(USERS)?.len()?)
}

/// [`count`] inside a write transaction.
pub fn count_rw(wtx: &WriteTransaction) -> Result<u64> {
    Ok(wtx.open_table(USERS)?.len()?)
}

/// Replaces the password hash of `id` with `new` (the same password hashed again, e.g. an
/// imported bcrypt hash upgraded to argon2id at a successful sign-in) when it is still
/// `expected`. The password did not change, so no session ends. Returns whether it replaced it.
pub fn upgrade_password_hash(
    wtx: &WriteTransaction,
    id: UserId,
    expected: &str,
    new: &str,
) -> Result<bool> {
    let mut table = wtx.open_table(USERS)?;
    let Some(mut user) = load(&table, id)? else {
        return Ok(false);
    };
    if user.password_hash != expected {
        return Ok(false);
    }
    user.password_hash = new.to_owned();
    table.insert(id.0, codec::encode(&user)?.as_slice())?;
    Ok(true)
}
