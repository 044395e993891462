//! POST /api/option/oidc_discovery (root): reads an OIDC provider's well-known document on the
//! server, which the browser cannot (providers rarely send CORS headers), so the settings form
//! can fill in the authorization, token and userinfo endpoints.

use crate::http::api::{Access, ApiRouter, post};
use axum::extract::State;
use serde::Deserialize;

use super::service::oauth::oidc::{self, Endpoints};
use crate::error::ConsoleError;
use crate::http::envelope::{Envelope, ok};
use crate::http::extract::{ApiJson, RootSession};
use crate::state::AppState;

/// The discovery route.
pub fn routes() -> ApiRouter {
    ApiRouter::new().route("/api/option/oidc_discovery", post(Access::Root, discover))
}

/// Body of POST /api/option/oidc_discovery.
#[derive(Debug, Deserialize)]
pub struct DiscoveryBody {
    /// The well-known URL (the form's value, which may not be saved yet).
    #[serde(default)]
    pub well_known: String,
}

async fn discover(
    State(state): State<AppState>,
    _root: RootSession,
    ApiJson(body): ApiJson<DiscoveryBody>,
) -> Result<Envelope<Endpoints>, ConsoleError> {
    Ok(ok(oidc::discover(&state, &body.well_known).await?))
}
