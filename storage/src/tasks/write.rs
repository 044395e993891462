//! Writing tasks, each function in the caller's transaction:
//!
//! - [`insert_charged`]: the submit's charge (balance change and log row) and its task
//!   together — never a charge without its task nor a task without its charge.
//! - [`claim`] / [`release_leases`]: the poller's lease, so one task is never polled twice at
//!   once, and several nodes may later share the work.
//! - [`update`]: what the upstream reported.
//! - [`refund`]: a failed (or admin-refunded) task's quota back to its user and limited token,
//!   the user's used quota lowered, with its negative consume row — at most once.
//! - [`recharge`]: a task's charge corrected to what it came out at (a video's finished
//!   duration): the difference charged or refunded with its consume row.
//!
//! Every status change moves the per-status counters ([`crate::tables::TASK_COUNTS`]) and the
//! open set ([`crate::tables::TASK_OPEN`]) with it.

use redb::{ReadableTable, WriteTransaction};

use super::{FAILURE, Task, keys};
use crate::logs::{self, LOG_CONSUME, LogEntry};
use crate::tables::{TASK_BY_KEY, TASK_COUNTS, TASK_OPEN, TASKS};
use crate::usage::{self, BalanceChange};
use crate::{Result, StorageError, TokenId, UserId, channel_usage, codec, meta};

/// Inserts `task` (its id assigned) with its index keys, counters and open-set entry.
pub fn insert(wtx: &WriteTransaction, mut task: Task) -> Result<Task> {
    task.id = meta::next_id(wtx, "tasks")?;
    task.bound();
    if task.updated_at == 0 {
        task.updated_at = task.created_at;
    }
    wtx.open_table(TASKS)?
        .insert(task.id, codec::encode(&task)?.as_slice())?;
    let mut index = wtx.open_table(TASK_BY_KEY)?;
    for key in keys::of(&task) {
        index.insert((key.as_str(), task.created_at, task.id), ())?;
    }
    if !task.is_finished() {
        wtx.open_table(TASK_OPEN)?.insert(task.id, ())?;
    }
    count(wtx, &task, 1)?;
    Ok(task)
}

/// The submit's settlement: applies `change` (the charge) to the balances, writes its consume
/// row `log` and inserts `task` with `task.quota` set to the charge, all in `wtx`. Returns the
/// task. The submit plan calls it from the settlement's transaction, so the database never
/// shows a charge without its task.
pub fn insert_charged(
    wtx: &WriteTransaction,
    mut task: Task,
    change: BalanceChange,
    mut log: LogEntry,
) -> Result<Task> {
    usage::apply(wtx, change)?;
    crate::budgets::add_spend(wtx, &[change])?;
    log.quota = change.charged;
    channel_usage::add_rows(wtx, [&log])?;
    logs::insert(wtx, log)?;
    task.quota = change.charged;
    insert(wtx, task)
}

/// Claims up to `max` unfinished tasks for `owner` until `now + lease_secs`: those nobody
/// holds or whose lease ran out. A claimed task is the caller's to poll until it calls
/// [`update`] (which ends the lease) or the lease expires.
pub fn claim(
    wtx: &WriteTransaction,
    owner: &str,
    now: i64,
    lease_secs: i64,
    max: usize,
) -> Result<Vec<Task>> {
    let ids: Vec<i64> = {
        let open = wtx.open_table(TASK_OPEN)?;
        let mut ids = Vec::new();
        for entry in open.iter()? {
            ids.push(entry?.0.value());
        }
        ids
    };
    let mut tasks = wtx.open_table(TASKS)?;
    let mut claimed = Vec::new();
    for id in ids {
        if claimed.len() >= max {
            break;
        }
        let Some(mut task) = load(&tasks, id)? else {
            continue;
        };
        if !task.lease_owner.is_empty() && task.lease_until > now {
            continue;
        }
        task.lease_owner = owner.to_owned();
        task.lease_until = now.saturating_add(lease_secs);
        tasks.insert(id, codec::encode(&task)?.as_slice())?;
        claimed.push(task);
    }
    Ok(claimed)
}

