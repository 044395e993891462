//! Dashboard data (/detail, new-api's `quota_data`): per-hour aggregates of consume logs by
//! model, by user, or by user and model, read from the aggregates the log writer maintains
//! (recorded while `DataExportEnabled` is on; `DataExportInterval` bounds how stale new-api's
//! data may be, and ours is never stale; `DataExportDefaultTime` is the console's default
//! granularity, published by /api/status).

use serde::{Deserialize, Serialize};
use tollgate_storage::logs::dashboard::{self, DashRow};
use tollgate_storage::{StorageError, UserId, users};

use crate::clock::now_unix;
use crate::error::{ConsoleError, ErrorCode};
use crate::state::AppState;

/// The longest range a user may ask for at once (new-api: one month).
pub const MAX_SELF_SPAN: i64 = 30 * 86_400;
/// Window when the client sends no start: the last 7 days.
const DEFAULT_SPAN: i64 = 7 * 86_400;

/// `?start_timestamp=&end_timestamp=&username=`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct DataQuery {
    /// From (unix seconds).
    #[serde(default)]
    pub start_timestamp: Option<i64>,
    /// To (unix seconds).
    #[serde(default)]
    pub end_timestamp: Option<i64>,
    /// One user (admin only).
    #[serde(default)]
    pub username: Option<String>,
}

impl DataQuery {
    fn range(&self) -> Result<(i64, i64), ConsoleError> {
        range(self.start_timestamp, self.end_timestamp)
    }
}

/// A dashboard query's `[start, end]` (Unix seconds): `end` defaults to now, `start` to 7 days
/// before `end` (0 or absent: the default); a start after the end is refused.
pub fn range(start: Option<i64>, end: Option<i64>) -> Result<(i64, i64), ConsoleError> {
    let end = end.filter(|t| *t > 0).unwrap_or_else(now_unix);
    let start = start
        .filter(|t| *t > 0)
        .unwrap_or_else(|| end.saturating_sub(DEFAULT_SPAN));
    if start > end {
        return Err(ConsoleError::of(ErrorCode::TimeRangeReversed));
    }
    Ok((start, end))
}

/// One aggregate row (new-api's `quota_data` fields plus the token split).
#[derive(Debug, Serialize)]
pub struct DataView {
    /// Owner (0 when aggregated over users).
    pub user_id: i64,
    /// Owner's current username (empty when aggregated over users).
    pub username: String,
    /// Model (empty when aggregated over models).
    pub model_name: String,
    /// Start of the hour (unix seconds).
    pub created_at: i64,
    /// Prompt + completion tokens.
    pub token_used: i64,
    /// Requests.
    pub count: u64,
    /// Quota charged.
    pub quota: i64,
    /// Prompt tokens.
    pub prompt_tokens: i64,
    /// Completion tokens.
    pub completion_tokens: i64,
}

fn view(r: DashRow, username: String) -> DataView {
    DataView {
        user_id: r.user_id,
        username,
        model_name: r.model_name,
        created_at: r.hour,
        token_used: r.prompt_tokens.saturating_add(r.completion_tokens),
        count: r.count,
        quota: r.quota,
        prompt_tokens: r.prompt_tokens,
        completion_tokens: r.completion_tokens,
    }
}

/// A user's own aggregates by hour and model (at most [`MAX_SELF_SPAN`]).
pub async fn own(
    state: &AppState,
    user: UserId,
    username: String,
    q: &DataQuery,
) -> Result<Vec<DataView>, ConsoleError> {
    let (start, end) = q.range()?;
    if end - start > MAX_SELF_SPAN {
        return Err(ConsoleError::of(ErrorCode::TimeSpanTooLong));
    }
    let rows = state
        .store
        .read(move |rtx| dashboard::by_user_model(rtx, user.0, start, end))
        .await?;
    Ok(rows
        .into_iter()
        .map(|r| view(r, username.clone()))
        .collect())
}

/// Admin: by hour and model over all users, or for `username` only.
pub async fn all(state: &AppState, q: &DataQuery) -> Result<Vec<DataView>, ConsoleError> {
    let (start, end) = q.range()?;
    let username = q
        .username
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned);
    let Some(name) = username else {
        let rows = state
            .store
            .read(move |rtx| dashboard::by_model(rtx, start, end))
            .await?;
        return Ok(rows.into_iter().map(|r| view(r, String::new())).collect());
    };
    let found = state
        .store
        .read(move |rtx| {
            let Some(user) = users::find_by_username(rtx, &name)? else {
                return Ok::<_, StorageError>(None);
            };
            let rows = dashboard::by_user_model(rtx, user.id.0, start, end)?;
            Ok(Some((user.username, rows)))
        })
        .await?;
    Ok(found
        .map(|(name, rows)| rows.into_iter().map(|r| view(r, name.clone())).collect())
        .unwrap_or_default())
}

/// Admin: by hour and user over all models, with current usernames.
pub async fn by_user(state: &AppState, q: &DataQuery) -> Result<Vec<DataView>, ConsoleError> {
    let (start, end) = q.range()?;
    let rows = state
        .store
        .read(move |rtx| {
            let rows = dashboard::by_user(rtx, start, end)?;
            let mut names = std::collections::BTreeMap::new();
            for r in &rows {
                if let std::collections::btree_map::Entry::Vacant(slot) = names.entry(r.user_id) {
                    slot.insert(
                        users::get(rtx, UserId(r.user_id))?
                            .map(|u| u.username)
                            .unwrap_or_default(),
                    );
                }
            }
            Ok::<_, StorageError>(
                rows.into_iter()
                    .map(|r| {
                        let name = names.get(&r.user_id).cloned().unwrap_or_default();
                        view(r, name)
                    })
                    .collect::<Vec<_>>(),
            )
        })
        .await?;
    Ok(rows)
}
