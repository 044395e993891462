//! The relay's measurements: per `(channel, model)` [`Cell`]s of atomics, pre-registered from the
//! published routing table, and fixed arrays for the error classes.
//!
//! Cardinality is bounded by the configuration: a cell exists for each model an enabled channel
//! lists, plus `model="other"` per channel; a channel that is not in the table is
//! `channel="other"` and a request no channel was tried for is `channel="none"` (both with the
//! configured models, else "other"). A model nobody configured is always "other", whatever a
//! client sends.
//!
//! The request path costs two lock-free snapshot loads, two hash lookups and an `Arc` clone to
//! find its cell, then relaxed atomic additions. The index is rebuilt (under a mutex, by the
//! first request that sees a new routing table) only when the pool publishes a new table;
//! cells of pairs that survive a rebuild are carried over, so counters keep counting.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::{ArcSwap, Guard};
use foldhash::{HashMap, HashMapExt};
use tollgate_actors::channel_pool::routing_table::RoutingTable;
use tollgate_actors::snapshot::Published;
use tollgate_actors::stats::Histogram;
use tollgate_storage::ChannelId;

use crate::error::ErrorCode;

/// The label of anything not configured.
pub const OTHER: &str = "other";

/// The channel label of a request that failed before any channel was tried.
pub const NONE: &str = "none";