/// Ends every lease `owner` holds (a node starting again holds nothing in flight; and the
/// poller's round end for tasks it could not fetch). `only`: just these tasks.
pub fn release_leases(wtx: &WriteTransaction, owner: &str, only: Option<&[i64]>) -> Result<usize> {
    let ids: Vec<i64> = match only {
        Some(ids) => ids.to_vec(),
        None => {
            let open = wtx.open_table(TASK_OPEN)?;
            let mut ids = Vec::new();
            for entry in open.iter()? {
                ids.push(entry?.0.value());
            }
            ids
        }
    };
    let mut tasks = wtx.open_table(TASKS)?;
    let mut released = 0;
    for id in ids {
        let Some(mut task) = load(&tasks, id)? else {
            continue;
        };
        if task.lease_owner != owner {
            continue;
        }
        task.lease_owner.clear();
        task.lease_until = 0;
        tasks.insert(id, codec::encode(&task)?.as_slice())?;
        released += 1;
    }
    Ok(released)
}

/// What a poll learned about a task; `None` fields are left as they are.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskUpdate {
    /// New status.
    pub status: Option<String>,
    /// New progress (`"45%"`).
    pub progress: Option<String>,
    /// Result image URL.
    pub image_url: Option<String>,
    /// Result media URL (audio, video).
    pub result_url: Option<String>,
    /// Result payload (JSON text).
    pub data: Option<String>,
    /// Failure reason.
    pub fail_reason: Option<String>,
    /// Translated prompt.
    pub prompt_en: Option<String>,
    /// Upstream description.
    pub description: Option<String>,
    /// Midjourney buttons (JSON text).
    pub buttons: Option<String>,
    /// Midjourney properties (JSON text).
    pub properties: Option<String>,
    /// Start time (unix seconds).
    pub start_time: Option<i64>,
    /// Finish time (unix seconds).
    pub finish_time: Option<i64>,
}

/// Applies `update` to task `id` if `owner` still holds its lease and it has not finished,
/// and ends the lease. A task that reaches SUCCESS or FAILURE leaves the open set (a finish
/// time is set if the upstream gave none). Returns the task as stored, or `None` when it was
/// not `owner`'s to change (lease lost, finished meanwhile, deleted).
pub fn update(
    wtx: &WriteTransaction,
    id: i64,
    owner: &str,
    update: TaskUpdate,
    now: i64,
) -> Result<Option<Task>> {
    let mut tasks = wtx.open_table(TASKS)?;
    let Some(mut task) = load(&tasks, id)? else {
        return Ok(None);
    };
    if task.lease_owner != owner || task.is_finished() {
        return Ok(None);
    }
    let before = task.clone();
    let TaskUpdate {
        status,
        progress,
        image_url,
        result_url,
        data,
        fail_reason,
        prompt_en,
        description,
        buttons,
        properties,
        start_time,
        finish_time,
    } = update;
    let set = |field: &mut String, value: Option<String>| {
        if let Some(v) = value {
            *field = v;
        }
    };
    set(&mut task.status, status);
    set(&mut task.progress, progress);
    set(&mut task.image_url, image_url);
    set(&mut task.result_url, result_url);
    set(&mut task.data, data);
    set(&mut task.fail_reason, fail_reason);
    set(&mut task.prompt_en, prompt_en);
    set(&mut task.description, description);
    set(&mut task.buttons, buttons);
    set(&mut task.properties, properties);
    if let Some(t) = start_time.filter(|t| *t > 0) {
        task.start_time = t;
    }
    if let Some(t) = finish_time.filter(|t| *t > 0) {
        task.finish_time = t;
    }
    if task.is_finished() && task.finish_time == 0 {
        task.finish_time = now;
    }
    task.lease_owner.clear();
    task.lease_until = 0;
    task.bound();
    if task != before {
        task.updated_at = now;
    }
    tasks.insert(id, codec::encode(&task)?.as_slice())?;
    drop(tasks);
    moved(wtx, &before, &task)?;
    Ok(Some(task))
}

