//! Redemption codes (spec 02 §3–§5, §7): admin management and redeeming.
//!
//! Rules enforced here:
//! - create: name 1–20 characters (empty → the formatted quota), quota ≥ 1, count 1–100; the
//!   codes are 32 lower-case hex characters from the CSPRNG (128 bits: not guessable, so
//!   redeeming needs no anti-enumeration delay);
//! - update: only while unused (status 1), checked in the write transaction itself so an
//!   admin's edit can never resurrect a code redeemed a moment earlier;
//! - status: 1 ⇄ 2 only; a used code keeps status 3;
//! - redeem: compare-and-swap unused → used, the balance credit and the top-up log row in ONE
//!   transaction through the quota book ([`tollgate_actors::quota::QuotaBook::credit_with`]):
//!   exactly once however many requests race for one code.

use rand::RngCore;
use serde::{Deserialize, Serialize};
use tollgate_actors::quota::Credit;
use tollgate_storage::logs::{LOG_TOPUP, LogEntry};
use tollgate_storage::redemptions::{
    self, RedeemRefusal, Redemption, STATUS_DISABLED, STATUS_UNUSED, STATUS_USED,
};
use tollgate_storage::users::User;
use tollgate_storage::{Quota, RedemptionId, StorageError, UserId};

use crate::clock::now_unix;
use crate::error::{ConsoleError, ErrorCode};
use crate::http::page::PageQuery;
use crate::state::AppState;

/// Most codes one create call makes.
pub const MAX_BATCH: i64 = 100;
/// Longest code name, in characters.
pub const MAX_NAME_LEN: usize = 20;

/// A code as the admin console sees it (the key in full: admins hand codes out).
#[derive(Debug, Serialize)]
pub struct RedemptionView {
    /// Id.
    pub id: RedemptionId,
    /// Name.
    pub name: String,
    /// The code.
    pub key: String,
    /// 1 unused, 2 disabled, 3 used.
    pub status: i32,
    /// Quota it credits.
    pub quota: Quota,
    /// Unix seconds of creation.
    pub created_time: i64,
    /// Unix seconds of redemption, 0 when unused.
    pub redeemed_time: i64,
    /// Who redeemed it, 0 for nobody.
    pub used_user_id: UserId,
}

impl From<&Redemption> for RedemptionView {
    fn from(r: &Redemption) -> Self {
        RedemptionView {
            id: r.id,
            name: r.name.clone(),
            key: r.key.clone(),
            status: r.status,
            quota: r.quota,
            created_time: r.created_time,
            redeemed_time: r.redeemed_time,
            used_user_id: r.used_user_id,
        }
    }
}

/// Body of POST and PUT /api/redemption/ (PUT carries `id`; absent fields are kept).
#[derive(Debug, Default, Deserialize)]
pub struct RedemptionInput {
    /// Which code (PUT only).
    #[serde(default)]
    pub id: Option<RedemptionId>,
    /// Name.
    #[serde(default)]
    pub name: Option<String>,
    /// Quota credited.
    #[serde(default)]
    pub quota: Option<i64>,
    /// Codes to create (POST only), default 1.
    #[serde(default)]
    pub count: Option<i64>,
    /// New status (status-only updates).
    #[serde(default)]
    pub status: Option<i32>,
}

/// `quota` as the console shows it: dollars when DisplayInCurrencyEnabled, else units.
pub fn format_quota(quota: i64, per_unit: i64, in_currency: bool) -> String {
    if in_currency && per_unit > 0 {
        format!("${:.2}", quota as f64 / per_unit as f64)
    } else {
        quota.to_string()
    }
}

fn check_name(name: &str) -> Result<String, ConsoleError> {
    let name = name.trim();
    let len = name.chars().count();
    if len == 0 || len > MAX_NAME_LEN {
        return Err(ConsoleError::with_args(
            ErrorCode::RedemptionNameLength,
            [MAX_NAME_LEN.to_string()],
        ));
    }
    Ok(name.to_owned())
}

fn check_quota(quota: i64) -> Result<Quota, ConsoleError> {
    if quota < 1 {
        return Err(ConsoleError::of(ErrorCode::QuotaNotPositive));
    }
    Ok(Quota(quota))
}

