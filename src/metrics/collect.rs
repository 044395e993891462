//! The scrape: reads the atomics of [`super::relay`] and the log writer's stats and writes them
//! through `prometheus-client`'s encoder (the Prometheus text format, version 0.0.4). Runs only
//! when `/metrics` is asked for; nothing here is on the request path.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, NoLabelSet};
use prometheus_client::metrics::MetricType;
use tollgate_actors::channel_pool::routing_table::RoutingTable;
use tollgate_actors::limiter::{Kind, Limiter, Scope};
use tollgate_actors::quota::QuotaBook;
use tollgate_actors::snapshot::Published;
use tollgate_actors::stats::{Histogram, WriterStats};
use tollgate_actors::token_index::TokenIndex;

use super::relay::{Cell, RelayMetrics};
use crate::task_poll::stats::TaskStats;

/// Writes a counter family.
fn counters<S: EncodeLabelSet>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    series: impl IntoIterator<Item = (S, u64)>,
) -> Result<(), std::fmt::Error> {
    let mut family = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
    for (labels, value) in series {
        family
            .encode_family(&labels)?
            .encode_counter::<NoLabelSet, _, u64>(&value, None)?;
    }
    Ok(())
}

/// Writes a gauge family.
fn gauges<S: EncodeLabelSet>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    series: impl IntoIterator<Item = (S, i64)>,
) -> Result<(), std::fmt::Error> {
    let mut family = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
    for (labels, value) in series {
        family.encode_family(&labels)?.encode_gauge(&value)?;
    }
    Ok(())
}

/// Writes a histogram family.
fn histograms<'h, S: EncodeLabelSet>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    series: impl IntoIterator<Item = (S, &'h Histogram)>,
) -> Result<(), std::fmt::Error> {
    let mut family = encoder.encode_descriptor(name, help, None, MetricType::Histogram)?;
    for (labels, histogram) in series {
        let s = histogram.snapshot();
        family
            .encode_family(&labels)?
            .encode_histogram::<NoLabelSet>(s.sum_seconds, s.count, &s.buckets, None)?;
    }
    Ok(())
}

