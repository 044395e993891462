//! GET /api/status: the public system status object the console reads on load.

use crate::http::api::{Access, ApiRouter, get};
use axum::extract::State;

use super::service::status;
use crate::error::ConsoleError;
use crate::http::envelope::{Envelope, ok};
use crate::state::AppState;

/// Status routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new().route("/api/status", get(Access::Public, get_status))
}

async fn get_status(
    State(state): State<AppState>,
) -> Result<Envelope<status::Status>, ConsoleError> {
    Ok(ok(status::build(&state).await?))
}
