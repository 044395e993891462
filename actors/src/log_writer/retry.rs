//! A failed commit retried until it succeeds: the storage fault set and reported to flushes, the
//! database reopened when the failure may have latched it, settlements queued meanwhile joined.

use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TryRecvError;
use tollgate_storage::Store;

use super::commit::{Failure, Shape, commit};
use super::{ATTEMPTS_AT_SHUTDOWN, Batch, FlushDone, RETRY_FIRST, RETRY_MAX, WriterMsg, unix_now};
use crate::stats::WriterStats;
use crate::storage_health::{FaultSource, StorageFault, StorageHealth};

/// Retries a failed batch until it commits: sets the fault, answers flushes with it, reopens
/// the database when the failure may have latched it, pauses (settlements queued meanwhile join
/// the batch), and tries again. Gives up only after the last handle is gone (shutdown) and
/// [`ATTEMPTS_AT_SHUTDOWN`] more attempts. Returns the highest number committed.
#[expect(
    clippy::too_many_arguments,
    reason = "the writer loop's state, passed apart so each borrow stays visible"
)]
pub(super) fn retry(
    store: &Store,
    rx: &mut mpsc::UnboundedReceiver<WriterMsg>,
    batch: &mut Batch,
    waiters: &mut Vec<FlushDone>,
    dashboard: bool,
    health: &StorageHealth,
    stats: &WriterStats,
    mut failure: Failure,
) -> Option<u64> {
    let mut pause = RETRY_FIRST;
    let mut attempts_after_close = 0_u32;
    let mut closed = false;
    loop {
        if health.fail(FaultSource::Commit, failure.message.clone(), unix_now()) {
            tracing::error!(
                error = %failure.message,
                settlements = batch.len(),
                "storage fault: settlements cannot be committed; paid requests are refused until a commit succeeds"
            );
        } else {
            tracing::warn!(error = %failure.message, settlements = batch.len(), "commit failed again; retrying");
        }
        let fault = health.fault();
        for waiter in waiters.drain(..) {
            if let Some(fault) = &fault {
                let _ = waiter.send(Err(fault.clone()));
            }
        }
        closed |= pause_and_collect(rx, batch, waiters, fault.as_ref(), pause);
        if closed {
            attempts_after_close += 1;
            if attempts_after_close > ATTEMPTS_AT_SHUTDOWN {
                tracing::error!(
                    settlements = batch.len(),
                    "shutting down with settlements that could not be committed; the journal replays them at the next start"
                );
                stats.done(batch.len());
                batch.clear();
                return None;
            }
        }
        pause = (pause * 2).min(RETRY_MAX);
        if (failure.reopen || !store.is_open())
            && let Err(message) = reopen(store)
        {
            failure = Failure {
                message,
                reopen: true,
            };
            continue;
        }
        let shape = Shape {
            dashboard,
            durable: true,
        };
        match commit(store, batch, shape, Some(stats)) {
            Ok(through) => {
                if let Some(fault) = health.recover(FaultSource::Commit) {
                    tracing::info!(
                        since = fault.since,
                        "storage recovered: the kept settlements are committed; paid requests are served again"
                    );
                }
                return through;
            }
            Err(again) => failure = again,
        }
    }
}

/// Reopens the database. Closing the old handle runs redb's close, which may itself fail or
/// panic on the same fault (a lock poisoned by a panicking write): caught, and reported.
fn reopen(store: &Store) -> Result<(), String> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| store.reopen())) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(format!("reopening the database: {e}")),
        Err(_) => Err("closing the failed database panicked".into()),
    }
}

/// Waits `pause`, taking every settlement queued meanwhile into the batch and answering
/// flushes with `fault` at once. Returns whether every handle is gone.
fn pause_and_collect(
    rx: &mut mpsc::UnboundedReceiver<WriterMsg>,
    batch: &mut Batch,
    waiters: &mut Vec<FlushDone>,
    fault: Option<&StorageFault>,
    pause: Duration,
) -> bool {
    let until = Instant::now() + pause;
    let mut closed = false;
    loop {
        while !closed {
            match rx.try_recv() {
                Ok(WriterMsg::Record(settlement)) => batch.push(settlement),
                Ok(WriterMsg::Flush(done)) => match fault {
                    Some(fault) => {
                        let _ = done.send(Err(fault.clone()));
                    }
                    None => waiters.push(done),
                },
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => closed = true,
            }
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return closed;
        }
        std::thread::park_timeout(left);
    }
}
