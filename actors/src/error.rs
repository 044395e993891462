//! `ActorError`: failures of the actors and publishers in this crate.

use tollgate_storage::StorageError;

use crate::options::OptionError;

/// An error raised by an actor or publisher.
#[derive(Debug, thiserror::Error)]
pub enum ActorError {
    /// The storage layer failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// An option value was refused.
    #[error(transparent)]
    Option(#[from] OptionError),
    /// An actor could not be reached, timed out or stopped.
    #[error("{0}")]
    Rpc(String),
    /// An actor failed to start.
    #[error("starting an actor failed: {0}")]
    Spawn(String),
}
