//! Where `/metrics` is served: on the main listener to root's system access token (sent as
//! `Authorization: Bearer <token>`, the way Prometheus' `authorization` setting sends it), and
//! on `--metrics-listen` to anyone who reaches that address.

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tollgate_storage::users::{ROLE_ROOT, STATUS_ENABLED};

use super::Metrics;
use crate::error::{ConsoleError, ErrorCode};
use crate::http::extract::{RootSession, USER_HEADER, bearer_token, user_by_access_token};
use crate::state::AppState;

/// `GET /metrics` on the main listener: root only — root's system access token as a Bearer
/// token (a `New-Api-User` header, if sent, must name its owner), or root's console session.
/// 401 without valid credentials, 403 for anyone but root.
pub async fn on_main(
    State(state): State<AppState>,
    headers: HeaderMap,
    session: Result<RootSession, ConsoleError>,
) -> Response {
    let allowed = match bearer_token(&headers) {
        Some(token) => authorize(&state, &headers, &token).await,
        None => session.map(|_| ()),
    };
    match allowed {
        Ok(()) => exposition(state.metrics.clone()).await,
        Err(e) => e.into_response(),
    }
}

async fn authorize(state: &AppState, headers: &HeaderMap, token: &str) -> Result<(), ConsoleError> {
    let user = user_by_access_token(state, token)
        .await?
        .filter(|u| u.deleted_at.is_none())
        .ok_or(ConsoleError::InvalidAccessToken)?;
    if let Some(claimed) = headers.get(USER_HEADER)
        && claimed.to_str().ok().and_then(|v| v.parse::<i64>().ok()) != Some(user.id.0)
    {
        return Err(ConsoleError::of(ErrorCode::UserHeaderTokenMismatch));
    }
    if user.role < ROLE_ROOT || user.status != STATUS_ENABLED {
        return Err(ConsoleError::Forbidden);
    }
    Ok(())
}

/// The router of the `--metrics-listen` listener: `GET /metrics` and nothing else.
pub fn router(metrics: Metrics) -> Router {
    Router::new()
        .route("/metrics", get(on_own))
        .with_state(metrics)
}

async fn on_own(State(metrics): State<Metrics>) -> Response {
    exposition(metrics).await
}

/// Encodes the exposition off the async workers (its size grows with the configuration).
async fn exposition(metrics: Metrics) -> Response {
    match tokio::task::spawn_blocking(move || metrics.encode()).await {
        Ok(Ok(text)) => (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static(super::CONTENT_TYPE),
            )],
            text,
        )
            .into_response(),
        Ok(Err(_)) | Err(_) => {
            tracing::error!("encoding the metrics failed");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}
