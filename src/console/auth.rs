//! Sign-in and sign-out: POST /api/user/login (per-IP limit, bot check), GET /api/user/logout.

use axum::Router;
use axum::extract::{Query, State};
use axum::routing::{get, post};
use axum_extra::extract::SignedCookieJar;
use axum_extra::extract::cookie::Key;

use super::service::login::{self, LoginRequest};
use super::service::session;
use super::service::turnstile::{self, TurnstileQuery};
use super::service::user_view::UserView;
use crate::error::ConsoleError;
use crate::http::client_ip::Limited;
use crate::http::envelope::{Envelope, done, ok};
use crate::http::extract::ApiJson;
use crate::state::AppState;

/// Authentication routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/user/login", post(login_user))
        .route("/api/user/logout", get(logout_user))
}

async fn login_user(
    State(state): State<AppState>,
    Limited(ip): Limited,
    Query(bot): Query<TurnstileQuery>,
    jar: SignedCookieJar<Key>,
    ApiJson(req): ApiJson<LoginRequest>,
) -> Result<(SignedCookieJar<Key>, Envelope<UserView>), ConsoleError> {
    turnstile::check(&state, &bot.turnstile, ip).await?;
    let user = login::verify(&state, req).await?;
    let jar = jar.add(session::cookie(user.id, state.config.secure_cookie));
    Ok((jar, ok(UserView::from(&user))))
}

async fn logout_user(jar: SignedCookieJar<Key>) -> (SignedCookieJar<Key>, Envelope<()>) {
    (jar.remove(session::removal()), done(""))
}
