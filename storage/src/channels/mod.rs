//! Channel records (spec 02 §3) with their ability index and tag index, kept in step in the
//! same write transaction as every channel change.
//!
//! - [`Channel`] is the stored record. Its `key` is a [`Secret`]: one key per line; a channel
//!   with several lines uses them in turn, round-robin per request (the channel pool keeps the
//!   cursor). Only this module's storage encoding writes the real key.
//! - [`abilities`]: the (group, model, channel) index the router is derived from, and
//!   [`abilities::rebuild`] behind POST /api/channel/fix.
//! - [`query`]: listing with ordering, offset/limit and a total.
//! - [`other_info`]: the status reason and the disabled keys kept in `other_info`.
//! - [`with_used`]: records with the quota used through each (list and detail).

pub mod abilities;
pub mod other_info;
pub mod query;
pub mod with_used;

use redb::{ReadTransaction, ReadableTable, WriteTransaction};
use serde::{Deserialize, Serialize};

use crate::ids::ChannelId;
use crate::secret::Secret;
use crate::tables::{CHANNEL_BY_TAG, CHANNELS};
use crate::{Quota, Result, StorageError, codec, meta};

/// Status of a channel the router may use.
pub const STATUS_ENABLED: i32 = 1;
/// Status of a channel an admin disabled (never re-enabled automatically).
pub const STATUS_MANUALLY_DISABLED: i32 = 2;
/// Status of a channel the health rules disabled (re-tested by auto-enable).
pub const STATUS_AUTO_DISABLED: i32 = 3;

/// A channel: one upstream provider account (spec 02 §3, reference §4.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Channel {
    /// Id, allocated from the `channels` sequence.
    pub id: ChannelId,
    /// Display name.
    pub name: String,
    /// Provider type id (see the type table in the server crate).
    pub channel_type: i32,
    /// The upstream key(s), one per line. Write-only over the API.
    #[serde(with = "crate::secret::stored")]
    pub key: Secret,
    /// Sent upstream as `OpenAI-Organization` when set.
    pub openai_organization: String,
    /// Refuse prompts above this many tokens (0 = no limit).
    pub max_input_tokens: i64,
    /// Upstream base URL without a trailing slash; empty = the type's default.
    pub base_url: String,
    /// Type-specific extra (Azure API version, Spark version, …).
    pub other: String,
    /// JSON object: client model name → upstream model name.
    pub model_mapping: String,
    /// JSON object: upstream status → status reported to the client.
    pub status_code_mapping: String,
    /// Comma-separated models this channel serves.
    pub models: String,
    /// Comma-separated groups this channel serves.
    pub group: String,
    /// 1 when the health rules may auto-disable this channel, else 0.
    pub auto_ban: i32,
    /// Model used by the channel test (empty = first model).
    pub test_model: String,
    /// Outbound proxy URL for this channel (empty = direct).
    pub proxy: String,
    /// Higher is preferred; the router tries tiers from the highest down.
    pub priority: i64,
    /// Relative share inside a priority tier (≥ 0).
    pub weight: i64,
    /// Free label for bulk operations.
    pub tag: String,
    /// JSON object of per-channel settings.
    pub setting: String,
    /// JSON object merged into upstream request bodies.
    pub param_override: String,
    /// Quota spent through this channel.
    pub used_quota: Quota,
    /// Last known upstream balance in US$.
    pub balance: f64,
    /// Last measured test latency in milliseconds (0 = untested).
    pub response_time: i64,
    /// 1 enabled, 2 manually disabled, 3 auto-disabled.
    pub status: i32,
    /// JSON object written by the system (status_reason, status_time, …).
    pub other_info: String,
    /// Unix seconds of creation.
    pub created_time: i64,
    /// Unix seconds of the last test (0 = never).
    pub test_time: i64,
    /// Unix seconds of the last balance update (0 = never).
    pub balance_updated_time: i64,
}

impl Channel {
    /// The models as a list (trimmed, empty entries dropped).
    pub fn model_list(&self) -> Vec<&str> {
        split_list(&self.models)
    }

    /// The groups as a list (trimmed, empty entries dropped).
    pub fn group_list(&self) -> Vec<&str> {
        split_list(&self.group)
    }

    /// The non-empty key lines, in order.
    pub fn key_lines(&self) -> Vec<&str> {
        self.key
            .expose()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect()
    }

    /// True when the router may use this channel.
    pub fn is_enabled(&self) -> bool {
        self.status == STATUS_ENABLED
    }
}

/// Splits comma-separated text into trimmed, non-empty items.
pub fn split_list(text: &str) -> Vec<&str> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

