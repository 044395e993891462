//! `Store`: the open database file, migrations on open, and transactions on the blocking pool.
//!
//! The database can be reopened in place ([`Store::reopen`]): after an I/O error redb refuses
//! every later operation on that handle (it "latches" the error), so the log writer reopens the
//! file and retries its batch once the disk works again. Every clone sees the new handle.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arc_swap::ArcSwapOption;
use redb::backends::FileBackend;
use redb::{
    Builder, Database, ReadTransaction, ReadableDatabase, StorageBackend, WriteTransaction,
};

use crate::private_file;
use crate::seal_file::{self, Settled};
use crate::sealing::{self, Keyring};
use crate::{Result, StorageError, migrate};

/// The database file name inside the data directory.
pub const DB_FILE_NAME: &str = "tollgate.redb";

/// The default page cache: 8 MiB. redb's own default (1 GiB) lets the cache grow with every
/// page the log writer touches, so a busy gateway's memory grew with its log; the hot pages
/// (balances, the right edge of the log indexes) fit in a few MiB, and the kernel's page cache
/// still holds the rest of the file. Under load the cache fills to its size: 16 MiB (the
/// default until 2026-11-29) held ~8 MB more of the heap at the load benchmark's peak, and the
/// log queries at 10 M rows stay under 50 ms with 8 (README, "Symbols, tracepoints and two levers").
/// Larger log queries can be given more with `--db-cache-mb`.
pub const DEFAULT_CACHE_BYTES: usize = 8 * 1024 * 1024;

/// Wraps the file backend the database is opened on: how tests inject storage faults (a
/// backend that fails the n-th write or every sync while a switch is on). Applied again on
/// every reopen.
pub type BackendWrap = Arc<dyn Fn(FileBackend) -> Box<dyn StorageBackend> + Send + Sync>;

/// A cheap-to-clone handle on the open database.
///
/// The file stays open (and locked against other processes) until the last clone is dropped.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

/// What every clone shares.
struct Inner {
    /// The redb database; redb serialises write transactions itself. `None` only while it is
    /// being reopened.
    db: ArcSwapOption<Database>,
    /// Absolute path of the database file, for messages and the setup page.
    path: PathBuf,
    /// The page cache size it is opened with.
    cache_bytes: usize,
    /// The backend wrapper it is opened with (tests only).
    wrap: Option<BackendWrap>,
    /// What secrets are sealed with; installed on the thread of every transaction.
    keyring: Keyring,
}

/// A boxed backend is a backend (redb takes `impl StorageBackend`).
#[derive(Debug)]
struct Boxed(Box<dyn StorageBackend>);

impl StorageBackend for Boxed {
    fn len(&self) -> std::io::Result<u64> {
        self.0.len()
    }
    fn read(&self, offset: u64, out: &mut [u8]) -> std::io::Result<()> {
        self.0.read(offset, out)
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        self.0.set_len(len)
    }
    fn sync_data(&self) -> std::io::Result<()> {
        self.0.sync_data()
    }
    fn write(&self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        self.0.write(offset, data)
    }
    fn close(&self) -> std::io::Result<()> {
        self.0.close()
    }
    fn try_lock_range(
        &self,
        start: std::ops::Bound<u64>,
        end: std::ops::Bound<u64>,
    ) -> std::result::Result<bool, redb::BackendError> {
        self.0.try_lock_range(start, end)
    }
    fn try_lock_shared_range(
        &self,
        start: std::ops::Bound<u64>,
        end: std::ops::Bound<u64>,
    ) -> std::result::Result<bool, redb::BackendError> {
        self.0.try_lock_shared_range(start, end)
    }
    fn lock_range(
        &self,
        start: std::ops::Bound<u64>,
        end: std::ops::Bound<u64>,
    ) -> std::result::Result<(), redb::BackendError> {
        self.0.lock_range(start, end)
    }
    fn lock_shared_range(
        &self,
        start: std::ops::Bound<u64>,
        end: std::ops::Bound<u64>,
    ) -> std::result::Result<(), redb::BackendError> {
        self.0.lock_shared_range(start, end)
    }
    fn unlock_range(
        &self,
        start: std::ops::Bound<u64>,
        end: std::ops::Bound<u64>,
    ) -> std::result::Result<(), redb::BackendError> {
        self.0.unlock_range(start, end)
    }
    fn query_lock_range(
        &self,
        start: std::ops::Bound<u64>,
        end: std::ops::Bound<u64>,
    ) -> std::result::Result<bool, redb::BackendError> {
        self.0.query_lock_range(start, end)
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.inner.path)
            .finish()
    }
}

