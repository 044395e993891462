//! Owners of Tollgate's hot mutable state and the immutable snapshots they publish.
//!
//! - [`snapshot::Published`]: an `ArcSwap` wrapper; readers `load()` lock-free, the owner
//!   `publish()`es a whole new value.
//! - [`channel_pool::ChannelPool`]: owns channels and their health, publishes the
//!   [`channel_pool::RoutingTable`] the relay selects from.
//! - [`options::Options`]: the runtime options (admin settings) — catalog of keys with defaults,
//!   validation and the published [`options::OptionsSnapshot`].
//!
//! - [`log_writer::LogWriter`] commits settlements (after journalling them in
//!   [`journal::Journal`], replayed at start); [`log_janitor::LogJanitor`] deletes old logs
//!   in the background; [`idle_worker::IdleWorker`] runs the writer's commits at idle priority.
//! - [`storage_health::StorageHealth`]: whether settlements reach the database (set by the log
//!   writer while its commits fail).
//! - [`token_index::TokenIndex`]: API keys → token facts, read by the relay without storage.
//!
//! This crate knows nothing about HTTP. It depends on `tollgate-storage` only.

pub mod channel_pool;
pub mod error;
pub mod idle_worker;
pub mod journal;
pub mod limiter;
pub mod log_janitor;
pub mod log_writer;
pub mod options;
pub mod quota;
pub mod snapshot;
pub mod stats;
pub mod storage_health;
pub mod token_index;
pub mod user_directory;

pub use error::ActorError;
