//! `GET /api/health`: liveness (the process answers) and readiness (it can do its job): the
//! database file takes a write, the log writer commits what it is given (a flush comes back
//! in time, no storage fault), and the channel pool actor runs.
//!
//! The route is public, so a failed check says only which check failed, in a fixed sentence:
//! the error itself (an OS error text, a file path) goes to the server log.
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

/// A failed log writer check, as the public route says it.
const SETTLEMENTS_FAILING: &str = "settlements cannot be saved (the server log says why)";

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
    /// Why not, in a fixed sentence (absent when it passed; details are in the server log).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'static str>,
}

impl Check {
    fn pass() -> Check {
        Check {
            ok: true,
            error: None,
        }
    }

    fn fail(error: &'static str) -> Check {
        Check {
            ok: false,
            error: Some(error),
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
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "health check: the database does not take a write");
            Check::fail("the database does not take a write")
        }
        Err(_) => Check::fail("a database write did not finish in time"),
    };
    *last = found.ok.then(Instant::now);
    found
}

async fn log_writer(quota: &QuotaBook) -> Check {
    // The log writer logs each fault itself when it starts and ends.
    if quota.storage_health().fault().is_some() {
        return Check::fail(SETTLEMENTS_FAILING);
    }
    match tokio::time::timeout(PROBE_TIMEOUT, quota.flush()).await {
        Ok(Ok(())) => Check::pass(),
        Ok(Err(_)) => Check::fail(SETTLEMENTS_FAILING),
        Err(_) => Check::fail("the log writer did not commit its queue in time"),
    }
}
