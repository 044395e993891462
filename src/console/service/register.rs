//! Registration (POST /api/user/register): the admin's switches, the account rules, email
//! verification — and [`create_account`], the one registration path every sign-up takes
//! (password form and third-party providers), which credits the rewards in the same
//! transaction as the new account.

use serde::Deserialize;
use tollgate_actors::options::OptionsSnapshot;
use tollgate_storage::logs::{self, LOG_SYSTEM, LogEntry};
use tollgate_storage::users::{self, NewUser, Provider, ROLE_COMMON, User};
use tollgate_storage::{Quota, StorageError, WriteTransaction};

use super::accounts::{check_email, new_aff_code, validate_password, validate_username};
use super::mail_codes::{self, PURPOSE_VERIFY};
use super::redemptions::format_quota;
use crate::clock::now_unix;
use crate::error::{ConsoleError, ErrorCode};
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
    registration_open(&options)?;
    if !options.flag("PasswordRegisterEnabled") {
        return Err(ConsoleError::of(ErrorCode::PasswordRegisterDisabled));
    }
    let username = validate_username(&req.username)?;
    validate_password(&req.password)?;
    if !req.password2.is_empty() && req.password2 != req.password {
        return Err(ConsoleError::of(ErrorCode::PasswordsDiffer));
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
            return Err(ConsoleError::of(ErrorCode::RegisterNeedsEmailCode));
        }
        let email = check_email(&req.email, &options)?;
        if !mail_codes::consume(state, PURPOSE_VERIFY, &email, &req.verification_code).await? {
            return Err(ConsoleError::of(ErrorCode::VerificationCodeInvalid));
        }
        email
    } else {
        String::new()
    };
    let hash = state.hasher.hash(req.password).await?;
    let signup = Signup {
        username: Username::Exact(username),
        display_name: String::new(),
        password_hash: hash,
        email,
        aff_code: req.aff_code,
        identity: None,
    };
    let rewards = Rewards::from_options(&options);
    let user = state
        .store
        .write(move |wtx| create_account(wtx, signup, &rewards, now_unix()))
        .await?;
    tracing::info!(user = %user.id, invited_by = user.inviter_id, "user registered");
    Ok(user)
}

/// Refuses when the admin has closed registration (of any kind) or the site is in self-use
/// mode.
pub fn registration_open(options: &OptionsSnapshot) -> Result<(), ConsoleError> {
    if options.flag("SelfUseModeEnabled") {
        return Err(ConsoleError::of(ErrorCode::RegisterSelfUse));
    }
    if !options.flag("RegisterEnabled") {
        return Err(ConsoleError::of(ErrorCode::RegisterDisabled));
    }
    Ok(())
}

/// How a new account's username is chosen.
#[derive(Debug, Clone)]
pub enum Username {
    /// Exactly this one (already validated); a taken name is refused.
    Exact(String),
    /// The name the provider gave when it is a valid username and free, else
    /// `<provider>_<n>` with the first free `n` from the number of users on.
    FromProvider {
        /// The provider's login name, if any.
        name: String,
        /// The provider (its name prefixes generated usernames).
        provider: Provider,
    },
}

/// A new account, however it signs up (password form or a third-party provider).
#[derive(Debug, Clone)]
pub struct Signup {
    /// The username rule.
    pub username: Username,
    /// Display name ("" = the username).
    pub display_name: String,
    /// argon2id PHC string; "" for an account without a password (it cannot sign in with one).
    pub password_hash: String,
    /// Checked email address, or "" for none. When taken, the account is refused (password
    /// sign-up) — providers pass only a free one, see [`create_account`].
    pub email: String,
    /// The inviter's code as given ("" = none; an unknown code is ignored).
    pub aff_code: String,
    /// The third-party identity to bind to the new account.
    pub identity: Option<(Provider, String)>,
}

/// The rewards of a registration, read from the options once.
#[derive(Debug, Clone, Copy)]
pub struct Rewards {
    /// QuotaForNewUser.
    pub for_new: Quota,
    /// QuotaForInvitee (added when the code names an inviter).
    pub for_invitee: Quota,
    /// QuotaForInviter (credited to the inviter's pending invite earnings).
    pub for_inviter: Quota,
    /// QuotaPerUnit and DisplayInCurrencyEnabled, to word the rewards' log rows.
    pub display: (i64, bool),
}

impl Rewards {
    /// The rewards configured in `options`.
    pub fn from_options(options: &OptionsSnapshot) -> Rewards {
        Rewards {
            for_new: Quota(options.int("QuotaForNewUser")),
            for_invitee: Quota(options.int("QuotaForInvitee")),
            for_inviter: Quota(options.int("QuotaForInviter")),
            display: (
                options.int("QuotaPerUnit"),
                options.flag("DisplayInCurrencyEnabled"),
            ),
        }
    }
}

