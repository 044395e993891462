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

use crate::clock::now_unix;
use crate::state::AppState;

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

/// Runs the readiness checks.
pub async fn check(state: &AppState) -> Health {
    let (database, log_writer) = tokio::join!(database(state), log_writer(state));
    let channel_pool = if state.channel_pool.is_alive() {
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
        uptime_secs: now_unix().saturating_sub(state.started_at),
    }
}

async fn database(state: &AppState) -> Check {
    let mut last = state.health_probe.last.lock().await;
    if let Some(at) = *last
        && at.elapsed() < PROBE_REUSE
    {
        return Check::pass();
    }
    let now = now_unix();
    let write = state
        .store
        .write(move |wtx| meta::touch_health_probe(wtx, now));
    let found = match tokio::time::timeout(PROBE_TIMEOUT, write).await {
        Ok(Ok(())) => Check::pass(),
        Ok(Err(e)) => Check::fail(format!("the database does not take a write: {e}")),
        Err(_) => Check::fail("a database write did not finish in time"),
    };
    *last = found.ok.then(Instant::now);
    found
}

async fn log_writer(state: &AppState) -> Check {
    if let Some(fault) = state.quota.storage_health().fault() {
        return Check::fail(fault.to_string());
    }
    match tokio::time::timeout(PROBE_TIMEOUT, state.quota.flush()).await {
        Ok(Ok(())) => Check::pass(),
        Ok(Err(fault)) => Check::fail(fault.to_string()),
        Err(_) => Check::fail("the log writer did not commit its queue in time"),
    }
}
