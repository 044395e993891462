//! Redemption codes (admin): /api/redemption/ list, search, read, create, update, status,
//! delete, delete invalid.

use crate::http::api::{Access, ApiRouter, delete, get};
use axum::extract::{Path, State};
use serde::Deserialize;
use tollgate_storage::RedemptionId;

use super::service::audit::{AuditIp, Auditor};
use super::service::redemptions::{self, RedemptionInput, RedemptionView};
use crate::error::ConsoleError;
use crate::http::envelope::{Envelope, done, ok};
use crate::http::extract::{AdminSession, ApiJson, ApiQuery};
use crate::http::page::{Page, PageQuery};
use crate::state::AppState;

/// Redemption routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route(
            "/api/redemption/",
            get(Access::Admin, list_codes)
                .post(Access::Admin, create_codes)
                .put(Access::Admin, update_code),
        )
        .route("/api/redemption/search", get(Access::Admin, search_codes))
        .route(
            "/api/redemption/invalid",
            delete(Access::Admin, delete_invalid_codes),
        )
        .route(
            "/api/redemption/{id}",
            get(Access::Admin, get_code).delete(Access::Admin, delete_code),
        )
        .route("/api/redemption/{id}/", delete(Access::Admin, delete_code))
}

fn page_of(
    page: PageQuery,
    (codes, total): (Vec<tollgate_storage::redemptions::Redemption>, u64),
) -> Page<RedemptionView> {
    Page::new(
        page,
        codes.iter().map(RedemptionView::from).collect(),
        total,
    )
}

async fn list_codes(
    State(state): State<AppState>,
    _admin: AdminSession,
    ApiQuery(page): ApiQuery<PageQuery>,
) -> Result<Envelope<Page<RedemptionView>>, ConsoleError> {
    Ok(ok(page_of(page, redemptions::list(&state, page).await?)))
}

/// `?keyword=`.
#[derive(Debug, Default, Deserialize)]
struct SearchQuery {
    #[serde(default)]
    keyword: String,
}

async fn search_codes(
    State(state): State<AppState>,
    _admin: AdminSession,
    ApiQuery(page): ApiQuery<PageQuery>,
    ApiQuery(query): ApiQuery<SearchQuery>,
) -> Result<Envelope<Page<RedemptionView>>, ConsoleError> {
    let found = redemptions::search(&state, query.keyword, page).await?;
    Ok(ok(page_of(page, found)))
}

async fn get_code(
    State(state): State<AppState>,
    _admin: AdminSession,
    Path(id): Path<i64>,
) -> Result<Envelope<RedemptionView>, ConsoleError> {
    let code = redemptions::get(&state, RedemptionId(id)).await?;
    Ok(ok(RedemptionView::from(&code)))
}

async fn create_codes(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
    AuditIp(ip): AuditIp,
    ApiJson(input): ApiJson<RedemptionInput>,
) -> Result<Envelope<Vec<String>>, ConsoleError> {
    let auditor = Auditor::user(&admin.user, ip);
    let keys = redemptions::create(&state, input, auditor).await?;
    tracing::info!(by = %admin.user.id, count = keys.len(), "redemption codes created");
    Ok(ok(keys))
}

/// `?status_only=true`.
#[derive(Debug, Default, Deserialize)]
struct UpdateMode {
    #[serde(default)]
    status_only: bool,
}

async fn update_code(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
    AuditIp(ip): AuditIp,
    ApiQuery(mode): ApiQuery<UpdateMode>,
    ApiJson(input): ApiJson<RedemptionInput>,
) -> Result<Envelope<RedemptionView>, ConsoleError> {
    let auditor = Auditor::user(&admin.user, ip);
    let code = redemptions::update(&state, input, mode.status_only, auditor).await?;
    tracing::info!(by = %admin.user.id, code = %code.id, status = code.status, "redemption code updated");
    Ok(ok(RedemptionView::from(&code)))
}

async fn delete_code(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
    Path(id): Path<i64>,
) -> Result<Envelope<()>, ConsoleError> {
    redemptions::delete(&state, RedemptionId(id)).await?;
    tracing::info!(by = %admin.user.id, code = id, "redemption code deleted");
    Ok(done("deleted"))
}

async fn delete_invalid_codes(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
) -> Result<Envelope<u64>, ConsoleError> {
    let count = redemptions::delete_invalid(&state).await?;
    tracing::info!(by = %admin.user.id, count, "invalid redemption codes deleted");
    Ok(ok(count))
}
