//! The prompt-cache hit rate per channel ([`PROMPT_CACHE_HOURS`]): for each channel and hour, the
//! prompt tokens of the requests it answered and how many of them the provider read from its
//! prompt cache. Whoever inserts consume rows adds them in the same transaction ([`add_rows`],
//! the log writer's batches), one write per channel and hour however many rows name it.
//!
//! A row's prompt tokens include cache reads and writes whatever the wire (the meter normalises
//! OpenAI's `prompt_tokens_details.cached_tokens`, Anthropic's `cache_read_input_tokens` beside
//! its `input_tokens`, Gemini's `cachedContentTokenCount`); its cached count is the row's
//! `other.cache_tokens` (cache reads only: a cache write is a miss). Deleting old log rows keeps
//! these sums, as it keeps the dashboard aggregates.

use std::collections::BTreeMap;

use redb::{ReadTransaction, ReadableTable, WriteTransaction};
use serde::Deserialize;

use crate::logs::{LOG_CONSUME, LogEntry, keys};
use crate::tables::PROMPT_CACHE_HOURS;
use crate::{ChannelId, Result, StorageError, Store, channels};

/// Prompt and cached prompt tokens of one channel over some hours.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheUse {
    /// The channel.
    pub channel_id: i64,
    /// Its current name (empty when it was deleted; filled by [`read_per_channel`]).
    pub channel_name: String,
    /// Prompt tokens (cache reads and writes included).
    pub prompt: i64,
    /// Prompt tokens read from the provider's cache.
    pub cached: i64,
}

/// The part of a consume row's `other` read here (every other field skipped unread).
#[derive(Deserialize)]
struct OtherCache {
    #[serde(default)]
    cache_tokens: i64,
}

/// The cached prompt tokens a row's `other` reports (0 when absent, unreadable or negative),
/// never more than its prompt tokens.
fn cached_of(row: &LogEntry) -> i64 {
    if !row.other.contains("cache_tokens") || reads_no_cache(&row.other) {
        return 0;
    }
    serde_json::from_str::<OtherCache>(&row.other)
        .map_or(0, |o| o.cache_tokens)
        .clamp(0, row.prompt_tokens.max(0))
}

/// Whether `other` is known to report no cached tokens without parsing it (parsing every row's
/// `other` for it cost the log writer ~6,000 instructions a row, counted with callgrind): it
/// has no backslash, so every `"cache_tokens"` in it is a whole JSON string as written, and the
/// only one says `:0` next (what most rows say). Exact for any JSON: a top-level key would be
/// that one occurrence (so it says 0), and without one the count reads 0 anyway. Anything else
/// is left to the parser.
fn reads_no_cache(other: &str) -> bool {
    const KEY: &str = "\"cache_tokens\"";
    if other.contains('\\') {
        return false;
    }
    let mut found = other.match_indices(KEY);
    let Some((at, _)) = found.next() else {
        return false;
    };
    found.next().is_none()
        && matches!(
            other.as_bytes().get(at + KEY.len()..at + KEY.len() + 3),
            Some([b':', b'0', b',' | b'}'])
        )
}

/// The per-(channel, hour) sums of `rows`' consume rows (rows without a channel or without
/// prompt tokens are left out).
fn sums<'a>(
    rows: impl IntoIterator<Item = &'a LogEntry>,
) -> Result<BTreeMap<(i64, i64), (i64, i64)>> {
    let mut out: BTreeMap<(i64, i64), (i64, i64)> = BTreeMap::new();
    for row in rows {
        if row.log_type != LOG_CONSUME || row.channel_id <= 0 || row.prompt_tokens <= 0 {
            continue;
        }
        let sum = out
            .entry((row.channel_id, keys::hour(row.created_at)))
            .or_default();
        sum.0 = sum
            .0
            .checked_add(row.prompt_tokens)
            .ok_or(StorageError::Overflow)?;
        sum.1 = sum
            .1
            .checked_add(cached_of(row))
            .ok_or(StorageError::Overflow)?;
    }
    Ok(out)
}

/// Adds the prompt and cached tokens of `rows`' consume rows to their channels' hours: one read
/// and one write per channel and hour, however many rows name it.
pub fn add_rows<'a>(
    wtx: &WriteTransaction,
    rows: impl IntoIterator<Item = &'a LogEntry>,
) -> Result<()> {
    let sums = sums(rows)?;
    if sums.is_empty() {
        return Ok(());
    }
    let mut table = wtx.open_table(PROMPT_CACHE_HOURS)?;
    for (key, (prompt, cached)) in sums {
        let (p, c) = table.get(key)?.map_or((0, 0), |g| g.value());
        let add = |a: i64, b: i64| a.checked_add(b).ok_or(StorageError::Overflow);
        table.insert(key, (add(p, prompt)?, add(c, cached)?))?;
    }
    Ok(())
}

