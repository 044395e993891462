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
//! of requests does not pay a whole commit for every few settlements. Every settlement is
//! numbered and appended to the crash journal ([`crate::journal`]) when it is queued, so a
//! process crash loses none (the journal is replayed at the next start); each commit records the
//! last number it covers ([`meta::settled_through`]), so a settlement at or below it is skipped
//! on a retry or a replay: a change is never applied twice.
//!
//! A commit that fails (a full disk, an I/O error, a panic) keeps its batch and is retried with
//! a growing pause ([`RETRY_FIRST`] to [`RETRY_MAX`]), the database reopened in between (redb
//! refuses every operation after an I/O error until then); settlements queued meanwhile join
//! the batch. While it fails the shared [`StorageHealth`] holds the fault (the relay refuses paid
//! requests, `/api/status` shows it) and [`LogWriter::flush`] answers with it; the first
//! successful commit clears it.
//!
//! The rows' indexes, hour counters and (while `DataExportEnabled`) dashboard aggregates are
//! written by [`insert_batch`](tollgate_storage::logs::insert_batch) in the same transaction, and
//! so are each channel's used quota ([`tollgate_storage::channel_usage`]) and its prompt-cache
//! hour sums ([`tollgate_storage::prompt_cache`]).
//!
//! A commit is made durable (fsync) when a flush waits for it and at least every
//! [`DURABLE_EVERY_INTERVALS`] gather intervals; the commits between are not ([`durability`]:
//! visible to readers at once, persisted by the next durable commit). The crash journal is
//! trimmed only through durable commits and their settlements are kept until then, so a process
//! crash (which rolls such commits back) or a failed commit (whose reopen may) loses none; when
//! settlements stop coming, the writer makes the last commits durable once they are due.
//!
//! Batches of up to [`IDLE_BATCH_MAX`] are committed on an idle-priority thread
//! ([`IdleWorker`]) while the writer waits, so a commit's burst of CPU only uses time no request
//! wants; larger batches (the machine is busy with requests) and every batch for a while after
//! an idle commit was starved ([`IDLE_PATIENCE`]) are committed by the writer itself.

use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tollgate_storage::logs::LogEntry;
use tollgate_storage::tasks::Task;
use tollgate_storage::usage::BalanceChange;
use tollgate_storage::{Store, meta};

mod commit;
mod durability;
mod retry;
mod run;

use commit::{CommitFn, Shape, commit};
pub use durability::DURABLE_EVERY_INTERVALS;
use run::run;

use crate::journal::{self, HoldStart, Journal};
use crate::options::Options;
use crate::stats::WriterStats;
use crate::storage_health::{FaultSource, StorageFault, StorageHealth};

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

/// The first pause before a failed commit is retried; it doubles up to [`RETRY_MAX`].
pub const RETRY_FIRST: Duration = Duration::from_millis(50);

/// The longest pause between two attempts at a failing commit: how long the books may stay
/// closed after the disk works again.
pub const RETRY_MAX: Duration = Duration::from_secs(2);

/// Attempts at a failing batch after the last handle was dropped (shutdown) before the writer
/// gives up on it (the journal replays it at the next start).
pub const ATTEMPTS_AT_SHUTDOWN: u32 = 3;

/// One queued settlement: its number, the balance change and the log row.
struct Settlement {
    seq: u64,
    change: Option<BalanceChange>,
    log: Option<Box<LogEntry>>,
    /// The task a submit's settlement pays for: inserted in the same transaction as the charge.
    task: Option<Box<Task>>,
}

/// Numbers settlements and reservations and journals them (see [`crate::journal`]).
#[derive(Debug)]
struct Sequencer {
    /// The next number.
    next: u64,
    /// The crash journal (`None` after it failed to start: settlements are still committed).
    journal: Option<Journal>,
}

impl Sequencer {
    /// The next number.
    fn take(&mut self) -> u64 {
        let seq = self.next;
        self.next = seq.saturating_add(1);
        seq
    }
}

