//! Personal settings (the user acting on their own account): profile and password, account
//! deletion, system access token, invite code and earnings transfer, notification settings,
//! usable groups, email binding.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tollgate_actors::options::OptionsSnapshot;
use tollgate_actors::quota::Credit;
use tollgate_storage::logs::{LOG_SYSTEM, LogEntry};
use tollgate_storage::users::{self, ROLE_ROOT, User};
use tollgate_storage::{Quota, UserId};

use super::accounts::{check_email, new_aff_code, validate_password};
use super::mail_codes::{self, PURPOSE_VERIFY};
use super::reauth::{self, Proof};
use super::redemptions::format_quota;
use super::secrets::{random_alnum, sha256_hex};
use crate::clock::now_unix;
use crate::error::{ConsoleError, ErrorCode};
use crate::http::extract::Session;
use crate::state::AppState;

/// Length of a system access token.
const ACCESS_TOKEN_LEN: usize = 32;

/// Loads the user, applies `change`, and stores the result, in one transaction.
async fn modify<T: Send + 'static>(
    state: &AppState,
    id: UserId,
    change: impl FnOnce(&mut User) -> Result<T, ConsoleError> + Send + 'static,
) -> Result<T, ConsoleError> {
    let (out, user) = state
        .store
        .write(move |wtx| {
            let mut user = users::get_rw(wtx, id)?
                .filter(|u| u.deleted_at.is_none())
                .ok_or(ConsoleError::NotLoggedIn)?;
            let out = change(&mut user)?;
            users::update(wtx, &user)?;
            Ok::<_, ConsoleError>((out, user))
        })
        .await?;
    state.users.upsert(&user);
    Ok(out)
}

/// PUT /api/user/self body.
#[derive(Debug, Deserialize)]
pub struct UpdateSelf {
    /// New display name.
    #[serde(default)]
    pub display_name: Option<String>,
    /// New password (needs `original_password`).
    #[serde(default)]
    pub password: Option<String>,
    /// Current password.
    #[serde(default)]
    pub original_password: Option<String>,
}

/// Changes the display name and/or the password.
pub async fn update_self(
    state: &AppState,
    user: &User,
    req: UpdateSelf,
) -> Result<(), ConsoleError> {
    let new_hash = match req.password.filter(|p| !p.is_empty()) {
        Some(new) => {
            let original = req.original_password.unwrap_or_default();
            if original.is_empty() {
                return Err(ConsoleError::of(ErrorCode::OriginalPasswordRequired));
            }
            if original == new {
                return Err(ConsoleError::of(ErrorCode::NewPasswordSame));
            }
            validate_password(&new)?;
            if !state
                .hasher
                .verify(original, Some(user.password_hash.clone()))
                .await?
            {
                return Err(ConsoleError::of(ErrorCode::OriginalPasswordWrong));
            }
            Some(state.hasher.hash(new).await?)
        }
        None => None,
    };
    let display_name = req.display_name.map(|d| d.trim().to_owned());
    if display_name
        .as_ref()
        .is_some_and(|d| d.chars().count() > 20)
    {
        return Err(ConsoleError::of(ErrorCode::DisplayNameTooLong));
    }
    modify(state, user.id, move |u| {
        if let Some(d) = display_name.filter(|d| !d.is_empty()) {
            u.display_name = d;
        }
        if let Some(h) = new_hash {
            u.password_hash = h;
        }
        Ok(())
    })
    .await
}

/// Deregisters the account (soft delete) once `proof` confirms it is the owner
/// ([`reauth::confirm`]). The super admin cannot delete themselves.
pub async fn delete_self(
    state: &AppState,
    session: &Session,
    proof: Proof,
) -> Result<(), ConsoleError> {
    let user = &session.user;
    if user.role >= ROLE_ROOT {
        return Err(ConsoleError::of(ErrorCode::RootCannotBeDeleted));
    }
    reauth::confirm(state, session, proof).await?;
    modify(state, user.id, |u| {
        u.deleted_at = Some(now_unix());
        u.access_token_hash = None;
        Ok(())
    })
    .await
}

/// Issues a new system access token (replacing the old one) and returns it once.
pub async fn issue_access_token(state: &AppState, user: &User) -> Result<String, ConsoleError> {
    let token = random_alnum(ACCESS_TOKEN_LEN);
    let hash = sha256_hex(&token);
    modify(state, user.id, move |u| {
        u.access_token_hash = Some(hash);
        Ok(())
    })
    .await?;
    Ok(token)
}

