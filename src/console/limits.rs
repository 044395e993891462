//! Rate-limit routes (P15 item 1): a key's limits for its owner (`GET`/`PUT
//! /api/token/{id}/limits`), a user's and a channel's for an admin (`/api/user/{id}/limits`,
//! `/api/channel/{id}/limits`, the channel's with its per-key `key_limits`). Changes are
//! audited (`token.limits`, `user.limits`, `channel.limits`).

use axum::extract::{Path, State};
use tollgate_storage::{ChannelId, TokenId, UserId};

use super::service::audit::{AuditIp, Auditor};
use super::service::limits::{self, LimitsBody};
use crate::error::ConsoleError;
use crate::http::api::{Access, ApiRouter, Body, get};
use crate::http::envelope::{Envelope, ok};
use crate::http::extract::{AdminSession, ApiJson, Session};
use crate::state::AppState;

/// Rate-limit routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route(
            "/api/token/{id}/limits",
            get(Access::User, get_token_limits)
                .put(Access::User, put_token_limits)
                .body(Body::Limits),
        )
        .route(
            "/api/user/{id}/limits",
            get(Access::Admin, get_user_limits)
                .put(Access::Admin, put_user_limits)
                .body(Body::Limits),
        )
        .route(
            "/api/channel/{id}/limits",
            get(Access::Admin, get_channel_limits)
                .put(Access::Admin, put_channel_limits)
                .body(Body::Limits),
        )
}

async fn get_token_limits(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
) -> Result<Envelope<LimitsBody>, ConsoleError> {
    Ok(ok(
        limits::token_limits(&state, &session.user, TokenId(id)).await?
    ))
}

async fn put_token_limits(
    State(state): State<AppState>,
    session: Session,
    AuditIp(ip): AuditIp,
    Path(id): Path<i64>,
    ApiJson(body): ApiJson<LimitsBody>,
) -> Result<Envelope<LimitsBody>, ConsoleError> {
    let auditor = Auditor::user(&session.user, ip);
    let saved = limits::set_token_limits(&state, &session.user, TokenId(id), body, auditor).await?;
    Ok(ok(saved))
}

async fn get_user_limits(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
    Path(id): Path<i64>,
) -> Result<Envelope<LimitsBody>, ConsoleError> {
    Ok(ok(
        limits::user_limits(&state, &admin.user, UserId(id)).await?
    ))
}

async fn put_user_limits(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
    AuditIp(ip): AuditIp,
    Path(id): Path<i64>,
    ApiJson(body): ApiJson<LimitsBody>,
) -> Result<Envelope<LimitsBody>, ConsoleError> {
    let auditor = Auditor::user(&admin.user, ip);
    let saved = limits::set_user_limits(&state, &admin.user, UserId(id), body, auditor).await?;
    Ok(ok(saved))
}

async fn get_channel_limits(
    State(state): State<AppState>,
    AdminSession(_admin): AdminSession,
    Path(id): Path<i64>,
) -> Result<Envelope<LimitsBody>, ConsoleError> {
    Ok(ok(limits::channel_limits(&state, ChannelId(id)).await?))
}

async fn put_channel_limits(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
    AuditIp(ip): AuditIp,
    Path(id): Path<i64>,
    ApiJson(body): ApiJson<LimitsBody>,
) -> Result<Envelope<LimitsBody>, ConsoleError> {
    let auditor = Auditor::user(&admin.user, ip);
    let saved = limits::set_channel_limits(&state, ChannelId(id), body, auditor).await?;
    Ok(ok(saved))
}
