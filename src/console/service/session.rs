//! The session cookie: `session=<user id>.<issued at>`, signed with the session key, HttpOnly,
//! SameSite=Strict, 30 days. The user record is re-read on every request (see
//! [`crate::http::extract::Session`]), so the cookie carries identity only.

use axum_extra::extract::cookie::{Cookie, SameSite};
use tollgate_storage::UserId;

use crate::clock::now_unix;

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
}

impl SessionClaims {
    /// Parses a (signature-checked) cookie value; `None` when malformed or expired.
    pub fn parse(value: &str) -> Option<SessionClaims> {
        let (id, at) = value.split_once('.')?;
        let claims = SessionClaims {
            user_id: id.parse().ok()?,
            issued_at: at.parse().ok()?,
        };
        let age = now_unix().checked_sub(claims.issued_at)?;
        (0..=SESSION_MAX_AGE_SECS).contains(&age).then_some(claims)
    }
}

/// A fresh session cookie for `user_id`.
pub fn cookie(user_id: UserId, secure: bool) -> Cookie<'static> {
    Cookie::build((SESSION_COOKIE, format!("{user_id}.{}", now_unix())))
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

    #[test]
    fn claims_roundtrip_and_expiry() {
        let now = now_unix();
        let parsed = SessionClaims::parse(&format!("7.{now}")).expect("fresh");
        assert_eq!(parsed.user_id, UserId(7));
        assert!(SessionClaims::parse(&format!("7.{}", now - SESSION_MAX_AGE_SECS - 1)).is_none());
        assert!(
            SessionClaims::parse(&format!("7.{}", now + 3600)).is_none(),
            "future iat"
        );
        assert!(SessionClaims::parse("x.1").is_none());
        assert!(SessionClaims::parse("7").is_none());
    }
}
