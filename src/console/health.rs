//! GET /api/health (readiness: 200 when the server can take traffic, 503 with the failed checks
//! otherwise) and GET /api/health/live (liveness: 200 whenever the process answers). Public,
//! like /api/status, for load balancers and orchestrators; they say nothing secret.

use crate::http::api::{Access, ApiRouter, get};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::service::health;
use crate::state::AppState;

/// Health routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route("/api/health", get(Access::Public, ready))
        .route("/api/health/live", get(Access::Public, live))
}

async fn ready(State(state): State<AppState>) -> Response {
    let found = health::check(health::Subjects {
        store: &state.store,
        quota: &state.quota,
        channel_pool: &state.channel_pool,
        probe: &state.health_probe,
        started_at: state.started_at,
    })
    .await;
    let status = if found.ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let message = if found.ready { "" } else { "not ready" };
    let body = json!({ "success": found.ready, "message": message, "data": found });
    (status, Json(body)).into_response()
}

async fn live() -> Response {
    Json(json!({ "success": true, "message": "", "data": { "live": true } })).into_response()
}
