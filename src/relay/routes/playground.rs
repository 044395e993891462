//! `POST /pg/chat/completions`: the console playground. The caller is the logged-in user (the
//! session cookie; system access tokens are refused), not an API key: no token quota is
//! reserved or charged, only the user's balance, and the body's `group` may pick another group
//! the user may use. Everything else — admission, routing, failover, billing, logs — is the
//! OpenAI chat path's.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::Response;
use serde::Deserialize;
use tollgate_actors::token_index::TokenEntry;
use tollgate_storage::TokenId;
use tollgate_storage::tokens::STATUS_ENABLED;

use crate::console::service::personal::usable_groups;
use crate::error::RelayError;
use crate::http::client_ip::ClientIp;
use crate::http::extract::Session;
use crate::relay::pipeline::auth::Caller;
use crate::state::AppState;

/// The token name the playground's log rows carry (it uses no API key), so the usage log can
/// tell its requests apart and filter them.
pub const PLAYGROUND_TOKEN_NAME: &str = "playground";

/// The part of the body the playground reads itself.
#[derive(Debug, Default, Deserialize)]
struct PlaygroundHead {
    #[serde(default)]
    group: String,
}

/// Handles a playground chat request.
pub async fn chat(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    session: Session,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, RelayError> {
    if headers.contains_key(header::AUTHORIZATION) {
        return Err(RelayError::Forbidden(
            "the playground takes the console session; access tokens and API keys are not accepted here"
                .into(),
        ));
    }
    let user = state
        .users
        .get(session.user.id)
        .await
        .map_err(|e| RelayError::Internal(format!("loading the user: {e}")))?
        .ok_or(RelayError::InvalidKey("the user no longer exists"))?;
    let head: PlaygroundHead = serde_json::from_slice(&body).unwrap_or_default();
    let group = if head.group.is_empty() || head.group == user.group {
        user.group.clone()
    } else if usable_groups(&state, &session.user).contains_key(&head.group) {
        head.group
    } else {
        return Err(RelayError::Forbidden(format!(
            "group {} is not available to you",
            head.group
        )));
    };
    let token = Arc::new(TokenEntry {
        id: TokenId(0),
        user_id: user.id,
        name: PLAYGROUND_TOKEN_NAME.to_owned(),
        status: STATUS_ENABLED,
        expired_time: -1,
        unlimited_quota: true,
        model_limits: None,
        allow_ips: Vec::new(),
        group: String::new(),
    });
    let caller = Caller {
        token,
        user,
        group,
        pinned: None,
        ip,
        playground: true,
        max_cost: None,
    };
    crate::relay::routes::chat::serve(state, caller, body, "/v1/chat/completions").await
}