/// A refund made by [`refund`]: what the caller must also return to the in-memory balances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refunded {
    /// Whose balance.
    pub user: UserId,
    /// The token the quota went back to, when it has a limit.
    pub token: Option<TokenId>,
    /// The key the task was charged through (limited or not): its budget windows are freed.
    pub key: Option<TokenId>,
    /// When the charge was made (the task row's `created_at`): the quarter hour whose budget
    /// spend the refund lowers.
    pub charged_at: i64,
    /// Quota returned.
    pub amount: i64,
    /// The refund's log row.
    pub log_id: i64,
}

/// Refunds task `id` once: an unfinished task ends as FAILURE with `reason` (its own failure
/// reason kept when it has one); its quota goes back to the user's balance and, when the
/// token has a limit, to the token; the user's (and token's) used quota is lowered by the
/// same amount; a consume row of the negative amount records it (so the consume rows still
/// sum to the used quota, and balance + used == credited is untouched); the charge leaves the
/// user's and the key's budget spend. `None` when the task
/// does not exist, was refunded before, or cost nothing (it is still ended).
pub fn refund(wtx: &WriteTransaction, id: i64, reason: &str, now: i64) -> Result<Option<Refunded>> {
    let mut tasks = wtx.open_table(TASKS)?;
    let Some(mut task) = load(&tasks, id)? else {
        return Ok(None);
    };
    if task.refunded {
        return Ok(None);
    }
    let before = task.clone();
    if !task.is_finished() {
        task.status = FAILURE.to_owned();
        if task.fail_reason.is_empty() {
            task.fail_reason = reason.to_owned();
        }
        task.finish_time = now;
    }
    task.lease_owner.clear();
    task.lease_until = 0;
    task.refunded = task.quota > 0;
    task.updated_at = now;
    task.bound();
    tasks.insert(id, codec::encode(&task)?.as_slice())?;
    drop(tasks);
    moved(wtx, &before, &task)?;
    if task.quota <= 0 {
        return Ok(None);
    }
    let token = usage::refund(wtx, task.user_id, task.token_id, task.quota, now)?;
    crate::budgets::remove_spend(
        wtx,
        task.user_id,
        task.token_id,
        task.created_at,
        task.quota,
    )?;
    let log_id = log_row(
        wtx,
        &task,
        task.quota.checked_neg().ok_or(StorageError::Overflow)?,
        format!("task {} refunded: {reason}", task.upstream_id),
        serde_json::json!({
            "refund": true,
            "task_id": task.upstream_id,
            "task_kind": task.kind.list().prefix(),
        }),
        now,
    )?;
    Ok(Some(Refunded {
        user: task.user_id,
        token,
        key: task.token_id,
        charged_at: task.created_at,
        amount: task.quota,
        log_id,
    }))
}