/// Opens the database file at `path` (on the wrapped file backend when `wrap` is set).
/// The file is created owner-only first ([`private_file`]); an existing one that others may
/// read is made owner-only.
fn open_db(path: &Path, cache_bytes: usize, wrap: Option<&BackendWrap>) -> Result<Database> {
    make_private(path)?;
    let mut builder = Builder::new();
    builder.set_cache_size(cache_bytes);
    let opened = match wrap {
        None => builder.create(path),
        Some(wrap) => private_file::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(redb::DatabaseError::from)
            .and_then(FileBackend::new)
            .and_then(|file| builder.create_with_backend(Boxed(wrap(file)))),
    };
    opened.map_err(|e| match e {
        redb::DatabaseError::DatabaseAlreadyOpen => StorageError::AlreadyOpen {
            path: path.to_path_buf(),
        },
        other => StorageError::Database(other),
    })
}

/// Creates the database file at `path` owner-only, or makes an existing one owner-only when
/// its mode lets others in (a file made by an older Tollgate under a loose umask).
fn make_private(path: &Path) -> Result<()> {
    let io = |source| StorageError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = private_file::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = file.metadata().map_err(io)?.permissions().mode();
        if mode & 0o077 != 0 {
            private_file::restrict(&file).map_err(io)?;
            tracing::warn!(path = %path.display(), mode = format!("{:o}", mode & 0o777),
                "the database file was readable by other users; it is owner-only (0600) now");
        }
    }
    Ok(())
}

/// Compacts the file: its freed pages (old versions of records, plain secrets before sealing)
/// are dropped and the file shrinks to its live pages.
fn compact(db: &mut Database) -> Result<()> {
    db.compact()?;
    Ok(())
}

impl Store {
    /// Opens `dir/tollgate.redb`, creating the directory and the file if needed, and upgrades
    /// the schema. Blocking: call it at startup or from `spawn_blocking`.
    pub fn open_dir(dir: &Path) -> Result<Store> {
        Store::open_dir_with_cache(dir, DEFAULT_CACHE_BYTES)
    }

    /// [`Store::open_dir`] with a page cache of `cache_bytes` (see [`DEFAULT_CACHE_BYTES`]).
    pub fn open_dir_with_cache(dir: &Path, cache_bytes: usize) -> Result<Store> {
        Store::open_dir_wrapped(dir, cache_bytes, None, Keyring::plaintext())
    }

