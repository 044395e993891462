//! First-run setup: GET/POST /api/setup (spec 01 §2, §4, §5).

use crate::http::api::{Access, ApiRouter, get};
use axum::extract::State;
use axum::http::HeaderMap;

use super::service::setup::{self, SetupInfo, SetupRequest};
use crate::error::ConsoleError;
use crate::http::envelope::{Envelope, done, ok};
use crate::http::extract::ApiJson;
use crate::state::AppState;

/// Setup routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new().route(
        "/api/setup",
        get(Access::Public, get_setup).post(Access::Public, post_setup),
    )
}

async fn get_setup(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Envelope<SetupInfo>, ConsoleError> {
    Ok(ok(setup::info(&state, &headers).await?))
}

async fn post_setup(
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(req): ApiJson<SetupRequest>,
) -> Result<Envelope<()>, ConsoleError> {
    setup::run(&state, req, &headers).await?;
    Ok(done("system initialized"))
}