/// A new code: 16 random bytes as 32 lower-case hex characters.
fn new_key() -> String {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Creates `count` codes; returns their keys in creation order.
/// Audited: the row names the codes' ids, name, count and quota, never their keys.
pub async fn create(
    state: &AppState,
    input: RedemptionInput,
    auditor: super::audit::Auditor,
) -> Result<Vec<String>, ConsoleError> {
    let quota = check_quota(input.quota.unwrap_or(0))?;
    let count = input.count.unwrap_or(1);
    if !(1..=MAX_BATCH).contains(&count) {
        return Err(ConsoleError::with_args(
            ErrorCode::RedemptionCountRange,
            [MAX_BATCH.to_string()],
        ));
    }
    let name = match input.name.as_deref().map(str::trim) {
        Some(name) if !name.is_empty() => check_name(name)?,
        _ => {
            let options = state.options.current();
            format_quota(
                quota.0,
                options.int("QuotaPerUnit"),
                options.flag("DisplayInCurrencyEnabled"),
            )
        }
    };
    let now = now_unix();
    let codes = state
        .store
        .write(move |wtx| {
            let mut keys = Vec::new();
            let mut ids = Vec::new();
            for _ in 0..count {
                let code = redemptions::insert(
                    wtx,
                    Redemption {
                        id: RedemptionId(0),
                        name: name.clone(),
                        key: new_key(),
                        status: STATUS_UNUSED,
                        quota,
                        created_time: now,
                        redeemed_time: 0,
                        used_user_id: UserId(0),
                    },
                )?;
                keys.push(code.key);
                ids.push(code.id.0);
            }
            let entry = auditor.entry(
                "redemption.create",
                format!("redemption:{}", ids.first().copied().unwrap_or(0)),
                &serde_json::Value::Null,
                &serde_json::json!({"ids": ids, "name": name, "count": count, "quota": quota.0}),
            );
            tollgate_storage::audit::append(wtx, entry)?;
            Ok::<_, StorageError>(keys)
        })
        .await?;
    Ok(codes)
}

/// Reads a code.
pub async fn get(state: &AppState, id: RedemptionId) -> Result<Redemption, ConsoleError> {
    state
        .store
        .read(move |rtx| redemptions::get(rtx, id))
        .await?
        .ok_or(ConsoleError::NotFound("redemption code"))
}

/// One page of codes, newest first.
pub async fn list(
    state: &AppState,
    page: PageQuery,
) -> Result<(Vec<Redemption>, u64), ConsoleError> {
    Ok(state
        .store
        .read(move |rtx| redemptions::list(rtx, page.offset(), page.size()))
        .await?)
}

/// Whether `code` matches `keyword`: its id exactly, or a case-insensitive part of its name.
pub fn matches(code: &Redemption, keyword: &str) -> bool {
    let k = keyword.trim().to_lowercase();
    k.is_empty() || code.id.to_string() == k || code.name.to_lowercase().contains(&k)
}

/// One page of the codes matching `keyword`.
pub async fn search(
    state: &AppState,
    keyword: String,
    page: PageQuery,
) -> Result<(Vec<Redemption>, u64), ConsoleError> {
    Ok(state
        .store
        .read(move |rtx| {
            redemptions::search(rtx, |c| matches(c, &keyword), page.offset(), page.size())
        })
        .await?)
}

/// Changes a code's name and quota (only while unused), or only its status.
/// Audited (`redemption.update`): name, quota and status before and after, never the code.
pub async fn update(
    state: &AppState,
    input: RedemptionInput,
    status_only: bool,
    auditor: super::audit::Auditor,
) -> Result<Redemption, ConsoleError> {
    let id = input
        .id
        .ok_or_else(|| ConsoleError::of(ErrorCode::IdRequired))?;
    let status = if status_only {
        match input.status {
            Some(s @ (STATUS_UNUSED | STATUS_DISABLED)) => Some(s),
            Some(_) => {
                return Err(ConsoleError::of(ErrorCode::RedemptionStatusInvalid));
            }
            None => return Err(ConsoleError::of(ErrorCode::StatusRequired)),
        }
    } else {
        None
    };
    let name = input.name.as_deref().map(check_name).transpose()?;
    let quota = input.quota.map(check_quota).transpose()?;
    state
        .store
        .write(move |wtx| {
            let mut code =
                redemptions::get_rw(wtx, id)?.ok_or(ConsoleError::NotFound("redemption code"))?;
            let before = audited(&code);
            if code.status == STATUS_USED {
                return Err(ConsoleError::of(ErrorCode::RedemptionUsedUnchangeable));
            }
            if let Some(status) = status {
                code.status = status;
            } else {
                if code.status != STATUS_UNUSED {
                    return Err(ConsoleError::of(ErrorCode::RedemptionEditUnusedOnly));
                }
                if let Some(name) = name {
                    code.name = name;
                }
                if let Some(quota) = quota {
                    code.quota = quota;
                }
            }
            redemptions::update(wtx, &code)?;
            let entry = auditor.entry(
                "redemption.update",
                format!("redemption:{}", code.id.0),
                &before,
                &audited(&code),
            );
            tollgate_storage::audit::append(wtx, entry)?;
            Ok(code)
        })
        .await
}

/// What an audit row says of a code: everything an admin can change, never the code itself.
fn audited(code: &Redemption) -> serde_json::Value {
    serde_json::json!({"name": code.name, "quota": code.quota.0, "status": code.status})
}

/// Deletes a code.
pub async fn delete(state: &AppState, id: RedemptionId) -> Result<(), ConsoleError> {
    state
        .store
        .write(move |wtx| redemptions::delete(wtx, id))
        .await?
        .ok_or(ConsoleError::NotFound("redemption code"))?;
    Ok(())
}

/// Deletes every disabled or used code; returns how many.
pub async fn delete_invalid(state: &AppState) -> Result<u64, ConsoleError> {
    Ok(state.store.write(redemptions::delete_invalid).await?)
}

/// Redeems `key` for `user`: credits the code's quota exactly once and writes the top-up log
/// row in the same transaction. Returns the quota added.
pub async fn redeem(state: &AppState, user: &User, key: &str) -> Result<i64, ConsoleError> {
    let key = key.trim().to_ascii_lowercase();
    if key.is_empty() {
        return Err(ConsoleError::of(ErrorCode::RedemptionCodeRequired));
    }
    let options = state.options.current();
    let (per_unit, in_currency) = (
        options.int("QuotaPerUnit"),
        options.flag("DisplayInCurrencyEnabled"),
    );
    let (user_id, username, group) = (user.id, user.username.clone(), user.group.clone());
    let now = now_unix();
    let code = state
        .quota
        .credit_with(user_id, move |wtx| {
            let code = match redemptions::redeem(wtx, &key, user_id, now)? {
                Ok(code) => code,
                Err(RedeemRefusal::Invalid) => return Err(ConsoleError::RedemptionInvalid),
                Err(RedeemRefusal::AlreadyUsed) => return Err(ConsoleError::RedemptionUsed),
            };
            let log = LogEntry {
                created_at: now,
                log_type: LOG_TOPUP,
                user_id,
                username,
                group,
                quota: code.quota.0,
                content: format!(
                    "redeemed code #{} ({}) for {}",
                    code.id,
                    code.name,
                    format_quota(code.quota.0, per_unit, in_currency)
                ),
                ..LogEntry::default()
            };
            let credit = Credit {
                amount: code.quota.0,
                log,
            };
            Ok((code, Some(credit)))
        })
        .await?;
    tracing::info!(user = %user.id, code = %code.id, quota = %code.quota, "redemption code redeemed");
    Ok(code.quota.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quota_formats_as_money_or_units() {
        assert_eq!(format_quota(100_000, 500_000, true), "$0.20");
        assert_eq!(format_quota(500_000_000, 500_000, true), "$1000.00");
        assert_eq!(format_quota(100_000, 500_000, false), "100000");
    }

    #[test]
    fn keys_are_32_hex_characters() {
        let key = new_key();
        assert_eq!(key.len(), 32);
        assert!(
            key.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(new_key(), key);
    }

    #[test]
    fn names_are_1_to_20_characters() {
        assert!(check_name("").is_err());
        assert!(check_name("   ").is_err());
        assert_eq!(check_name(" 兑换码 ").ok().as_deref(), Some("兑换码"));
        assert!(check_name(&"码".repeat(20)).is_ok());
        assert!(check_name(&"码".repeat(21)).is_err());
    }
}