/// The one registration path, inside the caller's write transaction: creates the account,
/// binds its third-party identity, and credits the new-user and invite rewards, so either all
/// of it is stored or none.
pub fn create_account(
    wtx: &WriteTransaction,
    signup: Signup,
    rewards: &Rewards,
    now: i64,
) -> Result<User, ConsoleError> {
    let aff_code = signup.aff_code.trim();
    let inviter = if aff_code.is_empty() {
        None
    } else {
        users::find_by_aff_code_rw(wtx, aff_code)?.filter(|u| u.deleted_at.is_none())
    };
    let invitee_reward = if inviter.is_some() {
        rewards.for_invitee
    } else {
        Quota::ZERO
    };
    let quota = rewards
        .for_new
        .checked_add(invitee_reward)
        .ok_or_else(overflow)?;
    let username = match signup.username {
        Username::Exact(name) => name,
        Username::FromProvider { name, provider } => provider_username(wtx, &name, provider)?,
    };
    let mut user = users::insert(
        wtx,
        NewUser {
            username,
            display_name: signup.display_name,
            password_hash: signup.password_hash,
            email: signup.email,
            role: ROLE_COMMON,
            group: "default".into(),
            quota,
            aff_code: new_aff_code(wtx)?,
            inviter_id: inviter.as_ref().map_or(0, |i| i.id.0),
            created_at: now,
        },
    )?;
    if let Some((provider, external_id)) = signup.identity {
        *provider.bound_mut(&mut user) = external_id;
        users::update(wtx, &user)?;
    }
    if let Some(mut inviter) = inviter {
        inviter.aff_count = inviter.aff_count.saturating_add(1);
        inviter.aff_quota = inviter
            .aff_quota
            .checked_add(rewards.for_inviter)
            .ok_or_else(overflow)?;
        inviter.aff_history_quota = inviter
            .aff_history_quota
            .checked_add(rewards.for_inviter)
            .ok_or_else(overflow)?;
        users::update(wtx, &inviter)?;
        if rewards.for_inviter.0 > 0 {
            let (per_unit, in_currency) = rewards.display;
            let earned = format_quota(rewards.for_inviter.0, per_unit, in_currency);
            let content = format!("invited {}: {earned} of invite earnings", user.username);
            logs::insert(wtx, system_row(&inviter, rewards.for_inviter.0, content))?;
        }
    }
    let (per_unit, in_currency) = rewards.display;
    log_credits(
        wtx,
        &user,
        &[
            (rewards.for_new.0, "new user reward"),
            (invitee_reward.0, "invite code reward"),
        ],
        per_unit,
        in_currency,
    )?;
    Ok(user)
}

/// Writes, in the new account's transaction, a system log row for each non-zero credit it was
/// opened with (`(amount, what)`), so every balance change has its row.
pub(super) fn log_credits(
    wtx: &WriteTransaction,
    user: &User,
    credits: &[(i64, &str)],
    per_unit: i64,
    in_currency: bool,
) -> Result<(), StorageError> {
    for (amount, what) in credits.iter().filter(|(amount, _)| *amount != 0) {
        let content = format!("{what}: {}", format_quota(*amount, per_unit, in_currency));
        logs::insert(wtx, system_row(user, *amount, content))?;
    }
    Ok(())
}

fn system_row(user: &User, quota: i64, content: String) -> LogEntry {
    LogEntry {
        created_at: user.created_at,
        log_type: LOG_SYSTEM,
        user_id: user.id,
        username: user.username.clone(),
        group: user.group.clone(),
        quota,
        content,
        ..LogEntry::default()
    }
}

/// The provider's name when it is a valid, free username without `@` (an email-like username
/// would shadow someone's email at password sign-in), else `<provider>_<n>`.
fn provider_username(
    wtx: &WriteTransaction,
    name: &str,
    provider: Provider,
) -> Result<String, ConsoleError> {
    if let Ok(name) = validate_username(name)
        && !name.contains('@')
        && users::find_by_username_rw(wtx, &name)?.is_none()
    {
        return Ok(name);
    }
    let mut n = users::count_rw(wtx)?.saturating_add(1);
    loop {
        let candidate = format!("{}_{n}", provider.name());
        if users::find_by_username_rw(wtx, &candidate)?.is_none() {
            return Ok(candidate);
        }
        n = n.saturating_add(1);
    }
}

/// A reward sum beyond i64 (a misconfiguration): refused, nothing is stored.
fn overflow() -> ConsoleError {
    ConsoleError::Internal("quota arithmetic overflowed".into())
}
