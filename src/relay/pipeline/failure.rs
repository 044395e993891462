//! The error row of a relay request that failed after admission (every channel tried failed,
//! or none could be tried): log type 5 with the client-facing message, the channels tried and
//! the attempt timeline, so admins can see failures in /log (ErrorLogEnabled, on by default).
//! A rate limit's refusal gets one too, naming its rule in `other.limit`
//! ([`crate::rate_limit::log_limit`]); other refusals before admission (bad key, quota, price)
//! are not logged: nothing was attempted.
//!
//! An upstream's error body is read by [`error_body`]: at most [`ERROR_BODY_MAX`] bytes within
//! the relay timeout, cut there before anything (message extraction, redaction, the channel's
//! health record, the log row and its journal record) sees it.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::json;
use tollgate_storage::ChannelId;
use tollgate_storage::logs::{LOG_ERROR, LogEntry};

use crate::clock::now_unix;
use crate::error::RelayError;
use crate::relay::pipeline::auth::Caller;
use crate::relay::pipeline::settle::Attempt;
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
    if !state.options.current().relay().error_log {
        return;
    }
    // A rate limit's refusals write one row per rule per second (the next counts the rest).
    if let RelayError::Limited { refusal, .. } = error
        && refusal.row.is_none()
    {
        return;
    }
    let millis: u64 = attempts.iter().map(|a| a.ms).fold(0, u64::saturating_add);
    let status = match error {
        RelayError::Upstream { status, .. } => *status,
        other => other.code().status().as_u16(),
    };
    let mut other = json!({
        "status_code": status,
        "error_code": error.code().as_str(),
        "admin_info": {
            "use_channel": tried.iter().map(|c| c.0).collect::<Vec<_>>(),
            "attempts": attempts,
        },
    });
    if let RelayError::Limited { refusal, .. } = error {
        other["limit"] = crate::rate_limit::log_limit(refusal);
    }
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

/// The most of an upstream's error body that is read.
pub const ERROR_BODY_MAX: usize = 64 * 1024;

/// An upstream's error body as text: at most [`ERROR_BODY_MAX`] bytes (cut on a character
/// boundary), whatever arrived within `timeout`; the rest is never read.
pub async fn error_body(resp: reqwest::Response, timeout: Duration) -> String {
    let mut body = Vec::new();
    let mut chunks = resp.bytes_stream();
    let read = async {
        while let Some(Ok(chunk)) = chunks.next().await {
            let room = ERROR_BODY_MAX - body.len();
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if body.len() >= ERROR_BODY_MAX {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(timeout, read).await;
    let mut text = String::from_utf8_lossy(&body).into_owned();
    if body.len() >= ERROR_BODY_MAX {
        // A cut may split a character: keep whole ones only.
        let end = text.trim_end_matches(char::REPLACEMENT_CHARACTER).len();
        text.truncate(end);
    }
    text
}
