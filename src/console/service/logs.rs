//! Usage logs for the console (spec 02 §6–§7): the query string of the log calls turned into a
//! [`LogFilter`], the row as the console sees it (admins and owners differ), pages, stats, and
//! deleting by time as a background job.
//!
//! Owners see their own rows without `other.admin_info` (the channels tried, the attempt
//! timeline) and without channel names; admins see everything.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tollgate_actors::log_janitor::Progress;
use tollgate_storage::logs::LogEntry;
use tollgate_storage::logs::query::{self, LogFilter, LogStat};
use tollgate_storage::{ChannelId, StorageError, UserId, channels, users};

use super::audit::Auditor;
use crate::clock::now_unix;
use crate::error::{ConsoleError, ErrorCode};
use crate::http::page::PageQuery;
use crate::state::AppState;

/// The log calls' query string. Every field may be empty (the console sends empty filters).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct LogQuery {
    /// Log type (0 or empty: all).
    #[serde(default, rename = "type")]
    pub log_type: Option<String>,
    /// Username (admin only).
    #[serde(default)]
    pub username: Option<String>,
    /// Token name.
    #[serde(default)]
    pub token_name: Option<String>,
    /// Model name.
    #[serde(default)]
    pub model_name: Option<String>,
    /// From (unix seconds, inclusive).
    #[serde(default)]
    pub start_timestamp: Option<String>,
    /// To (unix seconds, inclusive).
    #[serde(default)]
    pub end_timestamp: Option<String>,
    /// Channel id (admin only).
    #[serde(default)]
    pub channel: Option<String>,
    /// Billing group.
    #[serde(default)]
    pub group: Option<String>,
}

/// Who is asking: an admin (all rows) or an owner (own rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Viewer {
    /// GET /api/log/…: every row, admin fields included.
    Admin,
    /// GET /api/log/self/…: the user's rows, admin fields removed.
    Owner(UserId),
}

