//! The relay's request body limits:
//! - per request (`--max-request-body-mb`, default 128 MiB like new-api's MAX_REQUEST_BODY_MB):
//!   a body announced larger by its Content-Length is refused before it is read, with the
//!   OpenAI-shaped 413; a chunked body is cut at the limit by axum's `DefaultBodyLimit`, set to
//!   the same value;
//! - for all requests together (option RelayBodyBudgetMB, default 1024; 0 = none): the bodies
//!   being handled share one memory budget, so a burst of large uploads cannot exhaust memory.
//!   A request whose body would pass it is refused with 503 before its body is read; a chunked
//!   body (no Content-Length) counts as 1 MiB, a GET as nothing. The share is held until the
//!   handler answers.

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{Method, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};

use crate::error::RelayError;
use crate::state::AppState;

/// Applies the limit to `routes`.
pub fn apply(routes: Router<AppState>, state: &AppState) -> Router<AppState> {
    routes
        .layer(middleware::from_fn_with_state(state.clone(), check))
        .layer(DefaultBodyLimit::max(state.config.max_request_body()))
}

/// What a chunked body (no Content-Length) counts against the budget, in bytes.
const UNANNOUNCED_BODY: u64 = 1024 * 1024;

async fn check(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let announced = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if announced.is_some_and(|n| n > state.config.max_request_body()) {
        return RelayError::BodyTooLarge(state.config.max_request_body_mb).into_response();
    }
    let bytes = match announced {
        Some(n) => n as u64,
        // A GET (the model list) carries no body at all.
        None if req.method() == Method::GET || req.method() == Method::HEAD => 0,
        None => UNANNOUNCED_BODY,
    };
    let limit_mb = u64::try_from(state.options.current().int("RelayBodyBudgetMB")).unwrap_or(0);
    let Some(_share) = state
        .body_budget
        .take(bytes, limit_mb.saturating_mul(1024 * 1024))
    else {
        return RelayError::Busy(
            "the gateway is handling too many large requests right now; retry shortly".into(),
        )
        .into_response();
    };
    next.run(req).await
}
