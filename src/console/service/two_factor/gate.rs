//! Server-side, short-lived two-factor state: sign-ins waiting for their code, and recent
//! re-verifications of a session (for revealing a channel key).
//!
//! A password (or third-party) sign-in of an account with two-factor on creates no session; it
//! registers a [`PendingLogin`] under a random token carried in a signed HttpOnly cookie. The
//! code route takes the pending sign-in out of the registry for the length of the attempt, so it
//! completes at most once even when two attempts race; a wrong code puts it back with one
//! attempt fewer, and after [`MAX_ATTEMPTS`] wrong codes, or [`PENDING_TTL_SECS`], it is gone.
//! Nothing here survives a restart, which only means signing in again.

use std::sync::Arc;

use axum_extra::extract::cookie::{Cookie, SameSite};
use dashmap::DashMap;
use tollgate_storage::UserId;

use super::guesses::GuessLimiter;
use crate::clock::Clock;
use crate::console::service::secrets::random_alnum;
use crate::error::{ConsoleError, ErrorCode};

/// Name of the cookie carrying a pending sign-in's token.
pub const PENDING_COOKIE: &str = "pending_2fa";
/// Path of that cookie: only the sign-in routes see it.
const COOKIE_PATH: &str = "/api/user/login";
/// How long a sign-in may wait for its code, in seconds.
pub const PENDING_TTL_SECS: i64 = 300;
/// Wrong codes a pending sign-in survives (the next one ends it).
pub const MAX_ATTEMPTS: u32 = 5;
/// How long a re-verification (POST /api/verify) lasts, in seconds.
pub const VERIFIED_TTL_SECS: i64 = 300;
/// Entries are pruned of expired ones once a map holds this many.
const PRUNE_AT: usize = 1_024;
/// Most entries a map holds (memory bound; expired ones are pruned first).
const MAX_ENTRIES: usize = 100_000;

/// A sign-in that passed its first factor and waits for the code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingLogin {
    /// Who is signing in.
    pub user_id: UserId,
    /// The user's session generation at the first factor: a password change, ban or role
    /// change meanwhile ends the pending sign-in too.
    pub generation: u64,
    /// Unix seconds after which the code is refused.
    pub expires_at: i64,
    /// Wrong codes so far.
    pub attempts: u32,
}

/// Pending sign-ins, recent re-verifications and the per-account guess limit (cheap to
/// clone; one per server).
#[derive(Clone, Default)]
pub struct TwoFactorGate {
    /// Every second-factor code check of an account passes here first.
    pub guesses: GuessLimiter,
    /// Token → pending sign-in.
    logins: Arc<DashMap<String, PendingLogin>>,
    /// Session key ([`crate::http::extract::Session::key`]) → verified until (unix seconds).
    verified: Arc<DashMap<String, i64>>,
}

impl TwoFactorGate {
    /// A gate whose guess limit measures time by `clock`.
    pub fn new(clock: Clock) -> TwoFactorGate {
        TwoFactorGate {
            guesses: GuessLimiter::new(clock),
            ..TwoFactorGate::default()
        }
    }

    /// Registers a pending sign-in of `user_id`; returns its token.
    pub fn begin(
        &self,
        user_id: UserId,
        generation: u64,
        now: i64,
    ) -> Result<String, ConsoleError> {
        if self.logins.len() >= PRUNE_AT {
            self.logins.retain(|_, p| p.expires_at >= now);
        }
        if self.logins.len() >= MAX_ENTRIES {
            return Err(ConsoleError::TooManyRequests);
        }
        let token = random_alnum(40);
        self.logins.insert(
            token.clone(),
            PendingLogin {
                user_id,
                generation,
                expires_at: now.saturating_add(PENDING_TTL_SECS),
                attempts: 0,
            },
        );
        Ok(token)
    }

