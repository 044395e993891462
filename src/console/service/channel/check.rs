//! Channel checks the console triggers: the test of one channel or of all (in the
//! background), and balance updates.
//!
//! Balances: see [`balance`] for the providers that have a balance API; the others answer
//! "not supported" and keep their stored balance.

use futures_util::{StreamExt, stream};
use serde::Serialize;
use tollgate_storage::ChannelId;
use tollgate_storage::channels::other_info::with_status_reason;
use tollgate_storage::channels::{
    self, Channel, STATUS_AUTO_DISABLED, STATUS_ENABLED, STATUS_MANUALLY_DISABLED,
};

use super::{balance, probe};
use crate::clock::now_unix;
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

/// Refreshes channel `id`'s balance from its provider, stores it with the time, and returns
/// it (US$).
pub async fn update_balance(state: &AppState, id: ChannelId) -> Result<f64, ConsoleError> {
    let channel = state
        .store
        .read(move |rtx| channels::get(rtx, id))
        .await?
        .ok_or(ConsoleError::NotFound("channel"))?;
    let balance = balance::query(&state.http, &channel, cny_per_usd(state)).await?;
    store_balance(state, id, balance, false).await?;
    Ok(balance)
}

/// What GET /api/channel/update_balance did.
#[derive(Debug, Default, Serialize)]
pub struct BalanceSummary {
    /// Channels whose balance was refreshed.
    pub updated: usize,
    /// Channels whose provider could not be asked (their balance is unchanged).
    pub failed: usize,
    /// Channels auto-disabled because their balance is ≤ 0.
    pub disabled: usize,
    /// Enabled channels skipped: types without a balance query, or multi-key channels.
    pub skipped: usize,
}

/// Refreshes the balance of every enabled single-key channel whose type has a balance query,
/// a few at a time. A channel whose balance is ≤ 0 is auto-disabled ("insufficient balance")
/// when AutomaticDisableChannelEnabled is on and its auto_ban is set, as new-api does.
pub async fn update_all_balances(state: &AppState) -> Result<BalanceSummary, ConsoleError> {
    let all = state.store.read(channels::list_all).await?;
    let (due, skipped): (Vec<Channel>, Vec<Channel>) = all
        .into_iter()
        .filter(|c| c.status == STATUS_ENABLED)
        .partition(|c| balance::supported(c.channel_type) && c.key_lines().len() == 1);
    let rate = cny_per_usd(state);
    let results: Vec<(Channel, Result<f64, ConsoleError>)> = stream::iter(due)
        .map(|c| async move {
            let r = balance::query(&state.http, &c, rate).await;
            (c, r)
        })
        .buffer_unordered(BALANCE_CONCURRENCY)
        .collect()
        .await;
    let may_disable = state
        .options
        .current()
        .flag("AutomaticDisableChannelEnabled");
    let mut summary = BalanceSummary {
        skipped: skipped.len(),
        ..BalanceSummary::default()
    };
    // Their records changed: reloaded by id when one was disabled (routing changed).
    let mut updated = Vec::new();
    for (channel, result) in results {
        match result {
            Ok(balance) => {
                let disable = may_disable && channel.auto_ban == 1 && balance <= 0.0;
                store_balance(state, channel.id, balance, disable).await?;
                summary.updated += 1;
                updated.push(channel.id);
                if disable {
                    summary.disabled += 1;
                    tracing::warn!(channel = %channel.id, balance, "channel auto-disabled: insufficient balance");
                }
            }
            Err(e) => {
                summary.failed += 1;
                tracing::info!(channel = %channel.id, error = %e, "balance not updated");
            }
        }
    }
    if summary.disabled > 0 {
        state.channel_pool.reload_ids(&updated).await?;
    }
    Ok(summary)
}

/// Balance queries in flight at once during an update of all channels.
const BALANCE_CONCURRENCY: usize = 8;

/// The reason recorded when a channel is disabled for an empty balance.
pub const NO_BALANCE_REASON: &str = "insufficient balance";

fn cny_per_usd(state: &AppState) -> f64 {
    state.options.current().number("Price")
}

async fn store_balance(
    state: &AppState,
    id: ChannelId,
    balance: f64,
    disable: bool,
) -> Result<(), ConsoleError> {
    state
        .store
        .write(move |wtx| {
            let Some(mut c) = channels::get_rw(wtx, id)? else {
                return Ok::<_, ConsoleError>(());
            };
            let now = now_unix();
            c.balance = balance;
            c.balance_updated_time = now;
            if disable && c.status == STATUS_ENABLED {
                c.status = STATUS_AUTO_DISABLED;
                c.other_info = with_status_reason(&c.other_info, NO_BALANCE_REASON, now);
            }
            channels::update(wtx, &c)?;
            Ok(())
        })
        .await
}
