//! The state of one third-party sign-in (authorization-code flow): a random `state` (CSRF), an
//! OIDC `nonce` and a PKCE verifier, held in a short-lived signed HttpOnly cookie (a guest has
//! no session), and registered server-side so each state is redeemed at most once.

use std::sync::Arc;

use axum_extra::extract::cookie::{Cookie, SameSite};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use dashmap::DashMap;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::console::service::secrets::random_alnum;
use crate::error::{ConsoleError, ErrorCode};

/// Name of the state cookie.
pub const STATE_COOKIE: &str = "oauth_state";
/// Path of the state cookie: only the sign-in routes see it.
const COOKIE_PATH: &str = "/api/oauth";
/// How long a sign-in may take from the button to the callback, in seconds.
pub const STATE_TTL_SECS: i64 = 600;
/// Most sign-ins in progress at once (memory bound; expired ones are pruned first).
const MAX_PENDING: usize = 100_000;
/// Pending states are pruned of expired entries once the registry holds this many.
const PRUNE_AT: usize = 1_024;

/// One sign-in in progress, as the state cookie carries it (signed, so it cannot be forged;
/// not secret from the browser it was issued to).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// The `state` parameter sent to the provider.
    pub state: String,
    /// The OIDC nonce the ID token must carry.
    pub nonce: String,
    /// The PKCE code verifier (its S256 challenge goes to the provider).
    pub verifier: String,
    /// The inviter's code given to `/api/oauth/state?aff=`.
    pub aff: String,
    /// The provider the sign-in is for ("" when the caller did not say).
    pub provider: String,
    /// The callback address sent to the provider (the token request repeats it).
    pub redirect_uri: String,
    /// The signed-in user who started the flow (a bind), 0 for a sign-in.
    pub bind_user: i64,
    /// Unix seconds after which the state is refused.
    pub expires_at: i64,
}

impl Pending {
    /// A fresh state for `provider`.
    pub fn new(provider: &str, aff: &str, redirect_uri: String, bind_user: i64, now: i64) -> Self {
        Pending {
            state: random_alnum(32),
            nonce: random_alnum(32),
            verifier: random_alnum(64),
            aff: aff.trim().chars().take(32).collect(),
            provider: provider.to_owned(),
            redirect_uri,
            bind_user,
            expires_at: now.saturating_add(STATE_TTL_SECS),
        }
    }

    /// The PKCE S256 challenge of the verifier (RFC 7636 §4.2).
    pub fn code_challenge(&self) -> String {
        URL_SAFE_NO_PAD.encode(Sha256::digest(self.verifier.as_bytes()))
    }

    /// The cookie carrying this state (the jar signs it).
    pub fn cookie(&self, secure: bool) -> Result<Cookie<'static>, ConsoleError> {
        let json = serde_json::to_vec(self)
            .map_err(|e| ConsoleError::Internal(format!("encoding the sign-in state: {e}")))?;
        Ok(Cookie::build((STATE_COOKIE, URL_SAFE_NO_PAD.encode(json)))
            .path(COOKIE_PATH)
            .http_only(true)
            // Lax: the browser comes back from the provider with a top-level navigation.
            .same_site(SameSite::Lax)
            .secure(secure)
            .max_age(cookie::time::Duration::seconds(STATE_TTL_SECS))
            .build())
    }

    /// Decodes a (signature-checked) cookie value.
    fn from_cookie(value: &str) -> Option<Pending> {
        let json = URL_SAFE_NO_PAD.decode(value).ok()?;
        serde_json::from_slice(&json).ok()
    }
}

/// The cookie that clears the state.
pub fn removal() -> Cookie<'static> {
    Cookie::build((STATE_COOKIE, "")).path(COOKIE_PATH).build()
}

/// States issued and not yet redeemed: state → expiry. Makes every state single-use even when
/// a browser (or an attacker holding its cookie) sends the callback twice. Also remembers the
/// signed payloads already used of flows without a server-issued state (the Telegram widget),
/// so each is used once.
#[derive(Clone, Default)]
pub struct StateRegistry {
    /// Pending states and their expiry (unix seconds).
    pending: Arc<DashMap<String, i64>>,
    /// Payloads used (a digest of each) → when they expire anyway (unix seconds).
    spent: Arc<DashMap<String, i64>>,
}

