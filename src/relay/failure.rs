//! The error row of a relay request that failed after admission (every channel tried failed,
//! or none could be tried): log type 5 with the client-facing message, the channels tried and
//! the attempt timeline, so admins can see failures in /log (ErrorLogEnabled, on by default).
//! Refusals before admission (bad key, quota, price) are not logged: nothing was attempted.

use serde_json::json;
use tollgate_storage::ChannelId;
use tollgate_storage::logs::{LOG_ERROR, LogEntry};

use super::auth::Caller;
use super::settle::Attempt;
use crate::clock::now_unix;
use crate::error::RelayError;
use crate::state::AppState;

/// Queues the error row of a failed request (no balance changes).
pub fn record(
    state: &AppState,
    caller: &Caller,
    model: &str,
    tried: &[ChannelId],
    attempts: Vec<Attempt>,
    error: &RelayError,
) {
    if !state.options.current().flag("ErrorLogEnabled") {
        return;
    }
    let millis: u64 = attempts.iter().map(|a| a.ms).fold(0, u64::saturating_add);
    let status = match error {
        RelayError::Upstream { status, .. } => *status,
        other => other.code().status().as_u16(),
    };
    let other = json!({
        "status_code": status,
        "error_code": error.code().as_str(),
        "admin_info": {
            "use_channel": tried.iter().map(|c| c.0).collect::<Vec<_>>(),
            "attempts": attempts,
        },
    });
    state.quota.log(LogEntry {
        created_at: now_unix(),
        log_type: LOG_ERROR,
        user_id: caller.user.id,
        username: caller.user.username.clone(),
        token_id: caller.token.id.0,
        token_name: caller.token.name.clone(),
        model_name: model.to_owned(),
        channel_id: tried.last().map_or(0, |c| c.0),
        group: caller.group.clone(),
        use_time: i64::try_from(millis / 1000).unwrap_or(i64::MAX),
        content: error.to_string(),
        other: other.to_string(),
        ..LogEntry::default()
    });
}
