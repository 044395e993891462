//! `GET /metrics`: Prometheus text exposition of the relay (requests, durations, time to first
//! token, quota, retries, active streams, errors by class) and of the log writer (queue depth,
//! commit durations), of the task poller (its lag, tasks by list and state) and of the rate
//! limits (refusals and queue waits by the refusing rule's scope and kind).
//!
//! Recording is on the hot path and costs atomics only ([`relay`]); the exposition is built
//! on a scrape ([`collect`], through `prometheus-client`'s encoder) and served either on its own
//! listener (`--metrics-listen`, no authentication: bind it where only the scraper reaches) or
//! on the main listener to root's system access token as a Bearer token ([`serve`]).

pub mod collect;
pub mod relay;
pub mod serve;

use std::sync::Arc;

use prometheus_client::registry::Registry;
use tollgate_actors::channel_pool::routing_table::RoutingTable;
use tollgate_actors::limiter::Limiter;
use tollgate_actors::snapshot::Published;
use tollgate_actors::stats::WriterStats;

pub use self::collect::ResidentCollector;
use self::collect::{LimiterCollector, RelayCollector, TaskCollector, WriterCollector};
use self::relay::RelayMetrics;
use crate::task_poll::stats::TaskStats;

/// The `Content-Type` of the exposition (Prometheus text, version 0.0.4).
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// Handle on every measurement. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Metrics(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    relay: Arc<RelayMetrics>,
    registry: Registry,
}

impl Metrics {
    /// Measurements whose relay labels come from the routing table `table` publishes, with the
    /// log writer's `writer` stats.
    pub fn new(table: Published<RoutingTable>, writer: Arc<WriterStats>) -> Metrics {
        let limits = Limiter::new(Arc::new(tollgate_actors::limiter::system_millis));
        let resident = ResidentCollector {
            tokens: tollgate_actors::token_index::TokenIndex::default(),
            quota: None,
        };
        Metrics::with_tasks(table, writer, Arc::default(), limits, resident)
    }

    /// [`Metrics::new`] with the task poller's `tasks` stats (its lag, tasks by state) and the
    /// rate limits' engine `limits` (its refusals and queue waits) and what is kept in memory
    /// per key (`resident`).
    pub fn with_tasks(
        table: Published<RoutingTable>,
        writer: Arc<WriterStats>,
        tasks: Arc<TaskStats>,
        limits: Limiter,
        resident: ResidentCollector,
    ) -> Metrics {
        let relay = Arc::new(RelayMetrics::default());
        let mut registry = Registry::default();
        registry.register_collector(Box::new(RelayCollector {
            relay: Arc::clone(&relay),
            table,
        }));
        registry.register_collector(Box::new(WriterCollector(writer)));
        registry.register_collector(Box::new(TaskCollector(tasks)));
        registry.register_collector(Box::new(LimiterCollector(limits)));
        registry.register_collector(Box::new(resident));
        Metrics(Arc::new(Inner { relay, registry }))
    }

    /// The relay's measurements (for recording).
    pub fn relay(&self) -> &RelayMetrics {
        &self.0.relay
    }

    /// The exposition, in the Prometheus text format.
    pub fn encode(&self) -> Result<String, std::fmt::Error> {
        let mut text = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut text, &self.0.registry)?;
        Ok(text)
    }
}
