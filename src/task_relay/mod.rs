//! The asynchronous task relays (reference §7): the Midjourney-proxy routes (`/mj/…`, also
//! under the speed-mode prefixes `/mj-fast`, `/mj-turbo`, `/mj-relax`), Suno (`/suno/…`) and
//! OpenAI videos (`/v1/videos`).
//!
//! A submit is admitted (the action's price reserved), forwarded to a channel of the family,
//! and settled when the upstream accepts it: the charge and its task row are written in one
//! transaction by the log writer, journalled together first ([`submit`]); a refusal releases
//! the reservation. The fetch routes read the local task table, scoped to the caller
//! ([`fetch`]); `/mj/image/{id}` proxies a task's stored image through the guarded outbound
//! client ([`image`]).
//!
//! - [`auth`]: the `mj-api-secret` header as the key, when `Authorization` says nothing.
//! - [`error`]: errors in each family's shape (Midjourney-proxy's `{description, type, code}`,
//!   Suno's `{code, message, data}`, OpenAI's elsewhere).
//! - [`mj`], [`suno`], [`video`]: each family's submit routes and request shaping.
//! - [`view`]: a stored task as each family's fetch answer shows it.

pub mod auth;
pub mod error;
pub mod fetch;
pub mod image;
pub mod mj;
pub mod price;
pub mod submit;
pub mod suno;
pub mod video;
pub mod view;

use axum::Router;

use crate::http::api::{Access, ApiRouter, Body, get, post};
use crate::state::AppState;

/// The speed-mode prefixes a Midjourney route is also served under (`""`: none).
pub const MJ_PREFIXES: [&str; 4] = ["", "/mj-fast", "/mj-turbo", "/mj-relax"];

/// The Midjourney-proxy submit actions served under `/mj/submit/`.
pub const MJ_SUBMITS: [&str; 11] = [
    "imagine",
    "change",
    "simple-change",
    "describe",
    "blend",
    "action",
    "modal",
    "shorten",
    "upload-discord-images",
    "edits",
    "video",
];

/// Every task relay route.
pub fn routes() -> ApiRouter {
    let mut router = ApiRouter::new();
    for prefix in MJ_PREFIXES {
        for action in MJ_SUBMITS {
            router = router.route(
                &format!("{prefix}/mj/submit/{action}"),
                post(Access::ApiKey, mj::submit),
            );
        }
        router = router
            .route(
                &format!("{prefix}/mj/insight-face/swap"),
                post(Access::ApiKey, mj::submit),
            )
            .route(
                &format!("{prefix}/mj/task/{{id}}/fetch"),
                get(Access::ApiKey, fetch::mj_task),
            )
            .route(
                &format!("{prefix}/mj/task/{{id}}/image-seed"),
                get(Access::ApiKey, mj::image_seed),
            )
            .route(
                &format!("{prefix}/mj/task/list-by-condition"),
                post(Access::ApiKey, fetch::mj_list),
            )
            .route(
                &format!("{prefix}/mj/image/{{id}}"),
                get(Access::Public, image::serve),
            );
    }
    router
        .route("/suno/submit/{action}", post(Access::ApiKey, suno::submit))
        .route("/suno/fetch", post(Access::ApiKey, fetch::suno_list))
        .route("/suno/fetch/{id}", get(Access::ApiKey, fetch::suno_task))
        .route(
            "/v1/videos",
            post(Access::ApiKey, video::submit).body(Body::Json),
        )
        .route("/v1/videos/{id}", get(Access::ApiKey, fetch::video))
        .route(
            "/v1/videos/{id}/content",
            get(Access::ApiKey, video::content),
        )
}

/// The layers every task route passes before the relay's intake: the `mj-api-secret` key and
/// the errors' family shape.
pub fn layer(router: Router<AppState>) -> Router<AppState> {
    router
        .layer(axum::middleware::from_fn(error::reshape))
        .layer(axum::middleware::from_fn(auth::mj_secret))
}
