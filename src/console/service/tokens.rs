//! API tokens, managed by their owners (spec 02 §3–§5, §7): validation, status rules, masking,
//! the per-user limit, and keeping the relay's in-memory token index in step with storage:
//! every change commits and patches the index under the index's edit lock
//! ([`TokenIndex::edit`]), so the index sees changes in commit order and a deleted key never
//! comes back.
//!
//! Status shown to the console is derived: an enabled token past its expiry reads as expired
//! (3), an enabled limited token with no quota left reads as exhausted (4).

use serde::{Deserialize, Serialize};
use tollgate_actors::token_index::{TokenIndex, parse_allow_ips};
use tollgate_storage::tokens::{
    self, STATUS_DISABLED, STATUS_ENABLED, STATUS_EXHAUSTED, STATUS_EXPIRED, Token,
};
use tollgate_storage::users::User;
use tollgate_storage::{Quota, StorageError, TokenId, UserId, WriteTransaction};

use super::personal::usable_groups;
use super::secrets::random_alnum;
use crate::clock::now_unix;
use crate::error::{ConsoleError, ErrorCode};
use crate::state::AppState;

/// Most tokens one user may own (new-api's default `max_user_tokens`).
pub const MAX_TOKENS_PER_USER: usize = 1000;
/// Length of a key, without `sk-`.
pub const KEY_LEN: usize = 48;
/// Longest token name.
pub const MAX_NAME_LEN: usize = 50;

/// A token as the console sees it: the key masked.
#[derive(Debug, Serialize)]
pub struct TokenView {
    /// Id.
    pub id: TokenId,
    /// Owner.
    pub user_id: UserId,
    /// Name.
    pub name: String,
    /// First 4 + asterisks + last 4 characters of the key.
    pub key: String,
    /// Effective status (1 enabled, 2 disabled, 3 expired, 4 exhausted).
    pub status: i32,
    /// Unix seconds of creation.
    pub created_time: i64,
    /// Unix seconds of the last use.
    pub accessed_time: i64,
    /// Unix seconds of expiry, -1 never.
    pub expired_time: i64,
    /// Quota left.
    pub remain_quota: Quota,
    /// No per-token limit.
    pub unlimited_quota: bool,
    /// Quota spent.
    pub used_quota: Quota,
    /// Model restriction on.
    pub model_limits_enabled: bool,
    /// Allowed models, comma-separated.
    pub model_limits: String,
    /// Allowed IPs/CIDRs, one per line.
    pub allow_ips: String,
    /// Billing group ("" = the user's).
    pub group: String,
}

/// `abcd**********wxyz`.
pub fn mask_key(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() <= 8 {
        return "*".repeat(chars.len());
    }
    let head: String = chars[..4].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}**********{tail}")
}

/// The status the console shows at `now` (pure).
pub fn effective_status(token: &Token, now: i64) -> i32 {
    if token.status != STATUS_ENABLED {
        return token.status;
    }
    if token.expired_time != -1 && token.expired_time <= now {
        return STATUS_EXPIRED;
    }
    if !token.unlimited_quota && token.remain_quota.0 <= 0 {
        return STATUS_EXHAUSTED;
    }
    STATUS_ENABLED
}

impl TokenView {
    /// The view of `token` at `now`.
    pub fn new(token: &Token, now: i64) -> TokenView {
        TokenView {
            id: token.id,
            user_id: token.user_id,
            name: token.name.clone(),
            key: mask_key(&token.key),
            status: effective_status(token, now),
            created_time: token.created_time,
            accessed_time: token.accessed_time,
            expired_time: token.expired_time,
            remain_quota: token.remain_quota,
            unlimited_quota: token.unlimited_quota,
            used_quota: token.used_quota,
            model_limits_enabled: token.model_limits_enabled,
            model_limits: token.model_limits.clone(),
            allow_ips: token.allow_ips.clone(),
            group: token.group.clone(),
        }
    }
}

/// Token fields of POST and PUT /api/token/ (PUT also carries `id`; absent fields are kept).
#[derive(Debug, Default, Deserialize)]
pub struct TokenInput {
    /// Which token (PUT only).
    #[serde(default)]
    pub id: Option<TokenId>,
    /// Name.
    #[serde(default)]
    pub name: Option<String>,
    /// Quota left.
    #[serde(default)]
    pub remain_quota: Option<i64>,
    /// No per-token limit.
    #[serde(default)]
    pub unlimited_quota: Option<bool>,
    /// Unix seconds, -1 never.
    #[serde(default)]
    pub expired_time: Option<i64>,
    /// Restrict models.
    #[serde(default)]
    pub model_limits_enabled: Option<bool>,
    /// Allowed models, comma-separated.
    #[serde(default)]
    pub model_limits: Option<String>,
    /// Allowed IPs/CIDRs.
    #[serde(default)]
    pub allow_ips: Option<String>,
    /// Billing group.
    #[serde(default)]
    pub group: Option<String>,
    /// New status (status-only updates).
    #[serde(default)]
    pub status: Option<i32>,
}

