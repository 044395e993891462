//! Channel checks the console triggers: the test of one channel or of all (in the
//! background), and balance updates.
//!
//! Balance: no type has a balance query yet, so every channel answers "not supported"
//! (new-api's own answer for most types); the stored balance is left unchanged.

use serde::Serialize;
use tollgate_storage::ChannelId;
use tollgate_storage::channels::{self, STATUS_MANUALLY_DISABLED};

use super::probe;
use crate::channel_types;
use crate::error::ConsoleError;
use crate::state::AppState;

/// The answer of GET /api/channel/test/{id} (new-api's shape: `time` in seconds).
#[derive(Debug, Serialize)]
pub struct TestResult {
    /// True when the upstream answered correctly.
    pub success: bool,
    /// "ok (model)" or why it failed.
    pub message: String,
    /// Wall time in seconds.
    pub time: f64,
}

/// Tests channel `id` with `model` (or its default test model), records the response time
/// and feeds the outcome to the health rules.
pub async fn test_one(
    state: &AppState,
    id: ChannelId,
    model: Option<String>,
) -> Result<TestResult, ConsoleError> {
    let channel = state
        .store
        .read(move |rtx| channels::get(rtx, id))
        .await?
        .ok_or(ConsoleError::NotFound("channel"))?;
    let report = probe::test(&state.http, &channel, model.as_deref()).await?;
    let time = report.outcome.latency.as_secs_f64();
    let success = report.outcome.is_success();
    let verdict = state.channel_pool.record_test(report.outcome).await?;
    tracing::info!(channel = %id, success, time, ?verdict, "channel tested");
    Ok(TestResult {
        success,
        message: report.message,
        time,
    })
}

/// Starts testing every channel that is not manually disabled, one after another, in the
/// background; returns how many will be tested.
pub async fn test_all(state: &AppState) -> Result<usize, ConsoleError> {
    let ids: Vec<ChannelId> = state
        .store
        .read(channels::list_all)
        .await?
        .into_iter()
        .filter(|c| c.status != STATUS_MANUALLY_DISABLED)
        .map(|c| c.id)
        .collect();
    let count = ids.len();
    let state = state.clone();
    // Detached on purpose: the admin gets an answer at once; results land on the channels.
    tokio::spawn(async move {
        for id in ids {
            if let Err(e) = test_one(&state, id, None).await {
                tracing::info!(channel = %id, error = %e, "channel not tested");
            }
        }
        tracing::info!(count, "all channels tested");
    });
    Ok(count)
}

/// Refreshes one channel's balance (no type supports it yet; see the module docs).
pub async fn update_balance(state: &AppState, id: ChannelId) -> Result<f64, ConsoleError> {
    let channel = state
        .store
        .read(move |rtx| channels::get(rtx, id))
        .await?
        .ok_or(ConsoleError::NotFound("channel"))?;
    let name = channel_types::by_id(channel.channel_type).map_or("this", |t| t.name);
    Err(ConsoleError::NotSupported(format!(
        "balance query is not supported for {name} channels"
    )))
}
