//! API tokens (the `sk-` keys users spend quota with) and their indexes: by key (unique) and by
//! user, kept in step in one transaction.
//!
//! The key is kept in full because its owner may ask for it again (POST /api/token/{id}/key);
//! every other answer shows it masked. It is sealed in the record when a secret key is
//! configured, and the key index is then keyed by its HMAC ([`crate::sealing`]), so the file
//! holds no key in the clear.

use redb::{ReadTransaction, ReadableTable, WriteTransaction};
use serde::{Deserialize, Serialize};

use crate::tables::{TOKEN_BY_KEY, TOKENS, TOKENS_BY_USER};
use crate::{Quota, Result, StorageError, TokenId, UserId, codec, meta, sealing};

/// The key of `key` in the key index.
fn index_key(key: &str) -> Result<String> {
    Ok(sealing::current()?.index_key(key))
}

/// Token status: usable.
pub const STATUS_ENABLED: i32 = 1;
/// Token status: switched off by its owner.
pub const STATUS_DISABLED: i32 = 2;
/// Token status: past its expiry time.
pub const STATUS_EXPIRED: i32 = 3;
/// Token status: its quota is used up.
pub const STATUS_EXHAUSTED: i32 = 4;

/// An API token (spec 02 §3 "Token").
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Token {
    /// Id.
    pub id: TokenId,
    /// Owner.
    pub user_id: UserId,
    /// Name chosen by the owner.
    pub name: String,
    /// The key without `sk-`: 48 characters of `[0-9A-Za-z]`. Secret (sealed in storage).
    #[serde(with = "crate::sealing::string")]
    pub key: String,
    /// 1 enabled, 2 disabled, 3 expired, 4 exhausted.
    pub status: i32,
    /// Unix seconds of creation.
    pub created_time: i64,
    /// Unix seconds of the last use.
    pub accessed_time: i64,
    /// Unix seconds of expiry, -1 for never.
    pub expired_time: i64,
    /// Quota this token may still spend (ignored when unlimited).
    pub remain_quota: Quota,
    /// No per-token limit (the user's balance still applies).
    pub unlimited_quota: bool,
    /// Quota spent through this token.
    pub used_quota: Quota,
    /// Restrict the models this token may call.
    pub model_limits_enabled: bool,
    /// Allowed models, comma-separated.
    pub model_limits: String,
    /// Allowed client IPs or CIDRs, one per line; empty allows all.
    pub allow_ips: String,
    /// Billing group for calls with this token; empty means the user's group.
    pub group: String,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("id", &self.id)
            .field("user_id", &self.user_id)
            .field("name", &self.name)
            .field("key", &"*****")
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

fn load(table: &impl ReadableTable<i64, &'static [u8]>, id: TokenId) -> Result<Option<Token>> {
    match table.get(id.0)? {
        Some(bytes) => Ok(Some(codec::decode(bytes.value())?)),
        None => Ok(None),
    }
}

/// Stores a new token (its `id` is assigned here) and indexes it.
pub fn insert(wtx: &WriteTransaction, mut token: Token) -> Result<Token> {
    let mut by_key = wtx.open_table(TOKEN_BY_KEY)?;
    let indexed = index_key(&token.key)?;
    if by_key.get(indexed.as_str())?.is_some() {
        return Err(StorageError::Duplicate { what: "token key" });
    }
    token.id = TokenId(meta::next_id(wtx, "tokens")?);
    by_key.insert(indexed.as_str(), token.id.0)?;
    wtx.open_table(TOKENS_BY_USER)?
        .insert((token.user_id.0, token.id.0), ())?;
    wtx.open_table(TOKENS)?
        .insert(token.id.0, codec::encode(&token)?.as_slice())?;
    Ok(token)
}

/// Replaces a token (key and owner never change).
pub fn update(wtx: &WriteTransaction, token: &Token) -> Result<()> {
    let mut table = wtx.open_table(TOKENS)?;
    let old = load(&table, token.id)?.ok_or(StorageError::NotFound { what: "token" })?;
    if old.key != token.key || old.user_id != token.user_id {
        return Err(StorageError::NotFound { what: "token" });
    }
    table.insert(token.id.0, codec::encode(token)?.as_slice())?;
    Ok(())
}

/// Deletes a token and its index entries; returns it.
pub fn delete(wtx: &WriteTransaction, id: TokenId) -> Result<Option<Token>> {
    let Some(old) = load(&wtx.open_table(TOKENS)?, id)? else {
        return Ok(None);
    };
    wtx.open_table(TOKENS)?.remove(id.0)?;
    wtx.open_table(TOKEN_BY_KEY)?
        .remove(index_key(&old.key)?.as_str())?;
    wtx.open_table(TOKENS_BY_USER)?
        .remove((old.user_id.0, id.0))?;
    crate::budgets::remove(wtx, crate::budgets::Owner::Token(id))?;
    crate::limits::remove(wtx, crate::limits::Owner::Token(id))?;
    Ok(Some(old))
}

/// Reads a token.
pub fn get(rtx: &ReadTransaction, id: TokenId) -> Result<Option<Token>> {
    load(&rtx.open_table(TOKENS)?, id)
}

/// Reads a token with its owner (`None` when either is gone).
pub fn with_owner(
    rtx: &ReadTransaction,
    id: TokenId,
) -> Result<Option<(Token, crate::users::User)>> {
    let Some(token) = get(rtx, id)? else {
        return Ok(None);
    };
    Ok(crate::users::get(rtx, token.user_id)?.map(|user| (token, user)))
}

/// Reads a token inside a write transaction.
pub fn get_rw(wtx: &WriteTransaction, id: TokenId) -> Result<Option<Token>> {
    load(&wtx.open_table(TOKENS)?, id)
}

/// Finds a token by its key (without `sk-`).
pub fn find_by_key(rtx: &ReadTransaction, key: &str) -> Result<Option<Token>> {
    let id = match rtx
        .open_table(TOKEN_BY_KEY)?
        .get(index_key(key)?.as_str())?
    {
        Some(id) => TokenId(id.value()),
        None => return Ok(None),
    };
    get(rtx, id)
}

/// A user's tokens, newest first.
pub fn list_for_user(rtx: &ReadTransaction, user: UserId) -> Result<Vec<Token>> {
    let index = rtx.open_table(TOKENS_BY_USER)?;
    let tokens = rtx.open_table(TOKENS)?;
    let mut out = Vec::new();
    for entry in index.range((user.0, i64::MIN)..=(user.0, i64::MAX))?.rev() {
        let (key, _) = entry?;
        let (_, id) = key.value();
        if let Some(token) = load(&tokens, TokenId(id))? {
            out.push(token);
        }
    }
    Ok(out)
}

/// Number of tokens a user owns (inside a write transaction, to enforce the per-user limit).
pub fn count_for_user(wtx: &WriteTransaction, user: UserId) -> Result<usize> {
    let index = wtx.open_table(TOKENS_BY_USER)?;
    let mut n = 0;
    for entry in index.range((user.0, i64::MIN)..=(user.0, i64::MAX))? {
        entry?;
        n += 1;
    }
    Ok(n)
}

/// Calls `visit` with every token, one decoded at a time (the in-memory key index's startup
/// pass over a million keys holds one record at a time, not all of them).
pub fn each(rtx: &ReadTransaction, mut visit: impl FnMut(&Token)) -> Result<()> {
    for entry in rtx.open_table(TOKENS)?.iter()? {
        let (_, bytes) = entry?;
        visit(&codec::decode(bytes.value())?);
    }
    Ok(())
}