/// Upper bounds (seconds) of the request duration histogram: from a quick embedding to a long
/// generation (the relay timeout's default is 300 s).
pub const DURATION_BOUNDS: &[f64] = &[
    0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// Upper bounds (seconds) of the time-to-first-token histogram.
pub const FIRST_TOKEN_BOUNDS: &[f64] =
    &[0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0];

/// The attempt classes of failed upstream attempts (see
/// [`crate::relay::pipeline::settle::Attempt::e`]).
pub const UPSTREAM_CLASSES: &[&str] = &[
    "auth",
    "rate_limit",
    "timeout",
    "server",
    "client",
    "connect",
    "network",
    "unsupported",
];

/// The error codes a relay route answers with (the labels of the error counter).
pub const RELAY_CODES: &[ErrorCode] = &[
    ErrorCode::NotFound,
    ErrorCode::NotImplemented,
    ErrorCode::InvalidRequest,
    ErrorCode::InvalidApiKey,
    ErrorCode::Forbidden,
    ErrorCode::InsufficientUserQuota,
    ErrorCode::InsufficientTokenQuota,
    ErrorCode::SensitiveWords,
    ErrorCode::RateLimited,
    ErrorCode::BudgetExceeded,
    ErrorCode::BodyTooLarge,
    ErrorCode::Busy,
    ErrorCode::NoChannel,
    ErrorCode::UpstreamError,
    ErrorCode::UpstreamUnreachable,
    ErrorCode::Internal,
    ErrorCode::StorageUnavailable,
];

/// The counters of one `(channel, model)` pair.
#[derive(Debug)]
pub struct Cell {
    /// The `channel` label (an id, "other" or "none").
    pub channel: Box<str>,
    /// The `model` label (a configured model or "other").
    pub model: Box<str>,
    /// Requests answered by an upstream (settled).
    pub answered: AtomicU64,
    /// Requests every attempt of which failed.
    pub failed: AtomicU64,
    /// Attempts beyond the first.
    pub retries: AtomicU64,
    /// Quota units charged.
    pub quota: AtomicU64,
    /// Streamed answers being relayed now.
    pub active_streams: AtomicI64,
    /// From arrival to settlement, answered requests.
    pub duration: Histogram,
    /// From arrival to the answer's first byte, streamed answers.
    pub first_token: Histogram,
}

impl Cell {
    fn new(channel: &str, model: &str) -> Cell {
        Cell {
            channel: channel.into(),
            model: model.into(),
            answered: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            retries: AtomicU64::new(0),
            quota: AtomicU64::new(0),
            active_streams: AtomicI64::new(0),
            duration: Histogram::new(DURATION_BOUNDS),
            first_token: Histogram::new(FIRST_TOKEN_BOUNDS),
        }
    }

    /// Records a settled answer: `charged` quota units, `took` from arrival to settlement, and
    /// for a stream the time to its first byte.
    pub fn settled(&self, charged: i64, took: Duration, first_token: Option<Duration>) {
        self.answered.fetch_add(1, Ordering::Relaxed);
        self.quota
            .fetch_add(u64::try_from(charged).unwrap_or(0), Ordering::Relaxed);
        self.duration.observe(took);
        if let Some(first) = first_token {
            self.first_token.observe(first);
        }
    }

    /// Whether anything was recorded (untouched cells are left out of the exposition).
    pub fn touched(&self) -> bool {
        self.answered.load(Ordering::Relaxed) > 0
            || self.failed.load(Ordering::Relaxed) > 0
            || self.active_streams.load(Ordering::Relaxed) != 0
    }
}

/// Counts a streamed answer as active while it lives.
#[derive(Debug)]
pub struct ActiveStream(Arc<Cell>);

impl ActiveStream {
    /// One more active stream on `cell`.
    pub fn new(cell: Arc<Cell>) -> ActiveStream {
        cell.active_streams.fetch_add(1, Ordering::Relaxed);
        ActiveStream(cell)
    }
}

impl Drop for ActiveStream {
    fn drop(&mut self) {
        self.0.active_streams.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The cells of one channel label.
#[derive(Debug)]
struct ChannelCells {
    models: HashMap<Box<str>, Arc<Cell>>,
    other: Arc<Cell>,
}

impl ChannelCells {
    fn cell(&self, model: &str) -> &Arc<Cell> {
        self.models.get(model).unwrap_or(&self.other)
    }

    fn all(&self) -> impl Iterator<Item = &Arc<Cell>> {
        self.models.values().chain(std::iter::once(&self.other))
    }
}

/// The cells for one routing table.
#[derive(Debug)]
struct Index {
    /// The table it was built from (held so its address is not reused by a newer one).
    source: Option<Arc<RoutingTable>>,
    channels: HashMap<ChannelId, ChannelCells>,
    /// Channels not in the table.
    other: ChannelCells,
    /// Requests no channel was tried for.
    none: ChannelCells,
}

impl Index {
    fn empty() -> Index {
        Index {
            source: None,
            channels: HashMap::new(),
            other: ChannelCells {
                models: HashMap::new(),
                other: Arc::new(Cell::new(OTHER, OTHER)),
            },
            none: ChannelCells {
                models: HashMap::new(),
                other: Arc::new(Cell::new(NONE, OTHER)),
            },
        }
    }

    /// The index of `table`, carrying over the cells `previous` has for the same pairs.
    fn build(table: &Arc<RoutingTable>, previous: &Index) -> Index {
        let carry =
            |old: Option<&ChannelCells>, label: &str, models: &mut dyn Iterator<Item = &str>| {
                let cells = models
                    .map(|m| {
                        let cell = old
                            .and_then(|o| o.models.get(m))
                            .cloned()
                            .unwrap_or_else(|| Arc::new(Cell::new(label, m)));
                        (Box::<str>::from(m), cell)
                    })
                    .collect();
                ChannelCells {
                    models: cells,
                    other: old.map_or_else(
                        || Arc::new(Cell::new(label, OTHER)),
                        |o| Arc::clone(&o.other),
                    ),
                }
            };
        let mut channels = HashMap::new();
        let mut every_model = BTreeSet::new();
        for routed in table.channels() {
            let id = routed.id();
            let models: BTreeSet<&str> = routed.channel.model_list().into_iter().collect();
            every_model.extend(models.iter().copied());
            let label = id.0.to_string();
            let cells = carry(
                previous.channels.get(&id),
                &label,
                &mut models.iter().copied(),
            );
            channels.insert(id, cells);
        }
        let other = carry(
            Some(&previous.other),
            OTHER,
            &mut every_model.iter().copied(),
        );
        let none = carry(Some(&previous.none), NONE, &mut every_model.iter().copied());
        Index {
            source: Some(Arc::clone(table)),
            channels,
            other,
            none,
        }
    }

    fn cell(&self, channel: Option<ChannelId>, model: &str) -> &Arc<Cell> {
        match channel {
            None => self.none.cell(model),
            Some(id) => self.channels.get(&id).unwrap_or(&self.other).cell(model),
        }
    }
}

/// The relay's measurements.
#[derive(Debug)]
pub struct RelayMetrics {
    index: ArcSwap<Index>,
    /// Held while the index is rebuilt (one builder at a time; requests meanwhile use the
    /// previous index, whose cells are shared with the new one).
    rebuilding: Mutex<()>,
    /// Failed upstream attempts, by [`UPSTREAM_CLASSES`].
    upstream_errors: [AtomicU64; UPSTREAM_CLASSES.len()],
    /// Error answers of relay routes, by the error code's discriminant.
    errors: [AtomicU64; 64],
}

impl Default for RelayMetrics {
    fn default() -> Self {
        RelayMetrics {
            index: ArcSwap::from_pointee(Index::empty()),
            rebuilding: Mutex::new(()),
            upstream_errors: std::array::from_fn(|_| AtomicU64::new(0)),
            errors: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl RelayMetrics {
    /// The cell of `(channel, model)` under the routing table `table` publishes now.
    pub fn cell(
        &self,
        table: &Published<RoutingTable>,
        channel: Option<ChannelId>,
        model: &str,
    ) -> Arc<Cell> {
        let index = self.current(table);
        Arc::clone(index.cell(channel, model))
    }

    /// The index of the table published now (rebuilt first if the table changed).
    fn current(&self, table: &Published<RoutingTable>) -> Guard<Arc<Index>> {
        let index = self.index.load();
        let current = table.load();
        if index
            .source
            .as_ref()
            .is_some_and(|source| Arc::ptr_eq(source, &current))
        {
            return index;
        }
        // A new table: rebuild once; a request that finds the rebuild under way uses the
        // previous index (its cells are the ones the new index carries over).
        let Ok(_building) = self.rebuilding.try_lock() else {
            return index;
        };
        let index = self.index.load();
        let current = table.load_full();
        if !index
            .source
            .as_ref()
            .is_some_and(|source| Arc::ptr_eq(source, &current))
        {
            self.index.store(Arc::new(Index::build(&current, &index)));
        }
        self.index.load()
    }

    /// Every cell with something recorded, for a scrape (refreshed against `table` first).
    pub fn touched_cells(&self, table: &Published<RoutingTable>) -> Vec<Arc<Cell>> {
        let index = self.current(table);
        let mut cells: Vec<Arc<Cell>> = index
            .channels
            .values()
            .chain([&index.other, &index.none])
            .flat_map(ChannelCells::all)
            .filter(|c| c.touched())
            .cloned()
            .collect();
        cells.sort_by(|a, b| (&a.channel, &a.model).cmp(&(&b.channel, &b.model)));
        cells
    }

    /// Counts the attempts of a request beyond the first on `cell`.
    pub fn retried(&self, cell: &Cell, attempts: usize) {
        if attempts > 1 {
            let extra = u64::try_from(attempts - 1).unwrap_or(u64::MAX);
            cell.retries.fetch_add(extra, Ordering::Relaxed);
        }
    }

    /// A failed upstream attempt of class `class` (one of [`UPSTREAM_CLASSES`]).
    pub fn upstream_error(&self, class: &str) {
        if let Some(i) = UPSTREAM_CLASSES.iter().position(|c| *c == class)
            && let Some(n) = self.upstream_errors.get(i)
        {
            n.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// An error answer of a relay route.
    pub fn error(&self, code: ErrorCode) {
        if let Some(n) = self.errors.get(code as usize) {
            n.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Failed upstream attempts by class.
    pub fn upstream_errors(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        UPSTREAM_CLASSES
            .iter()
            .zip(&self.upstream_errors)
            .map(|(class, n)| (*class, n.load(Ordering::Relaxed)))
    }

    /// Error answers by code.
    pub fn errors(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        RELAY_CODES.iter().map(|code| {
            let n = self
                .errors
                .get(*code as usize)
                .map_or(0, |n| n.load(Ordering::Relaxed));
            (code.as_str(), n)
        })
    }
}
