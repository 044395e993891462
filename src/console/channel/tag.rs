//! Handlers: tag edit, tag enable/disable, batch tag.

use axum::extract::State;
use serde::Deserialize;

use crate::console::service::channel::tag::{self, TagEdit};
use crate::error::ConsoleError;
use crate::http::envelope::{Envelope, ok};
use crate::http::extract::{AdminSession, ApiJson};
use crate::state::AppState;

/// Body naming a tag.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct TagBody {
    /// The tag.
    pub tag: String,
}

/// Body of POST /api/channel/batch/tag.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct BatchTagBody {
    /// Channels to tag.
    pub ids: Vec<i64>,
    /// The tag.
    pub tag: String,
}

/// PUT /api/channel/tag
pub async fn edit_tag(
    State(state): State<AppState>,
    _admin: AdminSession,
    ApiJson(edit): ApiJson<TagEdit>,
) -> Result<Envelope<usize>, ConsoleError> {
    Ok(ok(tag::edit(&state, edit).await?))
}

/// POST /api/channel/tag/enabled
pub async fn enable_tag(
    State(state): State<AppState>,
    _admin: AdminSession,
    ApiJson(body): ApiJson<TagBody>,
) -> Result<Envelope<usize>, ConsoleError> {
    Ok(ok(tag::set_enabled(&state, &body.tag, true).await?))
}

/// POST /api/channel/tag/disabled
pub async fn disable_tag(
    State(state): State<AppState>,
    _admin: AdminSession,
    ApiJson(body): ApiJson<TagBody>,
) -> Result<Envelope<usize>, ConsoleError> {
    Ok(ok(tag::set_enabled(&state, &body.tag, false).await?))
}

/// POST /api/channel/batch/tag
pub async fn tag_channels(
    State(state): State<AppState>,
    _admin: AdminSession,
    ApiJson(body): ApiJson<BatchTagBody>,
) -> Result<Envelope<usize>, ConsoleError> {
    Ok(ok(tag::set_tag(&state, body.ids, body.tag).await?))
}