/// Applies `input` to `token`, validating every field given (pure apart from the group list).
fn apply(
    state: &AppState,
    user: &User,
    token: &mut Token,
    input: TokenInput,
) -> Result<(), ConsoleError> {
    if let Some(name) = input.name {
        let name = name.trim().to_owned();
        if name.is_empty() {
            return Err(ConsoleError::of(ErrorCode::TokenNameRequired));
        }
        if name.chars().count() > MAX_NAME_LEN {
            return Err(ConsoleError::with_args(
                ErrorCode::TokenNameTooLong,
                [MAX_NAME_LEN.to_string()],
            ));
        }
        token.name = name;
    }
    if let Some(quota) = input.remain_quota {
        if quota < 0 {
            return Err(ConsoleError::of(ErrorCode::RemainQuotaNegative));
        }
        token.remain_quota = Quota(quota);
    }
    if let Some(unlimited) = input.unlimited_quota {
        token.unlimited_quota = unlimited;
    }
    if let Some(expiry) = input.expired_time {
        if expiry != -1 && expiry <= 0 {
            return Err(ConsoleError::of(ErrorCode::TokenExpiryInvalid));
        }
        token.expired_time = expiry;
    }
    if let Some(enabled) = input.model_limits_enabled {
        token.model_limits_enabled = enabled;
    }
    if let Some(models) = input.model_limits {
        token.model_limits = models
            .split(',')
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .collect::<Vec<_>>()
            .join(",");
    }
    if let Some(ips) = input.allow_ips {
        parse_allow_ips(&ips)
            .map_err(|bad| ConsoleError::with_args(ErrorCode::IpInvalid, [bad.to_string()]))?;
        token.allow_ips = ips.trim().to_owned();
    }
    if let Some(group) = input.group {
        let group = group.trim().to_owned();
        if !group.is_empty() && !usable_groups(state, user).contains_key(&group) {
            return Err(ConsoleError::with_args(
                ErrorCode::GroupNotUsable,
                [group.to_string()],
            ));
        }
        token.group = group;
    }
    Ok(())
}

/// Creates a token for `user` and registers it with the relay.
pub async fn create(
    state: &AppState,
    user: &User,
    input: TokenInput,
) -> Result<Token, ConsoleError> {
    if input.name.as_deref().is_none_or(|n| n.trim().is_empty()) {
        return Err(ConsoleError::of(ErrorCode::TokenNameRequired));
    }
    let now = now_unix();
    let mut token = Token {
        id: TokenId(0),
        user_id: user.id,
        name: String::new(),
        key: random_alnum(KEY_LEN),
        status: STATUS_ENABLED,
        created_time: now,
        accessed_time: now,
        expired_time: -1,
        remain_quota: Quota::ZERO,
        unlimited_quota: false,
        used_quota: Quota::ZERO,
        model_limits_enabled: false,
        model_limits: String::new(),
        allow_ips: String::new(),
        group: String::new(),
    };
    apply(state, user, &mut token, input)?;
    let owner = user.id;
    commit_and_patch(
        state,
        move |wtx| {
            if tokens::count_for_user(wtx, owner)? >= MAX_TOKENS_PER_USER {
                return Err(ConsoleError::with_args(
                    ErrorCode::TooManyTokens,
                    [MAX_TOKENS_PER_USER.to_string()],
                ));
            }
            Ok(tokens::insert(wtx, token)?)
        },
        |index, token| index.upsert(token),
    )
    .await
}

/// Commits `change` and patches the relay's token index with its outcome under the index's
/// edit lock ([`TokenIndex::edit`]), on a blocking thread that finishes even when the caller
/// goes away (a commit is never left without its patch).
async fn commit_and_patch<T: Send + 'static>(
    state: &AppState,
    change: impl FnOnce(&WriteTransaction) -> Result<T, ConsoleError> + Send + 'static,
    patch: impl FnOnce(&TokenIndex, &T) + Send + 'static,
) -> Result<T, ConsoleError> {
    let (store, index) = (state.store.clone(), state.tokens.clone());
    tokio::task::spawn_blocking(move || index.edit(|| store.write_blocking(change), patch))
        .await
        .map_err(|e| ConsoleError::from(StorageError::Join(e)))?
}

/// Loads a token owned by `user` (others' tokens read as not found).
pub async fn get(state: &AppState, user: &User, id: TokenId) -> Result<Token, ConsoleError> {
    let owner = user.id;
    state
        .store
        .read(move |rtx| tokens::get(rtx, id))
        .await?
        .filter(|t| t.user_id == owner)
        .ok_or(ConsoleError::NotFound("token"))
}

