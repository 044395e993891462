//! The log writer: the one owner of the usage write path. It drains its queue into ONE write
//! transaction — log rows and the balance changes they record together — and commits once
//! (group commit), so billing is never bottlenecked on fsyncs and the database never shows a
//! charge without its log or a log without its charge.
//!
//! It runs on a dedicated OS thread (redb is blocking I/O); senders never wait. The batch is
//! whatever queued while the previous commit ran, up to [`LOG_BATCH_MAX`], plus what arrives
//! in the next gather interval ([`GATHER`] by default; `--commit-interval-ms`) when that was
//! more than one settlement or the previous commit was less than an interval ago: an idle
//! system commits each settlement at once, a busy one commits at most about once an interval.
//! A batch still smaller than [`FILL_ROWS`] then gathers on, up to [`FILL_WAIT`], so a trickle
//! of requests does not pay a whole commit for every few settlements. A crash loses at most the
//! batch being gathered and committed; a change is never applied twice.
//!
//! The rows' indexes, hour counters and (while `DataExportEnabled`) dashboard aggregates are
//! written by [`logs::insert_batch`] in the same transaction.
//!
//! Batches of up to [`IDLE_BATCH_MAX`] are committed on an idle-priority thread
//! ([`IdleWorker`]) while the writer waits, so a commit's burst of CPU only uses time no request
//! wants; larger batches (the machine is busy with requests) and every batch for a while after
//! an idle commit was starved ([`IDLE_PATIENCE`]) are committed by the writer itself.

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};
use tollgate_storage::logs::{self, LogEntry};
use tollgate_storage::usage::{self, BalanceChange};
use tollgate_storage::{StorageError, Store};

use crate::idle_worker::{IdleWorker, Waited};
use crate::options::Options;

/// Max settlements committed per transaction.
pub const LOG_BATCH_MAX: usize = 512;

/// The default gather interval (`--commit-interval-ms`): how long the writer lets a batch
/// fill when it finds more than one settlement queued (the sign of load), and the least time
/// between two commits while settlements keep coming, when nobody waits on a flush. A commit
/// costs a fixed part — copying every touched B-tree path, the fsync — of about half a
/// millisecond of CPU here, whatever its size: at 5 ms (200
/// commits a second) the writer still took half of Tollgate's CPU at 500 requests/s (200 µs
/// per request) and 64 µs per request at 2,000/s; at 20 ms it commits at most 50 times a
/// second. A lone settlement after a quiet spell (an idle system) is committed at once.
/// Clients never wait on a commit, and balances are enforced from the quota ledgers in memory;
/// the window only widens what a crash (not a shutdown, which flushes) can lose to these
/// milliseconds of settlements.
pub const GATHER: Duration = Duration::from_millis(20);

/// A batch with fewer settlements than this when its gather interval ends keeps gathering, up
/// to [`FILL_WAIT`] from when it started: a commit's fixed part (about 0.6 ms of CPU here,
/// mostly one copy of each touched B-tree page and the fsync) would otherwise outweigh its rows'.
/// At 500 requests a second a 20 ms batch holds 10 settlements, and the writer took 80 µs of
/// CPU per request (a third of Tollgate's); at 2,000 a second a batch holds 40 and waits no
/// longer than the interval.
pub const FILL_ROWS: usize = 32;

/// The longest a batch smaller than [`FILL_ROWS`] gathers, and at most 2.5 gather intervals
/// (an operator who shortened the interval to shrink what a crash can lose keeps that
/// choice); an interval longer than this is not extended.
pub const FILL_WAIT: Duration = Duration::from_millis(50);

/// The largest batch committed at idle priority. A bigger batch means requests arrive faster
/// than about 256 / [`GATHER`] (12,800 a second at 20 ms): the CPU is busy with them, and a
/// starved commit would only let settlements pile up.
pub const IDLE_BATCH_MAX: usize = LOG_BATCH_MAX / 2;

