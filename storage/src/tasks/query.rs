//! Reading tasks: pages of the drawing and task lists (newest first) with their totals, and
//! lookups by upstream id for the fetch routes. Each filter reads one index range ([`super::keys`]);
//! only an upstream-id filter combined with an owner or channel checks those on the few rows it
//! finds.

use redb::{ReadTransaction, ReadableTable};

use super::{List, Task, keys};
use crate::tables::{TASK_BY_KEY, TASK_COUNTS, TASK_OPEN, TASKS};
use crate::{Result, UserId, codec};

/// What a list shows.
#[derive(Debug, Clone, Default)]
pub struct TaskFilter {
    /// Only this owner (the self lists always set it).
    pub user: Option<UserId>,
    /// Only this channel (admins).
    pub channel: Option<i64>,
    /// Only this upstream id (`mj_id` / `task_id`).
    pub upstream_id: Option<String>,
    /// Created at or after (unix seconds).
    pub start: Option<i64>,
    /// Created at or before (unix seconds).
    pub end: Option<i64>,
}

/// One task by id.
pub fn get(rtx: &ReadTransaction, id: i64) -> Result<Option<Task>> {
    match rtx.open_table(TASKS)?.get(id)? {
        Some(bytes) => Ok(Some(codec::decode(bytes.value())?)),
        None => Ok(None),
    }
}

/// A page of `list` matching `filter`, newest first, and how many match in all.
pub fn page(
    rtx: &ReadTransaction,
    list: List,
    filter: &TaskFilter,
    offset: usize,
    limit: usize,
) -> Result<(Vec<Task>, u64)> {
    let index = rtx.open_table(TASK_BY_KEY)?;
    let tasks = rtx.open_table(TASKS)?;
    let start = filter.start.unwrap_or(i64::MIN);
    let end = filter.end.unwrap_or(i64::MAX);
    if start > end {
        return Ok((Vec::new(), 0));
    }
    let user = filter.user.map(|u| u.0);
    if let Some(id) = &filter.upstream_id {
        // Few rows share an upstream id: read them and check owner and channel on each.
        let key = keys::upstream(list, id);
        let mut found = Vec::new();
        for entry in index
            .range((key.as_str(), start, i64::MIN)..=(key.as_str(), end, i64::MAX))?
            .rev()
        {
            let (k, _) = entry?;
            let (_, _, tid) = k.value();
            let Some(bytes) = tasks.get(tid)? else {
                continue;
            };
            let task: Task = codec::decode(bytes.value())?;
            if user.is_some_and(|u| task.user_id.0 != u)
                || filter.channel.is_some_and(|c| task.channel_id.0 != c)
            {
                continue;
            }
            found.push(task);
        }
        let total = found.len() as u64;
        let items = found.into_iter().skip(offset).take(limit).collect();
        return Ok((items, total));
    }
    let key = keys::scope(list, user, filter.channel);
    let range = (key.as_str(), start, i64::MIN)..=(key.as_str(), end, i64::MAX);
    let mut total = 0u64;
    let mut items = Vec::new();
    for entry in index.range(range)?.rev() {
        let (k, _) = entry?;
        let at = usize::try_from(total).unwrap_or(usize::MAX);
        total += 1;
        if at < offset || items.len() >= limit {
            continue;
        }
        let (_, _, tid) = k.value();
        if let Some(bytes) = tasks.get(tid)? {
            items.push(codec::decode(bytes.value())?);
        }
    }
    Ok((items, total))
}

/// The task of `list` with upstream id `id` owned by `user` (the newest, should an upstream
/// reuse an id); `None` when there is none or it is someone else's.
pub fn find_own(rtx: &ReadTransaction, list: List, user: UserId, id: &str) -> Result<Option<Task>> {
    let filter = TaskFilter {
        user: Some(user),
        upstream_id: Some(id.to_owned()),
        ..TaskFilter::default()
    };
    Ok(page(rtx, list, &filter, 0, 1)?.0.into_iter().next())
}

/// Ids of the unfinished tasks (the poller's work list), in id order.
pub fn open_ids(rtx: &ReadTransaction) -> Result<Vec<i64>> {
    let table = rtx.open_table(TASK_OPEN)?;
    let mut out = Vec::new();
    for entry in table.iter()? {
        out.push(entry?.0.value());
    }
    Ok(out)
}

/// The oldest unfinished task's creation time (unix seconds), if any: what the poller's lag is
/// measured from.
pub fn oldest_open(rtx: &ReadTransaction) -> Result<Option<i64>> {
    let open = rtx.open_table(TASK_OPEN)?;
    let tasks = rtx.open_table(TASKS)?;
    let mut oldest: Option<i64> = None;
    for entry in open.iter()? {
        let id = entry?.0.value();
        if let Some(bytes) = tasks.get(id)? {
            let task: Task = codec::decode(bytes.value())?;
            oldest = Some(oldest.map_or(task.created_at, |o| o.min(task.created_at)));
        }
    }
    Ok(oldest)
}

/// Tasks per list and status: `(list prefix, status, count)` (`/metrics`).
pub fn counts(rtx: &ReadTransaction) -> Result<Vec<(String, String, u64)>> {
    let table = rtx.open_table(TASK_COUNTS)?;
    let mut out = Vec::new();
    for entry in table.iter()? {
        let (k, v) = entry?;
        let (list, status) = k.value();
        out.push((list.to_owned(), status.to_owned(), v.value()));
    }
    Ok(out)
}
