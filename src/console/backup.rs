//! GET /api/backup: a consistent copy of the running server's database file, streamed (what
//! `tollgate backup` asks a running server for; see [`crate::ops`]), for a root's session, a
//! root's system access token verified within 5 minutes, or a backup token; audited. And the
//! backup tokens themselves: `/api/user/backup_tokens` (root: list, create with a two-factor
//! code, revoke). The rules are in [`backup_access`].

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use serde::Deserialize;
use tokio_util::io::ReaderStream;

use super::service::audit::AuditIp;
use super::service::backup_access::{self, BackupCaller, Created, TokenView};
use crate::error::{ConsoleError, ErrorCode};
use crate::http::api::{Access, ApiRouter, delete, get};
use crate::http::client_ip::Limited;
use crate::http::envelope::{Envelope, done, ok};
use crate::http::extract::{ApiJson, RootSession};
use crate::state::AppState;

/// Backup routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route("/api/backup", get(Access::Root, get_backup))
        .route(
            "/api/user/backup_tokens",
            get(Access::Root, list_tokens).post(Access::Root, create_token),
        )
        .route(
            "/api/user/backup_tokens/{id}",
            delete(Access::Root, revoke_token),
        )
}

async fn get_backup(
    State(state): State<AppState>,
    AuditIp(ip): AuditIp,
    caller: BackupCaller,
) -> Result<Response, ConsoleError> {
    // The copy is made beside the database (same filesystem, no size surprise in /tmp) and
    // unlinked once open: it disappears with the response, however that ends.
    let store = state.store.clone();
    let dir = store
        .path()
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let path = dir.join(format!(".backup-{}", rand::random::<u64>()));
    let copy = path.clone();
    let size = tokio::task::spawn_blocking(move || store.backup_to(&copy))
        .await
        .map_err(|e| ConsoleError::Internal(format!("the backup task failed: {e}")))??;
    let file = tokio::fs::File::open(&path).await;
    if let Err(e) = tokio::fs::remove_file(&path).await {
        tracing::warn!(error = %e, "removing the backup copy");
    }
    let file = file.map_err(|e| ConsoleError::Internal(format!("opening the backup copy: {e}")))?;
    backup_access::record_backup(&state, &caller, size, ip).await?;
    tracing::info!(
        user = caller.user().id.0,
        bytes = size,
        "database backup sent"
    );
    let mut response = Response::new(Body::from_stream(ReaderStream::new(file)));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(size));
    headers.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_static("attachment; filename=\"tollgate.redb\""),
    );
    Ok(response)
}

async fn list_tokens(
    State(state): State<AppState>,
    RootSession(session): RootSession,
) -> Result<Envelope<Vec<TokenView>>, ConsoleError> {
    Ok(ok(backup_access::list(&state, &session.user).await?))
}

/// POST /api/user/backup_tokens body.
#[derive(Debug, Deserialize)]
struct CreateRequest {
    #[serde(default)]
    name: String,
    /// A current two-factor code or a recovery code.
    #[serde(default)]
    code: String,
}

async fn create_token(
    State(state): State<AppState>,
    Limited(ip): Limited,
    RootSession(session): RootSession,
    ApiJson(req): ApiJson<CreateRequest>,
) -> Result<Envelope<Created>, ConsoleError> {
    let created =
        backup_access::create(&state, &session.user, &req.name, &req.code, Some(ip)).await?;
    Ok(ok(created))
}

async fn revoke_token(
    State(state): State<AppState>,
    AuditIp(ip): AuditIp,
    RootSession(session): RootSession,
    Path(id): Path<String>,
) -> Result<Envelope<()>, ConsoleError> {
    let id: i64 = id
        .parse()
        .map_err(|_| ConsoleError::of(ErrorCode::BackupTokenIdInvalid))?;
    backup_access::revoke(&state, &session.user, id, ip).await?;
    Ok(done("backup token revoked"))
}
