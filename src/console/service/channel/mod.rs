//! Channel administration: list, search, read, create (single or batch), update, copy,
//! delete, and ability-index repair. Every write goes to storage in one transaction (the
//! record and its ability rows together) and then reloads the channel pool, so the routing
//! table reflects the change when the call returns: a write of named channels (create, edit,
//! status, copy, delete) re-reads only those records; bulk writes re-read every one.
//!
//! - [`input`]: the console's input shape and the validation rules.
//! - [`view`]: what GETs return (never the key).
//! - [`tag`]: bulk operations by tag.
//! - [`probe`]: talking to upstreams (tests, model lists, proxy checks).
//! - [`check`]: channel tests and balance updates; [`balance`]: the providers' balance APIs.
//! - [`key`]: the audited key reveal for root.

pub mod balance;
pub mod check;
pub mod input;
pub mod key;
pub mod probe;
pub mod tag;
pub mod view;

use serde::{Deserialize, Serialize};
use tollgate_storage::channels::abilities::{self, RebuildReport};
use tollgate_storage::channels::query::ChannelQuery;
use tollgate_storage::channels::{self, Channel, STATUS_ENABLED, other_info};
use tollgate_storage::secret::Secret;
use tollgate_storage::{ChannelId, StorageError, audit, channel_usage};

use self::input::{ChannelInput, apply, new_channel};
use self::view::ChannelView;
use crate::clock::now_unix;
use crate::console::service::audit::Auditor;
use crate::error::{ConsoleError, ErrorCode};
use crate::http::envelope::Page;
use crate::state::AppState;

/// Page size when none is given.
pub const DEFAULT_PAGE_SIZE: usize = 10;
/// Largest accepted page size.
pub const MAX_PAGE_SIZE: usize = 100;

/// Body of POST /api/channel/: new-api's `{mode, channel}` or a bare channel object.
#[derive(Debug, Deserialize)]
pub struct CreateRequest {
    /// `single` (default; a multi-line key is one channel using its keys in turn),
    /// `multi_to_single` (same as single) or `batch` (one channel per key line).
    #[serde(default)]
    pub mode: Option<String>,
    /// The channel, in the wrapped form.
    #[serde(default)]
    pub channel: Option<ChannelInput>,
    /// The channel, in the bare form.
    #[serde(flatten)]
    pub bare: ChannelInput,
}

/// What a create did.
#[derive(Debug, Serialize)]
pub struct Created {
    /// Ids of the new channels.
    pub ids: Vec<i64>,
}

/// Republishes after a bulk write (every record re-read).
async fn reload(state: &AppState) -> Result<(), ConsoleError> {
    Ok(state.channel_pool.reload().await?)
}

/// Republishes after a write of the channels `ids` (only those re-read).
async fn reload_ids(state: &AppState, ids: &[ChannelId]) -> Result<(), ConsoleError> {
    Ok(state.channel_pool.reload_ids(ids).await?)
}

/// One page of channels matching `query` (its offset/limit are set from `page`/`page_size`).
pub async fn list(
    state: &AppState,
    mut query: ChannelQuery,
    page: usize,
    page_size: usize,
) -> Result<Page<ChannelView>, ConsoleError> {
    let page = page.max(1);
    let page_size = page_size.clamp(1, MAX_PAGE_SIZE);
    query.offset = (page - 1).saturating_mul(page_size);
    query.limit = page_size;
    let (found, used) = state
        .store
        .read(move |rtx| channels::with_used::page_with_used(rtx, &query))
        .await?;
    Ok(Page {
        items: found
            .items
            .iter()
            .zip(used)
            .map(|(c, used)| ChannelView::from(c).with_used(used))
            .collect(),
        page,
        page_size,
        total: found.total,
    })
}

