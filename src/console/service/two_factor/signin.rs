//! The two steps of a sign-in for an account with two-factor on. The first factor (password,
//! or a third-party provider) ends in [`first_factor`]: with two-factor off it issues the
//! session as before; with it on it issues no session, only a pending sign-in
//! ([`super::gate`]) and the answer `{require_2fa: true}`. [`second_factor`] (POST
//! /api/user/login/2fa) completes it with a code or a recovery code.

use axum_extra::extract::SignedCookieJar;
use axum_extra::extract::cookie::Key;
use serde::Serialize;
use tollgate_storage::StorageError;
use tollgate_storage::users::{self, STATUS_ENABLED, User};

use super::gate::{self, PENDING_COOKIE};
use crate::clock::now_unix;
use crate::console::service::session;
use crate::console::service::user_view::UserView;
use crate::error::{ConsoleError, ErrorCode};
use crate::http::envelope::{Envelope, ok};
use crate::state::AppState;

/// What a first factor answers: the signed-in user, or that a code is needed.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum LoginAnswer {
    /// Signed in (the session cookie is set).
    User(Box<UserView>),
    /// A code is needed: POST /api/user/login/2fa (the pending cookie is set).
    TwoFactor {
        /// Always true.
        require_2fa: bool,
    },
}

/// Finishes a first factor of `user` (see the module header).
pub async fn first_factor(
    state: &AppState,
    jar: SignedCookieJar<Key>,
    user: &User,
) -> Result<(SignedCookieJar<Key>, Envelope<LoginAnswer>), ConsoleError> {
    if !super::is_enabled(state, user.id).await? {
        let jar = jar.add(session::issue(state, user.id).await?);
        return Ok((jar, ok(LoginAnswer::User(Box::new(UserView::from(user))))));
    }
    let id = user.id;
    let generation = state
        .store
        .read(move |rtx| users::session_generation(rtx, id))
        .await?;
    let token = state.two_factor.begin(id, generation, now_unix())?;
    let jar = jar.add(gate::cookie(token, session::secure(state)));
    let mut answer = ok(LoginAnswer::TwoFactor { require_2fa: true });
    answer.message =
        "enter the code from your authenticator app (or a recovery code) to finish signing in"
            .into();
    Ok((jar, answer))
}

/// Completes the pending sign-in of this browser with `code`: the session is issued and the
/// pending sign-in is spent.
pub async fn second_factor(
    state: &AppState,
    jar: SignedCookieJar<Key>,
    code: String,
) -> Result<(SignedCookieJar<Key>, Envelope<UserView>), ConsoleError> {
    let token = jar.get(PENDING_COOKIE).map(|c| c.value().to_owned());
    let pending = state.two_factor.take(token.as_deref(), now_unix())?;
    let token = token.unwrap_or_default();
    let id = pending.user_id;
    let (user, generation) = state
        .store
        .read(move |rtx| {
            Ok::<_, StorageError>((users::get(rtx, id)?, users::session_generation(rtx, id)?))
        })
        .await?;
    let user = user
        .filter(|u| u.deleted_at.is_none() && generation == pending.generation)
        .ok_or(ConsoleError::of(ErrorCode::AccountChangedDuringSignin))?;
    if user.status != STATUS_ENABLED {
        return Err(ConsoleError::UserDisabled);
    }
    match super::prove(state, id, code).await {
        Ok(()) => {}
        Err(wrong) if wrong.code() == ErrorCode::CodeInvalid => {
            if state.two_factor.retry(&token, pending) {
                return Err(wrong);
            }
            return Err(ConsoleError::of(ErrorCode::TwoFactorTooManyAttempts));
        }
        // The account must wait before its next code: this sign-in may try again after it
        // (the refused attempt counts as one of its own).
        Err(wait @ ConsoleError::TwoFactorWait { .. }) => {
            state.two_factor.retry(&token, pending);
            return Err(wait);
        }
        Err(other) => return Err(other),
    }
    tracing::info!(user = %id, "signed in with a second factor");
    let jar = jar
        .remove(gate::removal())
        .add(session::issue(state, id).await?);
    Ok((jar, ok(UserView::from(&user))))
}
