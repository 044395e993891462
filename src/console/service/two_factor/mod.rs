//! Two-factor (TOTP) sign-in: turning it on (a secret to scan, confirmed with a code, then
//! recovery codes shown once), off (with a code), new recovery codes (with a code), the second
//! step of a sign-in, and re-verification of a session before a channel key is revealed.
//!
//! Every code is checked and its use recorded in one write transaction ([`code::check`] and
//! [`code::apply`]), so a TOTP step or a recovery code is accepted once even under concurrent
//! requests. Turning two-factor on or off (by the user or an admin) raises the user's session
//! generation in the same transaction: every other session of the user ends.
//!
//! Every check of an enabled second factor passes the per-account guess limit first
//! ([`guesses`], via [`limited`]).

pub mod code;
pub mod gate;
pub mod guesses;
pub mod signin;

use std::future::Future;

use serde::Serialize;
use tollgate_storage::two_factor::{self, TwoFactor};
use tollgate_storage::users::{self, User};
use tollgate_storage::{StorageError, UserId};

use crate::clock::now_unix;
use crate::console::service::audit::Auditor;
use crate::console::service::users_admin::may_act_on;
use crate::error::{ConsoleError, ErrorCode};
use crate::state::AppState;

/// GET /api/user/2fa/status answer.
#[derive(Debug, Serialize)]
pub struct Status {
    /// Whether sign-in asks for a code.
    pub enabled: bool,
    /// Whether a setup was started and not confirmed yet.
    pub pending: bool,
    /// Recovery codes not used yet (0 when off).
    pub backup_codes_remaining: usize,
}

/// POST /api/user/2fa/setup answer: what the authenticator app needs. Not active until
/// confirmed with a code ([`enable`]).
#[derive(Debug, Serialize)]
pub struct Setup {
    /// The secret, base32, for typing into the app by hand.
    pub secret: String,
    /// The `otpauth://` URI (what the QR code encodes).
    pub qr_code_data: String,
}

/// New recovery codes, shown once.
#[derive(Debug, Serialize)]
pub struct RecoveryCodes {
    /// The codes, `abcde-fghjk`; each works once.
    pub backup_codes: Vec<String>,
}

/// GET /api/user/2fa/stats answer.
#[derive(Debug, Serialize)]
pub struct Stats {
    /// Users with two-factor sign-in on.
    pub enabled_users: u64,
    /// All users.
    pub total_users: u64,
}

/// The refusal of a wrong, used or replayed code.
const WRONG_CODE: ConsoleError = ConsoleError::of(ErrorCode::TwoFactorCodeWrong);

/// The refusal when two-factor sign-in is not on.
const NOT_ON: ConsoleError = ConsoleError::of(ErrorCode::TwoFactorOff);

fn now_secs() -> u64 {
    u64::try_from(now_unix()).unwrap_or(0)
}

/// `user`'s two-factor status.
pub async fn status(state: &AppState, user: UserId) -> Result<Status, ConsoleError> {
    let record = state
        .store
        .read(move |rtx| two_factor::get(rtx, user))
        .await?;
    Ok(match record {
        Some(r) if r.enabled => Status {
            enabled: true,
            pending: false,
            backup_codes_remaining: r.recovery.len(),
        },
        Some(_) => Status {
            enabled: false,
            pending: true,
            backup_codes_remaining: 0,
        },
        None => Status {
            enabled: false,
            pending: false,
            backup_codes_remaining: 0,
        },
    })
}

/// Whether `user` has two-factor sign-in on.
pub async fn is_enabled(state: &AppState, user: UserId) -> Result<bool, ConsoleError> {
    Ok(state
        .store
        .read(move |rtx| two_factor::enabled(rtx, user))
        .await?)
}

/// Starts (or restarts) turning two-factor on: a fresh secret, stored but not active.
pub async fn setup(state: &AppState, user: &User) -> Result<Setup, ConsoleError> {
    let secret = code::new_secret();
    let issuer = {
        let options = state.options.current();
        let name = options.text("SystemName").trim().to_owned();
        if name.is_empty() {
            "Tollgate".to_owned()
        } else {
            name
        }
    };
    let qr_code_data = code::uri(&secret, &issuer, &user.username)
        .ok_or_else(|| ConsoleError::Internal("building the otpauth URI".into()))?;
    let record = TwoFactor {
        user_id: user.id,
        secret: secret.clone(),
        enabled: false,
        recovery: Vec::new(),
        last_step: 0,
        created_at: now_unix(),
        enabled_at: 0,
    };
    state
        .store
        .write(move |wtx| {
            if two_factor::get_rw(wtx, record.user_id)?.is_some_and(|r| r.enabled) {
                return Err(ConsoleError::of(ErrorCode::TwoFactorAlreadyOnSetup));
            }
            two_factor::put(wtx, &record)?;
            Ok(())
        })
        .await?;
    Ok(Setup {
        secret,
        qr_code_data,
    })
}

