//! Rate limits per user, API key and channel (P15 item 1): at most so many requests at once,
//! per minute and per day, and tokens per minute ([`Limits`], 0 = none), and for a channel the
//! same per upstream key ([`KeyLimit`], by the key's line; bound to the key, not the line: an
//! edit of the channel's keys moves each key's limits to its new line and drops those of a
//! deleted key, in the edit's transaction, [`follow_keys`]). Stored apart from the owners'
//! records in [`RATE_LIMITS`] (a new table that starts empty: no record layout changes, no
//! migration), set with their audit row in one transaction ([`replace`]). Group and model rules
//! are an option (`RateLimitRules`), not stored here.

use redb::{ReadTransaction, ReadableTable, WriteTransaction};
use serde::{Deserialize, Serialize};

use crate::tables::RATE_LIMITS;
use crate::{ChannelId, Result, TokenId, UserId, codec};

/// Whose limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Owner {
    /// Every request of a user (all their keys).
    User(UserId),
    /// One API key.
    Token(TokenId),
    /// One channel (all its keys), with per-key limits.
    Channel(ChannelId),
}

impl Owner {
    fn key(self) -> (u8, i64) {
        match self {
            Owner::User(u) => (0, u.0),
            Owner::Token(t) => (1, t.0),
            Owner::Channel(c) => (2, c.0),
        }
    }
}

/// The four limits of one owner; 0 means none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Requests in flight at once.
    #[serde(default)]
    pub concurrency_limit: u32,
    /// Requests per minute.
    #[serde(default)]
    pub rpm_limit: u32,
    /// Tokens (prompt + completion) per minute.
    #[serde(default)]
    pub tpm_limit: u32,
    /// Requests per day (the last 24 hours).
    #[serde(default)]
    pub rpd_limit: u32,
}

impl Limits {
    /// Whether no limit is set.
    pub fn is_none(&self) -> bool {
        *self == Limits::default()
    }
}

/// The limits of one upstream key of a channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyLimit {
    /// The key's line in the channel's key list (0 = the first).
    pub index: u32,
    /// Its limits.
    pub limits: Limits,
}

/// What is stored per owner.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnerLimits {
    /// The owner's own limits.
    pub limits: Limits,
    /// Per upstream key (channels only; empty otherwise).
    #[serde(default)]
    pub key_limits: Vec<KeyLimit>,
}

/// The most per-key entries one channel may have.
pub const MAX_KEY_LIMITS: usize = 1024;

/// Why limits were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitsError {
    /// `key_limits` on a user or an API key.
    #[error("only a channel has per-key limits")]
    KeyLimitsNotChannel,
    /// Two entries for one key.
    #[error("key {0} is given twice")]
    KeyTwice(u32),
    /// Too many per-key entries.
    #[error("at most {MAX_KEY_LIMITS} per-key limits")]
    TooManyKeys,
}

impl OwnerLimits {
    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        self.limits.is_none() && self.key_limits.iter().all(|k| k.limits.is_none())
    }

    /// Checks the shape for `owner` and drops per-key entries with no limit.
    pub fn validated(mut self, owner: Owner) -> std::result::Result<OwnerLimits, LimitsError> {
        self.key_limits.retain(|k| !k.limits.is_none());
        if !self.key_limits.is_empty() && !matches!(owner, Owner::Channel(_)) {
            return Err(LimitsError::KeyLimitsNotChannel);
        }
        if self.key_limits.len() > MAX_KEY_LIMITS {
            return Err(LimitsError::TooManyKeys);
        }
        self.key_limits.sort_by_key(|k| k.index);
        if let Some(w) = self
            .key_limits
            .windows(2)
            .find(|w| w[0].index == w[1].index)
        {
            return Err(LimitsError::KeyTwice(w[0].index));
        }
        Ok(self)
    }

    /// The per-key limits after the channel's key lines went from `old` to `new`: each follows
    /// its key (the same text) to its new line, the `n`-th copy of a key text to its `n`-th copy;
    /// a key no longer there takes its limits with it. `None` when nothing moved.
    pub fn followed(&self, old: &[&str], new: &[&str]) -> Option<OwnerLimits> {
        let mut taken = vec![false; new.len()];
        let mut moved = false;
        let mut key_limits: Vec<KeyLimit> = Vec::with_capacity(self.key_limits.len());
        for k in &self.key_limits {
            let line = usize::try_from(k.index).ok();
            let Some(text) = line.and_then(|l| old.get(l)) else {
                // A line past the old list keys nothing: dropped.
                moved = true;
                continue;
            };
            let copy = line.map_or(0, |l| old[..l].iter().filter(|t| *t == text).count());
            let found = new
                .iter()
                .enumerate()
                .filter(|(_, t)| *t == text)
                .nth(copy)
                .map(|(i, _)| i);
            match found
                .filter(|i| !taken[*i])
                .and_then(|i| Some((i, u32::try_from(i).ok()?)))
            {
                Some((i, index)) => {
                    taken[i] = true;
                    moved |= index != k.index;
                    key_limits.push(KeyLimit { index, ..*k });
                }
                None => moved = true,
            }
        }
        key_limits.sort_by_key(|k| k.index);
        moved.then_some(OwnerLimits {
            limits: self.limits,
            key_limits,
        })
    }

    /// The limits of the channel's key on line `index` (none when not set).
    pub fn key(&self, index: u32) -> Limits {
        self.key_limits
            .binary_search_by_key(&index, |k| k.index)
            .map(|i| self.key_limits[i].limits)
            .unwrap_or_default()
    }
}

