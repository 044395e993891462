//! Tollgate's persistent state: one redb file of versioned tables.
//!
//! - [`Store`] opens (or creates) the file, runs migrations and hands out transactions on the
//!   blocking pool ([`Store::read`], [`Store::write`]).
//! - Record modules ([`users`], [`channels`], [`options`], [`meta`]) expose plain functions that take a
//!   `&ReadTransaction` / `&WriteTransaction`, so the *caller* decides batching and a future
//!   PostgreSQL backend can sit behind the same functions (DESIGN.md "Scale-out").
//! - Records are serde structs encoded with postcard ([`codec`]); every table name carries its
//!   layout version ([`tables`]) and [`migrate`] upgrades older files on open.
//!
//! This crate knows nothing about HTTP or actors.

pub mod audit;
pub mod backup;
pub mod backup_tokens;
pub mod balance_change;
pub mod budgets;
pub mod channel_usage;
pub mod channels;
pub mod codec;
pub mod codes;
pub mod error;
pub mod ids;
pub mod import;
pub mod limits;
pub mod logs;
pub mod meta;
pub mod migrate;
pub mod options;
pub mod private_file;
pub mod prompt_cache;
pub mod redemptions;
pub mod reminders;
pub mod seal_file;
pub mod sealing;
pub mod secret;
pub mod store;
pub mod tables;
pub mod tasks;
pub mod tokens;
pub mod topups;
pub mod two_factor;
pub mod usage;
pub mod users;

pub use error::StorageError;
pub use ids::{ChannelId, Quota, RedemptionId, TokenId, TopUpId, UserId};
pub use redb::{ReadTransaction, WriteTransaction};
pub use sealing::Keyring;
pub use store::Store;

/// Result alias used throughout the crate.
pub type Result<T, E = StorageError> = std::result::Result<T, E>;
