//! The session cookie: `session=<user id>.<issued at>.<generation>.<nonce>`, signed with the
//! session key (the random nonce tells two sessions issued in the same second apart), HttpOnly, SameSite=Strict, 30 days, `Secure` when the console is served over https.
//!
//! Sessions are revocable: the cookie carries the user's session generation at sign-in, and
//! [`crate::http::extract::Session`] honours it only while it is still the stored one
//! (`users::session_generation`, read in the same transaction as the user). Logout, a password
//! change or reset, a ban, a deletion and a role change raise the generation, so every cookie
//! of that user stops working at once, on every device. The user record is re-read on every
//! request, so the cookie carries identity only.

use axum_extra::extract::cookie::{Cookie, SameSite};
use tollgate_storage::users::{self, User};
use tollgate_storage::{StorageError, UserId};

use crate::error::ConsoleError;
use crate::state::AppState;

/// Name of the session cookie.
pub const SESSION_COOKIE: &str = "session";

/// Lifetime of a session, in seconds (30 days).
pub const SESSION_MAX_AGE_SECS: i64 = 30 * 24 * 3600;

/// What a verified session cookie says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionClaims {
    /// The logged-in user.
    pub user_id: UserId,
    /// Unix seconds of the login.
    pub issued_at: i64,
    /// The user's session generation at the login (0 for cookies issued before generations).
    pub generation: u64,
    /// A random number naming this session (0 for cookies issued before nonces).
    pub nonce: u64,
}

impl SessionClaims {
    /// Parses a (signature-checked) cookie value; `None` when malformed or expired at `now`
    /// (unix seconds of the server's [`Clock`](crate::clock::Clock), see [`now`]).
    pub fn parse(value: &str, now: i64) -> Option<SessionClaims> {
        let mut parts = value.split('.');
        let user_id = parts.next()?.parse().ok()?;
        let issued_at = parts.next()?.parse().ok()?;
        let generation = match parts.next() {
            Some(g) => g.parse().ok()?,
            None => 0,
        };
        let nonce = match parts.next() {
            Some(n) => n.parse().ok()?,
            None => 0,
        };
        if parts.next().is_some() {
            return None;
        }
        let claims = SessionClaims {
            user_id,
            issued_at,
            generation,
            nonce,
        };
        let age = now.checked_sub(claims.issued_at)?;
        (0..=SESSION_MAX_AGE_SECS).contains(&age).then_some(claims)
    }
}

/// The time sessions are issued and aged by: the server's [`Clock`](crate::clock::Clock) (the
/// system's outside tests), so a test can age a sign-in without sleeping.
pub fn now(state: &AppState) -> i64 {
    state.config.clock.now_unix()
}

/// Whether session cookies are marked `Secure`: when the operator says so, or when the
/// configured ServerAddress is https (the console is then served over TLS).
pub fn secure(state: &AppState) -> bool {
    state.config.secure_cookie
        || state
            .options
            .current()
            .text("ServerAddress")
            .get(..8)
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"))
}

/// A fresh session cookie for `user_id` under its current session generation.
pub async fn issue(state: &AppState, user_id: UserId) -> Result<Cookie<'static>, ConsoleError> {
    let generation = state
        .store
        .read(move |rtx| users::session_generation(rtx, user_id))
        .await?;
    Ok(cookie(user_id, generation, secure(state), now(state)))
}

/// The user of a verified cookie, if its session is still live (the user exists and the
/// cookie's generation is the stored one). One read transaction.
pub async fn current_user(
    state: &AppState,
    claims: SessionClaims,
) -> Result<Option<User>, StorageError> {
    Ok(lookup(state, claims)
        .await?
        .and_then(|(user, live)| live.then_some(user)))
}

/// The user a verified cookie names, and whether its session is still live. One read
/// transaction.
pub async fn lookup(
    state: &AppState,
    claims: SessionClaims,
) -> Result<Option<(User, bool)>, StorageError> {
    let id = claims.user_id;
    state
        .store
        .read(move |rtx| {
            let live = users::session_generation(rtx, id)? == claims.generation;
            Ok(users::get(rtx, id)?.map(|user| (user, live)))
        })
        .await
}

/// Ends every session of `user_id` (logout).
pub async fn end_all(state: &AppState, user_id: UserId) -> Result<(), ConsoleError> {
    state
        .store
        .write(move |wtx| users::end_sessions(wtx, user_id))
        .await?;
    Ok(())
}

/// A session cookie for `user_id` under `generation`.
fn cookie(user_id: UserId, generation: u64, secure: bool, now: i64) -> Cookie<'static> {
    let nonce: u64 = rand::random();
    Cookie::build((
        SESSION_COOKIE,
        format!("{user_id}.{now}.{generation}.{nonce}"),
    ))
    .path("/")
    .http_only(true)
    .same_site(SameSite::Strict)
    .secure(secure)
    .max_age(cookie::time::Duration::seconds(SESSION_MAX_AGE_SECS))
    .build()
}

/// The cookie that clears the session.
pub fn removal() -> Cookie<'static> {
    Cookie::build((SESSION_COOKIE, "")).path("/").build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::now_unix;

    #[test]
    fn claims_roundtrip_and_expiry() {
        let now = now_unix();
        let parsed = SessionClaims::parse(&format!("7.{now}.3"), now).expect("fresh");
        assert_eq!(parsed.user_id, UserId(7));
        assert_eq!(parsed.generation, 3);
        let old_style = SessionClaims::parse(&format!("7.{now}"), now).expect("no generation");
        assert_eq!(old_style.generation, 0);
        assert!(
            SessionClaims::parse(&format!("7.{}", now - SESSION_MAX_AGE_SECS - 1), now).is_none()
        );
        assert!(
            SessionClaims::parse(&format!("7.{}", now + 3600), now).is_none(),
            "future iat"
        );
        assert!(SessionClaims::parse("x.1", now).is_none());
        assert!(SessionClaims::parse("7", now).is_none());
        assert!(SessionClaims::parse(&format!("7.{now}.x"), now).is_none());
        assert_eq!(
            SessionClaims::parse(&format!("7.{now}.1.42"), now).map(|c| c.nonce),
            Some(42)
        );
        assert!(SessionClaims::parse(&format!("7.{now}.1.x"), now).is_none());
        assert!(SessionClaims::parse(&format!("7.{now}.1.2.3"), now).is_none());
    }

    #[test]
    fn the_cookie_carries_the_generation() {
        let now = now_unix();
        let c = cookie(UserId(4), 9, true, now);
        let claims = SessionClaims::parse(c.value(), now).expect("parses");
        assert_eq!((claims.user_id, claims.generation), (UserId(4), 9));
        let again =
            SessionClaims::parse(cookie(UserId(4), 9, true, now).value(), now).expect("parses");
        assert_ne!(
            claims.nonce, again.nonce,
            "two sessions of one second differ"
        );
        assert_eq!(c.secure(), Some(true));
    }
}