/// Per channel (ascending id), the sums over the hours overlapping `[start, end]` (Unix
/// seconds); only `channel` when given. Channels with no prompt tokens in the range are absent.
pub fn per_channel(
    rtx: &ReadTransaction,
    start: i64,
    end: i64,
    channel: Option<i64>,
) -> Result<Vec<CacheUse>> {
    let table = match rtx.open_table(PROMPT_CACHE_HOURS) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let (lo, hi) = (keys::hour(start), keys::hour(end));
    if lo > hi {
        return Ok(Vec::new());
    }
    let (first, last) = channel.map_or((i64::MIN, i64::MAX), |c| (c, c));
    let mut out: Vec<CacheUse> = Vec::new();
    for entry in table.range((first, i64::MIN)..=(last, i64::MAX))? {
        let (k, v) = entry?;
        let (channel_id, hour) = k.value();
        if hour < lo || hour > hi {
            continue;
        }
        let (prompt, cached) = v.value();
        if out.last().is_none_or(|u| u.channel_id != channel_id) {
            out.push(CacheUse {
                channel_id,
                ..CacheUse::default()
            });
        }
        if let Some(sum) = out.last_mut() {
            sum.prompt = sum
                .prompt
                .checked_add(prompt)
                .ok_or(StorageError::Overflow)?;
            sum.cached = sum
                .cached
                .checked_add(cached)
                .ok_or(StorageError::Overflow)?;
        }
    }
    Ok(out)
}

/// [`per_channel`] with each channel's current name, on its own read transaction off the async
/// workers.
pub async fn read_per_channel(
    store: &Store,
    start: i64,
    end: i64,
    channel: Option<i64>,
) -> Result<Vec<CacheUse>> {
    store
        .read(move |rtx| {
            let mut out = per_channel(rtx, start, end, channel)?;
            for sum in &mut out {
                if let Some(c) = channels::get(rtx, ChannelId(sum.channel_id))? {
                    sum.channel_name = c.name;
                }
            }
            Ok(out)
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(channel: i64, at: i64, prompt: i64, other: &str) -> LogEntry {
        LogEntry {
            log_type: LOG_CONSUME,
            channel_id: channel,
            created_at: at,
            prompt_tokens: prompt,
            other: other.to_owned(),
            ..LogEntry::default()
        }
    }

    #[test]
    fn sums_prompt_and_cached_tokens_per_channel_and_hour() {
        let rows = [
            row(
                1,
                3_600,
                100,
                r#"{"cache_ratio":0.1,"cache_tokens":40,"cost":3}"#,
            ),
            row(1, 7_199, 50, r#"{"cache_tokens":10}"#),
            row(1, 7_200, 20, r#"{"cache_tokens":0}"#),
            row(2, 3_600, 30, "{}"),
            row(2, 3_600, 30, "not json"),
            row(2, 3_601, 5, r#"{"cache_tokens":99}"#),
            // Nested only: no top-level count. Top-level 0 beside a nested count: 0.
            row(3, 3_600, 10, r#"{"a":{"cache_tokens":7}}"#),
            row(3, 3_600, 10, r#"{"a":{"cache_tokens":7},"cache_tokens":0}"#),
            row(3, 3_600, 10, r#"{"cache_tokens":0,"a":{"cache_tokens":7}}"#),
            // A 0 that is not the whole number, and a value in a string.
            row(4, 3_600, 10, r#"{"cache_tokens":05}"#),
            row(4, 3_600, 10, r#"{"cache_tokens":0.5}"#),
            row(
                4,
                3_600,
                10,
                r#"{"note":"\"cache_tokens\":0","cache_tokens":3}"#,
            ),
            // A top-level count written with spaces beside a nested 0.
            row(
                5,
                3_600,
                10,
                r#"{"a":{"cache_tokens":0},"cache_tokens" : 4}"#,
            ),
            row(0, 3_600, 30, r#"{"cache_tokens":9}"#),
            LogEntry {
                log_type: crate::logs::LOG_ERROR,
                ..row(1, 3_600, 30, r#"{"cache_tokens":9}"#)
            },
        ];
        let got = sums(rows.iter()).ok();
        assert_eq!(
            got,
            Some(BTreeMap::from([
                ((1, 3_600), (150, 50)),
                ((1, 7_200), (20, 0)),
                ((2, 3_600), (65, 5)),
                ((3, 3_600), (30, 0)),
                ((4, 3_600), (30, 3)),
                ((5, 3_600), (10, 4)),
            ]))
        );
    }
}
