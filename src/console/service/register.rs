//! Registration (POST /api/user/register): the admin's switches, the account rules, email
//! verification, and invite rewards credited in the same transaction as the new account.

use serde::Deserialize;
use tollgate_storage::Quota;
use tollgate_storage::users::{self, NewUser, ROLE_COMMON, User};

use super::accounts::{check_email, new_aff_code, validate_password, validate_username};
use super::mail_codes::{self, PURPOSE_VERIFY};
use crate::clock::now_unix;
use crate::error::ConsoleError;
use crate::state::AppState;

/// POST /api/user/register body.
#[derive(Debug, Deserialize)]
pub struct RegisterRequest {
    /// Login name (≤ 12 characters).
    #[serde(default)]
    pub username: String,
    /// Password (8–20 characters).
    #[serde(default)]
    pub password: String,
    /// Confirmation; when sent it must equal `password`.
    #[serde(default)]
    pub password2: String,
    /// Email (required when email verification is on).
    #[serde(default)]
    pub email: String,
    /// Code mailed by GET /api/verification.
    #[serde(default)]
    pub verification_code: String,
    /// Inviter's code.
    #[serde(default)]
    pub aff_code: String,
}

/// Creates the account, or says which rule refused it.
pub async fn register(state: &AppState, req: RegisterRequest) -> Result<User, ConsoleError> {
    let options = state.options.current();
    if options.flag("SelfUseModeEnabled") {
        return Err(ConsoleError::Disabled(
            "registration is not available in self-use mode",
        ));
    }
    if !options.flag("RegisterEnabled") {
        return Err(ConsoleError::Disabled(
            "the administrator has closed new registrations",
        ));
    }
    if !options.flag("PasswordRegisterEnabled") {
        return Err(ConsoleError::Disabled(
            "the administrator has turned off registration with a password",
        ));
    }
    let username = validate_username(&req.username)?;
    validate_password(&req.password)?;
    if !req.password2.is_empty() && req.password2 != req.password {
        return Err(ConsoleError::Invalid(
            "the two passwords do not match".into(),
        ));
    }
    let lookup = username.clone();
    let taken = state
        .store
        .read(move |rtx| users::find_by_username(rtx, &lookup))
        .await?
        .is_some();
    if taken {
        return Err(ConsoleError::Conflict("username"));
    }
    let email = if options.flag("EmailVerificationEnabled") {
        if req.email.trim().is_empty() || req.verification_code.trim().is_empty() {
            return Err(ConsoleError::Invalid(
                "email and verification code are required".into(),
            ));
        }
        let email = check_email(&req.email, &options)?;
        if !mail_codes::consume(state, PURPOSE_VERIFY, &email, &req.verification_code).await? {
            return Err(ConsoleError::CodeInvalid(
                "the verification code is wrong or has expired",
            ));
        }
        email
    } else {
        String::new()
    };
    let hash = state.hasher.hash(req.password).await?;
    let for_new = Quota(options.int("QuotaForNewUser"));
    let for_invitee = Quota(options.int("QuotaForInvitee"));
    let for_inviter = Quota(options.int("QuotaForInviter"));
    let aff_code = req.aff_code.trim().to_owned();
    let user = state
        .store
        .write(move |wtx| {
            let inviter = if aff_code.is_empty() {
                None
            } else {
                users::find_by_aff_code_rw(wtx, &aff_code)?.filter(|u| u.deleted_at.is_none())
            };
            let quota = match inviter {
                Some(_) => for_new.checked_add(for_invitee).ok_or(overflow())?,
                None => for_new,
            };
            let user = users::insert(
                wtx,
                NewUser {
                    username,
                    display_name: String::new(),
                    password_hash: hash,
                    email,
                    role: ROLE_COMMON,
                    group: "default".into(),
                    quota,
                    aff_code: new_aff_code(wtx)?,
                    inviter_id: inviter.as_ref().map_or(0, |i| i.id.0),
                    created_at: now_unix(),
                },
            )?;
            if let Some(mut inviter) = inviter {
                inviter.aff_count = inviter.aff_count.saturating_add(1);
                inviter.aff_quota = inviter
                    .aff_quota
                    .checked_add(for_inviter)
                    .ok_or(overflow())?;
                inviter.aff_history_quota = inviter
                    .aff_history_quota
                    .checked_add(for_inviter)
                    .ok_or(overflow())?;
                users::update(wtx, &inviter)?;
            }
            Ok::<_, ConsoleError>(user)
        })
        .await?;
    tracing::info!(user = %user.id, invited_by = user.inviter_id, "user registered");
    Ok(user)
}

fn overflow() -> ConsoleError {
    ConsoleError::Internal("quota arithmetic overflowed".into())
}
