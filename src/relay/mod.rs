//! `/v1/*`: the OpenAI-compatible relay (the hot path). Unknown relay paths answer an
//! OpenAI-shaped 404 from [`crate::http::spa::fallback`]; OpenAI routes Tollgate does not
//! implement answer 501.

pub mod adaptor;
pub mod admission;
pub mod attempt;
pub mod audio;
pub mod auth;
pub mod body_budget;
pub mod body_limit;
pub mod body_read;
pub mod budget;
pub mod ceiling;
pub mod chat;
pub mod cloud_embed;
pub mod cohere;
pub mod components;
pub mod convert;
pub mod count;
pub mod count_guard;
pub mod dashboard;
pub mod detach;
pub mod durable;
pub mod embed;
pub mod ending;
pub mod estimate;
pub mod failure;
pub mod gemini;
pub mod keepalive;
pub mod media;
pub mod messages;
pub mod meter;
pub mod models;
pub mod outcome;
pub mod pick;
pub mod pipe;
pub mod plan;
pub mod playground;
pub mod price;
pub mod prompt;
pub mod prompt_count;
pub mod redact;
pub mod request_head;
pub mod responses;
pub mod settle;
pub mod spine;
pub mod sse;
pub mod stream;
pub mod system_prompt;
pub mod tokenize;
pub mod usage;
pub mod whole;
pub mod wire;

pub use spine::{Plan, run};

use crate::http::api::{Access, ApiRouter, Body, any, get, post};
use axum::http::Uri;

use crate::error::RelayError;

/// Every relay route.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route("/v1/chat/completions", post(Access::ApiKey, chat::relay))
        .route("/v1/completions", post(Access::ApiKey, chat::relay))
        .route("/v1/embeddings", post(Access::ApiKey, chat::relay))
        .route("/v1/moderations", post(Access::ApiKey, chat::relay))
        .route("/v1/images/generations", post(Access::ApiKey, chat::relay))
        .route("/v1/rerank", post(Access::ApiKey, chat::relay))
        .route("/v1/responses", post(Access::ApiKey, chat::relay))
        .route("/v1/audio/speech", post(Access::ApiKey, audio::speech))
        .route(
            "/v1/audio/transcriptions",
            post(Access::ApiKey, audio::upload).body(Body::Multipart),
        )
        .route(
            "/v1/audio/translations",
            post(Access::ApiKey, audio::upload).body(Body::Multipart),
        )
        .route("/v1/messages", post(Access::ApiKey, messages::messages))
        .route(
            "/v1/messages/count_tokens",
            post(Access::ApiKey, messages::count_tokens),
        )
        .route(
            "/v1beta/models/{target}",
            post(Access::ApiKey, gemini::generate),
        )
        .route("/pg/chat/completions", post(Access::User, playground::chat))
        .route("/v1/models", get(Access::ApiKey, models::list_models))
        .route("/v1/models/{model}", get(Access::ApiKey, models::get_model))
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
        .merge(dashboard::routes())
}

async fn not_implemented(uri: Uri) -> RelayError {
    RelayError::NotImplemented(uri.path().to_owned())
}
