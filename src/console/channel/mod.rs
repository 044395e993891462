//! `/api/channel/*`: channel administration (admin only; the key reveal is root only).
//! Handlers live in [`crud`], [`ops`] and [`tag`]; the rules in
//! [`crate::console::service::channel`].

pub mod crud;
pub mod ops;
pub mod tag;

use crate::http::api::{Access, ApiRouter, delete, get, post, put};

/// Channel routes. Static segments win over `{id}` captures (matchit's rule).
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route(
            "/api/channel/",
            get(Access::Admin, crud::list_channels)
                .post(Access::Admin, crud::create_channel)
                .put(Access::Admin, crud::update_channel),
        )
        .route(
            "/api/channel/search",
            get(Access::Admin, crud::search_channels),
        )
        .route(
            "/api/channel/disabled",
            delete(Access::Admin, crud::delete_disabled_channels),
        )
        .route(
            "/api/channel/batch",
            post(Access::Admin, crud::delete_channels),
        )
        .route("/api/channel/fix", post(Access::Admin, crud::fix_abilities))
        .route(
            "/api/channel/copy/{id}",
            post(Access::Admin, crud::copy_channel),
        )
        .route(
            "/api/channel/{id}",
            get(Access::Admin, crud::get_channel).delete(Access::Admin, crud::delete_channel),
        )
        .route(
            "/api/channel/{id}/",
            delete(Access::Admin, crud::delete_channel),
        )
        .route(
            "/api/channel/{id}/key",
            post(Access::Root, crud::reveal_channel_key),
        )
        .route("/api/channel/tag", put(Access::Admin, tag::edit_tag))
        .route(
            "/api/channel/tag/enabled",
            post(Access::Admin, tag::enable_tag),
        )
        .route(
            "/api/channel/tag/disabled",
            post(Access::Admin, tag::disable_tag),
        )
        .route(
            "/api/channel/batch/tag",
            post(Access::Admin, tag::tag_channels),
        )
        .route(
            "/api/channel/models",
            get(Access::Admin, ops::list_known_models),
        )
        .route(
            "/api/channel/models_enabled",
            get(Access::Admin, ops::list_enabled_models),
        )
        .route(
            "/api/channel/fetch_models",
            post(Access::Admin, ops::fetch_models),
        )
        .route("/api/channel/types", get(Access::Admin, ops::list_types))
        .route(
            "/api/channel/fetch_models/{id}",
            get(Access::Admin, ops::fetch_channel_models),
        )
        .route(
            "/api/channel/test",
            get(Access::Admin, ops::test_all_channels),
        )
        .route(
            "/api/channel/test/{id}",
            get(Access::Admin, ops::test_channel),
        )
        .route(
            "/api/channel/test_proxy",
            get(Access::Admin, ops::test_proxy).post(Access::Admin, ops::test_proxy_body),
        )
        .route(
            "/api/channel/update_balance",
            get(Access::Admin, ops::update_all_balances),
        )
        .route(
            "/api/channel/update_balance/{id}",
            get(Access::Admin, ops::update_balance),
        )
        .route(
            "/api/channel/update_balance/{id}/",
            get(Access::Admin, ops::update_balance),
        )
        .route("/api/group/", get(Access::Admin, ops::list_groups))
}