/// The user's invite code (users created before invite codes existed get one now).
pub async fn aff_code(state: &AppState, user: &User) -> Result<String, ConsoleError> {
    if !user.aff_code.is_empty() {
        return Ok(user.aff_code.clone());
    }
    let id = user.id;
    state
        .store
        .write(move |wtx| {
            let mut u = users::get_rw(wtx, id)?.ok_or(ConsoleError::NotLoggedIn)?;
            if u.aff_code.is_empty() {
                u.aff_code = new_aff_code(wtx)?;
                users::update(wtx, &u)?;
            }
            Ok(u.aff_code)
        })
        .await
}

/// Moves `amount` of invite earnings into the balance: the earnings, the balance and the log
/// row change in one transaction. The minimum is one QuotaPerUnit (US$1).
pub async fn transfer_aff(state: &AppState, user: &User, amount: i64) -> Result<(), ConsoleError> {
    let options = state.options.current();
    let min = options.int("QuotaPerUnit");
    if amount < min {
        return Err(ConsoleError::with_args(
            ErrorCode::TransferBelowMinimum,
            [min.to_string()],
        ));
    }
    let in_currency = options.flag("DisplayInCurrencyEnabled");
    let id = user.id;
    let updated = state
        .quota
        .credit_with(id, move |wtx| {
            let mut u = users::get_rw(wtx, id)?
                .filter(|u| u.deleted_at.is_none())
                .ok_or(ConsoleError::NotLoggedIn)?;
            if u.aff_quota.0 < amount {
                return Err(ConsoleError::of(ErrorCode::AffQuotaInsufficient));
            }
            u.aff_quota = u
                .aff_quota
                .checked_sub(Quota(amount))
                .ok_or_else(|| ConsoleError::Internal("quota arithmetic overflowed".into()))?;
            users::update(wtx, &u)?;
            let log = LogEntry {
                created_at: now_unix(),
                log_type: LOG_SYSTEM,
                user_id: id,
                username: u.username.clone(),
                group: u.group.clone(),
                quota: amount,
                content: format!(
                    "transferred {} of invite earnings to the balance",
                    format_quota(amount, min, in_currency)
                ),
                ..LogEntry::default()
            };
            Ok((u, Some(Credit { amount, log })))
        })
        .await?;
    state.users.upsert(&updated);
    Ok(())
}

/// Notification and pricing preferences (the user's `setting` JSON).
#[derive(Debug, Default, Clone, PartialEq, Deserialize, Serialize)]
pub struct UserSetting {
    /// "email" or "webhook".
    #[serde(default)]
    pub notify_type: String,
    /// Balance below which a reminder is sent (quota units).
    #[serde(default)]
    pub quota_warning_threshold: f64,
    /// https URL that receives webhook reminders.
    #[serde(default)]
    pub webhook_url: String,
    /// Sent as `Authorization: Bearer <secret>` with webhooks, and the key of their
    /// `X-Webhook-Signature` HMAC. Never shown back.
    #[serde(default)]
    pub webhook_secret: String,
    /// Where email reminders go (defaults to the account's email).
    #[serde(default)]
    pub notification_email: String,
    /// Accept models without a price (billed at zero).
    #[serde(default)]
    pub accept_unset_model_ratio_model: bool,
}

/// Validates and stores the settings. An empty webhook secret keeps the stored one.
pub async fn update_setting(
    state: &AppState,
    user: &User,
    mut new: UserSetting,
) -> Result<(), ConsoleError> {
    match new.notify_type.as_str() {
        "" => new.notify_type = "email".into(),
        "email" | "webhook" => {}
        _ => {
            return Err(ConsoleError::of(ErrorCode::NotifyTypeInvalid));
        }
    }
    if !new.quota_warning_threshold.is_finite() || new.quota_warning_threshold < 0.0 {
        return Err(ConsoleError::of(ErrorCode::WarningThresholdInvalid));
    }
    new.webhook_url = new.webhook_url.trim().to_owned();
    if new.notify_type == "webhook"
        && !crate::reminder::webhook::url_allowed(
            &new.webhook_url,
            state.config.webhook_allow_loopback_http,
        )
    {
        return Err(ConsoleError::of(ErrorCode::WebhookNotHttps));
    }
    if !new.notification_email.trim().is_empty() {
        new.notification_email =
            check_email(&new.notification_email, &OptionsSnapshot::defaults())?;
    }
    modify(state, user.id, move |u| {
        if new.webhook_secret.is_empty() {
            let old: UserSetting = serde_json::from_str(&u.setting).unwrap_or_default();
            new.webhook_secret = old.webhook_secret;
        }
        u.setting = serde_json::to_string(&new)
            .map_err(|e| ConsoleError::Internal(format!("encoding settings: {e}")))?;
        Ok(())
    })
    .await
}

