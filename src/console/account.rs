//! Public account routes, all behind the per-IP limit and the bot check: registration,
//! verification mail, password reset request and confirmation.

use crate::http::api::{Access, ApiRouter, get, post};
use axum::extract::{Query, State};
use serde::Deserialize;

use super::service::mail_codes;
use super::service::register::{self, RegisterRequest};
use super::service::turnstile::{self, TurnstileQuery};
use crate::error::ConsoleError;
use crate::http::client_ip::Limited;
use crate::http::envelope::{Envelope, done, ok};
use crate::http::extract::ApiJson;
use crate::state::AppState;

/// Account routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route("/api/user/register", post(Access::Public, register_user))
        .route("/api/verification", get(Access::Public, send_verification))
        .route("/api/reset_password", get(Access::Public, send_reset_link))
        .route("/api/user/reset", post(Access::Public, reset_password))
}

async fn register_user(
    State(state): State<AppState>,
    Limited(ip): Limited,
    Query(bot): Query<TurnstileQuery>,
    ApiJson(req): ApiJson<RegisterRequest>,
) -> Result<Envelope<()>, ConsoleError> {
    turnstile::check(&state, &bot.turnstile, ip).await?;
    register::register(&state, req).await?;
    Ok(done("registered"))
}

/// `?email=&turnstile=`.
#[derive(Debug, Deserialize)]
struct EmailQuery {
    #[serde(default)]
    email: String,
    #[serde(default)]
    turnstile: String,
}

async fn send_verification(
    State(state): State<AppState>,
    Limited(ip): Limited,
    Query(q): Query<EmailQuery>,
) -> Result<Envelope<()>, ConsoleError> {
    turnstile::check(&state, &q.turnstile, ip).await?;
    mail_codes::send_verification(&state, &q.email).await?;
    Ok(done(
        "the verification code has been sent, please check your mailbox",
    ))
}

async fn send_reset_link(
    State(state): State<AppState>,
    Limited(ip): Limited,
    Query(q): Query<EmailQuery>,
) -> Result<Envelope<()>, ConsoleError> {
    turnstile::check(&state, &q.turnstile, ip).await?;
    mail_codes::send_reset(&state, &q.email).await?;
    Ok(done(
        "if this address belongs to an account, a reset link has been sent to it",
    ))
}

/// POST /api/user/reset body.
#[derive(Debug, Deserialize)]
struct ResetRequest {
    #[serde(default)]
    email: String,
    #[serde(default)]
    token: String,
}

async fn reset_password(
    State(state): State<AppState>,
    Limited(_ip): Limited,
    ApiJson(req): ApiJson<ResetRequest>,
) -> Result<Envelope<String>, ConsoleError> {
    Ok(ok(mail_codes::confirm_reset(
        &state, &req.email, &req.token,
    )
    .await?))
}
