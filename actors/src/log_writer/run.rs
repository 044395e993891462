//! The writer thread's loop ([`run`]): it gathers settlements into a batch, commits the batch
//! (on the idle-priority committer while it is small), keeps what a commit that was not durable
//! covered until a durable one does, and retries a failed commit until it succeeds.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TryRecvError;
use tollgate_storage::Store;

use super::commit::{CommitFn, Failure, Shape, commit};
use super::durability::Pending;
use super::retry::retry;
use super::{
    Batch, CONTENDED_FOR, FILL_ROWS, FILL_WAIT, FlushDone, IDLE_BATCH_MAX, IDLE_PATIENCE,
    LOG_BATCH_MAX, Sequencer, WriterMsg,
};
use crate::idle_worker::{IdleWorker, Waited};
use crate::options::Options;
use crate::stats::WriterStats;
use crate::storage_health::StorageHealth;

/// What the writer thread works with between commits: the database, its queue, the batch being
/// gathered, the flushes waiting on it and the commits not durable yet.
struct Writer<'a> {
    store: Store,
    rx: mpsc::UnboundedReceiver<WriterMsg>,
    batch: Batch,
    waiters: Vec<FlushDone>,
    pending: Pending,
    health: &'a StorageHealth,
    stats: &'a Arc<WriterStats>,
}

impl Writer<'_> {
    /// A commit failed: the commits not durable yet go back into the batch (the retry's reopen
    /// may have rolled them back; those still in the file are skipped by their numbers), and the
    /// batch is retried until it commits ([`retry`]). Returns the highest number committed.
    fn retry_failed(&mut self, dashboard: bool, failure: Failure) -> Option<u64> {
        self.pending.take_back(&mut self.batch, self.stats);
        retry(
            &self.store,
            &mut self.rx,
            &mut self.batch,
            &mut self.waiters,
            dashboard,
            self.health,
            self.stats,
            failure,
        )
    }

    /// Adds what is queued to the batch, up to [`LOG_BATCH_MAX`].
    fn drain(&mut self) {
        drain(&mut self.rx, &mut self.batch, &mut self.waiters);
    }
}

/// The writer thread: gathers settlements into batches and commits them (see the module docs)
/// until every handle is gone and what was queued is committed.
#[expect(
    clippy::too_many_arguments,
    reason = "the writer thread's whole state, handed over once"
)]
pub(super) fn run(
    store: Store,
    options: Option<Options>,
    gather_for: Duration,
    rx: mpsc::UnboundedReceiver<WriterMsg>,
    health: &StorageHealth,
    seq: &Mutex<Sequencer>,
    stats: &Arc<WriterStats>,
    idle_commit: CommitFn,
) {
    let mut idle = IdleWorker::spawn("tollgate-log-commit", {
        let store = store.clone();
        let stats = Arc::clone(stats);
        move |(shared, shape, _): IdleJob| {
            let result = {
                let mut batch = shared.lock().unwrap_or_else(PoisonError::into_inner);
                idle_commit(&store, &mut batch, shape, Some(&stats))
            };
            (shared, shape, result)
        }
    });
    let mut w = Writer {
        store,
        rx,
        batch: Vec::with_capacity(LOG_BATCH_MAX),
        waiters: Vec::new(),
        pending: Pending::new(gather_for),
        health,
        stats,
    };
    let mut last_commit: Option<Instant> = None;
    let mut contended_until: Option<Instant> = None;
    loop {
        let first = match next(&mut w.rx, w.pending.due()) {
            Next::Message(first) => first,
            Next::Closed if w.pending.due().is_none() => break,
            next @ (Next::Due | Next::Closed) => {
                // Settlements stopped coming (or every handle is gone): make the last commits
                // durable (a failure takes them back into the batch, committed with their rows'
                // dashboard aggregates as the batch would be).
                let dashboard = dashboard_on(options.as_ref());
                let shape = Shape {
                    dashboard,
                    durable: true,
                };
                let through = match commit(&w.store, &mut w.batch, shape, Some(stats)) {
                    Ok(through) => through,
                    Err(failure) => w.retry_failed(dashboard, failure),
                };
                trim(seq, w.pending.made_durable(through, Instant::now()));
                if matches!(next, Next::Closed) {
                    break;
                }
                continue;
            }
        };
        collect(first, &mut w.batch, &mut w.waiters);
        w.drain();
        if w.batch.len() < LOG_BATCH_MAX && w.waiters.is_empty() {
            // Under load: let the batch fill for a moment (see GATHER).
            let wait = if w.batch.len() > 1 {
                gather_for
            } else {
                last_commit.map_or(Duration::ZERO, |at| gather_for.saturating_sub(at.elapsed()))
            };
            if !wait.is_zero() {
                let start = Instant::now();
                gather(&mut w, LOG_BATCH_MAX, start + wait);
                if w.batch.len() < FILL_ROWS && w.waiters.is_empty() {
                    let until = start + wait.max(FILL_WAIT.min(gather_for * 5 / 2));
                    gather(&mut w, FILL_ROWS, until);
                }
            }
        }
        // A flush also waits for the commits not durable yet (an empty commit makes them so).
        if !w.batch.is_empty() || (!w.waiters.is_empty() && w.pending.due().is_some()) {
            let dashboard = dashboard_on(options.as_ref());
            let durable = w
                .pending
                .durable_next(!w.waiters.is_empty(), Instant::now());
            let shape = Shape { dashboard, durable };
            let contended = contended_until.is_some_and(|until| Instant::now() < until);
            let result = match &idle {
                Some(worker) if w.batch.len() <= IDLE_BATCH_MAX && !contended => {
                    // The batch is shared, not handed over: should the committer die with it,
                    // the writer still has it (whatever of it was committed is skipped by its
                    // number), so no later commit's number can pass it uncommitted.
                    let shared = Arc::new(Mutex::new(std::mem::take(&mut w.batch)));
                    let waited = worker.run((Arc::clone(&shared), shape, Ok(None)), IDLE_PATIENCE);
                    w.batch =
                        std::mem::take(&mut *shared.lock().unwrap_or_else(PoisonError::into_inner));
                    match waited {
                        Some(Waited::Prompt((_, _, result))) => result,
                        Some(Waited::Slow((_, _, result))) => {
                            tracing::debug!(
                                "an idle-priority commit was starved; committing at normal priority for a while"
                            );
                            contended_until = Some(Instant::now() + CONTENDED_FOR);
                            result
                        }
                        None => {
                            tracing::error!(
                                settlements = w.batch.len(),
                                "the idle-priority committer stopped; its batch is committed by the writer, which commits everything from now on"
                            );
                            idle = None;
                            commit(&w.store, &mut w.batch, shape, Some(stats))
                        }
                    }
                }
                _ => commit(&w.store, &mut w.batch, shape, Some(stats)),
            };
            let through = match result {
                Ok(through) if !durable => {
                    // Kept until a durable commit covers them; the journal too.
                    w.pending.keep(&mut w.batch, through);
                    last_commit = Some(Instant::now());
                    continue;
                }
                Ok(through) => through,
                Err(failure) => w.retry_failed(dashboard, failure),
            };
            trim(seq, w.pending.made_durable(through, Instant::now()));
            last_commit = Some(Instant::now());
        }
        for waiter in w.waiters.drain(..) {
            let _ = waiter.send(Ok(()));
        }
    }
}

