//! User administration (admin): /api/user/ list, search, read, create, update, manage.

use crate::http::api::{Access, ApiRouter, get, post};
use axum::extract::{Path, Query, State};
use serde::{Deserialize, Serialize};
use tollgate_storage::UserId;

use super::service::audit::{AuditIp, Auditor};
use super::service::user_view::UserView;
use super::service::users_admin::{self, CreateUser, ManageAction, SearchQuery, UpdateUser};
use crate::error::ConsoleError;
use crate::http::envelope::{Envelope, ok};
use crate::http::extract::{AdminSession, ApiJson};
use crate::http::page::{Page, PageQuery};
use crate::state::AppState;

/// User administration routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route(
            "/api/user/",
            get(Access::Admin, list_users)
                .post(Access::Admin, create_user)
                .put(Access::Admin, update_user),
        )
        .route("/api/user/search", get(Access::Admin, search_users))
        .route("/api/user/manage", post(Access::Admin, manage_user))
        .route("/api/user/{id}", get(Access::Admin, get_user))
}

async fn list_users(
    State(state): State<AppState>,
    _admin: AdminSession,
    Query(page): Query<PageQuery>,
) -> Result<Envelope<Page<UserView>>, ConsoleError> {
    let (users, total) = users_admin::list(&state, page).await?;
    Ok(ok(Page::new(
        page,
        users.iter().map(UserView::from).collect(),
        total,
    )))
}

async fn search_users(
    State(state): State<AppState>,
    _admin: AdminSession,
    Query(page): Query<PageQuery>,
    Query(query): Query<SearchQuery>,
) -> Result<Envelope<Page<UserView>>, ConsoleError> {
    let (users, total) = users_admin::search(&state, query, page).await?;
    Ok(ok(Page::new(
        page,
        users.iter().map(UserView::from).collect(),
        total,
    )))
}

async fn get_user(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
    Path(id): Path<i64>,
) -> Result<Envelope<UserView>, ConsoleError> {
    let user = users_admin::get(&state, &admin.user, UserId(id)).await?;
    Ok(ok(UserView::from(&user)))
}

async fn create_user(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
    AuditIp(ip): AuditIp,
    ApiJson(req): ApiJson<CreateUser>,
) -> Result<Envelope<UserView>, ConsoleError> {
    let auditor = Auditor::user(&admin.user, ip);
    let user = users_admin::create(&state, &admin.user, req, auditor).await?;
    tracing::info!(by = %admin.user.id, user = %user.id, "user created");
    Ok(ok(UserView::from(&user)))
}

async fn update_user(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
    AuditIp(ip): AuditIp,
    ApiJson(req): ApiJson<UpdateUser>,
) -> Result<Envelope<UserView>, ConsoleError> {
    let user = users_admin::update(&state, &admin.user, req, ip).await?;
    tracing::info!(by = %admin.user.id, user = %user.id, "user updated");
    Ok(ok(UserView::from(&user)))
}

/// POST /api/user/manage body.
#[derive(Debug, Deserialize)]
struct ManageRequest {
    id: UserId,
    action: ManageAction,
}

/// What the console needs after a manage action: the row's new role and status.
#[derive(Debug, Serialize)]
struct ManageResult {
    role: i32,
    status: i32,
    #[serde(rename = "DeletedAt")]
    deleted_at: Option<i64>,
}

async fn manage_user(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
    AuditIp(ip): AuditIp,
    ApiJson(req): ApiJson<ManageRequest>,
) -> Result<Envelope<ManageResult>, ConsoleError> {
    let user = users_admin::manage(&state, &admin.user, req.id, req.action, ip).await?;
    tracing::info!(by = %admin.user.id, user = %user.id, action = ?req.action, "user managed");
    Ok(ok(ManageResult {
        role: user.role,
        status: user.status,
        deleted_at: user.deleted_at,
    }))
}
