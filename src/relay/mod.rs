//! `/v1/*`: the OpenAI-compatible relay (the hot path). Unknown relay paths answer an
//! OpenAI-shaped 404 from [`crate::http::spa::fallback`]; OpenAI routes Tollgate does not
//! implement answer 501.
//!
//! The folder by role:
//!
//! | folder | holds |
//! |---|---|
//! | [`routes`] | the route families: each parses its request into a [`Plan`] (chat and the OpenAI JSON routes, convert for the adaptor clients, messages, gemini, responses, cohere, embed, audio, count, playground, models, dashboard) and [`routes::plan`], which picks the family |
//! | [`pipeline`] | the phases every plan runs through, wired once in [`pipeline::spine`] ([`run`]): auth, admission, detach, pick, attempt, outcome, failure, whole, stream, pipe, meter, settle, durable, and their limits and helpers |
//! | [`measure`] | counting and pricing: request heads, prompt counts, estimates, tokenizers, usage, prices, component prices |
//! | [`adaptor`] | how each transport reaches its upstream: URLs, credentials, signing, body fixes, cloud embeddings, channel system prompts |
//! | [`wire`] | the wire formats and their conversions to and from the hub (OpenAI chat) |
//!
//! Routes use the pipeline, measure, adaptor and wire; the pipeline uses measure, adaptor and
//! wire (and the routes only for the client's error shape when the intake refuses a body:
//! `pipeline::body_limit`); measure, adaptor and wire import no route.

pub mod adaptor;
pub mod measure;
pub mod pipeline;
pub mod routes;
pub mod wire;

pub use pipeline::spine::{Plan, run};

use crate::http::api::{Access, ApiRouter, Body, any, get, post};
use axum::http::Uri;

use crate::error::RelayError;

/// Every relay route.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route(
            "/v1/chat/completions",
            post(Access::ApiKey, routes::chat::relay),
        )
        .route("/v1/completions", post(Access::ApiKey, routes::chat::relay))
        .route("/v1/embeddings", post(Access::ApiKey, routes::chat::relay))
        .route("/v1/moderations", post(Access::ApiKey, routes::chat::relay))
        .route(
            "/v1/images/generations",
            post(Access::ApiKey, routes::chat::relay),
        )
        .route("/v1/rerank", post(Access::ApiKey, routes::chat::relay))
        .route("/v1/responses", post(Access::ApiKey, routes::chat::relay))
        .route(
            "/v1/audio/speech",
            post(Access::ApiKey, routes::audio::speech),
        )
        .route(
            "/v1/audio/transcriptions",
            post(Access::ApiKey, routes::audio::upload).body(Body::Multipart),
        )
        .route(
            "/v1/audio/translations",
            post(Access::ApiKey, routes::audio::upload).body(Body::Multipart),
        )
        .route(
            "/v1/messages",
            post(Access::ApiKey, routes::messages::messages),
        )
        .route(
            "/v1/messages/count_tokens",
            post(Access::ApiKey, routes::messages::count_tokens),
        )
        .route(
            "/v1beta/models/{target}",
            post(Access::ApiKey, routes::gemini::generate),
        )
        .route(
            "/pg/chat/completions",
            post(Access::User, routes::playground::chat),
        )
        .route(
            "/v1/models",
            get(Access::ApiKey, routes::models::list_models),
        )
        .route(
            "/v1/models/{model}",
            get(Access::ApiKey, routes::models::get_model),
        )
        .route("/v1/files", any(Access::Public, not_implemented))
        .route("/v1/files/{*rest}", any(Access::Public, not_implemented))
        .route(
            "/v1/fine_tuning/{*rest}",
            any(Access::Public, not_implemented),
        )
        .route("/v1/batches", any(Access::Public, not_implemented))
        .route("/v1/batches/{*rest}", any(Access::Public, not_implemented))
        .route("/v1/assistants", any(Access::Public, not_implemented))
        .route(
            "/v1/assistants/{*rest}",
            any(Access::Public, not_implemented),
        )
        .route("/v1/threads", any(Access::Public, not_implemented))
        .route("/v1/threads/{*rest}", any(Access::Public, not_implemented))
        .merge(routes::dashboard::routes())
}

async fn not_implemented(uri: Uri) -> RelayError {
    RelayError::NotImplemented(uri.path().to_owned())
}
