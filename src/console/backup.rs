//! GET /api/backup (root): a consistent copy of the running server's database file, streamed
//! (what `tollgate backup` asks a running server for; see [`crate::ops`]).

use crate::http::api::{Access, ApiRouter, get};
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use tokio_util::io::ReaderStream;

use crate::error::ConsoleError;
use crate::http::extract::RootSession;
use crate::state::AppState;

/// Backup routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new().route("/api/backup", get(Access::Root, get_backup))
}

async fn get_backup(
    State(state): State<AppState>,
    RootSession(session): RootSession,
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
    let file = tokio::fs::File::open(&path)
        .await
        .map_err(|e| ConsoleError::Internal(format!("opening the backup copy: {e}")))?;
    if let Err(e) = tokio::fs::remove_file(&path).await {
        tracing::warn!(error = %e, "removing the backup copy");
    }
    tracing::info!(
        user = session.user.id.0,
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