/// A batch of settlements, in number order.
type Batch = Vec<Settlement>;

/// A flush's answer.
type FlushDone = oneshot::Sender<Result<(), StorageFault>>;

/// A message to the writer.
enum WriterMsg {
    /// Persist a balance change and/or a log row.
    Record(Settlement),
    /// Answer once everything sent before this message is committed (or a commit failed).
    Flush(FlushDone),
}

/// Handle on the writer thread. Cheap to clone; the thread ends when every handle is dropped
/// (after committing what is queued).
#[derive(Clone)]
pub struct LogWriter {
    /// Queue to the writer thread.
    tx: mpsc::UnboundedSender<WriterMsg>,
    /// The writer thread, woken by a flush while it gathers a batch.
    thread: std::thread::Thread,
    /// Numbers and journals settlements; held while one is numbered, journalled and queued,
    /// so the queue and the journal are in number order.
    seq: Arc<Mutex<Sequencer>>,
    /// Set while commits fail.
    health: StorageHealth,
    /// Queue depth and commit durations (read by `/metrics`).
    stats: Arc<WriterStats>,
}

impl LogWriter {
    /// Starts the writer thread on `store` with the default [`GATHER`]; dashboard aggregates
    /// are always maintained. Blocking: replays the crash journal of the database's directory
    /// first (see [`crate::journal`]).
    pub fn spawn(store: Store) -> std::io::Result<(LogWriter, JoinHandle<()>)> {
        LogWriter::spawn_with(store, None, GATHER)
    }

    /// Starts the writer thread on `store`, letting batches gather for `gather` under load
    /// (zero: commit whatever is queued at once); dashboard aggregates are maintained while
    /// the `DataExportEnabled` option is on (read per batch from the published snapshot).
    /// Blocking: replays the crash journal of the database's directory first
    /// (see [`crate::journal`]).
    pub fn spawn_with(
        store: Store,
        options: Option<Options>,
        gather: Duration,
    ) -> std::io::Result<(LogWriter, JoinHandle<()>)> {
        LogWriter::spawn_inner(store, options, gather, commit)
    }

    /// [`LogWriter::spawn_with`] whose idle-priority thread commits with `idle_commit` (tests
    /// make it fail in ways the real one cannot).
    fn spawn_inner(
        store: Store,
        options: Option<Options>,
        gather: Duration,
        idle_commit: CommitFn,
    ) -> std::io::Result<(LogWriter, JoinHandle<()>)> {
        let settled = store
            .read_blocking(meta::settled_through)
            .map_err(std::io::Error::other)?;
        let (journal, next) = replay(&store, settled)?;
        let health = StorageHealth::default();
        let seq = Arc::new(Mutex::new(Sequencer {
            next,
            journal: Some(journal),
        }));
        let (tx, rx) = mpsc::unbounded_channel();
        let stats = Arc::new(WriterStats::default());
        let thread = std::thread::Builder::new()
            .name("tollgate-log-writer".into())
            .spawn({
                let health = health.clone();
                let seq = Arc::clone(&seq);
                let stats = Arc::clone(&stats);
                move || {
                    run(
                        store,
                        options,
                        gather,
                        rx,
                        &health,
                        &seq,
                        &stats,
                        idle_commit,
                    );
                }
            })?;
        let writer = LogWriter {
            tx,
            thread: thread.thread().clone(),
            seq,
            health,
            stats,
        };
        Ok((writer, thread))
    }

    /// Queues a balance change and/or a log row (never blocks on the database; the journal
    /// append is one write to the page cache).
    pub fn record(&self, change: Option<BalanceChange>, log: Option<LogEntry>) {
        self.record_for(None, change, log);
    }

