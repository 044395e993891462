//! The ability index: one row per (group, model, channel) a channel serves, copying the
//! channel's priority, weight, tag and whether it is enabled (reference §2.3.1).
//!
//! Rows are written in the same transaction as the channel, so the index never disagrees with
//! the records; [`rebuild`] recomputes it from scratch (POST /api/channel/fix) and [`verify`]
//! counts disagreements (used by /fix's report and by tests).

use std::collections::BTreeMap;

use redb::{ReadTransaction, ReadableTable, WriteTransaction};
use serde::{Deserialize, Serialize};

use super::{Channel, list_all_rw};
use crate::ids::ChannelId;
use crate::tables::{ABILITIES, CHANNELS};
use crate::{Result, codec};

/// One row of the index (the key is group, model, channel id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ability {
    /// The channel's priority.
    pub priority: i64,
    /// The channel's weight.
    pub weight: i64,
    /// The channel's tag.
    pub tag: String,
    /// Whether the channel is enabled (status 1).
    pub enabled: bool,
}

/// A row with its key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct AbilityKey {
    /// Group name.
    pub group: String,
    /// Model name.
    pub model: String,
    /// Channel id.
    pub channel: ChannelId,
}

/// What [`rebuild`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct RebuildReport {
    /// Channels indexed.
    pub channels: usize,
    /// Rows written.
    pub abilities: usize,
    /// Rows that were missing, stale or wrong before the rebuild.
    pub repaired: usize,
}

/// The rows `channel` implies.
pub fn expected(channel: &Channel) -> Vec<(AbilityKey, Ability)> {
    let ability = Ability {
        priority: channel.priority,
        weight: channel.weight,
        tag: channel.tag.clone(),
        enabled: channel.is_enabled(),
    };
    let mut rows = BTreeMap::new();
    for group in channel.group_list() {
        for model in channel.model_list() {
            let key = AbilityKey {
                group: group.to_owned(),
                model: model.to_owned(),
                channel: channel.id,
            };
            rows.insert(key, ability.clone());
        }
    }
    rows.into_iter().collect()
}

pub(super) fn insert_for(wtx: &WriteTransaction, channel: &Channel) -> Result<usize> {
    let mut table = wtx.open_table(ABILITIES)?;
    let rows = expected(channel);
    for (key, ability) in &rows {
        let bytes = codec::encode(ability)?;
        table.insert(
            (key.group.as_str(), key.model.as_str(), key.channel.0),
            bytes.as_slice(),
        )?;
    }
    Ok(rows.len())
}

pub(super) fn remove_for(wtx: &WriteTransaction, channel: &Channel) -> Result<()> {
    let mut table = wtx.open_table(ABILITIES)?;
    for (key, _) in expected(channel) {
        table.remove((key.group.as_str(), key.model.as_str(), key.channel.0))?;
    }
    Ok(())
}

fn read_rows(
    table: &impl ReadableTable<(&'static str, &'static str, i64), &'static [u8]>,
) -> Result<BTreeMap<AbilityKey, Ability>> {
    let mut out = BTreeMap::new();
    for entry in table.iter()? {
        let (key, value) = entry?;
        let (group, model, channel) = key.value();
        let row = AbilityKey {
            group: group.to_owned(),
            model: model.to_owned(),
            channel: ChannelId(channel),
        };
        out.insert(row, codec::decode(value.value())?);
    }
    Ok(out)
}

/// Every row of the index.
pub fn list(rtx: &ReadTransaction) -> Result<BTreeMap<AbilityKey, Ability>> {
    read_rows(&rtx.open_table(ABILITIES)?)
}

fn mismatches(actual: &BTreeMap<AbilityKey, Ability>, channels: &[Channel]) -> usize {
    let wanted: BTreeMap<AbilityKey, Ability> = channels.iter().flat_map(expected).collect();
    let wrong_or_missing = wanted
        .iter()
        .filter(|(k, v)| actual.get(*k) != Some(*v))
        .count();
    let stale = actual.keys().filter(|k| !wanted.contains_key(*k)).count();
    wrong_or_missing + stale
}

/// Number of rows that disagree with the channel records (0 when consistent).
pub fn verify(rtx: &ReadTransaction) -> Result<usize> {
    let channels = super::load_all(&rtx.open_table(CHANNELS)?)?;
    Ok(mismatches(&list(rtx)?, &channels))
}

/// Drops the index and writes it again from every channel record.
pub fn rebuild(wtx: &WriteTransaction) -> Result<RebuildReport> {
    let channels = list_all_rw(wtx)?;
    let repaired = mismatches(&read_rows(&wtx.open_table(ABILITIES)?)?, &channels);
    wtx.delete_table(ABILITIES)?;
    let mut abilities = 0;
    for channel in &channels {
        abilities += insert_for(wtx, channel)?;
    }
    Ok(RebuildReport {
        channels: channels.len(),
        abilities,
        repaired,
    })
}
