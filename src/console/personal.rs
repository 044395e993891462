//! The signed-in user's own account: /api/user/self, token, aff, aff_transfer, setting,
//! self/groups, and email binding.

use std::collections::BTreeMap;

use crate::http::api::{Access, ApiRouter, get, post, put};
use axum::extract::{Query, State};
use axum_extra::extract::SignedCookieJar;
use axum_extra::extract::cookie::Key;
use serde::Deserialize;

use super::service::personal::{self, GroupInfo, UpdateSelf, UserSetting};
use super::service::reauth::ProofBody;
use super::service::session;
use super::service::user_view::UserView;
use crate::error::ConsoleError;
use crate::http::client_ip::Limited;
use crate::http::envelope::{Envelope, done, ok};
use crate::http::extract::{ApiJson, Session};
use crate::state::AppState;

/// Personal routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route(
            "/api/user/self",
            get(Access::User, get_self)
                .put(Access::User, update_self)
                .delete(Access::User, delete_self),
        )
        .route("/api/user/token", get(Access::User, issue_access_token))
        .route("/api/user/aff", get(Access::User, get_aff_code))
        .route("/api/user/aff_transfer", post(Access::User, transfer_aff))
        .route("/api/user/setting", put(Access::User, update_setting))
        .route("/api/user/self/groups", get(Access::User, self_groups))
        .route("/api/user/models", get(Access::User, usable_models))
        .route("/api/oauth/email/bind", get(Access::User, bind_email))
}

async fn get_self(session: Session) -> Envelope<UserView> {
    ok(UserView::from(&session.user))
}

async fn update_self(
    State(state): State<AppState>,
    session: Session,
    jar: SignedCookieJar<Key>,
    ApiJson(req): ApiJson<UpdateSelf>,
) -> Result<(SignedCookieJar<Key>, Envelope<()>), ConsoleError> {
    let new_password = req.password.as_deref().is_some_and(|p| !p.is_empty());
    personal::update_self(&state, &session.user, req).await?;
    // A new password ended every session of the user, this one too; the browser that changed
    // it (knowing the old and the new password) gets a fresh one.
    let jar = if new_password {
        jar.add(session::issue(&state, session.user.id).await?)
    } else {
        jar
    };
    Ok((jar, done("updated")))
}

/// Asks for the password, a two-factor code or a recent third-party sign-in first
/// ([`crate::console::service::reauth`]).
async fn delete_self(
    State(state): State<AppState>,
    Limited(_ip): Limited,
    session: Session,
    jar: SignedCookieJar<Key>,
    ProofBody(proof): ProofBody,
) -> Result<(SignedCookieJar<Key>, Envelope<()>), ConsoleError> {
    personal::delete_self(&state, &session, proof).await?;
    tracing::info!(user = %session.user.id, "account deleted by its owner");
    Ok((jar.remove(session::removal()), done("account deleted")))
}

async fn issue_access_token(
    State(state): State<AppState>,
    session: Session,
) -> Result<Envelope<String>, ConsoleError> {
    Ok(ok(
        personal::issue_access_token(&state, &session.user).await?
    ))
}

async fn get_aff_code(
    State(state): State<AppState>,
    session: Session,
) -> Result<Envelope<String>, ConsoleError> {
    Ok(ok(personal::aff_code(&state, &session.user).await?))
}

/// POST /api/user/aff_transfer body.
#[derive(Debug, Deserialize)]
struct TransferRequest {
    quota: i64,
}

async fn transfer_aff(
    State(state): State<AppState>,
    session: Session,
    ApiJson(req): ApiJson<TransferRequest>,
) -> Result<Envelope<()>, ConsoleError> {
    personal::transfer_aff(&state, &session.user, req.quota).await?;
    Ok(done("transferred"))
}

async fn update_setting(
    State(state): State<AppState>,
    session: Session,
    ApiJson(setting): ApiJson<UserSetting>,
) -> Result<Envelope<()>, ConsoleError> {
    personal::update_setting(&state, &session.user, setting).await?;
    Ok(done("settings updated"))
}

async fn self_groups(
    State(state): State<AppState>,
    session: Session,
) -> Envelope<BTreeMap<String, GroupInfo>> {
    ok(personal::selectable_groups(&state, &session.user))
}

async fn usable_models(State(state): State<AppState>, session: Session) -> Envelope<Vec<String>> {
    ok(personal::usable_models(&state, &session.user))
}

/// `?email=&code=`.
#[derive(Debug, Deserialize)]
struct BindQuery {
    #[serde(default)]
    email: String,
    #[serde(default)]
    code: String,
}

async fn bind_email(
    State(state): State<AppState>,
    session: Session,
    Query(q): Query<BindQuery>,
) -> Result<Envelope<()>, ConsoleError> {
    personal::bind_email(&state, &session.user, &q.email, &q.code).await?;
    Ok(done("email bound"))
}
