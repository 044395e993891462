//! `/api/channel/*`: channel administration (admin only; the key reveal is root only).
//! Handlers live in [`crud`], [`ops`] and [`tag`]; the rules in
//! [`crate::console::service::channel`].

pub mod crud;
pub mod ops;
pub mod tag;

use axum::Router;
use axum::routing::{delete, get, post, put};

use crate::state::AppState;

/// Channel routes. Static segments win over `{id}` captures (matchit's rule).
pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/api/channel/",
            get(crud::list_channels)
                .post(crud::create_channel)
                .put(crud::update_channel),
        )
        .route("/api/channel/search", get(crud::search_channels))
        .route(
            "/api/channel/disabled",
            delete(crud::delete_disabled_channels),
        )
        .route("/api/channel/batch", post(crud::delete_channels))
        .route("/api/channel/fix", post(crud::fix_abilities))
        .route("/api/channel/copy/{id}", post(crud::copy_channel))
        .route(
            "/api/channel/{id}",
            get(crud::get_channel).delete(crud::delete_channel),
        )
        .route("/api/channel/{id}/", delete(crud::delete_channel))
        .route("/api/channel/{id}/key", post(crud::reveal_channel_key))
        .route("/api/channel/tag", put(tag::edit_tag))
        .route("/api/channel/tag/enabled", post(tag::enable_tag))
        .route("/api/channel/tag/disabled", post(tag::disable_tag))
        .route("/api/channel/batch/tag", post(tag::tag_channels))
        .route("/api/channel/types", get(ops::list_types))
        .route("/api/channel/models", get(ops::list_known_models))
        .route("/api/channel/models_enabled", get(ops::list_enabled_models))
        .route("/api/channel/fetch_models", post(ops::fetch_models))
        .route(
            "/api/channel/fetch_models/{id}",
            get(ops::fetch_channel_models),
        )
        .route("/api/channel/test", get(ops::test_all_channels))
        .route("/api/channel/test/{id}", get(ops::test_channel))
        .route(
            "/api/channel/test_proxy",
            get(ops::test_proxy).post(ops::test_proxy_body),
        )
        .route("/api/channel/update_balance", get(ops::update_all_balances))
        .route("/api/channel/update_balance/{id}", get(ops::update_balance))
        .route(
            "/api/channel/update_balance/{id}/",
            get(ops::update_balance),
        )
        .route("/api/group/", get(ops::list_groups))
}