/// The setting JSON as shown to the user: the webhook secret is replaced by whether one is set.
pub fn setting_for_display(stored: &str) -> String {
    let mut setting: UserSetting = serde_json::from_str(stored).unwrap_or_default();
    let has_secret = !setting.webhook_secret.is_empty();
    setting.webhook_secret = String::new();
    let mut value = serde_json::to_value(&setting).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        map.insert("webhook_secret_set".into(), has_secret.into());
    }
    value.to_string()
}

/// One selectable group.
#[derive(Debug, Serialize)]
pub struct GroupInfo {
    /// Description from UserUsableGroups.
    pub desc: String,
    /// Ratio from GroupRatio (1 when unset).
    pub ratio: f64,
}

/// GET /api/user/self/groups: the groups this user may pick for a token — none when the admin
/// set no user-selectable groups (`UserUsableGroups` empty), so the token editor disables its
/// group selector (spec 02 §5) rather than offer the user's own group as a "choice".
pub fn selectable_groups(state: &AppState, user: &User) -> BTreeMap<String, GroupInfo> {
    let options = state.options.current();
    let usable: BTreeMap<String, String> =
        serde_json::from_str(options.text("UserUsableGroups")).unwrap_or_default();
    if usable.is_empty() {
        return BTreeMap::new();
    }
    usable_groups(state, user)
}

/// The groups this user may use: the selectable ones (`UserUsableGroups`) and their own.
pub fn usable_groups(state: &AppState, user: &User) -> BTreeMap<String, GroupInfo> {
    let options = state.options.current();
    let usable: BTreeMap<String, String> =
        serde_json::from_str(options.text("UserUsableGroups")).unwrap_or_default();
    let ratios: BTreeMap<String, f64> =
        serde_json::from_str(options.text("GroupRatio")).unwrap_or_default();
    let mut groups: BTreeMap<String, GroupInfo> = usable
        .into_iter()
        .map(|(name, desc)| {
            let ratio = ratios.get(&name).copied().unwrap_or(1.0);
            (name, GroupInfo { desc, ratio })
        })
        .collect();
    groups
        .entry(user.group.clone())
        .or_insert_with(|| GroupInfo {
            desc: user.group.clone(),
            ratio: ratios.get(&user.group).copied().unwrap_or(1.0),
        });
    groups
}

/// GET /api/user/models: every model some enabled channel serves in a group this user may use
/// (their own group or a selectable one), sorted.
pub fn usable_models(state: &AppState, user: &User) -> Vec<String> {
    let table = state.channel_pool.table().load();
    let mut models: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for group in usable_groups(state, user).keys() {
        models.extend(table.models_in(group).into_iter().map(str::to_owned));
    }
    models.into_iter().collect()
}

/// GET /api/oauth/email/bind: binds a verified address to the account.
pub async fn bind_email(
    state: &AppState,
    user: &User,
    email: &str,
    code: &str,
) -> Result<(), ConsoleError> {
    if email.trim().is_empty() {
        return Err(ConsoleError::of(ErrorCode::EmailRequired));
    }
    if code.trim().is_empty() {
        return Err(ConsoleError::of(ErrorCode::VerificationCodeRequired));
    }
    let email = check_email(email, &state.options.current())?;
    if !mail_codes::consume(state, PURPOSE_VERIFY, &email, code).await? {
        return Err(ConsoleError::of(ErrorCode::VerificationCodeInvalid));
    }
    modify(state, user.id, move |u| {
        u.email = email;
        Ok(())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webhook_secret_is_never_displayed() {
        let stored =
            r#"{"notify_type":"webhook","webhook_url":"https://x","webhook_secret":"s3cr3t"}"#;
        let shown = setting_for_display(stored);
        assert!(!shown.contains("s3cr3t"), "{shown}");
        assert!(shown.contains(r#""webhook_secret_set":true"#), "{shown}");
    }
}
