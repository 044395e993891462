//! GET /api/status: the public system status object the console reads on load.

use axum::Router;
use axum::extract::State;
use axum::routing::get;

use super::service::status;
use crate::error::ConsoleError;
use crate::http::envelope::{Envelope, ok};
use crate::state::AppState;

/// Status routes.
pub fn routes() -> Router<AppState> {
    Router::new().route("/api/status", get(get_status))
}

async fn get_status(
    State(state): State<AppState>,
) -> Result<Envelope<status::Status>, ConsoleError> {
    Ok(ok(status::build(&state).await?))
}
