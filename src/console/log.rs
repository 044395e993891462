//! Usage logs: GET /api/log/ (admin) and /api/log/self/ (own), their /stat, DELETE /api/log/
//! (root only, as in new-api: delete older than a time, in the background) and
//! GET /api/log/delete_progress.

use crate::http::api::{Access, ApiRouter, get};
use axum::extract::State;
use serde::Deserialize;

use super::service::audit::{AuditIp, Auditor};
use super::service::logs::{self, LogPageView, LogQuery, ProgressView, StatView, Viewer};
use crate::error::{ConsoleError, ErrorCode};
use crate::http::envelope::{Envelope, ok};
use crate::http::extract::{AdminSession, ApiQuery, RootSession, Session};
use crate::http::page::PageQuery;
use crate::state::AppState;

/// Log routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route(
            "/api/log/",
            get(Access::Admin, list_all).delete(Access::Root, delete_logs),
        )
        .route("/api/log/stat", get(Access::Admin, stat_all))
        .route(
            "/api/log/delete_progress",
            get(Access::Admin, delete_progress),
        )
        .route("/api/log/self", get(Access::User, list_own))
        .route("/api/log/self/", get(Access::User, list_own))
        .route("/api/log/self/stat", get(Access::User, stat_own))
}

async fn list_all(
    State(state): State<AppState>,
    _admin: AdminSession,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<LogQuery>,
) -> Result<Envelope<LogPageView>, ConsoleError> {
    Ok(ok(logs::page(&state, &q, paging, Viewer::Admin).await?))
}

async fn list_own(
    State(state): State<AppState>,
    session: Session,
    ApiQuery(paging): ApiQuery<PageQuery>,
    ApiQuery(q): ApiQuery<LogQuery>,
) -> Result<Envelope<LogPageView>, ConsoleError> {
    let viewer = Viewer::Owner(session.user.id);
    Ok(ok(logs::page(&state, &q, paging, viewer).await?))
}

async fn stat_all(
    State(state): State<AppState>,
    _admin: AdminSession,
    ApiQuery(q): ApiQuery<LogQuery>,
) -> Result<Envelope<StatView>, ConsoleError> {
    Ok(ok(logs::stat(&state, &q, Viewer::Admin).await?))
}

async fn stat_own(
    State(state): State<AppState>,
    session: Session,
    ApiQuery(q): ApiQuery<LogQuery>,
) -> Result<Envelope<StatView>, ConsoleError> {
    let viewer = Viewer::Owner(session.user.id);
    Ok(ok(logs::stat(&state, &q, viewer).await?))
}

/// `?target_timestamp=<unix seconds>`.
#[derive(Debug, Deserialize)]
struct DeleteQuery {
    #[serde(default)]
    target_timestamp: Option<i64>,
}

/// Deletes logs created before the target. `data` is the number of rows deleted (new-api's
/// shape); when the job is still running after a short wait, `data` is the number it is
/// deleting and the message says so (poll GET /api/log/delete_progress).
async fn delete_logs(
    State(state): State<AppState>,
    RootSession(root): RootSession,
    AuditIp(ip): AuditIp,
    ApiQuery(q): ApiQuery<DeleteQuery>,
) -> Result<Envelope<u64>, ConsoleError> {
    let target = q
        .target_timestamp
        .ok_or_else(|| ConsoleError::of(ErrorCode::LogDeleteTimeRequired))?;
    let p = logs::delete_before(&state, target, &Auditor::user(&root.user, ip)).await?;
    tracing::info!(by = %root.user.id, target, rows = p.total, "log deletion requested");
    let mut answer = ok(p.total);
    if p.running {
        answer.message = format!(
            "{} of {} logs deleted so far; the rest are being deleted in the background",
            p.deleted, p.total
        );
    }
    Ok(answer)
}

async fn delete_progress(
    State(state): State<AppState>,
    _admin: AdminSession,
) -> Result<Envelope<ProgressView>, ConsoleError> {
    Ok(ok(state.janitor.progress().into()))
}