    /// [`Store::open_dir_with_cache`] on a wrapped file backend ([`Store::open_wrapped`]),
    /// sealing secrets with `keyring`.
    pub fn open_dir_wrapped(
        dir: &Path,
        cache_bytes: usize,
        wrap: Option<BackendWrap>,
        keyring: Keyring,
    ) -> Result<Store> {
        private_file::create_dir_all(dir).map_err(|source| StorageError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        Store::open_wrapped(&dir.join(DB_FILE_NAME), cache_bytes, wrap, keyring)
    }

    /// Opens (or creates) the database file at `path` and runs pending migrations.
    pub fn open(path: &Path) -> Result<Store> {
        Store::open_with_cache(path, DEFAULT_CACHE_BYTES)
    }

    /// [`Store::open`] with a page cache of `cache_bytes`.
    pub fn open_with_cache(path: &Path, cache_bytes: usize) -> Result<Store> {
        Store::open_wrapped(path, cache_bytes, None, Keyring::plaintext())
    }

    /// [`Store::open_with_cache`] on a file backend wrapped by `wrap` (fault injection in
    /// tests; `None` is the plain file), sealing secrets with `keyring` ([`crate::sealing`]).
    /// A file whose secrets are sealed refuses to open without its key
    /// ([`StorageError::SecretKeyRequired`], [`StorageError::WrongSecretKey`]); a plain file
    /// opened with a key is sealed and compacted, so no freed page keeps a plain secret.
    pub fn open_wrapped(
        path: &Path,
        cache_bytes: usize,
        wrap: Option<BackendWrap>,
        keyring: Keyring,
    ) -> Result<Store> {
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let mut db = open_db(&abs, cache_bytes, wrap.as_ref())?;
        let settled = sealing::scoped(&keyring, || migrate::run(&db, &keyring))?;
        if settled == Settled::JustSealed {
            compact(&mut db)?;
            tracing::info!("encrypted the secrets of the database and compacted the file");
        }
        Ok(Store {
            inner: Arc::new(Inner {
                db: ArcSwapOption::from_pointee(db),
                path: abs,
                cache_bytes,
                wrap,
                keyring,
            }),
        })
    }

    /// Changes the key the secrets of the (closed) database file at `path` are sealed with:
    /// opens it under `from`, re-seals every secret under `to` (plain text when `to` has no
    /// key) in one transaction, and compacts the file. Blocking.
    pub fn rekey(path: &Path, from: Keyring, to: &Keyring) -> Result<()> {
        let store = Store::open_wrapped(path, DEFAULT_CACHE_BYTES, None, from.clone())?;
        let Ok(inner) = Arc::try_unwrap(store.inner) else {
            return Err(StorageError::Sealing("the store is shared"));
        };
        let Some(db) = inner.db.swap(None) else {
            return Err(StorageError::Reopening);
        };
        let Ok(mut db) = Arc::try_unwrap(db) else {
            return Err(StorageError::Sealing("the database is shared"));
        };
        let wtx = db.begin_write()?;
        seal_file::reseal(&wtx, &from, to)?;
        wtx.commit()?;
        compact(&mut db)
    }

    /// What secrets are sealed with.
    pub fn keyring(&self) -> &Keyring {
        &self.inner.keyring
    }

    /// Closes the database and opens the file again: after an I/O error redb refuses every
    /// later operation on the handle that saw it. Blocking. While it runs (and after it
    /// failed: call it again later) transactions fail with [`StorageError::Reopening`]. The old
    /// handle closes when the last transaction still running on it ends; until then the file is
    /// locked and the open fails ([`StorageError::AlreadyOpen`]), to be retried.
    pub fn reopen(&self) -> Result<()> {
        drop(self.inner.db.swap(None));
        let db = open_db(
            &self.inner.path,
            self.inner.cache_bytes,
            self.inner.wrap.as_ref(),
        )?;
        self.inner.db.store(Some(Arc::new(db)));
        Ok(())
    }

    /// Whether the database is open (false after a failed [`Store::reopen`]).
    pub fn is_open(&self) -> bool {
        self.inner.db.load().is_some()
    }

    /// The open database.
    pub(crate) fn db(&self) -> Result<Arc<Database>> {
        self.inner.db.load_full().ok_or(StorageError::Reopening)
    }

    /// Absolute path of the database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
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
        let db = self.db()?;
        let rtx = db.begin_read().map_err(StorageError::from)?;
        sealing::scoped(&self.inner.keyring, || f(&rtx))
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
        let db = self.db()?;
        let mut wtx = db.begin_write().map_err(StorageError::from)?;
        wtx.set_durability(redb::Durability::None)
            .map_err(StorageError::from)?;
        match sealing::scoped(&self.inner.keyring, || f(&wtx)) {
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
        let db = self.db()?;
        let wtx = db.begin_write().map_err(StorageError::from)?;
        match sealing::scoped(&self.inner.keyring, || f(&wtx)) {
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