fn text(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

fn number(v: &Option<String>, what: &str) -> Result<Option<i64>, ConsoleError> {
    match text(v) {
        None => Ok(None),
        Some(s) => s
            .parse::<i64>()
            .map(Some)
            .map_err(|_| ConsoleError::with_args(ErrorCode::NotAnInteger, [what.to_string()])),
    }
}

/// The filter of `q` for `viewer`. `Ok(None)`: the filter names a user that does not exist, so
/// nothing matches.
pub async fn filter(
    state: &AppState,
    q: &LogQuery,
    viewer: Viewer,
) -> Result<Option<LogFilter>, ConsoleError> {
    let log_type = number(&q.log_type, "type")?
        .map(|t| i32::try_from(t).map_err(|_| ConsoleError::of(ErrorCode::LogTypeOutOfRange)))
        .transpose()?
        .filter(|t| *t != 0);
    let mut f = LogFilter {
        log_type,
        user: None,
        token_name: text(&q.token_name),
        model_name: text(&q.model_name),
        channel: None,
        group: text(&q.group),
        start: number(&q.start_timestamp, "start_timestamp")?.filter(|t| *t > 0),
        end: number(&q.end_timestamp, "end_timestamp")?.filter(|t| *t > 0),
    };
    match viewer {
        Viewer::Owner(id) => f.user = Some(id),
        Viewer::Admin => {
            f.channel = number(&q.channel, "channel")?.filter(|c| *c != 0);
            if let Some(name) = text(&q.username) {
                let found = state
                    .store
                    .read(move |rtx| users::find_by_username(rtx, &name))
                    .await?;
                match found {
                    Some(u) => f.user = Some(u.id),
                    None => return Ok(None),
                }
            }
        }
    }
    Ok(Some(f))
}

/// A log row as the console sees it (new-api's field names).
#[derive(Debug, Serialize)]
pub struct LogView {
    /// Id.
    pub id: i64,
    /// Owner.
    pub user_id: i64,
    /// Unix seconds.
    pub created_at: i64,
    /// Log type.
    #[serde(rename = "type")]
    pub log_type: i32,
    /// Note.
    pub content: String,
    /// Username at the time.
    pub username: String,
    /// Token name at the time.
    pub token_name: String,
    /// Token id.
    pub token_id: i64,
    /// Model asked for.
    pub model_name: String,
    /// Quota charged.
    pub quota: i64,
    /// Prompt tokens.
    pub prompt_tokens: i64,
    /// Completion tokens.
    pub completion_tokens: i64,
    /// Seconds the request took.
    pub use_time: i64,
    /// Streamed.
    pub is_stream: bool,
    /// Channel id.
    pub channel: i64,
    /// Channel name (admins only; empty for owners or a deleted channel).
    pub channel_name: String,
    /// Billing group.
    pub group: String,
    /// Request id.
    pub request_id: String,
    /// JSON text (without `admin_info` for owners).
    pub other: String,
}

impl LogView {
    fn new(e: LogEntry, viewer: Viewer, channel_name: String) -> LogView {
        let other = match viewer {
            Viewer::Admin => e.other,
            Viewer::Owner(_) => without_admin_info(&e.other),
        };
        LogView {
            id: e.id,
            user_id: e.user_id.0,
            created_at: e.created_at,
            log_type: e.log_type,
            content: e.content,
            username: e.username,
            token_name: e.token_name,
            token_id: e.token_id,
            model_name: e.model_name,
            quota: e.quota,
            prompt_tokens: e.prompt_tokens,
            completion_tokens: e.completion_tokens,
            use_time: e.use_time,
            is_stream: e.is_stream,
            channel: e.channel_id,
            channel_name,
            group: e.group,
            request_id: e.request_id,
            other,
        }
    }
}

/// `other` without its `admin_info` (text that is not a JSON object is dropped entirely: it
/// cannot be filtered, so it is not shown).
pub fn without_admin_info(other: &str) -> String {
    match serde_json::from_str::<Value>(other) {
        Ok(Value::Object(mut map)) => {
            map.remove("admin_info");
            Value::Object(map).to_string()
        }
        _ => String::new(),
    }
}

/// One page of logs: `{items, page, page_size, total}` plus whether `total` is exact.
#[derive(Debug, Serialize)]
pub struct LogPageView {
    /// Rows, newest first.
    pub items: Vec<LogView>,
    /// 1-based page.
    pub page: usize,
    /// Rows per page.
    pub page_size: usize,
    /// Matching rows (an estimate when `total_exact` is false; see storage `logs::query`).
    pub total: u64,
    /// Whether `total` was counted exactly.
    pub total_exact: bool,
}

/// The page of `q` for `viewer`.
pub async fn page(
    state: &AppState,
    q: &LogQuery,
    paging: PageQuery,
    viewer: Viewer,
) -> Result<LogPageView, ConsoleError> {
    let empty = LogPageView {
        items: Vec::new(),
        page: paging.page(),
        page_size: paging.size(),
        total: 0,
        total_exact: true,
    };
    let Some(f) = filter(state, q, viewer).await? else {
        return Ok(empty);
    };
    let (offset, limit) = (paging.offset(), paging.size());
    let (found, names) = state
        .store
        .read(move |rtx| {
            let found = query::page(rtx, &f, offset, limit)?;
            let mut names = BTreeMap::new();
            if viewer == Viewer::Admin {
                for e in &found.items {
                    if e.channel_id != 0 && !names.contains_key(&e.channel_id) {
                        let name = channels::get(rtx, ChannelId(e.channel_id))?
                            .map(|c| c.name)
                            .unwrap_or_default();
                        names.insert(e.channel_id, name);
                    }
                }
            }
            Ok::<_, StorageError>((found, names))
        })
        .await?;
    Ok(LogPageView {
        items: found
            .items
            .into_iter()
            .map(|e| {
                let name = names.get(&e.channel_id).cloned().unwrap_or_default();
                LogView::new(e, viewer, name)
            })
            .collect(),
        total: found.total,
        total_exact: found.total_exact,
        ..empty
    })
}

/// `{quota, rpm, tpm}` of the filter, plus whether `quota` is exact.
#[derive(Debug, Serialize)]
pub struct StatView {
    /// Quota of the matching consume rows.
    pub quota: i64,
    /// False when `quota` is extrapolated from a bounded sample (see storage `logs::query`).
    pub quota_exact: bool,
    /// Matching requests in the last 60 seconds.
    pub rpm: i64,
    /// Their tokens.
    pub tpm: i64,
}

/// The stat of `q` for `viewer`.
pub async fn stat(
    state: &AppState,
    q: &LogQuery,
    viewer: Viewer,
) -> Result<StatView, ConsoleError> {
    let Some(f) = filter(state, q, viewer).await? else {
        return Ok(StatView {
            quota: 0,
            quota_exact: true,
            rpm: 0,
            tpm: 0,
        });
    };
    let now = now_unix();
    let LogStat {
        quota,
        exact,
        rpm,
        tpm,
    } = state
        .store
        .read(move |rtx| query::stat(rtx, &f, now))
        .await?;
    Ok(StatView {
        quota,
        quota_exact: exact,
        rpm,
        tpm,
    })
}

/// A deletion job as the console sees it.
#[derive(Debug, Serialize)]
pub struct ProgressView {
    /// Deleting now.
    pub running: bool,
    /// Rows older than this are deleted.
    pub target_timestamp: i64,
    /// Rows to delete.
    pub total: u64,
    /// Rows deleted so far.
    pub deleted: u64,
    /// Start (unix seconds; 0: never ran).
    pub started_at: i64,
    /// End (unix seconds; 0 while running).
    pub finished_at: i64,
    /// Started by LogRetentionDays.
    pub automatic: bool,
    /// Why it stopped early.
    pub error: String,
}

impl From<Progress> for ProgressView {
    fn from(p: Progress) -> Self {
        ProgressView {
            running: p.running,
            target_timestamp: p.target_timestamp,
            total: p.total,
            deleted: p.deleted,
            started_at: p.started_at,
            finished_at: p.finished_at,
            automatic: p.automatic,
            error: p.error,
        }
    }
}

/// How long DELETE /api/log/ waits for a small deletion to finish before answering.
const DELETE_WAIT: Duration = Duration::from_secs(2);

/// Starts deleting rows created before `target` and answers once done or after
/// [`DELETE_WAIT`]. Refused while another deletion runs. The audit row (`log.delete`: the
/// target time and the rows it covers) is written once the job has started: the deletion runs
/// in many small transactions, so it cannot share one with them.
pub async fn delete_before(
    state: &AppState,
    target: i64,
    auditor: &Auditor,
) -> Result<ProgressView, ConsoleError> {
    if target <= 0 {
        return Err(ConsoleError::of(ErrorCode::LogDeleteTimeInvalid));
    }
    let Some(started) = state.janitor.start(target, now_unix(), false).await? else {
        return Err(ConsoleError::of(ErrorCode::LogDeletionRunning));
    };
    let entry = auditor.entry(
        "log.delete",
        "logs".to_owned(),
        &serde_json::json!({"rows_before_target": started.total}),
        &serde_json::json!({"target_timestamp": target}),
    );
    tollgate_storage::audit::record(&state.store, entry).await?;
    Ok(state.janitor.wait(DELETE_WAIT).await.into())
}