/// Whether consume rows add to the dashboard aggregates: the `DataExportEnabled` option (read per
/// batch from the published snapshot), always without options.
fn dashboard_on(options: Option<&Options>) -> bool {
    options.is_none_or(|o| o.current().flag("DataExportEnabled"))
}

/// What the writer waits for next.
enum Next {
    /// A message.
    Message(WriterMsg),
    /// Commits not durable yet are due to be made durable.
    Due,
    /// Every handle is gone and the queue is empty.
    Closed,
}

/// Waits for the next message; while commits wait to be made durable, at most until `due`
/// (a message that arrives meanwhile is taken at `due`, or at once by a flush, which unparks).
fn next(rx: &mut mpsc::UnboundedReceiver<WriterMsg>, due: Option<Instant>) -> Next {
    let Some(due) = due else {
        return rx.blocking_recv().map_or(Next::Closed, Next::Message);
    };
    loop {
        match rx.try_recv() {
            Ok(msg) => return Next::Message(msg),
            Err(TryRecvError::Disconnected) => return Next::Closed,
            Err(TryRecvError::Empty) => {}
        }
        let left = due.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Next::Due;
        }
        std::thread::park_timeout(left);
    }
}

/// Trims the crash journal through `through`, the last number a durable commit covers.
fn trim(seq: &Mutex<Sequencer>, through: Option<u64>) {
    let Some(through) = through else { return };
    let lock = || seq.lock().unwrap_or_else(PoisonError::into_inner);
    // The file work runs between the locked steps (see `journal::trim`): appends go on meanwhile.
    let next = lock().journal.as_ref().and_then(|j| j.next_file(through));
    let prepared = next.and_then(|next| {
        next.create()
            .inspect_err(|e| {
                tracing::warn!(error = %e, "creating the crash journal's next file failed");
            })
            .ok()
    });
    let Some(trimmed) = lock().journal.as_mut().map(|j| j.trim(through, prepared)) else {
        return;
    };
    match trimmed.finish() {
        Ok(Some(generation)) => {
            if let Some(journal) = lock().journal.as_mut() {
                journal.previous_removed(generation);
            }
        }
        Ok(None) => {}
        Err(e) => tracing::warn!(error = %e, "trimming the crash journal failed"),
    }
}

/// What the idle-priority committer is handed and hands back: the batch (shared with the
/// writer, which keeps it if the committer dies), how it is committed, and how the commit went.
type IdleJob = (Arc<Mutex<Batch>>, Shape, Result<Option<u64>, Failure>);

/// Lets the batch fill until `until`, `enough` settlements, or a flush (which unparks the
/// thread; senders of settlements wake nobody, so gathering costs them nothing).
fn gather(w: &mut Writer<'_>, enough: usize, until: Instant) {
    loop {
        std::thread::park_timeout(until.saturating_duration_since(Instant::now()));
        w.drain();
        if !w.waiters.is_empty() || w.batch.len() >= enough || Instant::now() >= until {
            return;
        }
    }
}

/// Adds what is queued to the batch, up to [`LOG_BATCH_MAX`].
fn drain(
    rx: &mut mpsc::UnboundedReceiver<WriterMsg>,
    batch: &mut Batch,
    waiters: &mut Vec<FlushDone>,
) {
    while batch.len() < LOG_BATCH_MAX {
        match rx.try_recv() {
            Ok(msg) => collect(msg, batch, waiters),
            Err(_) => break,
        }
    }
}

fn collect(msg: WriterMsg, batch: &mut Batch, waiters: &mut Vec<FlushDone>) {
    match msg {
        WriterMsg::Record(settlement) => batch.push(settlement),
        WriterMsg::Flush(done) => waiters.push(done),
    }
}
