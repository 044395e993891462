//! Sign-in and sign-out: POST /api/user/login (per-IP limit, bot check; with two-factor on it
//! only starts the sign-in, see [`signin`]), GET /api/user/logout (ends every session of the
//! user).

use crate::http::api::{Access, ApiRouter, get, post};
use axum::extract::{Query, State};
use axum_extra::extract::SignedCookieJar;
use axum_extra::extract::cookie::Key;

use super::service::login::{self, LoginRequest};
use super::service::session;
use super::service::turnstile::{self, TurnstileQuery};
use super::service::two_factor::signin::{self, LoginAnswer};
use crate::error::ConsoleError;
use crate::http::client_ip::Limited;
use crate::http::envelope::{Envelope, done};
use crate::http::extract::ApiJson;
use crate::state::AppState;

/// Authentication routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route("/api/user/login", post(Access::Public, login_user))
        .route("/api/user/logout", get(Access::Public, logout_user))
}

/// With two-factor on, the password alone issues no session: the answer is
/// `{require_2fa: true}` and POST /api/user/login/2fa follows.
async fn login_user(
    State(state): State<AppState>,
    Limited(ip): Limited,
    Query(bot): Query<TurnstileQuery>,
    jar: SignedCookieJar<Key>,
    ApiJson(req): ApiJson<LoginRequest>,
) -> Result<(SignedCookieJar<Key>, Envelope<LoginAnswer>), ConsoleError> {
    turnstile::check(&state, &bot.turnstile, ip).await?;
    let user = login::verify(&state, req).await?;
    signin::first_factor(&state, jar, &user).await
}

/// Ends every session of the cookie's user (on every device), not just this browser's: a
/// cookie copied elsewhere stops working too. A cookie whose session already ended changes
/// nothing.
async fn logout_user(
    State(state): State<AppState>,
    jar: SignedCookieJar<Key>,
) -> Result<(SignedCookieJar<Key>, Envelope<()>), ConsoleError> {
    let claims = jar
        .get(session::SESSION_COOKIE)
        .and_then(|c| session::SessionClaims::parse(c.value(), session::now(&state)));
    if let Some(claims) = claims
        && session::current_user(&state, claims).await?.is_some()
    {
        session::end_all(&state, claims.user_id).await?;
        tracing::info!(user = %claims.user_id, "signed out; every session ended");
    }
    Ok((jar.remove(session::removal()), done("")))
}