/// One channel, with the quota used through it.
pub async fn get(state: &AppState, id: ChannelId) -> Result<ChannelView, ConsoleError> {
    let (channel, used) = state
        .store
        .read(move |rtx| channels::with_used::get_with_used(rtx, id))
        .await?
        .ok_or(ConsoleError::NotFound("channel"))?;
    Ok(ChannelView::from(&channel).with_used(used))
}

/// Creates one channel, or one per key line in batch mode. Returns the ids and notices.
pub async fn create(
    state: &AppState,
    req: CreateRequest,
    auditor: crate::console::service::audit::Auditor,
) -> Result<(Created, Vec<String>), ConsoleError> {
    let batch = match req.mode.as_deref().unwrap_or("single") {
        "single" | "multi_to_single" | "" => false,
        "batch" => true,
        other => {
            return Err(ConsoleError::with_args(
                ErrorCode::ChannelModeUnknown,
                [other.to_string()],
            ));
        }
    };
    let input = req.channel.unwrap_or(req.bare);
    let (template, notices) = apply(input, new_channel(now_unix()), true)?;
    let records: Vec<Channel> = if batch {
        template
            .key_lines()
            .into_iter()
            .map(|line| Channel {
                key: Secret::new(line),
                ..template.clone()
            })
            .collect()
    } else {
        vec![template]
    };
    let ids = state
        .store
        .write(move |wtx| {
            let mut ids = Vec::with_capacity(records.len());
            for record in records {
                let created = channels::insert(wtx, record)?;
                tollgate_storage::audit::append(wtx, auditor.channel_created(&created, None))?;
                ids.push(created.id.0);
            }
            Ok::<_, tollgate_storage::StorageError>(ids)
        })
        .await?;
    let written: Vec<ChannelId> = ids.iter().copied().map(ChannelId).collect();
    reload_ids(state, &written).await?;
    tracing::info!(count = ids.len(), ?ids, "channels created");
    Ok((Created { ids }, notices))
}

/// Updates a channel: every field sent replaces the stored one, absent fields and an empty
/// key are kept (so `{id, status}` alone changes only the status). Where the stored key goes
/// is root's to change ([`key_guard`](crate::console::service::key_guard)).
pub async fn update(
    state: &AppState,
    input: ChannelInput,
    root: bool,
    auditor: crate::console::service::audit::Auditor,
) -> Result<(ChannelView, Vec<String>), ConsoleError> {
    let key_entered = input
        .key
        .as_ref()
        .is_some_and(|k| !k.expose().trim().is_empty());
    let id = ChannelId(
        input
            .id
            .ok_or_else(|| ConsoleError::of(ErrorCode::IdRequired))?,
    );
    let updated = state
        .store
        .write(move |wtx| {
            let current = channels::get_rw(wtx, id)?.ok_or(ConsoleError::NotFound("channel"))?;
            let (mut next, notices) = apply(input, current.clone(), false)?;
            crate::console::service::key_guard::check(&current, &next, root, key_entered)?;
            if next.status == STATUS_ENABLED && current.status != STATUS_ENABLED {
                next.other_info = String::new();
            } else if next.key != current.key {
                next.other_info = other_info::retain_keys(&next.other_info, &next.key_lines());
            }
            channels::update(wtx, &next)?;
            // Per-key rate limits are bound to their keys: they follow them to new lines.
            let limits = if next.key == current.key {
                None
            } else {
                tollgate_storage::limits::follow_keys(
                    wtx,
                    id,
                    &current.key_lines(),
                    &next.key_lines(),
                )?
            };
            if let Some(entry) = auditor.channel_change(&current, &next) {
                tollgate_storage::audit::append(wtx, entry)?;
            }
            let used = channel_usage::used_rw(wtx, id)?;
            Ok::<_, ConsoleError>((next, notices, used, limits))
        })
        .await?;
    if let Some(limits) = updated.3.clone() {
        state
            .limits
            .set(tollgate_storage::limits::Owner::Channel(id), limits);
    }
    reload_ids(state, &[id]).await?;
    tracing::info!(channel = %id, "channel updated");
    Ok((
        ChannelView::from(&updated.0).with_used(updated.2),
        updated.1,
    ))
}