/// How long the writer waits for an idle-priority commit before it calls the CPU contended and
/// commits batches itself for [`CONTENDED_FOR`]. A commit takes a few milliseconds of CPU and
/// an fsync; far longer means it was starved.
pub const IDLE_PATIENCE: Duration = Duration::from_millis(200);

/// How long the writer commits on its own thread after an idle commit was starved.
pub const CONTENDED_FOR: Duration = Duration::from_secs(5);

/// A batch of settlements.
type Batch = Vec<(Option<BalanceChange>, Option<Box<LogEntry>>)>;

/// A message to the writer.
enum WriterMsg {
    /// Persist a balance change and/or a log row.
    Record {
        change: Option<BalanceChange>,
        log: Option<Box<LogEntry>>,
    },
    /// Answer once everything sent before this message is committed.
    Flush(oneshot::Sender<()>),
}

/// Handle on the writer thread. Cheap to clone; the thread ends when every handle is dropped
/// (after committing what is queued).
#[derive(Clone)]
pub struct LogWriter {
    /// Queue to the writer thread.
    tx: mpsc::UnboundedSender<WriterMsg>,
    /// The writer thread, woken by a flush while it gathers a batch.
    thread: std::thread::Thread,
}

impl LogWriter {
    /// Starts the writer thread on `store` with the default [`GATHER`]; dashboard aggregates
    /// are always maintained.
    pub fn spawn(store: Store) -> std::io::Result<(LogWriter, JoinHandle<()>)> {
        LogWriter::spawn_with(store, None, GATHER)
    }

    /// Starts the writer thread on `store`, letting batches gather for `gather` under load
    /// (zero: commit whatever is queued at once); dashboard aggregates are maintained while
    /// the `DataExportEnabled` option is on (read per batch from the published snapshot).
    pub fn spawn_with(
        store: Store,
        options: Option<Options>,
        gather: Duration,
    ) -> std::io::Result<(LogWriter, JoinHandle<()>)> {
        let (tx, rx) = mpsc::unbounded_channel();
        let thread = std::thread::Builder::new()
            .name("tollgate-log-writer".into())
            .spawn(move || run(store, options, gather, rx))?;
        let writer = LogWriter {
            tx,
            thread: thread.thread().clone(),
        };
        Ok((writer, thread))
    }

    /// Queues a balance change and/or a log row (never blocks).
    pub fn record(&self, change: Option<BalanceChange>, log: Option<LogEntry>) {
        let log = log.map(Box::new);
        if self.tx.send(WriterMsg::Record { change, log }).is_err() {
            tracing::error!("the log writer has stopped; a settlement was not recorded");
        }
    }

    /// Waits until everything queued before this call is committed.
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(WriterMsg::Flush(done)).is_ok() {
            // A flush does not wait for a batch to gather.
            self.thread.unpark();
            let _ = wait.await;
        }
    }
}

