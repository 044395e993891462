//! Bulk operations by tag: edit every channel of a tag, enable or disable a tag, and set the
//! tag of selected channels. Each runs in one transaction and then reloads the pool.

use serde::Deserialize;
use tollgate_storage::ChannelId;
use tollgate_storage::channels::{self, STATUS_ENABLED, STATUS_MANUALLY_DISABLED};

use super::input::{ChannelInput, apply};
use crate::error::{ConsoleError, ErrorCode};
use crate::state::AppState;

/// Body of PUT /api/channel/tag. Absent or empty fields are left alone.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct TagEdit {
    /// The tag whose channels change.
    pub tag: String,
    /// Rename the tag (an empty string is "no change").
    pub new_tag: Option<String>,
    /// New model mapping (JSON object text).
    #[serde(deserialize_with = "super::input::json_text")]
    pub model_mapping: Option<String>,
    /// New groups (comma text or list).
    #[serde(deserialize_with = "super::input::list")]
    pub groups: Option<String>,
    /// New models (comma text or list).
    #[serde(deserialize_with = "super::input::list")]
    pub models: Option<String>,
    /// New priority.
    #[serde(deserialize_with = "super::input::int")]
    pub priority: Option<i64>,
    /// New weight.
    #[serde(deserialize_with = "super::input::int")]
    pub weight: Option<i64>,
}

fn non_empty(v: Option<String>) -> Option<String> {
    v.filter(|s| !s.trim().is_empty())
}

fn require_tag(tag: &str) -> Result<String, ConsoleError> {
    let tag = tag.trim();
    if tag.is_empty() {
        return Err(ConsoleError::of(ErrorCode::TagEmpty));
    }
    Ok(tag.to_owned())
}

/// Applies `edit` to every channel tagged `edit.tag`; returns how many changed.
pub async fn edit(state: &AppState, edit: TagEdit) -> Result<usize, ConsoleError> {
    let tag = require_tag(&edit.tag)?;
    let changes = ChannelInput {
        tag: non_empty(edit.new_tag),
        model_mapping: non_empty(edit.model_mapping),
        groups: non_empty(edit.groups),
        models: non_empty(edit.models),
        priority: edit.priority,
        weight: edit.weight,
        ..ChannelInput::default()
    };
    let nothing = changes.tag.is_none()
        && changes.model_mapping.is_none()
        && changes.groups.is_none()
        && changes.models.is_none()
        && changes.priority.is_none()
        && changes.weight.is_none();
    if nothing {
        return Err(ConsoleError::of(ErrorCode::TagUpdateEmpty));
    }
    let ids = state
        .store
        .write(move |wtx| {
            let ids = channels::ids_by_tag_rw(wtx, &tag)?;
            for id in &ids {
                let current =
                    channels::get_rw(wtx, *id)?.ok_or(ConsoleError::NotFound("channel"))?;
                let one = ChannelInput {
                    tag: changes.tag.clone(),
                    model_mapping: changes.model_mapping.clone(),
                    groups: changes.groups.clone(),
                    models: changes.models.clone(),
                    priority: changes.priority,
                    weight: changes.weight,
                    ..ChannelInput::default()
                };
                let (next, _) = apply(one, current, false)?;
                channels::update(wtx, &next)?;
            }
            Ok::<_, ConsoleError>(ids)
        })
        .await?;
    state.channel_pool.reload_ids(&ids).await?;
    let count = ids.len();
    tracing::info!(count, "tag edited");
    Ok(count)
}

/// Enables (status 1) or disables (status 2) every channel tagged `tag`; returns the count.
pub async fn set_enabled(
    state: &AppState,
    tag: &str,
    enabled: bool,
) -> Result<usize, ConsoleError> {
    let tag = require_tag(tag)?;
    let status = if enabled {
        STATUS_ENABLED
    } else {
        STATUS_MANUALLY_DISABLED
    };
    let ids = state
        .store
        .write(move |wtx| {
            let ids = channels::ids_by_tag_rw(wtx, &tag)?;
            for id in &ids {
                if let Some(mut c) = channels::get_rw(wtx, *id)? {
                    if enabled && c.status != STATUS_ENABLED {
                        c.other_info = String::new();
                    }
                    c.status = status;
                    channels::update(wtx, &c)?;
                }
            }
            Ok::<_, ConsoleError>(ids)
        })
        .await?;
    state.channel_pool.reload_ids(&ids).await?;
    let count = ids.len();
    tracing::info!(count, enabled, "tag status changed");
    Ok(count)
}

/// Sets `tag` (non-empty) on the channels in `ids`; returns the count.
pub async fn set_tag(state: &AppState, ids: Vec<i64>, tag: String) -> Result<usize, ConsoleError> {
    if ids.is_empty() {
        return Err(ConsoleError::of(ErrorCode::SelectChannelsToTag));
    }
    let tag = require_tag(&tag)?;
    let tagged = state
        .store
        .write(move |wtx| {
            let mut tagged = Vec::new();
            for id in ids {
                if let Some(mut c) = channels::get_rw(wtx, ChannelId(id))? {
                    c.tag.clone_from(&tag);
                    channels::update(wtx, &c)?;
                    tagged.push(c.id);
                }
            }
            Ok::<_, ConsoleError>(tagged)
        })
        .await?;
    state.channel_pool.reload_ids(&tagged).await?;
    let count = tagged.len();
    tracing::info!(count, "channels tagged");
    Ok(count)
}