fn pair(cell: &Cell) -> [(&'static str, &str); 2] {
    [("channel", &cell.channel), ("model", &cell.model)]
}

/// The relay's families.
#[derive(Debug)]
pub struct RelayCollector {
    /// The counters.
    pub relay: Arc<RelayMetrics>,
    /// The routing table the cells are registered from.
    pub table: Published<RoutingTable>,
}

impl Collector for RelayCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let cells = self.relay.touched_cells(&self.table);
        let load = |n: &std::sync::atomic::AtomicU64| n.load(Ordering::Relaxed);
        let requests = cells.iter().flat_map(|c| {
            [("answered", load(&c.answered)), ("failed", load(&c.failed))]
                .into_iter()
                .map(move |(outcome, n)| {
                    let labels: [(&'static str, &str); 3] = [
                        ("channel", &c.channel),
                        ("model", &c.model),
                        ("outcome", outcome),
                    ];
                    (labels, n)
                })
        });
        counters(
            &mut encoder,
            "tollgate_relay_requests",
            "Relay requests past admission, by channel (the one that answered, or the last \
             tried; none when no channel could be tried), model (configured models, else \
             other) and outcome (answered by an upstream, or failed).",
            requests,
        )?;
        histograms(
            &mut encoder,
            "tollgate_relay_request_duration_seconds",
            "From a request's arrival to its settlement, answered requests.",
            cells.iter().map(|c| (pair(c), &c.duration)),
        )?;
        histograms(
            &mut encoder,
            "tollgate_relay_time_to_first_token_seconds",
            "From a streamed request's arrival to the first byte of its answer.",
            cells
                .iter()
                .filter(|c| c.first_token.count() > 0)
                .map(|c| (pair(c), &c.first_token)),
        )?;
        counters(
            &mut encoder,
            "tollgate_relay_quota_consumed",
            "Quota units charged for answered requests.",
            cells.iter().map(|c| (pair(c), load(&c.quota))),
        )?;
        counters(
            &mut encoder,
            "tollgate_relay_retries",
            "Upstream attempts beyond a request's first (failover), on the channel that \
             answered or was tried last.",
            cells.iter().map(|c| (pair(c), load(&c.retries))),
        )?;
        gauges(
            &mut encoder,
            "tollgate_relay_active_streams",
            "Streamed answers being relayed now.",
            cells
                .iter()
                .map(|c| (pair(c), c.active_streams.load(Ordering::Relaxed))),
        )?;
        counters(
            &mut encoder,
            "tollgate_relay_upstream_errors",
            "Failed upstream attempts by class: auth (401/403), rate_limit (429), timeout, \
             server (5xx), client (other 4xx), connect, network, unsupported.",
            self.relay.upstream_errors().map(|(class, n)| {
                let labels: [(&'static str, &str); 1] = [("class", class)];
                (labels, n)
            }),
        )?;
        counters(
            &mut encoder,
            "tollgate_relay_errors",
            "Error answers of the relay routes, by error code.",
            self.relay.errors().map(|(code, n)| {
                let labels: [(&'static str, &str); 1] = [("code", code)];
                (labels, n)
            }),
        )?;
        Ok(())
    }
}

/// The log writer's families.
#[derive(Debug)]
pub struct WriterCollector(pub Arc<WriterStats>);

impl Collector for WriterCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let none: [(&'static str, &str); 0] = [];
        gauges(
            &mut encoder,
            "tollgate_log_writer_queue_depth",
            "Settlements (balance changes and log rows) queued and not yet committed.",
            [(
                none,
                i64::try_from(self.0.queue_depth()).unwrap_or(i64::MAX),
            )],
        )?;
        histograms(
            &mut encoder,
            "tollgate_log_writer_commit_seconds",
            "Duration of each commit of the log writer (one transaction and its fsync).",
            [(none, self.0.commits())],
        )?;
        Ok(())
    }
}

/// The task poller's families.
#[derive(Debug)]
pub struct TaskCollector(pub Arc<TaskStats>);

impl Collector for TaskCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let none: [(&'static str, &str); 0] = [];
        gauges(
            &mut encoder,
            "tollgate_task_poll_lag_seconds",
            "Seconds since the task poller last finished a round, while unfinished tasks exist (0 when none does).",
            [(none, self.0.lag(crate::clock::now_unix()))],
        )?;
        let counts = self.0.counts();
        gauges(
            &mut encoder,
            "tollgate_tasks",
            "Asynchronous tasks by list (mj: drawing, t: music and video) and state, as of the poller's last round.",
            counts.iter().map(|(list, state, n)| {
                let state = if state.is_empty() {
                    "SUBMITTING"
                } else {
                    state.as_str()
                };
                let labels: [(&'static str, &str); 2] = [("list", list.as_str()), ("state", state)];
                (labels, i64::try_from(*n).unwrap_or(i64::MAX))
            }),
        )?;
        Ok(())
    }
}

/// The rate limits' families (P15).
#[derive(Debug)]
pub struct LimiterCollector(pub Limiter);

impl Collector for LimiterCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let stats = self.0.stats();
        let cells = || {
            Scope::LABELS
                .into_iter()
                .flat_map(|scope| Kind::ALL.into_iter().map(move |kind| (scope, kind)))
        };
        let labels = |scope: &'static str, kind: Kind| -> [(&'static str, &'static str); 2] {
            [("scope", scope), ("kind", kind.as_str())]
        };
        counters(
            &mut encoder,
            "tollgate_rate_limit_refusals",
            "Requests a rate limit refused, by the refusing rule's scope (user, token, rule, \
             channel, channel_key: at the pick, each candidate channel or key skipped counts) \
             and kind (concurrency, rpm, tpm, rpd, model_requests, model_successes); a \
             request that waited in a queue first counts once.",
            cells().map(|(scope, kind)| (labels(scope, kind), stats.refused(scope, kind))),
        )?;
        counters(
            &mut encoder,
            "tollgate_rate_limit_queue_waits",
            "Requests that waited in a rule's queue, by the scope and kind of the limit that \
             made them wait.",
            cells().map(|(scope, kind)| (labels(scope, kind), stats.queued(scope, kind))),
        )?;
        Ok(())
    }
}

/// What is kept in memory per API key and per user: loaded key entries, key digests and
/// ledgers, and the reads and evictions that keep them to the keys and users in use.
#[derive(Clone)]
pub struct ResidentCollector {
    /// The relay's key index.
    pub tokens: TokenIndex,
    /// The ledgers (none in a bare [`super::Metrics::new`]).
    pub quota: Option<QuotaBook>,
}

impl std::fmt::Debug for ResidentCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResidentCollector").finish_non_exhaustive()
    }
}

impl Collector for ResidentCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let size = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        let none: [(&'static str, &str); 0] = [];
        gauges(
            &mut encoder,
            "tollgate_token_entries",
            "API key entries in memory (the keys used lately).",
            [(none, size(self.tokens.len()))],
        )?;
        gauges(
            &mut encoder,
            "tollgate_token_digests",
            "API key digests in memory (every stored key's; an unknown key is refused without a read).",
            [(none, size(self.tokens.digests()))],
        )?;
        let stats = self.tokens.stats();
        counters(
            &mut encoder,
            "tollgate_token_loads",
            "Storage reads of an API key's entry (its digest known, its entry not in memory).",
            [(none, stats.loads())],
        )?;
        counters(
            &mut encoder,
            "tollgate_token_evictions",
            "API key entries dropped from memory after an idle period.",
            [(none, stats.evicted())],
        )?;
        if let Some(quota) = &self.quota {
            gauges(
                &mut encoder,
                "tollgate_ledgers",
                "Users' quota ledgers in memory (the users active lately).",
                [(none, size(quota.ledgers_loaded()))],
            )?;
            counters(
                &mut encoder,
                "tollgate_ledger_loads",
                "Users' ledgers read from storage (first use, or first use after eviction).",
                [(none, quota.ledger_loads())],
            )?;
            counters(
                &mut encoder,
                "tollgate_ledger_evictions",
                "Users' ledgers dropped from memory after an idle period.",
                [(none, quota.ledger_evictions())],
            )?;
        }
        Ok(())
    }
}