fn run(
    store: Store,
    options: Option<Options>,
    gather_for: Duration,
    mut rx: mpsc::UnboundedReceiver<WriterMsg>,
) {
    let mut batch = Vec::with_capacity(LOG_BATCH_MAX);
    let mut waiters = Vec::new();
    let mut last_commit: Option<Instant> = None;
    let mut idle = IdleWorker::spawn("tollgate-log-commit", {
        let store = store.clone();
        move |(mut batch, dashboard): (Batch, bool)| {
            commit(&store, &mut batch, dashboard);
            (batch, dashboard)
        }
    });
    let mut contended_until: Option<Instant> = None;
    while let Some(first) = rx.blocking_recv() {
        collect(first, &mut batch, &mut waiters);
        drain(&mut rx, &mut batch, &mut waiters);
        if batch.len() < LOG_BATCH_MAX && waiters.is_empty() {
            // Under load: let the batch fill for a moment (see GATHER).
            let wait = if batch.len() > 1 {
                gather_for
            } else {
                last_commit.map_or(Duration::ZERO, |at| gather_for.saturating_sub(at.elapsed()))
            };
            if !wait.is_zero() {
                let start = Instant::now();
                gather(
                    &mut rx,
                    &mut batch,
                    &mut waiters,
                    LOG_BATCH_MAX,
                    start + wait,
                );
                if batch.len() < FILL_ROWS && waiters.is_empty() {
                    let until = start + wait.max(FILL_WAIT.min(gather_for * 5 / 2));
                    gather(&mut rx, &mut batch, &mut waiters, FILL_ROWS, until);
                }
            }
        }
        if !batch.is_empty() {
            let dashboard = options
                .as_ref()
                .is_none_or(|o| o.current().flag("DataExportEnabled"));
            let contended = contended_until.is_some_and(|until| Instant::now() < until);
            match &idle {
                Some(worker) if batch.len() <= IDLE_BATCH_MAX && !contended => {
                    let rows = batch.len();
                    match worker.run((std::mem::take(&mut batch), dashboard), IDLE_PATIENCE) {
                        Some(Waited::Prompt((done, _))) => batch = done,
                        Some(Waited::Slow((done, _))) => {
                            tracing::debug!(
                                "an idle-priority commit was starved; committing at normal priority for a while"
                            );
                            batch = done;
                            contended_until = Some(Instant::now() + CONTENDED_FOR);
                        }
                        None => {
                            tracing::error!(
                                rows,
                                "the idle-priority committer stopped; its batch is lost"
                            );
                            idle = None;
                        }
                    }
                }
                _ => commit(&store, &mut batch, dashboard),
            }
            last_commit = Some(Instant::now());
        }
        for waiter in waiters.drain(..) {
            let _ = waiter.send(());
        }
    }
}

/// Lets the batch fill until `until`, `enough` settlements, or a flush (which unparks the
/// thread; senders of settlements wake nobody, so gathering costs them nothing).
fn gather(
    rx: &mut mpsc::UnboundedReceiver<WriterMsg>,
    batch: &mut Batch,
    waiters: &mut Vec<oneshot::Sender<()>>,
    enough: usize,
    until: Instant,
) {
    loop {
        std::thread::park_timeout(until.saturating_duration_since(Instant::now()));
        drain(rx, batch, waiters);
        if !waiters.is_empty() || batch.len() >= enough || Instant::now() >= until {
            return;
        }
    }
}

/// Adds what is queued to the batch, up to [`LOG_BATCH_MAX`].
fn drain(
    rx: &mut mpsc::UnboundedReceiver<WriterMsg>,
    batch: &mut Batch,
    waiters: &mut Vec<oneshot::Sender<()>>,
) {
    while batch.len() < LOG_BATCH_MAX {
        match rx.try_recv() {
            Ok(msg) => collect(msg, batch, waiters),
            Err(_) => break,
        }
    }
}

fn collect(msg: WriterMsg, batch: &mut Batch, waiters: &mut Vec<oneshot::Sender<()>>) {
    match msg {
        WriterMsg::Record { change, log } => batch.push((change, log)),
        WriterMsg::Flush(done) => waiters.push(done),
    }
}

/// Commits the batch in one transaction. A change whose user vanished is skipped (and said so)
/// without losing the rest; a failing commit is retried once, then reported.
fn commit(store: &Store, batch: &mut Batch, dashboard: bool) {
    for attempt in 0..2 {
        let result = store.write_blocking(|wtx| {
            let changes: Vec<BalanceChange> = batch.iter().filter_map(|(c, _)| *c).collect();
            for user in usage::apply_batch(wtx, &changes)? {
                tracing::warn!(%user, "settlements for a missing user skipped");
            }
            let rows: Vec<&mut LogEntry> = batch
                .iter_mut()
                .filter_map(|(_, log)| log.as_deref_mut())
                .collect();
            logs::insert_batch(wtx, rows, dashboard)?;
            Ok::<_, StorageError>(())
        });
        match result {
            Ok(()) => {
                batch.clear();
                return;
            }
            Err(e) if attempt == 0 => {
                tracing::warn!(error = %e, "log batch commit failed; retrying")
            }
            Err(e) => tracing::error!(error = %e, rows = batch.len(), "log batch lost"),
        }
    }
    batch.clear();
}
