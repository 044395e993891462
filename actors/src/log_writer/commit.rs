//! Committing a batch of settlements: one write transaction for its balance changes, log rows,
//! channel counters and task rows, durable or not ([`Shape`]); a fault of the data commits the
//! settlements one by one so only the bad one is dropped.

use std::panic::AssertUnwindSafe;
use std::time::Instant;

use tollgate_storage::logs::{self, LogEntry};
use tollgate_storage::tasks;
use tollgate_storage::usage::{self, BalanceChange};
use tollgate_storage::{
    StorageError, Store, WriteTransaction, budgets, channel_usage, meta, prompt_cache,
};

use super::{Batch, Settlement};
use crate::stats::WriterStats;

/// How a batch is committed ([`commit`]; tests inject failures into the idle committer).
pub(super) type CommitFn =
    fn(&Store, &mut Batch, Shape, Option<&WriterStats>) -> Result<Option<u64>, Failure>;

/// How a batch is committed.
#[derive(Debug, Clone, Copy)]
pub(super) struct Shape {
    /// Whether consume rows add to the dashboard aggregates (`DataExportEnabled`).
    pub(super) dashboard: bool,
    /// Whether the commit is made durable (fsync) before it returns. A commit that is not
    /// leaves its settlements in the batch: the writer keeps them until a durable commit.
    pub(super) durable: bool,
}

/// Why a commit failed.
#[derive(Debug)]
pub(super) struct Failure {
    /// For the log and the fault.
    pub(super) message: String,
    /// Whether the database must be reopened first (redb refuses every operation after an
    /// I/O error, and a panic may have left the handle in any state).
    pub(super) reopen: bool,
}

/// [`commit_batch`], counted in `stats` when it succeeds: the batch's settlements leave the
/// queue, and the commit's duration is recorded.
pub(super) fn commit(
    store: &Store,
    batch: &mut Batch,
    shape: Shape,
    stats: Option<&WriterStats>,
) -> Result<Option<u64>, Failure> {
    let started = Instant::now();
    let size = batch.len();
    let result = commit_batch(store, batch, shape);
    if let (Some(stats), Ok(_)) = (stats, &result) {
        stats.done(size);
        stats.committed(started.elapsed());
    }
    result
}

/// Commits the batch in one transaction (the batch is emptied once it is committed durably; a
/// commit that is not durable leaves it for the writer to keep). A change
/// whose user vanished is skipped (and said so) without losing the rest. A fault of the storage
/// (or a panic) is returned with the batch kept; a fault of the data (an overflow, say) makes
/// the settlements be committed one by one, so only the bad one is dropped. Returns the
/// highest number the database now covers.
fn commit_batch(store: &Store, batch: &mut Batch, shape: Shape) -> Result<Option<u64>, Failure> {
    let through = batch.iter().map(|s| s.seq).max();
    let committed = |batch: &mut Batch| {
        if shape.durable {
            batch.clear();
        }
    };
    match commit_once(store, batch, shape) {
        Ok(()) => {
            committed(batch);
            Ok(through)
        }
        Err(Some(e)) if !e.is_fault() && batch.len() > 1 => {
            tracing::warn!(error = %e, "a batch failed on its data; committing it one settlement at a time");
            for one in batch.chunks_mut(1) {
                match commit_once(store, one, shape) {
                    Ok(()) => {}
                    Err(Some(e)) if !e.is_fault() => {
                        tracing::error!(error = %e, seq = one[0].seq, "a settlement cannot be stored and is dropped");
                    }
                    Err(e) => {
                        // Keep what is not committed yet (a settlement already committed is
                        // skipped by its number on the retry).
                        return Err(failure(e));
                    }
                }
            }
            committed(batch);
            Ok(through)
        }
        Err(Some(e)) if !e.is_fault() => {
            tracing::error!(error = %e, "a settlement cannot be stored and is dropped");
            committed(batch);
            Ok(through)
        }
        Err(e) => Err(failure(e)),
    }
}

/// A storage error (`None`: a panic) as a [`Failure`].
fn failure(error: Option<StorageError>) -> Failure {
    match error {
        Some(e) => Failure {
            message: e.to_string(),
            reopen: true,
        },
        None => Failure {
            message: "the commit panicked".into(),
            reopen: true,
        },
    }
}

/// One transaction for `batch`, made durable before it returns when `shape` says so;
/// `Err(None)` when it panicked. Settlements numbered at or below the recorded
/// [`meta::settled_through`] are already in the file (a commit reported as failed may have
/// reached it) and are skipped.
fn commit_once(
    store: &Store,
    batch: &mut [Settlement],
    shape: Shape,
) -> Result<(), Option<StorageError>> {
    let dashboard = shape.dashboard;
    let attempt = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let write = |wtx: &WriteTransaction| {
            let done = meta::settled_through_rw(wtx)?;
            let changes: Vec<BalanceChange> = batch
                .iter()
                .filter(|s| s.seq > done)
                .filter_map(|s| s.change)
                .collect();
            for user in usage::apply_batch(wtx, &changes)? {
                tracing::warn!(%user, "settlements for a missing user skipped");
            }
            budgets::add_spend(wtx, &changes)?;
            let rows: Vec<&mut LogEntry> = batch
                .iter_mut()
                .filter(|s| s.seq > done)
                .filter_map(|s| s.log.as_deref_mut())
                .collect();
            channel_usage::add_rows(wtx, rows.iter().map(|r| &**r))?;
            prompt_cache::add_rows(wtx, rows.iter().map(|r| &**r))?;
            logs::insert_batch(wtx, rows, dashboard)?;
            for s in batch.iter().filter(|s| s.seq > done) {
                if let Some(task) = &s.task {
                    let mut task = (**task).clone();
                    task.quota = s.change.map_or(0, |c| c.charged);
                    tasks::insert(wtx, task)?;
                }
            }
            if let Some(last) = batch.iter().map(|s| s.seq).max()
                && last > done
            {
                meta::set_settled_through(wtx, last)?;
            }
            Ok::<_, StorageError>(())
        };
        if shape.durable {
            store.write_blocking(write)
        } else {
            store.write_blocking_lazy(write)
        }
    }));
    match attempt {
        Ok(result) => result.map_err(Some),
        Err(_) => Err(None),
    }
}
