//! `Store`: the open database file, migrations on open, and transactions on the blocking pool.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use redb::{Builder, Database, ReadTransaction, ReadableDatabase, WriteTransaction};

use crate::{Result, StorageError, migrate};

/// The database file name inside the data directory.
pub const DB_FILE_NAME: &str = "tollgate.redb";

/// The default page cache: 16 MiB. redb's own default (1 GiB) lets the cache grow with every
/// page the log writer touches, so a busy gateway's memory grew with its log; the hot pages
/// (balances, the right edge of the log indexes) fit in a few MiB, and the kernel's page cache
/// still holds the rest of the file. Larger log queries can be given more with `--db-cache-mb`.
pub const DEFAULT_CACHE_BYTES: usize = 16 * 1024 * 1024;

/// A cheap-to-clone handle on the open database.
///
/// The file stays open (and locked against other processes) until the last clone is dropped.
#[derive(Clone)]
pub struct Store {
    /// The redb database; redb serialises write transactions itself.
    db: Arc<Database>,
    /// Absolute path of the database file, for messages and the setup page.
    path: Arc<PathBuf>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

impl Store {
    /// Opens `dir/tollgate.redb`, creating the directory and the file if needed, and upgrades
    /// the schema. Blocking: call it at startup or from `spawn_blocking`.
    pub fn open_dir(dir: &Path) -> Result<Store> {
        Store::open_dir_with_cache(dir, DEFAULT_CACHE_BYTES)
    }

    /// [`Store::open_dir`] with a page cache of `cache_bytes` (see [`DEFAULT_CACHE_BYTES`]).
    pub fn open_dir_with_cache(dir: &Path, cache_bytes: usize) -> Result<Store> {
        std::fs::create_dir_all(dir).map_err(|source| StorageError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        Store::open_with_cache(&dir.join(DB_FILE_NAME), cache_bytes)
    }

    /// Opens (or creates) the database file at `path` and runs pending migrations.
    pub fn open(path: &Path) -> Result<Store> {
        Store::open_with_cache(path, DEFAULT_CACHE_BYTES)
    }

    /// [`Store::open`] with a page cache of `cache_bytes`.
    pub fn open_with_cache(path: &Path, cache_bytes: usize) -> Result<Store> {
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let db = Builder::new()
            .set_cache_size(cache_bytes)
            .create(&abs)
            .map_err(|e| match e {
                redb::DatabaseError::DatabaseAlreadyOpen => {
                    StorageError::AlreadyOpen { path: abs.clone() }
                }
                other => StorageError::Database(other),
            })?;
        migrate::run(&db)?;
        Ok(Store {
            db: Arc::new(db),
            path: Arc::new(abs),
        })
    }

    /// Absolute path of the database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` in a read transaction on the blocking pool.
    pub async fn read<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StorageError> + Send + 'static,
        F: FnOnce(&ReadTransaction) -> Result<T, E> + Send + 'static,
    {
        let store = self.clone();
        tokio::task::spawn_blocking(move || store.read_blocking(f))
            .await
            .map_err(|e| E::from(StorageError::Join(e)))?
    }

    /// Runs `f` in a write transaction on the blocking pool; commits when `f` returns `Ok`,
    /// aborts (writes nothing) when it returns `Err`.
    pub async fn write<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StorageError> + Send + 'static,
        F: FnOnce(&WriteTransaction) -> Result<T, E> + Send + 'static,
    {
        let store = self.clone();
        tokio::task::spawn_blocking(move || store.write_blocking(f))
            .await
            .map_err(|e| E::from(StorageError::Join(e)))?
    }

    /// Blocking form of [`Store::read`], for dedicated threads (the log writer) and startup.
    pub fn read_blocking<T, E, F>(&self, f: F) -> Result<T, E>
    where
        E: From<StorageError>,
        F: FnOnce(&ReadTransaction) -> Result<T, E>,
    {
        let rtx = self.db.begin_read().map_err(StorageError::from)?;
        f(&rtx)
    }

    /// Like [`Store::write_blocking`], but the commit is not flushed to disk (no fsync): it
    /// becomes durable with the next ordinary commit, and a crash before that rolls it back.
    /// For background housekeeping that can simply run again (deleting old logs), so its
    /// transactions stay short.
    pub fn write_blocking_lazy<T, E, F>(&self, f: F) -> Result<T, E>
    where
        E: From<StorageError>,
        F: FnOnce(&WriteTransaction) -> Result<T, E>,
    {
        let mut wtx = self.db.begin_write().map_err(StorageError::from)?;
        wtx.set_durability(redb::Durability::None)
            .map_err(StorageError::from)?;
        match f(&wtx) {
            Ok(value) => {
                wtx.commit().map_err(StorageError::from)?;
                Ok(value)
            }
            Err(e) => {
                if let Err(abort) = wtx.abort() {
                    tracing::warn!(error = %abort, "aborting a failed write transaction");
                }
                Err(e)
            }
        }
    }

    /// Blocking form of [`Store::write`].
    pub fn write_blocking<T, E, F>(&self, f: F) -> Result<T, E>
    where
        E: From<StorageError>,
        F: FnOnce(&WriteTransaction) -> Result<T, E>,
    {
        let wtx = self.db.begin_write().map_err(StorageError::from)?;
        match f(&wtx) {
            Ok(value) => {
                wtx.commit().map_err(StorageError::from)?;
                Ok(value)
            }
            Err(e) => {
                // Dropping would abort too; aborting explicitly reports I/O trouble in the log.
                if let Err(abort) = wtx.abort() {
                    tracing::warn!(error = %abort, "aborting a failed write transaction");
                }
                Err(e)
            }
        }
    }
}