    /// [`LogWriter::record`] of the settlement of reservation `hold` (from
    /// [`LogWriter::open_hold`]), which it closes in the journal.
    pub fn record_for(
        &self,
        hold: Option<u64>,
        change: Option<BalanceChange>,
        log: Option<LogEntry>,
    ) {
        let log = log.map(Box::new);
        let mut guard = self.lock();
        let seq = guard.take();
        let journalled = guard
            .journal
            .as_mut()
            .map(|j| j.settled(seq, hold, change, log.as_deref()));
        let sent = self.tx.send(WriterMsg::Record(Settlement {
            seq,
            change,
            log,
            task: None,
        }));
        drop(guard);
        self.journalled(journalled);
        match sent {
            Ok(()) => self.stats.queued(),
            Err(_) => {
                tracing::error!("the log writer has stopped; a settlement was not recorded");
            }
        }
    }

    /// [`LogWriter::record_for`] of a task submit's settlement: `task` (its `quota` set to the
    /// charge) is journalled with the charge and inserted in the same transaction as it
    /// ([`tollgate_storage::tasks::insert`]), so the database never shows one without the other.
    pub fn record_task(
        &self,
        hold: Option<u64>,
        change: Option<BalanceChange>,
        log: Option<LogEntry>,
        task: Task,
    ) {
        let log = log.map(Box::new);
        let task = Box::new(task);
        let mut guard = self.lock();
        let seq = guard.take();
        let journalled = guard
            .journal
            .as_mut()
            .map(|j| j.settled_task(seq, hold, change, log.as_deref(), &task));
        let sent = self.tx.send(WriterMsg::Record(Settlement {
            seq,
            change,
            log,
            task: Some(task),
        }));
        drop(guard);
        self.journalled(journalled);
        match sent {
            Ok(()) => self.stats.queued(),
            Err(_) => {
                tracing::error!("the log writer has stopped; a task settlement was not recorded");
            }
        }
    }

    /// Journals a reservation (what it costs if the process dies holding it; its record is
    /// written with the journal's next append, at the latest by [`LogWriter::hold_answering`]);
    /// returns its number, to pass to [`LogWriter::record_for`], [`LogWriter::hold_progress`]
    /// and [`LogWriter::hold_released`].
    pub fn open_hold(&self, start: &HoldStart) -> u64 {
        let mut guard = self.lock();
        let hold = guard.take();
        let encoded = guard.journal.as_mut().map(|j| j.opened(hold, start));
        drop(guard);
        // Nothing was written: only a failure is news to the journal's health.
        if let Some(Err(e)) = encoded {
            self.journalled(Some(Err(e)));
        }
        hold
    }

    /// The answer of reservation `hold` has output to send: its record is written now if no
    /// append wrote it yet, so a crash from here on charges it.
    pub fn hold_answering(&self, hold: u64) {
        let mut guard = self.lock();
        let appended = guard.journal.as_mut().map(|j| j.answering(hold));
        drop(guard);
        self.journalled(appended.and_then(appended_only));
    }

    /// Journals a reservation's progress: its output so far and what that costs with the
    /// prompt (what a crash now would charge).
    pub fn hold_progress(&self, hold: u64, completion_tokens: i64, cost: i64) {
        let mut guard = self.lock();
        let journalled = guard
            .journal
            .as_mut()
            .map(|j| j.progress(hold, completion_tokens, cost));
        drop(guard);
        self.journalled(journalled);
    }

    /// Journals a reservation released without a charge.
    pub fn hold_released(&self, hold: u64) {
        let mut guard = self.lock();
        let appended = guard.journal.as_mut().map(|j| j.closed(hold));
        drop(guard);
        self.journalled(appended.and_then(appended_only));
    }

