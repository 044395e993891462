//! Mailed secrets: 6-character verification codes and single-use password-reset links.
//!
//! - A code or link is stored hashed ([`tollgate_storage::codes`]), bound to its purpose and
//!   address, and consumed by its first successful use.
//! - One mail per address per [`RESEND_INTERVAL_SECS`], enforced here on the server.
//! - The reset request answers the same whether or not the address belongs to a user.

use tollgate_storage::codes::{self, OneTimeCode};
use tollgate_storage::users;

use super::accounts::check_email;
use super::secrets::{random_alnum, sha256_hex};
use crate::clock::now_unix;
use crate::error::{ConsoleError, ErrorCode};
use crate::mail;
use crate::state::AppState;

/// Seconds before another mail may go to the same address (spec 01 §9: 30 s countdown).
pub const RESEND_INTERVAL_SECS: i64 = 30;
/// Lifetime of a verification code.
pub const CODE_TTL_SECS: i64 = 10 * 60;
/// Lifetime of a reset link.
pub const RESET_TTL_SECS: i64 = 15 * 60;
/// Length of a verification code.
pub const CODE_LEN: usize = 6;
/// Length of a generated password after a reset.
pub const RESET_PASSWORD_LEN: usize = 12;

/// Purpose of registration / binding codes.
pub const PURPOSE_VERIFY: &str = "verify";
/// Purpose of reset links.
pub const PURPOSE_RESET: &str = "reset";

/// Issues a code for `purpose` and `email`; `Ok(false)` when throttled.
async fn issue(
    state: &AppState,
    purpose: &'static str,
    email: &str,
    secret: &str,
    ttl: i64,
) -> Result<bool, ConsoleError> {
    let now = now_unix();
    let code = OneTimeCode {
        secret_hash: sha256_hex(secret),
        expires_at: now + ttl,
        issued_at: now,
    };
    let email = email.to_owned();
    Ok(state
        .store
        .write(move |wtx| codes::issue(wtx, purpose, &email, code, RESEND_INTERVAL_SECS))
        .await?)
}

/// Checks and consumes a code. Verification codes are typed by people, so they compare
/// case-insensitively (they are issued upper-case); reset tokens compare exactly.
pub async fn consume(
    state: &AppState,
    purpose: &'static str,
    email: &str,
    secret: &str,
) -> Result<bool, ConsoleError> {
    let secret = match purpose {
        PURPOSE_VERIFY => secret.trim().to_uppercase(),
        _ => secret.trim().to_owned(),
    };
    let (email, hash) = (email.to_owned(), sha256_hex(&secret));
    Ok(state
        .store
        .write(move |wtx| codes::consume(wtx, purpose, &email, &hash, now_unix()))
        .await?)
}

/// GET /api/verification: mails a verification code to a valid, unused address.
pub async fn send_verification(state: &AppState, email: &str) -> Result<(), ConsoleError> {
    let options = state.options.current();
    let email = check_email(email, &options)?;
    let lookup = email.clone();
    let taken = state
        .store
        .read(move |rtx| users::find_by_email(rtx, &lookup))
        .await?
        .is_some();
    if taken {
        return Err(ConsoleError::Conflict("email"));
    }
    let code = random_alnum(CODE_LEN).to_uppercase();
    if !issue(state, PURPOSE_VERIFY, &email, &code, CODE_TTL_SECS).await? {
        return Err(ConsoleError::TooManyRequests);
    }
    let system = options.text("SystemName");
    let html = format!(
        "<p>Hello,</p><p>Your {system} verification code is: <strong>{code}</strong></p>\
         <p>It is valid for {} minutes. If you did not ask for it, ignore this mail.</p>",
        CODE_TTL_SECS / 60
    );
    mail::send(
        &options,
        &email,
        &format!("{system} email verification"),
        html,
    )
    .await
}

/// GET /api/reset_password: mails a reset link if the address belongs to a user. The answer
/// is the same either way, so it cannot be used to find out who has an account.
pub async fn send_reset(state: &AppState, email: &str) -> Result<(), ConsoleError> {
    let options = state.options.current();
    let email = email.trim().to_lowercase();
    let lookup = email.clone();
    let user = state
        .store
        .read(move |rtx| users::find_by_email(rtx, &lookup))
        .await?
        .filter(|u| u.deleted_at.is_none());
    if user.is_none() {
        tracing::debug!("password reset requested for an unknown address");
        return Ok(());
    }
    let token = random_alnum(32);
    if !issue(state, PURPOSE_RESET, &email, &token, RESET_TTL_SECS).await? {
        return Err(ConsoleError::TooManyRequests);
    }
    let base = format!("{}/user/reset", options.text("ServerAddress"));
    let link =
        reqwest::Url::parse_with_params(&base, [("email", email.as_str()), ("token", &token)])
            .map_err(|_| ConsoleError::of(ErrorCode::ServerAddressInvalid))?;
    let system = options.text("SystemName");
    let html = format!(
        "<p>Hello,</p><p>You asked to reset your {system} password. Open this link to get a new \
         one:</p><p><a href=\"{link}\">{link}</a></p><p>It is valid for {} minutes and works \
         once. If you did not ask for it, ignore this mail.</p>",
        RESET_TTL_SECS / 60
    );
    mail::send(&options, &email, &format!("{system} password reset"), html).await
}

/// POST /api/user/reset: consumes the link and returns a newly generated password.
pub async fn confirm_reset(
    state: &AppState,
    email: &str,
    token: &str,
) -> Result<String, ConsoleError> {
    let email = email.trim().to_lowercase();
    if email.is_empty() || token.trim().is_empty() {
        return Err(ConsoleError::of(ErrorCode::ResetNeedsEmailAndToken));
    }
    if !consume(state, PURPOSE_RESET, &email, token).await? {
        return Err(ConsoleError::of(ErrorCode::ResetLinkInvalid));
    }
    let password = random_alnum(RESET_PASSWORD_LEN);
    let hash = state.hasher.hash(password.clone()).await?;
    state
        .store
        .write(move |wtx| {
            let mut user = users::find_by_email_rw(wtx, &email)?
                .filter(|u| u.deleted_at.is_none())
                .ok_or(ConsoleError::of(ErrorCode::ResetLinkInvalid))?;
            user.password_hash = hash;
            users::update(wtx, &user)?;
            Ok::<_, ConsoleError>(())
        })
        .await?;
    Ok(password)
}