fn load(table: &impl ReadableTable<i64, &'static [u8]>, id: ChannelId) -> Result<Option<Channel>> {
    match table.get(id.0)? {
        Some(guard) => Ok(Some(codec::decode(guard.value())?)),
        None => Ok(None),
    }
}

fn load_all(table: &impl ReadableTable<i64, &'static [u8]>) -> Result<Vec<Channel>> {
    let mut out = Vec::new();
    for entry in table.iter()? {
        let (_, value) = entry?;
        out.push(codec::decode(value.value())?);
    }
    Ok(out)
}

/// Stores a new channel; `channel.id` is ignored and a fresh id is allocated.
pub fn insert(wtx: &WriteTransaction, mut channel: Channel) -> Result<Channel> {
    channel.id = ChannelId(meta::next_id(wtx, "channels")?);
    write(wtx, None, &channel)?;
    Ok(channel)
}

/// Replaces a channel, moving its ability and tag index entries.
pub fn update(wtx: &WriteTransaction, channel: &Channel) -> Result<()> {
    let old = get_rw(wtx, channel.id)?.ok_or(StorageError::NotFound { what: "channel" })?;
    write(wtx, Some(&old), channel)
}

/// Deletes a channel and its index entries; returns the deleted record.
pub fn delete(wtx: &WriteTransaction, id: ChannelId) -> Result<Option<Channel>> {
    let Some(old) = get_rw(wtx, id)? else {
        return Ok(None);
    };
    abilities::remove_for(wtx, &old)?;
    if !old.tag.is_empty() {
        wtx.open_table(CHANNEL_BY_TAG)?
            .remove((old.tag.as_str(), id.0))?;
    }
    wtx.open_table(CHANNELS)?.remove(id.0)?;
    crate::channel_usage::remove(wtx, id)?;
    crate::limits::remove(wtx, crate::limits::Owner::Channel(id))?;
    Ok(Some(old))
}

/// Writes `channel` under its own id with its ability and tag index entries (moving those of
/// `old`, the record it replaces).
pub(crate) fn write(
    wtx: &WriteTransaction,
    old: Option<&Channel>,
    channel: &Channel,
) -> Result<()> {
    if let Some(old) = old {
        abilities::remove_for(wtx, old)?;
        if !old.tag.is_empty() && old.tag != channel.tag {
            wtx.open_table(CHANNEL_BY_TAG)?
                .remove((old.tag.as_str(), old.id.0))?;
        }
    }
    abilities::insert_for(wtx, channel)?;
    if !channel.tag.is_empty() {
        wtx.open_table(CHANNEL_BY_TAG)?
            .insert((channel.tag.as_str(), channel.id.0), ())?;
    }
    let bytes = codec::encode(channel)?;
    wtx.open_table(CHANNELS)?
        .insert(channel.id.0, bytes.as_slice())?;
    Ok(())
}

/// Reads a channel.
pub fn get(rtx: &ReadTransaction, id: ChannelId) -> Result<Option<Channel>> {
    load(&rtx.open_table(CHANNELS)?, id)
}

/// Reads the channels `ids` in one transaction, each with its record or `None` when it is gone
/// (in the order given).
pub fn get_many(
    rtx: &ReadTransaction,
    ids: &[ChannelId],
) -> Result<Vec<(ChannelId, Option<Channel>)>> {
    let table = rtx.open_table(CHANNELS)?;
    ids.iter().map(|&id| Ok((id, load(&table, id)?))).collect()
}

/// Reads a channel inside a write transaction.
pub fn get_rw(wtx: &WriteTransaction, id: ChannelId) -> Result<Option<Channel>> {
    load(&wtx.open_table(CHANNELS)?, id)
}

/// Every channel, by ascending id.
pub fn list_all(rtx: &ReadTransaction) -> Result<Vec<Channel>> {
    load_all(&rtx.open_table(CHANNELS)?)
}

/// Every channel, by ascending id, inside a write transaction.
pub fn list_all_rw(wtx: &WriteTransaction) -> Result<Vec<Channel>> {
    load_all(&wtx.open_table(CHANNELS)?)
}

/// Ids of the channels carrying `tag`, ascending (empty tag → none).
pub fn ids_by_tag_rw(wtx: &WriteTransaction, tag: &str) -> Result<Vec<ChannelId>> {
    if tag.is_empty() {
        return Ok(Vec::new());
    }
    let table = wtx.open_table(CHANNEL_BY_TAG)?;
    let mut ids = Vec::new();
    for entry in table.range((tag, i64::MIN)..=(tag, i64::MAX))? {
        let (key, _) = entry?;
        ids.push(ChannelId(key.value().1));
    }
    Ok(ids)
}

#[cfg(test)]
mod tests;
