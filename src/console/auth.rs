//! Sign-in and sign-out: POST /api/user/login, GET /api/user/logout, GET /api/user/self.

use axum::Router;
use axum::extract::State;
use axum::routing::{get, post};
use axum_extra::extract::SignedCookieJar;
use axum_extra::extract::cookie::Key;

use super::service::login::{self, LoginRequest, UserView};
use super::service::session;
use crate::error::ConsoleError;
use crate::http::envelope::{Envelope, done, ok};
use crate::http::extract::{ApiJson, Session};
use crate::state::AppState;

/// Authentication routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/user/login", post(login_user))
        .route("/api/user/logout", get(logout_user))
        .route("/api/user/self", get(get_self))
}

async fn login_user(
    State(state): State<AppState>,
    jar: SignedCookieJar<Key>,
    ApiJson(req): ApiJson<LoginRequest>,
) -> Result<(SignedCookieJar<Key>, Envelope<UserView>), ConsoleError> {
    let user = login::verify(&state, req).await?;
    let jar = jar.add(session::cookie(user.id, state.config.secure_cookie));
    Ok((jar, ok(UserView::from(&user))))
}

async fn logout_user(jar: SignedCookieJar<Key>) -> (SignedCookieJar<Key>, Envelope<()>) {
    (jar.remove(session::removal()), done(""))
}

async fn get_self(session: Session) -> Envelope<UserView> {
    ok(UserView::from(&session.user))
}
