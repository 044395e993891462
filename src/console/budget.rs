//! Budget routes (P15): a key's budgets for its owner (`GET`/`PUT /api/token/{id}/budget`) and a
//! user's for an admin (`GET`/`PUT /api/user/{id}/budget`): what is set and what each window in
//! force has left. Changes are audited (`token.budget`, `user.budget`).

use axum::extract::{Path, State};
use tollgate_storage::budgets::Budgets;
use tollgate_storage::{TokenId, UserId};

use super::service::audit::{AuditIp, Auditor};
use super::service::budgets::{self, BudgetView};
use crate::error::ConsoleError;
use crate::http::api::{Access, ApiRouter, get};
use crate::http::envelope::{Envelope, ok};
use crate::http::extract::{AdminSession, ApiJson, Session};
use crate::state::AppState;

/// Budget routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route(
            "/api/token/{id}/budget",
            get(Access::User, get_token_budget).put(Access::User, put_token_budget),
        )
        .route(
            "/api/user/{id}/budget",
            get(Access::Admin, get_user_budget).put(Access::Admin, put_user_budget),
        )
}

async fn get_token_budget(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
) -> Result<Envelope<BudgetView>, ConsoleError> {
    Ok(ok(budgets::token_budget(
        &state,
        &session.user,
        TokenId(id),
    )
    .await?))
}

async fn put_token_budget(
    State(state): State<AppState>,
    session: Session,
    AuditIp(ip): AuditIp,
    Path(id): Path<i64>,
    ApiJson(input): ApiJson<Budgets>,
) -> Result<Envelope<BudgetView>, ConsoleError> {
    let auditor = Auditor::user(&session.user, ip);
    let view =
        budgets::set_token_budget(&state, &session.user, TokenId(id), input, auditor).await?;
    Ok(ok(view))
}

async fn get_user_budget(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
    Path(id): Path<i64>,
) -> Result<Envelope<BudgetView>, ConsoleError> {
    Ok(ok(
        budgets::user_budget(&state, &admin.user, UserId(id)).await?
    ))
}

async fn put_user_budget(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
    AuditIp(ip): AuditIp,
    Path(id): Path<i64>,
    ApiJson(input): ApiJson<Budgets>,
) -> Result<Envelope<BudgetView>, ConsoleError> {
    let auditor = Auditor::user(&admin.user, ip);
    let view = budgets::set_user_budget(&state, &admin.user, UserId(id), input, auditor).await?;
    Ok(ok(view))
}