/// Changes a token's fields, or only its status when `status_only`.
///
/// The stored record is re-read and written in one transaction, so a settlement committed
/// meanwhile is not overwritten. A new remaining quota is applied as a delta from what the
/// quota book holds for the token (which may be ahead of storage by settlements still queued),
/// to the book and to storage alike, so the relay sees the new limit on the next request and
/// the two never drift apart.
pub async fn update(
    state: &AppState,
    user: &User,
    input: TokenInput,
    status_only: bool,
) -> Result<Token, ConsoleError> {
    let id = input
        .id
        .ok_or_else(|| ConsoleError::of(ErrorCode::IdRequired))?;
    let mut edited = get(state, user, id).await?;
    let quota_edited = !status_only && input.remain_quota.is_some();
    if status_only {
        let status = input
            .status
            .ok_or_else(|| ConsoleError::of(ErrorCode::StatusRequired))?;
        set_status(&mut edited, status, now_unix())?;
    } else {
        apply(
            state,
            user,
            &mut edited,
            TokenInput {
                status: None,
                ..input
            },
        )?;
    }
    let delta = if quota_edited {
        let held = state.quota.token_remain(user.id, id).await?;
        edited
            .remain_quota
            .0
            .checked_sub(held)
            .ok_or_else(|| ConsoleError::of(ErrorCode::RemainQuotaOutOfRange))?
    } else {
        0
    };
    let owner = user.id;
    let token = commit_and_patch(
        state,
        move |wtx| {
            let mut stored = tokens::get_rw(wtx, id)?
                .filter(|t| t.user_id == owner)
                .ok_or(ConsoleError::NotFound("token"))?;
            stored.remain_quota = stored
                .remain_quota
                .checked_add(Quota(delta))
                .ok_or(StorageError::Overflow)?;
            stored.name = edited.name;
            stored.status = edited.status;
            stored.expired_time = edited.expired_time;
            stored.unlimited_quota = edited.unlimited_quota;
            stored.model_limits_enabled = edited.model_limits_enabled;
            stored.model_limits = edited.model_limits;
            stored.allow_ips = edited.allow_ips;
            stored.group = edited.group;
            tokens::update(wtx, &stored)?;
            Ok(stored)
        },
        |index, token| index.upsert(token),
    )
    .await?;
    state
        .quota
        .edit_token(owner, id, delta, token.unlimited_quota);
    Ok(token)
}

/// Enable (1) or disable (2); enabling an expired or exhausted token is refused with the fix.
pub fn set_status(token: &mut Token, status: i32, now: i64) -> Result<(), ConsoleError> {
    match status {
        STATUS_ENABLED => {
            if token.expired_time != -1 && token.expired_time <= now {
                return Err(ConsoleError::of(ErrorCode::TokenExpiredCannotEnable));
            }
            if !token.unlimited_quota && token.remain_quota.0 <= 0 {
                return Err(ConsoleError::of(ErrorCode::TokenExhaustedCannotEnable));
            }
            token.status = STATUS_ENABLED;
        }
        STATUS_DISABLED => token.status = STATUS_DISABLED,
        _ => {
            return Err(ConsoleError::of(ErrorCode::RedemptionStatusInvalid));
        }
    }
    Ok(())
}

/// Deletes a token owned by `user`; its key stops working at once, for good.
pub async fn delete(state: &AppState, user: &User, id: TokenId) -> Result<(), ConsoleError> {
    let owner = user.id;
    commit_and_patch(
        state,
        move |wtx| {
            let token = tokens::get_rw(wtx, id)?
                .filter(|t| t.user_id == owner)
                .ok_or(ConsoleError::NotFound("token"))?;
            tokens::delete(wtx, id)?;
            Ok(token)
        },
        |index, token| index.remove(&token.key),
    )
    .await?;
    Ok(())
}

/// `?keyword=&token=` of GET /api/token/search.
#[derive(Debug, Default, Deserialize)]
pub struct TokenSearch {
    /// Substring of the name.
    #[serde(default)]
    pub keyword: String,
    /// Substring of the key (with or without `sk-`).
    #[serde(default)]
    pub token: String,
}

/// The user's tokens matching `search`, newest first.
pub async fn list(
    state: &AppState,
    user: &User,
    search: TokenSearch,
) -> Result<Vec<Token>, ConsoleError> {
    let owner = user.id;
    let all = state
        .store
        .read(move |rtx| tokens::list_for_user(rtx, owner))
        .await?;
    let keyword = search.keyword.trim().to_lowercase();
    let key = search.token.trim().trim_start_matches("sk-").to_owned();
    Ok(all
        .into_iter()
        .filter(|t| keyword.is_empty() || t.name.to_lowercase().contains(&keyword))
        .filter(|t| key.is_empty() || t.key.contains(&key))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_masked() {
        let key = "abcd0123456789012345678901234567890123456789wxyz";
        assert_eq!(mask_key(key), "abcd**********wxyz");
        assert_eq!(mask_key("short"), "*****");
    }
}
