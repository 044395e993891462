//! Asynchronous task lists: GET /api/mj/ (admin) and /api/mj/self/ (the drawing log), GET
//! /api/task/ (admin) and /api/task/self (music and video tasks), and an admin's manual refund,
//! POST /api/task/{id}/refund (either list; audited).

use axum::extract::{Path, State};

use super::service::audit::{AuditIp, Auditor};
use super::service::tasks::{self, DrawingView, RefundView, TaskQuery, TaskView, Viewer};
use crate::error::ConsoleError;
use crate::http::api::{Access, ApiRouter, get, post};
use crate::http::envelope::{Envelope, ok};
use crate::http::extract::{AdminSession, ApiQuery, Session};
use crate::http::page::{Page, PageQuery};
use crate::state::AppState;

/// Task routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route("/api/mj/", get(Access::Admin, list_drawings))
        .route("/api/mj/self", get(Access::User, list_own_drawings))
        .route("/api/mj/self/", get(Access::User, list_own_drawings))
        .route("/api/task/", get(Access::Admin, list_tasks))
        .route("/api/task/self", get(Access::User, list_own_tasks))
        .route("/api/task/self/", get(Access::User, list_own_tasks))
        .route("/api/task/{id}/refund", post(Access::Admin, refund_task))
}

async fn list_drawings(
    State(state): State<AppState>,
    _admin: AdminSession,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<TaskQuery>,
) -> Result<Envelope<Page<DrawingView>>, ConsoleError> {
    Ok(ok(
        tasks::drawing_page(&state, &q, paging, Viewer::Admin).await?
    ))
}

async fn list_own_drawings(
    State(state): State<AppState>,
    session: Session,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<TaskQuery>,
) -> Result<Envelope<Page<DrawingView>>, ConsoleError> {
    let viewer = Viewer::Owner(session.user.id);
    Ok(ok(tasks::drawing_page(&state, &q, paging, viewer).await?))
}

async fn list_tasks(
    State(state): State<AppState>,
    _admin: AdminSession,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<TaskQuery>,
) -> Result<Envelope<Page<TaskView>>, ConsoleError> {
    Ok(ok(
        tasks::task_page(&state, &q, paging, Viewer::Admin).await?
    ))
}

async fn list_own_tasks(
    State(state): State<AppState>,
    session: Session,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<TaskQuery>,
) -> Result<Envelope<Page<TaskView>>, ConsoleError> {
    let viewer = Viewer::Owner(session.user.id);
    Ok(ok(tasks::task_page(&state, &q, paging, viewer).await?))
}

async fn refund_task(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
    AuditIp(ip): AuditIp,
    Path(id): Path<i64>,
) -> Result<Envelope<RefundView>, ConsoleError> {
    let done = tasks::refund(&state, id, Auditor::user(&admin.user, ip)).await?;
    tracing::info!(by = %admin.user.id, task = id, quota = done.quota, "task refunded by an admin");
    Ok(ok(done))
}