    /// Whether paid requests may be served: no storage fault. A journal fault is probed again
    /// first (an append of a record that changes nothing), since only an append clears it and
    /// refused requests append nothing.
    pub fn storage_ok(&self) -> bool {
        if !self.health.is_faulted() {
            return true;
        }
        if self.health.has(FaultSource::Journal) {
            let mut guard = self.lock();
            let probed = guard.journal.as_mut().map(Journal::probe);
            drop(guard);
            self.journalled(probed);
        }
        !self.health.is_faulted()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Sequencer> {
        self.seq.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps the journal's fault up to date: a failed append (a full disk) stops paid requests
    /// like a failed commit does; the next good append clears it.
    fn journalled(&self, result: Option<std::io::Result<()>>) {
        match result {
            Some(Err(e))
                if self
                    .health
                    .fail(FaultSource::Journal, format!("journal: {e}"), unix_now()) =>
            {
                tracing::error!(error = %e, "storage fault: the crash journal cannot be written; paid requests are refused until it can");
            }
            Some(Ok(()))
                if self.health.is_faulted()
                    && self.health.recover(FaultSource::Journal).is_some() =>
            {
                tracing::info!("the crash journal is written again");
            }
            _ => {}
        }
    }

    /// Waits until everything queued before this call is committed durably; the storage fault
    /// instead when a commit failed (what it held is kept and retried).
    pub async fn flush(&self) -> Result<(), StorageFault> {
        let (done, wait) = oneshot::channel();
        let stopped = || StorageFault {
            message: "the log writer has stopped".into(),
            since: 0,
        };
        self.tx
            .send(WriterMsg::Flush(done))
            .map_err(|_| stopped())?;
        // A flush does not wait for a batch to gather.
        self.thread.unpark();
        wait.await.map_err(|_| stopped())?
    }

    /// Whether settlements are being committed: the fault while they are not.
    pub fn health(&self) -> &StorageHealth {
        &self.health
    }

    /// The queue depth and commit durations.
    pub fn stats(&self) -> &Arc<WriterStats> {
        &self.stats
    }
}

/// Commits what the journal holds beyond the database (settlements of a crashed process, and
/// a crash charge for each reservation it left open), then starts a new journal generation.
/// Returns it and the next number. Blocking; a failure stops the start (the journal is kept).
fn replay(store: &Store, settled: u64) -> std::io::Result<(Journal, u64)> {
    let dir = store.path().parent().map_or_else(
        || std::path::PathBuf::from("."),
        std::path::Path::to_path_buf,
    );
    let recovered = journal::recover(&dir, settled, unix_now())?;
    let generation = recovered
        .generations
        .last()
        .map_or(1, |g| g.saturating_add(1));
    let mut journal = Journal::create(&dir, generation)?;
    // The new generation holds everything pending, crash charges included (they close their
    // reservations), before the old ones go: a crash during the replay replays the same.
    for p in &recovered.pending {
        match &p.task {
            Some(task) => journal.settled_task(p.seq, p.hold, p.change, p.log.as_ref(), task)?,
            None => journal.settled(p.seq, p.hold, p.change, p.log.as_ref())?,
        }
    }
    journal::remove_generations(&dir, &recovered.generations)?;
    if !recovered.pending.is_empty() {
        tracing::warn!(
            settlements = recovered.pending.len(),
            crashed = recovered.crashed,
            "the previous process stopped without committing everything; replaying its journal"
        );
        let mut batch: Batch = recovered
            .pending
            .into_iter()
            .map(|p| Settlement {
                seq: p.seq,
                change: p.change,
                log: p.log.map(Box::new),
                task: p.task,
            })
            .collect();
        let shape = Shape {
            dashboard: true,
            durable: true,
        };
        let through = commit(store, &mut batch, shape, None).map_err(|f| {
            std::io::Error::other(format!("replaying the journal failed: {}", f.message))
        })?;
        if let Some(through) = through {
            journal.committed(through)?;
        }
    }
    let next = recovered.last_seq.max(settled).saturating_add(1);
    Ok((journal, next))
}

/// What an append that may have written nothing tells the journal's health: its failure, or
/// its success when it wrote (a success that wrote nothing proves nothing about the disk).
fn appended_only(result: std::io::Result<bool>) -> Option<std::io::Result<()>> {
    match result {
        Ok(true) => Some(Ok(())),
        Ok(false) => None,
        Err(e) => Some(Err(e)),
    }
}

/// The current time in unix seconds (0 if the clock is before 1970).
fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests;
