//! Handlers: list, search, get, create, update, copy, delete, key reveal, ability repair.

use axum::extract::{Path, State};
use serde::Deserialize;
use serde_json::{Value, json};
use tollgate_storage::ChannelId;
use tollgate_storage::channels::abilities::RebuildReport;
use tollgate_storage::channels::query::{ChannelQuery, Order};
use tollgate_storage::users::ROLE_ROOT;

use crate::console::service::audit::{AuditIp, Auditor};
use crate::console::service::channel::input::ChannelInput;
use crate::console::service::channel::key::{self, RevealedKey};
use crate::console::service::channel::view::ChannelView;
use crate::console::service::channel::{
    self as service, CreateRequest, Created, DEFAULT_PAGE_SIZE,
};
use crate::error::{ConsoleError, ErrorCode};
use crate::http::envelope::{Envelope, Page, ok};
use crate::http::extract::{AdminSession, ApiJson, ApiQuery, RootSession};
use crate::state::AppState;

/// Query of the list and search routes.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ListParams {
    /// 1-based page.
    pub p: Option<usize>,
    /// Items per page.
    pub page_size: Option<usize>,
    /// Newest id first instead of priority order.
    pub id_sort: Option<bool>,
    /// Page by tag.
    pub tag_mode: Option<bool>,
    /// Search: id, name, base URL or tag.
    pub keyword: Option<String>,
    /// Search: group.
    pub group: Option<String>,
    /// Search: model.
    pub model: Option<String>,
}

impl ListParams {
    fn query(self) -> (ChannelQuery, usize, usize) {
        let query = ChannelQuery {
            keyword: self.keyword.unwrap_or_default(),
            group: self.group.unwrap_or_default(),
            model: self.model.unwrap_or_default(),
            order: if self.id_sort.unwrap_or(false) {
                Order::IdDesc
            } else {
                Order::Priority
            },
            tag_mode: self.tag_mode.unwrap_or(false),
            offset: 0,
            limit: 0,
        };
        (
            query,
            self.p.unwrap_or(1),
            self.page_size.unwrap_or(DEFAULT_PAGE_SIZE),
        )
    }
}

/// Parses a path id.
pub fn channel_id(raw: &str) -> Result<ChannelId, ConsoleError> {
    raw.parse()
        .map_err(|_| ConsoleError::with_args(ErrorCode::ChannelIdInvalid, [format!("{raw:?}")]))
}

/// GET /api/channel/
pub async fn list_channels(
    State(state): State<AppState>,
    _admin: AdminSession,
    ApiQuery(params): ApiQuery<ListParams>,
) -> Result<Envelope<Page<ChannelView>>, ConsoleError> {
    let (query, page, size) = ListParams {
        keyword: None,
        group: None,
        model: None,
        ..params
    }
    .query();
    Ok(ok(service::list(&state, query, page, size).await?))
}

/// GET /api/channel/search
pub async fn search_channels(
    State(state): State<AppState>,
    _admin: AdminSession,
    ApiQuery(params): ApiQuery<ListParams>,
) -> Result<Envelope<Page<ChannelView>>, ConsoleError> {
    let (query, page, size) = params.query();
    Ok(ok(service::list(&state, query, page, size).await?))
}

/// GET /api/channel/{id}
pub async fn get_channel(
    State(state): State<AppState>,
    _admin: AdminSession,
    Path(id): Path<String>,
) -> Result<Envelope<ChannelView>, ConsoleError> {
    Ok(ok(service::get(&state, channel_id(&id)?).await?))
}

fn with_notices<T: serde::Serialize>(data: T, notices: Vec<String>) -> Envelope<T> {
    let mut envelope = ok(data);
    envelope.message = notices.join("; ");
    envelope
}

/// POST /api/channel/
pub async fn create_channel(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
    AuditIp(ip): AuditIp,
    ApiJson(req): ApiJson<CreateRequest>,
) -> Result<Envelope<Created>, ConsoleError> {
    let auditor = Auditor::user(&admin.user, ip);
    let (created, notices) = service::create(&state, req, auditor).await?;
    Ok(with_notices(created, notices))
}

/// PUT /api/channel/
pub async fn update_channel(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
    AuditIp(ip): AuditIp,
    ApiJson(input): ApiJson<ChannelInput>,
) -> Result<Envelope<ChannelView>, ConsoleError> {
    let root = admin.user.role >= ROLE_ROOT;
    let auditor = Auditor::user(&admin.user, ip);
    let (view, notices) = service::update(&state, input, root, auditor).await?;
    Ok(with_notices(view, notices))
}

/// Query of POST /api/channel/copy/{id}.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct CopyParams {
    /// Appended to the name (default `_copy`).
    pub suffix: Option<String>,
    /// Zero the balance and used quota of the copy (default true).
    pub reset_balance: Option<bool>,
}

/// POST /api/channel/copy/{id}
pub async fn copy_channel(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
    AuditIp(ip): AuditIp,
    Path(id): Path<String>,
    ApiQuery(params): ApiQuery<CopyParams>,
) -> Result<Envelope<Value>, ConsoleError> {
    let suffix = params.suffix.unwrap_or_else(|| "_copy".into());
    let reset = params.reset_balance.unwrap_or(true);
    let auditor = Auditor::user(&admin.user, ip);
    let new_id = service::copy(&state, channel_id(&id)?, suffix, reset, auditor).await?;
    Ok(ok(json!({ "id": new_id })))
}

/// DELETE /api/channel/{id}/ (and without the slash)
pub async fn delete_channel(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
    AuditIp(ip): AuditIp,
    Path(id): Path<String>,
) -> Result<Envelope<()>, ConsoleError> {
    let auditor = Auditor::user(&admin.user, ip);
    service::delete(&state, channel_id(&id)?, auditor).await?;
    Ok(ok(()))
}

/// DELETE /api/channel/disabled
pub async fn delete_disabled_channels(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
    AuditIp(ip): AuditIp,
) -> Result<Envelope<usize>, ConsoleError> {
    let auditor = Auditor::user(&admin.user, ip);
    Ok(ok(service::delete_disabled(&state, auditor).await?))
}

/// Body of POST /api/channel/batch.
#[derive(Debug, Deserialize)]
pub struct IdsBody {
    /// Channel ids.
    #[serde(default)]
    pub ids: Vec<i64>,
}

/// POST /api/channel/batch (delete)
pub async fn delete_channels(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
    AuditIp(ip): AuditIp,
    ApiJson(body): ApiJson<IdsBody>,
) -> Result<Envelope<usize>, ConsoleError> {
    let auditor = Auditor::user(&admin.user, ip);
    Ok(ok(service::delete_many(&state, body.ids, auditor).await?))
}

/// POST /api/channel/fix
pub async fn fix_abilities(
    State(state): State<AppState>,
    _admin: AdminSession,
) -> Result<Envelope<RebuildReport>, ConsoleError> {
    Ok(ok(service::fix(&state).await?))
}

/// POST /api/channel/{id}/key (root, two-factor re-verified within 5 minutes, audited)
pub async fn reveal_channel_key(
    State(state): State<AppState>,
    RootSession(root): RootSession,
    AuditIp(ip): AuditIp,
    Path(id): Path<String>,
) -> Result<Envelope<RevealedKey>, ConsoleError> {
    Ok(ok(key::reveal(
        &state,
        &root.user,
        &root.key,
        channel_id(&id)?,
        ip,
    )
    .await?))
}
