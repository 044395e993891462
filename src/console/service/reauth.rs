//! Proving again who you are before an action that takes over or destroys an account: starting
//! two-factor setup and deleting the account (turning two-factor off asks for a code of its
//! own). A stolen session cookie alone must not be enough for them. Accepted proofs:
//!
//! - a current two-factor code or a recovery code (when two-factor is on; counted by the
//!   per-account guess limit);
//! - the account's password (when it has one);
//! - for an account made by third-party sign-up, with no password and no two-factor: a session
//!   signed in (through the provider) within the last [`RECENT_SIGN_IN_SECS`], so the owner
//!   re-signs in with the provider and retries.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use serde::Deserialize;

use super::{session, two_factor};
use crate::error::{ConsoleError, ErrorCode};
use crate::http::extract::Session;
use crate::state::AppState;

/// How recent a third-party sign-in must be to confirm an action, in seconds (5 minutes).
pub const RECENT_SIGN_IN_SECS: i64 = 300;

/// What the caller offers as proof (the request body; both fields optional).
#[derive(Debug, Default, Deserialize)]
pub struct Proof {
    /// The account's password.
    #[serde(default)]
    pub password: String,
    /// A two-factor code or a recovery code.
    #[serde(default)]
    pub code: String,
}

/// The body as a [`Proof`]; an empty body is an empty proof (older clients sent none).
#[derive(Debug, Default)]
pub struct ProofBody(pub Proof);

impl<S: Send + Sync> FromRequest<S> for ProofBody {
    type Rejection = ConsoleError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|e| ConsoleError::with_args(ErrorCode::BodyInvalid, [e.body_text()]))?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(ProofBody::default());
        }
        serde_json::from_slice(&bytes)
            .map(ProofBody)
            .map_err(|e| ConsoleError::with_args(ErrorCode::ProofInvalid, [e.to_string()]))
    }
}

/// Checks `proof` for `session`'s user (see the module header).
pub async fn confirm(
    state: &AppState,
    session: &Session,
    proof: Proof,
) -> Result<(), ConsoleError> {
    let user = &session.user;
    let code = proof.code.trim();
    if !code.is_empty() {
        return two_factor::prove(state, user.id, code.to_owned()).await;
    }
    let has_password = !user.password_hash.is_empty();
    if !proof.password.is_empty() {
        let hash = has_password.then(|| user.password_hash.clone());
        if state.hasher.verify(proof.password, hash).await? {
            return Ok(());
        }
        return Err(ConsoleError::of(ErrorCode::ReauthPasswordWrong));
    }
    let two_factor_on = two_factor::is_enabled(state, user.id).await?;
    if !has_password && !two_factor_on {
        let recent = session
            .signed_in_at
            .is_some_and(|at| session::now(state).saturating_sub(at) <= RECENT_SIGN_IN_SECS);
        if recent {
            return Ok(());
        }
        return Err(ConsoleError::of(ErrorCode::ReauthSignInAgain));
    }
    Err(ConsoleError::of(if two_factor_on {
        ErrorCode::ReauthPasswordOrCode
    } else {
        ErrorCode::ReauthPassword
    }))
}
