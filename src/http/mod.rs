//! The HTTP facade: one router merging the console and relay routes, the layers (all added here,
//! in one place), the extractors and response shapes.

pub mod client_ip;
pub mod envelope;
pub mod extract;
pub mod listen;
pub mod page;
pub mod spa;

use axum::Router;
use tower_http::trace::TraceLayer;

use crate::state::AppState;
use crate::{console, relay};

/// The span of one request: method and path only. Query strings are left out on purpose:
/// they can carry secrets (`?key=` on Gemini routes, `?proxy=user:pass@…` on the proxy check).
fn request_span(req: &axum::http::Request<axum::body::Body>) -> tracing::Span {
    tracing::debug_span!("request", method = %req.method(), path = %req.uri().path())
}

/// Builds the whole router.
///
/// Layer order (outermost first): tracing spans every request, including the fallback.
pub fn router(state: AppState) -> Router {
    Router::new()
        .merge(console::routes())
        .merge(relay::body_limit::apply(relay::routes(), &state))
        .fallback(spa::fallback)
        .layer(TraceLayer::new_for_http().make_span_with(request_span))
        .with_state(state)
}