    /// Takes the pending sign-in of `token` out for one attempt (see the module header).
    pub fn take(&self, token: Option<&str>, now: i64) -> Result<PendingLogin, ConsoleError> {
        let pending = token
            .and_then(|t| self.logins.remove(t))
            .map(|(_, p)| p)
            .ok_or(ConsoleError::of(ErrorCode::TwoFactorSigninMissing))?;
        if pending.expires_at < now {
            return Err(ConsoleError::of(ErrorCode::TwoFactorSigninExpired));
        }
        Ok(pending)
    }

    /// Puts back a pending sign-in after a wrong code, unless that was its last attempt;
    /// returns whether it is still there.
    pub fn retry(&self, token: &str, mut pending: PendingLogin) -> bool {
        pending.attempts = pending.attempts.saturating_add(1);
        if pending.attempts >= MAX_ATTEMPTS {
            return false;
        }
        self.logins.insert(token.to_owned(), pending);
        true
    }

    /// Records that the session `key` proved a second factor at `now`.
    pub fn verified(&self, key: &str, now: i64) -> Result<i64, ConsoleError> {
        if self.verified.len() >= PRUNE_AT {
            self.verified.retain(|_, until| *until >= now);
        }
        if self.verified.len() >= MAX_ENTRIES {
            return Err(ConsoleError::TooManyRequests);
        }
        let until = now.saturating_add(VERIFIED_TTL_SECS);
        self.verified.insert(key.to_owned(), until);
        Ok(until)
    }

    /// Whether the session `key` proved a second factor within [`VERIFIED_TTL_SECS`].
    pub fn is_verified(&self, key: &str, now: i64) -> bool {
        self.verified.get(key).is_some_and(|until| *until >= now)
    }
}

/// The cookie carrying a pending sign-in's token (the jar signs it).
pub fn cookie(token: String, secure: bool) -> Cookie<'static> {
    Cookie::build((PENDING_COOKIE, token))
        .path(COOKIE_PATH)
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(secure)
        .max_age(cookie::time::Duration::seconds(PENDING_TTL_SECS))
        .build()
}

/// The cookie that clears it.
pub fn removal() -> Cookie<'static> {
    Cookie::build((PENDING_COOKIE, ""))
        .path(COOKIE_PATH)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_sign_in_is_taken_once_and_expires() {
        let gate = TwoFactorGate::default();
        let token = gate.begin(UserId(7), 2, 1_000).expect("begun");
        let pending = gate.take(Some(&token), 1_001).expect("taken");
        assert_eq!((pending.user_id, pending.generation), (UserId(7), 2));
        assert!(gate.take(Some(&token), 1_002).is_err(), "single use");
        assert!(gate.take(None, 1_002).is_err(), "no cookie");

        let late = gate.begin(UserId(7), 2, 1_000).expect("begun");
        assert!(
            gate.take(Some(&late), 1_000 + PENDING_TTL_SECS + 1)
                .is_err(),
            "expired"
        );
        assert!(gate.take(Some(&late), 1_001).is_err(), "and gone");
    }

    #[test]
    fn wrong_codes_use_up_the_attempts() {
        let gate = TwoFactorGate::default();
        let token = gate.begin(UserId(1), 0, 0).expect("begun");
        for _ in 0..MAX_ATTEMPTS - 1 {
            let p = gate.take(Some(&token), 1).expect("still there");
            assert!(gate.retry(&token, p));
        }
        let p = gate.take(Some(&token), 1).expect("last attempt");
        assert!(!gate.retry(&token, p), "the last wrong code ends it");
        assert!(gate.take(Some(&token), 1).is_err());
    }

    #[test]
    fn a_verification_lasts_five_minutes_for_its_session_only() {
        let gate = TwoFactorGate::default();
        assert!(!gate.is_verified("s:1", 0));
        gate.verified("s:1", 100).expect("recorded");
        assert!(gate.is_verified("s:1", 100 + VERIFIED_TTL_SECS));
        assert!(!gate.is_verified("s:1", 101 + VERIFIED_TTL_SECS));
        assert!(!gate.is_verified("s:2", 100), "another session");
    }
}
