//! `StorageError`: every failure the storage layer can report, one variant per family.

use std::path::PathBuf;

/// An error raised by the storage layer.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// Another process (or another `Store` in this process) holds the database file.
    #[error(
        "the database file {path} is already in use by another Tollgate process; \
         stop it or choose another --data-dir"
    )]
    AlreadyOpen {
        /// The file that is locked.
        path: PathBuf,
    },
    /// The file was written by a newer Tollgate whose schema this build does not know.
    #[error(
        "the database file has schema version {found}, newer than this build supports \
         ({supported}); upgrade Tollgate"
    )]
    NewerSchema {
        /// Version recorded in the file.
        found: u32,
        /// Highest version this build can read.
        supported: u32,
    },
    /// A migration step failed; the file is left at its previous version.
    #[error("migrating the database from schema {from} failed: {reason}")]
    Migration {
        /// Version the failed step started from.
        from: u32,
        /// What went wrong.
        reason: String,
    },
    /// Creating the data directory or the file failed.
    #[error("cannot create {path}: {source}")]
    Io {
        /// Path that could not be created.
        path: PathBuf,
        /// Underlying I/O error.
        source: std::io::Error,
    },
    /// A unique index already holds this value (e.g. a username that is taken).
    #[error("{what} already exists")]
    Duplicate {
        /// Which unique value collided, e.g. "username".
        what: &'static str,
    },
    /// A record that must exist was not found.
    #[error("{what} not found")]
    NotFound {
        /// Which record was missing.
        what: &'static str,
    },
    /// A balance change or an id sequence would overflow i64.
    #[error("arithmetic overflow (a quota or an id sequence)")]
    Overflow,
    /// A record could not be encoded or decoded.
    #[error("record codec: {0}")]
    Codec(#[from] postcard::Error),
    /// Opening the database failed.
    #[error("database: {0}")]
    Database(#[from] redb::DatabaseError),
    /// Starting a transaction failed.
    #[error("transaction: {0}")]
    Transaction(#[from] redb::TransactionError),
    /// Opening a table failed.
    #[error("table: {0}")]
    Table(#[from] redb::TableError),
    /// Reading or writing pages failed.
    #[error("storage: {0}")]
    Storage(#[from] redb::StorageError),
    /// Committing a transaction failed.
    #[error("commit: {0}")]
    Commit(#[from] redb::CommitError),
    /// Choosing a transaction's durability failed.
    #[error("durability: {0}")]
    Durability(#[from] redb::SetDurabilityError),
    /// Compacting the file failed.
    #[error("compaction: {0}")]
    Compaction(#[from] redb::CompactionError),
    /// The blocking task running a transaction panicked or was cancelled.
    #[error("storage task failed: {0}")]
    Join(#[from] tokio::task::JoinError),
    /// The database is being reopened after an I/O error (or reopening it failed so far).
    #[error("the database is being reopened after a storage error")]
    Reopening,
    /// The file's secrets are sealed and no secret key was configured.
    #[error(
        "the database's secrets are encrypted: start Tollgate with its secret key \
         (--secret-key-file or TOLLGATE_SECRET_KEY)"
    )]
    SecretKeyRequired,
    /// The configured secret key is not the one the file's secrets are sealed with.
    #[error(
        "the configured secret key does not open this database's secrets: \
         start Tollgate with the key it was encrypted with"
    )]
    WrongSecretKey,
    /// Sealing or opening a secret failed for another reason.
    #[error("secret sealing: {0}")]
    Sealing(&'static str),
}

impl StorageError {
    /// Whether this is a fault of the storage itself (I/O, a latched database, a failed
    /// commit) rather than of the data (a missing record, an overflow, a bad encoding): a
    /// fault may go away by itself (space freed, the file reopened), so the write is retried.
    pub fn is_fault(&self) -> bool {
        !matches!(
            self,
            StorageError::Duplicate { .. }
                | StorageError::NotFound { .. }
                | StorageError::Overflow
                | StorageError::Codec(_)
                | StorageError::NewerSchema { .. }
                | StorageError::Migration { .. }
                | StorageError::SecretKeyRequired
                | StorageError::WrongSecretKey
                | StorageError::Sealing(_)
        )
    }
}