fn decode(bytes: Option<redb::AccessGuard<'_, &'static [u8]>>) -> Result<OwnerLimits> {
    match bytes {
        Some(bytes) => codec::decode(bytes.value()),
        None => Ok(OwnerLimits::default()),
    }
}

/// The limits of `owner` (none when not set).
pub fn get(rtx: &ReadTransaction, owner: Owner) -> Result<OwnerLimits> {
    let table = match rtx.open_table(RATE_LIMITS) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(OwnerLimits::default()),
        Err(e) => return Err(e.into()),
    };
    decode(table.get(owner.key())?)
}

/// Every owner's limits (the engine's snapshot at start).
pub fn all(rtx: &ReadTransaction) -> Result<Vec<(Owner, OwnerLimits)>> {
    let table = match rtx.open_table(RATE_LIMITS) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let mut out = Vec::new();
    for entry in table.iter()? {
        let (key, value) = entry?;
        let (kind, id) = key.value();
        let owner = match kind {
            0 => Owner::User(UserId(id)),
            1 => Owner::Token(TokenId(id)),
            _ => Owner::Channel(ChannelId(id)),
        };
        out.push((owner, codec::decode(value.value())?));
    }
    Ok(out)
}

/// Stores `limits` for `owner` (empty ones remove the row) and appends the audit row `row`
/// makes of the limits it replaces, in `wtx`; returns those.
pub fn replace(
    wtx: &WriteTransaction,
    owner: Owner,
    limits: &OwnerLimits,
    row: impl FnOnce(&OwnerLimits) -> crate::audit::AuditEntry,
) -> Result<OwnerLimits> {
    let mut table = wtx.open_table(RATE_LIMITS)?;
    let before = decode(table.get(owner.key())?)?;
    if limits.is_empty() {
        table.remove(owner.key())?;
    } else {
        table.insert(owner.key(), codec::encode(limits)?.as_slice())?;
    }
    drop(table);
    crate::audit::append(wtx, row(&before))?;
    Ok(before)
}

/// Moves `channel`'s per-key limits with their keys when its key lines go from `old` to `new`
/// (an edit of its keys, in the edit's transaction `wtx`; [`OwnerLimits::followed`]). Returns
/// the channel's limits when they changed, for the engine.
pub fn follow_keys(
    wtx: &WriteTransaction,
    channel: ChannelId,
    old: &[&str],
    new: &[&str],
) -> Result<Option<OwnerLimits>> {
    let owner = Owner::Channel(channel);
    let mut table = wtx.open_table(RATE_LIMITS)?;
    let current = decode(table.get(owner.key())?)?;
    let Some(next) = current.followed(old, new) else {
        return Ok(None);
    };
    if next.is_empty() {
        table.remove(owner.key())?;
    } else {
        table.insert(owner.key(), codec::encode(&next)?.as_slice())?;
    }
    Ok(Some(next))
}

/// Forgets a deleted owner's limits.
pub fn remove(wtx: &WriteTransaction, owner: Owner) -> Result<()> {
    wtx.open_table(RATE_LIMITS)?.remove(owner.key())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(index: u32, rpm: u32) -> KeyLimit {
        KeyLimit {
            index,
            limits: Limits {
                rpm_limit: rpm,
                ..Limits::default()
            },
        }
    }

    #[test]
    fn key_limits_are_a_channels_sorted_without_empty_entries() {
        let limits = OwnerLimits {
            limits: Limits::default(),
            key_limits: vec![key(3, 10), key(1, 0), key(0, 5)],
        };
        assert_eq!(
            limits.clone().validated(Owner::Token(TokenId(1))),
            Err(LimitsError::KeyLimitsNotChannel)
        );
        let ok = limits.validated(Owner::Channel(ChannelId(1))).unwrap();
        assert_eq!(ok.key_limits, vec![key(0, 5), key(3, 10)]);
        assert_eq!(ok.key(3).rpm_limit, 10);
        assert!(ok.key(1).is_none());
        let twice = OwnerLimits {
            limits: Limits::default(),
            key_limits: vec![key(2, 1), key(2, 3)],
        };
        assert_eq!(
            twice.validated(Owner::Channel(ChannelId(1))),
            Err(LimitsError::KeyTwice(2))
        );
    }

    #[test]
    fn key_limits_follow_their_keys_not_their_lines() {
        let limits = OwnerLimits {
            limits: Limits::default(),
            key_limits: vec![key(0, 1), key(1, 2), key(2, 3), key(3, 4)],
        };
        // a and c swap, b is deleted, d stays; the twin "d" keeps the first copy's limits.
        let old = ["a", "b", "c", "d"];
        let new = ["c", "d", "a", "d"];
        let moved = limits.followed(&old, &new).unwrap();
        assert_eq!(moved.key_limits, vec![key(0, 3), key(1, 4), key(2, 1)]);
        assert_eq!(limits.followed(&old, &old), None, "nothing moved");
        let appended = limits.followed(&old, &["a", "b", "c", "d", "e"]);
        assert_eq!(appended, None, "a key appended moves nothing");
        let twins = OwnerLimits {
            limits: Limits::default(),
            key_limits: vec![key(1, 7)],
        };
        let back = twins.followed(&["x", "x"], &["y", "x", "x"]).unwrap();
        assert_eq!(
            back.key_limits,
            vec![key(2, 7)],
            "the second copy stays second"
        );
    }

    #[test]
    fn a_record_survives_its_encoding() {
        let limits = OwnerLimits {
            limits: Limits {
                rpm_limit: 60,
                tpm_limit: 1000,
                ..Limits::default()
            },
            key_limits: vec![key(1, 2)],
        };
        let back = codec::decode::<OwnerLimits>(&codec::encode(&limits).unwrap()).unwrap();
        assert_eq!(back, limits);
    }
}
