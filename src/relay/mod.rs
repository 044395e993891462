//! `/v1/*`: the OpenAI-compatible relay (the hot path). Unknown relay paths answer an
//! OpenAI-shaped 404 from [`crate::http::spa::fallback`]; OpenAI routes Tollgate does not
//! implement answer 501.

pub mod adaptor;
pub mod attempt;
pub mod audio;
pub mod auth;
pub mod body_limit;
pub mod chat;
pub mod cohere;
pub mod count;
pub mod count_guard;
pub mod detach;
pub mod durable;
pub mod embed;
pub mod estimate;
pub mod failure;
pub mod gemini;
pub mod keepalive;
pub mod messages;
pub mod meter;
pub mod models;
pub mod pipe;
pub mod playground;
pub mod price;
pub mod prompt;
pub mod redact;
pub mod responses;
pub mod settle;
pub mod sse;
pub mod stream;
pub mod system_prompt;
pub mod tokenize;
pub mod usage;
pub mod wire;

use axum::Router;
use axum::http::Uri;
use axum::routing::{any, get, post};

use crate::error::RelayError;
use crate::state::AppState;

/// Every relay route.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/chat/completions", post(chat::relay))
        .route("/v1/completions", post(chat::relay))
        .route("/v1/embeddings", post(chat::relay))
        .route("/v1/moderations", post(chat::relay))
        .route("/v1/images/generations", post(chat::relay))
        .route("/v1/rerank", post(chat::relay))
        .route("/v1/responses", post(chat::relay))
        .route("/v1/audio/speech", post(audio::speech))
        .route("/v1/audio/transcriptions", post(audio::upload))
        .route("/v1/audio/translations", post(audio::upload))
        .route("/v1/messages", post(messages::messages))
        .route("/v1/messages/count_tokens", post(messages::count_tokens))
        .route("/v1beta/models/{target}", post(gemini::generate))
        .route("/pg/chat/completions", post(playground::chat))
        .route("/v1/models", get(models::list_models))
        .route("/v1/models/{model}", get(models::get_model))
        .route("/v1/files", any(not_implemented))
        .route("/v1/files/{*rest}", any(not_implemented))
        .route("/v1/fine_tuning/{*rest}", any(not_implemented))
        .route("/v1/batches", any(not_implemented))
        .route("/v1/batches/{*rest}", any(not_implemented))
        .route("/v1/assistants", any(not_implemented))
        .route("/v1/assistants/{*rest}", any(not_implemented))
        .route("/v1/threads", any(not_implemented))
        .route("/v1/threads/{*rest}", any(not_implemented))
}

async fn not_implemented(uri: Uri) -> RelayError {
    RelayError::NotImplemented(uri.path().to_owned())
}
