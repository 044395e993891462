//! The relay's request body limit (`--max-request-body-mb`, default 128 MiB like new-api's
//! MAX_REQUEST_BODY_MB): a body announced larger by its Content-Length is refused before it is
//! read, with the OpenAI-shaped 413; a chunked body is cut at the limit by axum's
//! `DefaultBodyLimit`, set to the same value.

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::header;
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

async fn check(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let announced = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if announced.is_some_and(|n| n > state.config.max_request_body()) {
        return RelayError::BodyTooLarge(state.config.max_request_body_mb).into_response();
    }
    next.run(req).await
}