impl StateRegistry {
    /// Spends the signed payload `digest`, good until `expires_at`: false when it was spent
    /// before (a replay).
    pub fn spend(&self, digest: &str, expires_at: i64, now: i64) -> Result<bool, ConsoleError> {
        if self.spent.len() >= PRUNE_AT {
            self.spent.retain(|_, expires| *expires >= now);
        }
        if self.spent.len() >= MAX_PENDING {
            return Err(ConsoleError::TooManyRequests);
        }
        Ok(self.spent.insert(digest.to_owned(), expires_at).is_none())
    }

    /// Records a newly issued state.
    pub fn issue(&self, pending: &Pending, now: i64) -> Result<(), ConsoleError> {
        if self.pending.len() >= PRUNE_AT {
            self.pending.retain(|_, expires| *expires >= now);
        }
        if self.pending.len() >= MAX_PENDING {
            return Err(ConsoleError::TooManyRequests);
        }
        self.pending
            .insert(pending.state.clone(), pending.expires_at);
        Ok(())
    }

    /// Redeems the callback's `state` against the browser's cookie: it must be the state issued
    /// to this browser, for this provider, not expired, and not redeemed before. The state is
    /// consumed whatever happens next.
    pub fn redeem(
        &self,
        cookie_value: Option<&str>,
        state: &str,
        provider: &str,
        now: i64,
    ) -> Result<Pending, ConsoleError> {
        let pending = cookie_value
            .and_then(Pending::from_cookie)
            .ok_or(ConsoleError::of(ErrorCode::OauthStateMissing))?;
        if state.is_empty() || !bool::from(pending.state.as_bytes().ct_eq(state.as_bytes())) {
            return Err(ConsoleError::of(ErrorCode::OauthStateMismatch));
        }
        if !pending.provider.is_empty() && pending.provider != provider {
            return Err(ConsoleError::of(ErrorCode::OauthStateOtherProvider));
        }
        let registered = self.pending.remove(&pending.state);
        if pending.expires_at < now {
            return Err(ConsoleError::of(ErrorCode::OauthStateExpired));
        }
        if registered.is_none() {
            return Err(ConsoleError::of(ErrorCode::OauthStateUsed));
        }
        Ok(pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cookie_value(p: &Pending) -> String {
        p.cookie(false).expect("cookie").value().to_owned()
    }

    #[test]
    fn a_payload_is_spent_once() {
        let registry = StateRegistry::default();
        assert!(registry.spend("tg:abc", 400, 100).expect("room"));
        assert!(!registry.spend("tg:abc", 400, 101).expect("room"), "replay");
        assert!(registry.spend("tg:def", 400, 101).expect("room"));
    }

    #[test]
    fn a_state_is_redeemed_once() {
        let registry = StateRegistry::default();
        let p = Pending::new("oidc", "AFF", "http://x/oauth/oidc".into(), 0, 100);
        registry.issue(&p, 100).expect("issued");
        let value = cookie_value(&p);
        let got = registry
            .redeem(Some(&value), &p.state, "oidc", 101)
            .expect("first");
        assert_eq!(got, p);
        let again = registry.redeem(Some(&value), &p.state, "oidc", 102);
        assert!(
            matches!(again, Err(ConsoleError::Coded { code, .. }) if code == ErrorCode::OauthStateUsed)
        );
    }

    #[test]
    fn foreign_missing_expired_and_wrong_provider_are_refused() {
        let registry = StateRegistry::default();
        let p = Pending::new("github", "", String::new(), 0, 100);
        registry.issue(&p, 100).expect("issued");
        let value = cookie_value(&p);
        let refused = |r: Result<Pending, ConsoleError>, what: &str| match r {
            Err(e @ ConsoleError::Coded { .. }) => assert!(e.to_string().contains(what), "{e}"),
            other => panic!("expected a refusal ({what}), got {other:?}"),
        };
        refused(registry.redeem(None, &p.state, "github", 101), "missing");
        refused(
            registry.redeem(Some(&value), "other", "github", 101),
            "does not match",
        );
        refused(
            registry.redeem(Some(&value), &p.state, "oidc", 101),
            "another provider",
        );
        refused(
            registry.redeem(Some(&value), &p.state, "github", 100 + STATE_TTL_SECS + 1),
            "expired",
        );
    }

    #[test]
    fn the_challenge_is_s256_of_the_verifier() {
        // RFC 7636 appendix B.
        let mut p = Pending::new("oidc", "", String::new(), 0, 0);
        p.verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk".into();
        assert_eq!(
            p.code_challenge(),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }
}
