//! `GET /api/health`: liveness (the process answers) and readiness (it can do its job): the
//! database file takes a write, the log writer commits what it is given (a flush comes back
//! in time, no storage fault), and the channel pool actor runs.
//!
//! The database probe commits one tiny record; a pass is reused for [`PROBE_REUSE`] and probes
//! run one at a time, so a public route cannot be turned into a stream of disk syncs. A failure
//! is not reused: the next probe tries again, so recovery shows at once.

use std::time::{Duration, Instant};

use serde::Serialize;
use tollgate_storage::meta;

use tollgate_actors::channel_pool::ChannelPool;
use tollgate_actors::quota::QuotaBook;
use tollgate_storage::Store;

use crate::clock::now_unix;

/// How long a database probe's answer is reused.
pub const PROBE_REUSE: Duration = Duration::from_secs(5);
/// How long a probe may take before it counts as failed (a stuck disk, a writer that does not
/// keep up).
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// When the database probe last passed.
#[derive(Debug, Default)]
pub struct ProbeCache {
    last: tokio::sync::Mutex<Option<Instant>>,
}

/// One check's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// Whether it passed.
    pub ok: bool,
    /// Why not (absent when it passed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Check {
    fn pass() -> Check {
        Check {
            ok: true,
            error: None,
        }
    }

    fn fail(error: impl Into<String>) -> Check {
        Check {
            ok: false,
            error: Some(error.into()),
        }
    }
}

/// Every check of readiness.
#[derive(Debug, Clone, Serialize)]
pub struct Checks {
    /// The database file takes a write.
    pub database: Check,
    /// Settlements are committed: no storage fault, and a flush returns in time.
    pub log_writer: Check,
    /// The channel pool actor runs.
    pub channel_pool: Check,
}

/// The health answer.
#[derive(Debug, Clone, Serialize)]
pub struct Health {
    /// The process answers (always true when there is an answer at all).
    pub live: bool,
    /// Every check passed: the server can take traffic.
    pub ready: bool,
    /// The checks.
    pub checks: Checks,
    /// Seconds since the process started.
    pub uptime_secs: i64,
}

/// What the readiness checks look at.
pub struct Subjects<'a> {
    /// The database file.
    pub store: &'a Store,
    /// The quota book, whose log writer commits settlements.
    pub quota: &'a QuotaBook,
    /// The channel pool actor.
    pub channel_pool: &'a ChannelPool,
    /// The last database probe.
    pub probe: &'a ProbeCache,
    /// Unix seconds when the process started.
    pub started_at: i64,
}

/// Runs the readiness checks.
pub async fn check(on: Subjects<'_>) -> Health {
    let (database, log_writer) = tokio::join!(database(on.store, on.probe), log_writer(on.quota));
    let channel_pool = if on.channel_pool.is_alive() {
        Check::pass()
    } else {
        Check::fail("the channel pool actor has stopped")
    };
    let ready = database.ok && log_writer.ok && channel_pool.ok;
    Health {
        live: true,
        ready,
        checks: Checks {
            database,
            log_writer,
            channel_pool,
        },
        uptime_secs: now_unix().saturating_sub(on.started_at),
    }
}

async fn database(store: &Store, probe: &ProbeCache) -> Check {
    let mut last = probe.last.lock().await;
    if let Some(at) = *last
        && at.elapsed() < PROBE_REUSE
    {
        return Check::pass();
    }
    let now = now_unix();
    let write = store.write(move |wtx| meta::touch_health_probe(wtx, now));
    let found = match tokio::time::timeout(PROBE_TIMEOUT, write).await {
        Ok(Ok(())) => Check::pass(),
        Ok(Err(e)) => Check::fail(format!("the database does not take a write: {e}")),
        Err(_) => Check::fail("a database write did not finish in time"),
    };
    *last = found.ok.then(Instant::now);
    found
}

async fn log_writer(quota: &QuotaBook) -> Check {
    if let Some(fault) = quota.storage_health().fault() {
        return Check::fail(fault.to_string());
    }
    match tokio::time::timeout(PROBE_TIMEOUT, quota.flush()).await {
        Ok(Ok(())) => Check::pass(),
        Ok(Err(fault)) => Check::fail(fault.to_string()),
        Err(_) => Check::fail("the log writer did not commit its queue in time"),
    }
}
