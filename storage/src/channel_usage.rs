//! Quota used through each channel ([`CHANNEL_USED`]): whoever inserts consume rows adds them
//! per channel in the same transaction ([`add_rows`]) — the log writer's batches, a task's
//! charge and its refund ([`crate::tasks`]) — so a channel's used
//! quota always equals the sum of its consume rows; the console reads it beside the channel
//! record ([`used`], [`used_of`]). Deleting old log rows keeps it (it is history, as the users'
//! used quota is).

use std::collections::BTreeMap;

use redb::{ReadTransaction, ReadableTable, WriteTransaction};

use crate::logs::{LOG_CONSUME, LogEntry};
use crate::tables::CHANNEL_USED;
use crate::{ChannelId, Quota, Result, StorageError};

/// The per-channel sums of `rows`' consume rows (rows without a channel are left out).
fn sums<'a>(rows: impl IntoIterator<Item = &'a LogEntry>) -> Result<BTreeMap<i64, i64>> {
    let mut per_channel: BTreeMap<i64, i64> = BTreeMap::new();
    for row in rows {
        if row.log_type != LOG_CONSUME || row.channel_id <= 0 || row.quota == 0 {
            continue;
        }
        let sum = per_channel.entry(row.channel_id).or_default();
        *sum = sum.checked_add(row.quota).ok_or(StorageError::Overflow)?;
    }
    Ok(per_channel)
}

/// Adds the quota of `rows`' consume rows to their channels' used quota: one read and one
/// write per channel, however many rows name it. A negative row (a refund) moves it back.
pub fn add_rows<'a>(
    wtx: &WriteTransaction,
    rows: impl IntoIterator<Item = &'a LogEntry>,
) -> Result<()> {
    let per_channel = sums(rows)?;
    if per_channel.is_empty() {
        return Ok(());
    }
    let mut table = wtx.open_table(CHANNEL_USED)?;
    for (channel, delta) in per_channel {
        let old = table.get(channel)?.map_or(0, |g| g.value());
        let next = old.checked_add(delta).ok_or(StorageError::Overflow)?;
        table.insert(channel, next)?;
    }
    Ok(())
}

/// Forgets a deleted channel's count.
pub fn remove(wtx: &WriteTransaction, channel: ChannelId) -> Result<()> {
    wtx.open_table(CHANNEL_USED)?.remove(channel.0)?;
    Ok(())
}

/// Quota used through `channel` (0 when nothing was counted yet).
pub fn used(rtx: &ReadTransaction, channel: ChannelId) -> Result<Quota> {
    Ok(used_of(rtx, &[channel])?
        .first()
        .copied()
        .unwrap_or(Quota::ZERO))
}

/// Quota used through `channel`, inside a write transaction.
pub fn used_rw(wtx: &WriteTransaction, channel: ChannelId) -> Result<Quota> {
    let table = wtx.open_table(CHANNEL_USED)?;
    Ok(Quota(table.get(channel.0)?.map_or(0, |g| g.value())))
}

/// Quota used through each of `channels`, in the same order.
pub fn used_of(rtx: &ReadTransaction, channels: &[ChannelId]) -> Result<Vec<Quota>> {
    let table = match rtx.open_table(CHANNEL_USED) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => {
            return Ok(vec![Quota::ZERO; channels.len()]);
        }
        Err(e) => return Err(e.into()),
    };
    channels
        .iter()
        .map(|c| Ok(Quota(table.get(c.0)?.map_or(0, |g| g.value()))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(channel: i64, quota: i64, log_type: i32) -> LogEntry {
        LogEntry {
            channel_id: channel,
            quota,
            log_type,
            ..LogEntry::default()
        }
    }

    #[test]
    fn sums_consume_rows_per_channel_and_refunds_move_back() {
        let rows = [
            row(1, 10, LOG_CONSUME),
            row(2, 5, LOG_CONSUME),
            row(1, 7, LOG_CONSUME),
            row(1, -3, LOG_CONSUME),
            row(2, 100, crate::logs::LOG_MANAGE),
            row(0, 9, LOG_CONSUME),
        ];
        let got = sums(rows.iter()).ok();
        assert_eq!(got, Some(BTreeMap::from([(1, 14), (2, 5)])));
    }
}
