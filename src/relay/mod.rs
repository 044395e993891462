//! `/v1/*`: the OpenAI-compatible relay. Unknown relay paths answer an OpenAI-shaped 404 from
//! [`crate::http::spa::fallback`].

pub mod price;

use axum::Router;

use crate::state::AppState;

/// Every relay route.
pub fn routes() -> Router<AppState> {
    Router::new()
}
