//! The HTTP facade: one router merging the console and relay routes, the layers (all added here,
//! in one place), the extractors and response shapes.

pub mod api;
pub mod client_ip;
pub mod critical_limiter;
pub mod envelope;
pub mod extract;
pub mod listen;
pub mod openapi;
pub mod page;
pub mod security_headers;
pub mod spa;
pub mod trusted_proxies;

use std::sync::Arc;

use axum::{Extension, Router};
use tower_http::trace::TraceLayer;

use self::api::{Access, ApiRouter, Endpoint};

use crate::state::AppState;
use crate::{console, relay};

/// The span of one request: method and path only. Query strings are left out on purpose:
/// they can carry secrets (`?key=` on Gemini routes, `?proxy=user:pass@…` on the proxy check).
fn request_span(req: &axum::http::Request<axum::body::Body>) -> tracing::Span {
    tracing::debug_span!("request", method = %req.method(), path = %req.uri().path())
}

/// The console's declared routes, `/api/openapi.json` included.
fn console_routes() -> ApiRouter {
    console::routes()
        .route(
            "/api/openapi.json",
            api::get(Access::Public, openapi::serve),
        )
        .route(
            "/metrics",
            api::get(Access::Root, crate::metrics::serve::on_main),
        )
}

/// Every declared route: what the router serves, the OpenAPI document describes and the
/// authorization matrix test checks.
pub fn endpoints() -> Vec<Endpoint> {
    let mut all = console_routes().split().1;
    all.extend(relay::routes().split().1);
    all.extend(crate::task_relay::routes().split().1);
    all
}

/// Builds the whole router.
///
/// Layer order (outermost first): tracing spans every request, including the fallback; the
/// console's routes and pages (the fallback) get the security headers, the relay's do not; the
/// relay's routes then pass the error counter and the intake ([`relay::pipeline::body_limit`]: the
/// caller authenticated and its balance checked before any body byte is read, then the body
/// read under its budget and deadline) before their handler.
pub fn router(state: AppState) -> Router {
    let (console, mut endpoints) = console_routes().split();
    let (relay, relay_endpoints) = relay::routes().split();
    endpoints.extend(relay_endpoints.iter().cloned());
    // The task relays (Midjourney, Suno, videos) pass the same intake, inside their own
    // layers (the `mj-api-secret` key, the families' error shapes).
    let (tasks, task_endpoints) = crate::task_relay::routes().split();
    endpoints.extend(task_endpoints.iter().cloned());
    let tasks = crate::task_relay::layer(relay::pipeline::body_limit::apply(
        tasks,
        &state,
        &task_endpoints,
    ));
    let relay = relay.merge(tasks);
    let doc = openapi::Document(openapi::to_json(&openapi::document(&endpoints)));
    let console = console
        .fallback(spa::fallback)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            security_headers::apply,
        ));
    let metrics = state.metrics.clone();
    // Error answers of the relay counted by code (RelayError puts its code in the response's
    // extensions): a synchronous look at each response, no allocation.
    let relay = relay::pipeline::body_limit::apply(relay, &state, &relay_endpoints).layer(
        tower::util::MapResponseLayer::new(move |response: axum::response::Response| {
            if let Some(code) = response.extensions().get::<crate::error::ErrorCode>() {
                metrics.relay().error(*code);
            }
            response
        }),
    );
    Router::new()
        .merge(console)
        .merge(relay)
        .layer(Extension(Arc::new(doc)))
        .layer(TraceLayer::new_for_http().make_span_with(request_span))
        .with_state(state)
}