/// Corrects task `id`'s charge to `quota` (a video billed per second, for the duration it
/// finished at), in the caller's transaction: the difference is taken from (or, when the
/// charge falls, returned to) the user's balance and a limited token, added to (taken from)
/// the user's, the token's and — through the consume row of the difference — the channel's
/// used quota, and counted in (taken out of) the budget windows; `properties` is stored on the
/// task (what it was billed for). Nothing happens to a refunded task or one already charged
/// `quota`, so a correction is made once. Returns what the in-memory balances must follow,
/// as [`refund`] does: `amount` is the quota returned (negative: charged).
pub fn recharge(
    wtx: &WriteTransaction,
    id: i64,
    quota: i64,
    properties: String,
    note: &str,
    now: i64,
) -> Result<Option<Refunded>> {
    let mut tasks = wtx.open_table(TASKS)?;
    let Some(mut task) = load(&tasks, id)? else {
        return Ok(None);
    };
    if task.refunded || task.quota == quota || quota < 0 {
        return Ok(None);
    }
    let delta = quota
        .checked_sub(task.quota)
        .ok_or(StorageError::Overflow)?;
    task.quota = quota;
    task.properties = properties;
    task.updated_at = now;
    task.bound();
    tasks.insert(id, codec::encode(&task)?.as_slice())?;
    drop(tasks);
    let back = delta.checked_neg().ok_or(StorageError::Overflow)?;
    // A refund of a negative amount is a charge of it.
    let token = usage::refund(wtx, task.user_id, task.token_id, back, now)?;
    let charged_at = if delta > 0 {
        crate::budgets::add_spend(
            wtx,
            &[BalanceChange {
                user_id: task.user_id,
                token_id: task.token_id,
                charged: delta,
                is_request: true,
                at: now,
            }],
        )?;
        now
    } else {
        crate::budgets::remove_spend(wtx, task.user_id, task.token_id, task.created_at, back)?;
        task.created_at
    };
    let log_id = log_row(
        wtx,
        &task,
        delta,
        format!("task {} {note}", task.upstream_id),
        serde_json::json!({
            "recharge": true,
            "task_id": task.upstream_id,
            "task_kind": task.kind.list().prefix(),
            "quota_after": quota,
        }),
        now,
    )?;
    Ok(Some(Refunded {
        user: task.user_id,
        token,
        key: task.token_id,
        charged_at,
        amount: back,
        log_id,
    }))
}

/// Writes the consume row of a change of `task`'s charge by `quota` (negative: returned),
/// counted in its channel's used quota; returns the row's id.
fn log_row(
    wtx: &WriteTransaction,
    task: &Task,
    quota: i64,
    content: String,
    other: serde_json::Value,
    now: i64,
) -> Result<i64> {
    let log = LogEntry {
        created_at: now,
        log_type: LOG_CONSUME,
        user_id: task.user_id,
        username: task.username.clone(),
        token_id: task.token_id.map_or(0, |t| t.0),
        token_name: task.token_name.clone(),
        model_name: task.model_name.clone(),
        channel_id: task.channel_id.0,
        group: task.group.clone(),
        quota,
        content,
        other: other.to_string(),
        ..LogEntry::default()
    };
    channel_usage::add_rows(wtx, [&log])?;
    logs::insert(wtx, log)
}

/// One task by id, inside a write transaction.
pub fn get_rw(wtx: &WriteTransaction, id: i64) -> Result<Option<Task>> {
    load(&wtx.open_table(TASKS)?, id)
}

fn load(table: &impl ReadableTable<i64, &'static [u8]>, id: i64) -> Result<Option<Task>> {
    match table.get(id)? {
        Some(bytes) => Ok(Some(codec::decode(bytes.value())?)),
        None => Ok(None),
    }
}

/// Keeps the open set and the status counters in step with a change from `before` to `after`.
fn moved(wtx: &WriteTransaction, before: &Task, after: &Task) -> Result<()> {
    if before.status != after.status {
        count(wtx, before, -1)?;
        count(wtx, after, 1)?;
    }
    if !before.is_finished() && after.is_finished() {
        wtx.open_table(TASK_OPEN)?.remove(after.id)?;
    }
    Ok(())
}

/// Adds `delta` to the counter of `task`'s list and status.
fn count(wtx: &WriteTransaction, task: &Task, delta: i64) -> Result<()> {
    let mut table = wtx.open_table(TASK_COUNTS)?;
    let key = (task.kind.list().prefix(), task.status.as_str());
    let old = table.get(key)?.map_or(0, |v| v.value());
    let new = i64::try_from(old)
        .ok()
        .and_then(|o| o.checked_add(delta))
        .and_then(|n| u64::try_from(n).ok())
        .ok_or(StorageError::Overflow)?;
    if new == 0 {
        table.remove(key)?;
    } else {
        table.insert(key, new)?;
    }
    Ok(())
}
