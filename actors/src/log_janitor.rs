//! The log janitor: deletes logs older than a time as a background job, a small batch per
//! write transaction ([`RETENTION_BATCH`] rows, a few milliseconds each) with a short pause
//! between batches, so the log writer waits at most one batch for the write lock. The batches
//! commit without fsync (the log writer's next commit, or the job's last one, makes them
//! durable; a crash only means deleting them again). Progress is published through a watch
//! channel; one job runs at a time.
//!
//! Automatic retention: when `LogRetentionDays` is above 0, [`LogJanitor::spawn_auto`] starts a
//! job for "older than that many days" at startup and every hour. Off by default.
//!
//! redb puts the pages the deleted rows used on its free list and reuses them for new rows, so
//! the file stops growing once retention keeps the row count steady (measured in
//! `storage/tests/log_retention.rs` and the log benchmark).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::{Mutex, watch};
use tokio::task::JoinHandle;
use tollgate_storage::logs::{self, query};
use tollgate_storage::{StorageError, Store};

use crate::options::Options;

/// Rows deleted per write transaction.
pub const RETENTION_BATCH: usize = 32;

/// Pause between batches, so the log writer takes the write lock in between.
const PAUSE: Duration = Duration::from_millis(2);

/// Seconds between automatic retention runs.
const AUTO_EVERY: Duration = Duration::from_secs(3600);

/// Where the current (or last) deletion stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Progress {
    /// A job is deleting now.
    pub running: bool,
    /// Rows created before this (unix seconds) are deleted.
    pub target_timestamp: i64,
    /// Rows older than the target when the job started.
    pub total: u64,
    /// Rows deleted so far.
    pub deleted: u64,
    /// Unix seconds the job started (0: no job yet).
    pub started_at: i64,
    /// Unix seconds the job ended (0 while running).
    pub finished_at: i64,
    /// Started by the automatic retention option rather than an admin.
    pub automatic: bool,
    /// Why the job stopped early, empty when it did not.
    pub error: String,
}

/// Handle on the janitor. Cheap to clone.
#[derive(Clone)]
pub struct LogJanitor {
    store: Store,
    progress: Arc<watch::Sender<Progress>>,
    /// Held while deciding whether a job may start.
    start: Arc<Mutex<()>>,
    /// Set at shutdown: the running job stops after its current batch.
    cancel: Arc<AtomicBool>,
}

impl LogJanitor {
    /// A janitor on `store`, idle.
    pub fn new(store: Store) -> LogJanitor {
        LogJanitor {
            store,
            progress: Arc::new(watch::Sender::new(Progress::default())),
            start: Arc::new(Mutex::new(())),
            cancel: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The current progress.
    pub fn progress(&self) -> Progress {
        self.progress.borrow().clone()
    }

    /// Starts deleting rows created before `before` and returns the new job's progress, or
    /// `None` when a job is running already (or the janitor is stopping). `now` is recorded as
    /// the start time.
    pub async fn start(
        &self,
        before: i64,
        now: i64,
        automatic: bool,
    ) -> Result<Option<Progress>, StorageError> {
        let _guard = self.start.lock().await;
        if self.progress.borrow().running || self.cancel.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let total = self
            .store
            .read(move |rtx| query::count_before(rtx, before))
            .await?;
        let started = Progress {
            running: true,
            target_timestamp: before,
            total,
            deleted: 0,
            started_at: now,
            finished_at: 0,
            automatic,
            error: String::new(),
        };
        self.progress.send_replace(started.clone());
        let store = self.store.clone();
        let progress = Arc::clone(&self.progress);
        let cancel = Arc::clone(&self.cancel);
        tokio::task::spawn_blocking(move || run(&store, before, &progress, &cancel));
        Ok(Some(started))
    }

    /// Stops the running job after its current batch and refuses new ones (shutdown); waits
    /// for it to stop, so the database file can close.
    pub async fn stop(&self) {
        self.cancel.store(true, Ordering::Relaxed);
        let mut rx = self.progress.subscribe();
        let _ = rx.wait_for(|p| !p.running).await;
    }

    /// Waits until no job is running or `timeout` passes; returns the progress then.
    pub async fn wait(&self, timeout: Duration) -> Progress {
        let mut rx = self.progress.subscribe();
        let _ = tokio::time::timeout(timeout, rx.wait_for(|p| !p.running)).await;
        self.progress()
    }

    /// Runs automatic retention (`LogRetentionDays`, 0 = off) now and then every hour, until
    /// the returned task is aborted.
    pub fn spawn_auto(&self, options: Options, now: fn() -> i64) -> JoinHandle<()> {
        let janitor = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(AUTO_EVERY);
            loop {
                tick.tick().await;
                let days = options.current().int("LogRetentionDays");
                if days <= 0 {
                    continue;
                }
                let at = now();
                let before = at.saturating_sub(days.saturating_mul(86_400));
                match janitor.start(before, at, true).await {
                    Ok(Some(p)) => {
                        tracing::info!(days, rows = p.total, "automatic log retention started");
                    }
                    Ok(None) => {}
                    Err(e) => tracing::warn!(error = %e, "automatic log retention failed"),
                }
            }
        })
    }
}

/// The job: batches until nothing older is left, publishing progress after each.
fn run(store: &Store, before: i64, progress: &watch::Sender<Progress>, cancel: &AtomicBool) {
    let mut error = String::new();
    while !cancel.load(Ordering::Relaxed) {
        match store.write_blocking_lazy(|wtx| logs::delete_before(wtx, before, RETENTION_BATCH)) {
            Ok(0) => break,
            Ok(n) => {
                progress.send_modify(|p| p.deleted = p.deleted.saturating_add(n as u64));
                std::thread::sleep(PAUSE);
            }
            Err(e) => {
                tracing::error!(error = %e, "log deletion stopped");
                error = e.to_string();
                break;
            }
        }
    }
    // One durable commit seals the job.
    if let Err(e) = store.write_blocking(|_| Ok::<_, StorageError>(())) {
        tracing::warn!(error = %e, "making the deletion durable failed");
    }
    let end = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    progress.send_modify(|p| {
        p.running = false;
        p.finished_at = end;
        p.error = error;
    });
    tracing::info!(
        before,
        deleted = progress.borrow().deleted,
        "log deletion finished"
    );
}
