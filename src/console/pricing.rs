//! GET /api/pricing (public) and POST /api/option/rest_model_ratio (root).

use crate::http::api::{Access, ApiRouter, get, post};
use axum::extract::State;

use super::service::audit::{AuditIp, Auditor};
use super::service::pricing::{self, PricingList};
use crate::error::ConsoleError;
use crate::http::envelope::{Envelope, done};
use crate::http::extract::{RootSession, Session};
use crate::state::AppState;

/// Pricing routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route("/api/pricing", get(Access::Public, list_pricing))
        .route(
            "/api/option/rest_model_ratio",
            post(Access::Root, restore_price_defaults),
        )
}

/// Public; a signed-in caller (cookie and `New-Api-User`) sees their own usable groups.
async fn list_pricing(
    State(state): State<AppState>,
    session: Result<Session, ConsoleError>,
) -> axum::Json<PricingList> {
    let user = session.ok().map(|s| s.user);
    axum::Json(pricing::list(&state, user.as_ref()))
}

async fn restore_price_defaults(
    State(state): State<AppState>,
    RootSession(root): RootSession,
    AuditIp(ip): AuditIp,
) -> Result<Envelope<()>, ConsoleError> {
    pricing::restore_defaults(&state, &Auditor::user(&root.user, ip)).await?;
    tracing::info!(by = %root.user.id, "price tables restored to the built-in defaults");
    Ok(done("the model ratios were reset to the defaults"))
}