/// Copies a channel as a new one named `name + suffix`, optionally with zero balance and
/// used quota; returns the new id.
pub async fn copy(
    state: &AppState,
    id: ChannelId,
    suffix: String,
    reset_balance: bool,
    auditor: crate::console::service::audit::Auditor,
) -> Result<i64, ConsoleError> {
    let now = now_unix();
    let new_id = state
        .store
        .write(move |wtx| {
            let mut c = channels::get_rw(wtx, id)?.ok_or(ConsoleError::NotFound("channel"))?;
            c.name.push_str(&suffix);
            c.created_time = now;
            c.test_time = 0;
            c.response_time = 0;
            if reset_balance {
                c.balance = 0.0;
                c.balance_updated_time = 0;
                c.used_quota = tollgate_storage::Quota::ZERO;
            }
            let created = channels::insert(wtx, c)?;
            tollgate_storage::audit::append(wtx, auditor.channel_created(&created, Some(id.0)))?;
            Ok::<_, ConsoleError>(created.id.0)
        })
        .await?;
    reload_ids(state, &[ChannelId(new_id)]).await?;
    tracing::info!(from = %id, to = new_id, "channel copied");
    Ok(new_id)
}

/// Deletes one channel.
pub async fn delete(state: &AppState, id: ChannelId, auditor: Auditor) -> Result<(), ConsoleError> {
    let deleted = state
        .store
        .write(move |wtx| {
            let deleted = channels::delete(wtx, id)?;
            if let Some(channel) = &deleted {
                audit::append(wtx, auditor.channel_deleted(channel))?;
            }
            Ok::<_, StorageError>(deleted)
        })
        .await?;
    if deleted.is_none() {
        return Err(ConsoleError::NotFound("channel"));
    }
    reload_ids(state, &[id]).await?;
    tracing::info!(channel = %id, "channel deleted");
    Ok(())
}

/// Deletes the channels `doomed` accepts; returns how many were deleted.
async fn delete_where(
    state: &AppState,
    auditor: Auditor,
    doomed: impl Fn(&Channel) -> bool + Send + 'static,
) -> Result<usize, ConsoleError> {
    let deleted = state
        .store
        .write(move |wtx| {
            let mut deleted = Vec::new();
            for c in channels::list_all_rw(wtx)?.iter().filter(|c| doomed(c)) {
                channels::delete(wtx, c.id)?;
                audit::append(wtx, auditor.channel_deleted(c))?;
                deleted.push(c.id);
            }
            Ok::<_, ConsoleError>(deleted)
        })
        .await?;
    reload_ids(state, &deleted).await?;
    let count = deleted.len();
    tracing::info!(count, "channels deleted");
    Ok(count)
}

/// Deletes every disabled channel (manually or automatically); returns the count.
pub async fn delete_disabled(state: &AppState, auditor: Auditor) -> Result<usize, ConsoleError> {
    delete_where(state, auditor, |c| !c.is_enabled()).await
}

/// Deletes the channels in `ids`; returns the count.
pub async fn delete_many(
    state: &AppState,
    ids: Vec<i64>,
    auditor: Auditor,
) -> Result<usize, ConsoleError> {
    if ids.is_empty() {
        return Err(ConsoleError::of(ErrorCode::SelectChannelsToDelete));
    }
    delete_where(state, auditor, move |c| ids.contains(&c.id.0)).await
}

/// Rebuilds the ability index from the channel records (POST /api/channel/fix).
pub async fn fix(state: &AppState) -> Result<RebuildReport, ConsoleError> {
    let report = state.store.write(abilities::rebuild).await?;
    reload(state).await?;
    tracing::info!(?report, "ability index rebuilt");
    Ok(report)
}