/// Confirms the setup with a code from the app: two-factor is on from now, every other
/// session of the user ends, and the recovery codes are returned (the only time they are).
pub async fn enable(
    state: &AppState,
    user: UserId,
    code: String,
) -> Result<RecoveryCodes, ConsoleError> {
    let (shown, digests) = code::new_recovery_codes();
    let now = now_secs();
    state
        .store
        .write(move |wtx| {
            let mut record = two_factor::get_rw(wtx, user)?
                .ok_or(ConsoleError::of(ErrorCode::TwoFactorSetupFirst))?;
            if record.enabled {
                return Err(ConsoleError::of(ErrorCode::TwoFactorAlreadyOn));
            }
            let accepted = code::check(&record, &code, now).ok_or(WRONG_CODE)?;
            if !matches!(accepted, code::Accepted::Totp(_)) {
                return Err(WRONG_CODE);
            }
            code::apply(&mut record, accepted);
            record.enabled = true;
            record.enabled_at = now_unix();
            record.recovery = digests;
            two_factor::put(wtx, &record)?;
            users::end_sessions(wtx, user)?;
            Ok(())
        })
        .await?;
    tracing::info!(user = %user, "two-factor authentication turned on; other sessions ended");
    Ok(RecoveryCodes {
        backup_codes: shown,
    })
}

/// Turns two-factor off with a current code or a recovery code; every other session ends.
pub async fn disable(state: &AppState, user: UserId, code: String) -> Result<(), ConsoleError> {
    let now = now_secs();
    let check = state.store.write(move |wtx| {
        let record = enabled_record(wtx, user)?;
        code::check(&record, &code, now).ok_or(WRONG_CODE)?;
        two_factor::remove(wtx, user)?;
        users::end_sessions(wtx, user)?;
        Ok::<_, ConsoleError>(())
    });
    limited(state, user, check).await?;
    tracing::info!(user = %user, "two-factor authentication turned off; other sessions ended");
    Ok(())
}

/// Replaces the recovery codes (the old ones stop working), with a code.
pub async fn regenerate(
    state: &AppState,
    user: UserId,
    code: String,
) -> Result<RecoveryCodes, ConsoleError> {
    let (shown, digests) = code::new_recovery_codes();
    let now = now_secs();
    let check = state.store.write(move |wtx| {
        let mut record = enabled_record(wtx, user)?;
        let accepted = code::check(&record, &code, now).ok_or(WRONG_CODE)?;
        code::apply(&mut record, accepted);
        record.recovery = digests;
        two_factor::put(wtx, &record)?;
        Ok::<_, ConsoleError>(())
    });
    limited(state, user, check).await?;
    Ok(RecoveryCodes {
        backup_codes: shown,
    })
}

/// Checks a second factor of `user` (a current code or a recovery code) and records its use.
pub async fn prove(state: &AppState, user: UserId, code: String) -> Result<(), ConsoleError> {
    let now = now_secs();
    let check = state.store.write(move |wtx| {
        let mut record = enabled_record(wtx, user)?;
        let accepted = code::check(&record, &code, now).ok_or(WRONG_CODE)?;
        code::apply(&mut record, accepted);
        two_factor::put(wtx, &record)?;
        Ok(())
    });
    limited(state, user, check).await
}

/// Runs `check`, a check of `user`'s second factor, under the per-account guess limit: refused
/// unchecked while the account waits or is locked; a wrong code that locks it is answered
/// with the lock.
async fn limited<T>(
    state: &AppState,
    user: UserId,
    check: impl Future<Output = Result<T, ConsoleError>>,
) -> Result<T, ConsoleError> {
    let guesses = &state.two_factor.guesses;
    guesses.admit(user)?;
    match check.await {
        Ok(value) => {
            guesses.passed(user);
            Ok(value)
        }
        // A wrong code (any refusal of the code itself) counts as a guess.
        Err(wrong) if wrong.code() == ErrorCode::CodeInvalid => {
            Err(guesses.lock_of(user).unwrap_or(wrong))
        }
        Err(other) => Err(other),
    }
}

fn enabled_record(
    wtx: &tollgate_storage::WriteTransaction,
    user: UserId,
) -> Result<TwoFactor, ConsoleError> {
    match two_factor::get_rw(wtx, user)? {
        Some(r) if r.enabled => Ok(r),
        _ => Err(NOT_ON),
    }
}

/// An admin turns two-factor off for `target` (who lost their device and codes): audited,
/// and every session of the target ends.
pub async fn reset(
    state: &AppState,
    actor: &User,
    target: UserId,
    ip: Option<std::net::IpAddr>,
) -> Result<(), ConsoleError> {
    let auditor = Auditor::user(actor, ip);
    let admin = actor.id;
    let actor = actor.clone();
    state
        .store
        .write(move |wtx| {
            let user = users::get_rw(wtx, target)?.ok_or(ConsoleError::NotFound("user"))?;
            if !may_act_on(&actor, &user) {
                return Err(ConsoleError::of(ErrorCode::CannotChangePeer));
            }
            let was = two_factor::get_rw(wtx, target)?.is_some_and(|r| r.enabled);
            if !was {
                return Err(ConsoleError::of(ErrorCode::TwoFactorNotOnForUser));
            }
            two_factor::remove(wtx, target)?;
            users::end_sessions(wtx, target)?;
            let entry = auditor.entry(
                "user.2fa.reset",
                format!("user:{}", target.0),
                &serde_json::json!({"two_factor": true}),
                &serde_json::json!({"two_factor": false}),
            );
            tollgate_storage::audit::append(wtx, entry)?;
            Ok::<_, ConsoleError>(())
        })
        .await?;
    tracing::warn!(%admin, user = %target, "two-factor authentication reset by an admin");
    Ok(())
}

/// How many users have two-factor on, of how many.
pub async fn stats(state: &AppState) -> Result<Stats, ConsoleError> {
    let (enabled_users, total_users) = state
        .store
        .read(|rtx| Ok::<_, StorageError>((two_factor::count_enabled(rtx)?, users::count(rtx)?)))
        .await?;
    Ok(Stats {
        enabled_users,
        total_users,
    })
}
