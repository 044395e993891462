//! The HTTP facade: one router merging the console and relay routes, the layers (all added here,
//! in one place), the extractors and response shapes.

pub mod client_ip;
pub mod envelope;
pub mod extract;
pub mod listen;
pub mod page;
pub mod security_headers;
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
/// Layer order (outermost first): tracing spans every request, including the fallback; the
/// console's routes and pages (the fallback) get the security headers, the relay's do not.
pub fn router(state: AppState) -> Router {
    let console =
        console::routes()
            .fallback(spa::fallback)
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                security_headers::apply,
            ));
    Router::new()
        .merge(console)
        .merge(relay::body_limit::apply(relay::routes(), &state))
        .layer(TraceLayer::new_for_http().make_span_with(request_span))
        .with_state(state)
}
