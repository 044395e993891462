//! Owners of Tollgate's hot mutable state and the immutable snapshots they publish.
//!
//! - [`snapshot::Published`]: an `ArcSwap` wrapper; readers `load()` lock-free, the owner
//!   `publish()`es a whole new value.
//! - [`channel_pool::ChannelPool`]: owns channels and their health, publishes the
//!   [`channel_pool::RoutingTable`] the relay selects from.
//! - [`options::Options`]: the runtime options (admin settings) — catalog of keys with defaults,
//!   validation and the published [`options::OptionsSnapshot`].
//!
//! This crate knows nothing about HTTP. It depends on `tollgate-storage` only.

pub mod channel_pool;
pub mod error;
pub mod options;
pub mod snapshot;

pub use error::ActorError;
