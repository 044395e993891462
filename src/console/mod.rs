//! `/api/*`: the console API. One module per resource, each exposing `routes()` with only
//! `.route(...)` lines and thin handlers; the rules live in [`service`].

pub mod auth;
pub mod channel;
pub mod option;
pub mod service;
pub mod setup;
pub mod status;

use axum::Router;

use crate::state::AppState;

/// Every console route.
pub fn routes() -> Router<AppState> {
    Router::new()
        .merge(setup::routes())
        .merge(status::routes())
        .merge(option::routes())
        .merge(auth::routes())
        .merge(channel::routes())
}
