//! Consistent copies of the database file while it is open ([`Store::backup_to`]), and putting
//! one back while no server holds the file ([`restore`]).
//!
//! redb's file is, between commits, exactly its last committed state: a copy taken while a
//! write transaction is held (so no commit can start) and after a durable commit (so a lazy,
//! not yet flushed housekeeping commit is flushed first) opens as that state. Settlements a
//! running server has journalled but not committed yet (at most one commit interval) are not
//! in the copy; they are in the server's own crash journal.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::private_file;
use crate::sealing::Keyring;
use crate::store::{DB_FILE_NAME, DEFAULT_CACHE_BYTES, Store};
use crate::{Result, StorageError};

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StorageError + '_ {
    move |source| StorageError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Copies `from` to `to` through `to.partial` (owner-only, whatever `from`'s mode), flushed
/// to disk before it takes the name.
fn copy_durably(from: &Path, to: &Path) -> Result<u64> {
    let partial = partial_name(to);
    let bytes = private_file::copy(from, &partial).map_err(io(&partial))?;
    fs::File::open(&partial)
        .and_then(|f| f.sync_all())
        .map_err(io(&partial))?;
    fs::rename(&partial, to).map_err(io(to))?;
    Ok(bytes)
}

fn partial_name(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}

impl Store {
    /// Writes a consistent copy of the open database to `dest` (replaced if it exists) and
    /// returns its size in bytes. Blocking: the log writer's next commit waits for the copy.
    pub fn backup_to(&self, dest: &Path) -> Result<u64> {
        // A durable (empty) commit first: a lazy commit before it reaches the disk.
        self.write_blocking(|_| Ok::<_, StorageError>(()))?;
        let db = self.db()?;
        let hold = db.begin_write().map_err(StorageError::from)?;
        let copied = copy_durably(self.path(), dest);
        if let Err(e) = hold.abort() {
            tracing::warn!(error = %e, "ending the backup's write transaction");
        }
        copied
    }
}

/// Puts the backup `from` in place as `dir`'s database. Refuses (leaving everything as it was)
/// when the backup is not a Tollgate database this build can open, or when a server holds
/// `dir`'s database; the file it replaces is kept beside it as `tollgate.redb.before-restore`.
/// Both files are opened with `keyring` (a backup of an encrypted database needs its key).
pub fn restore(from: &Path, dir: &Path, keyring: &Keyring) -> Result<PathBuf> {
    let live = dir.join(DB_FILE_NAME);
    let open = |path: &Path| Store::open_wrapped(path, DEFAULT_CACHE_BYTES, None, keyring.clone());
    // Held open (and so locked) until the swap is done: no server can start on it meanwhile.
    let current = live.exists().then(|| open(&live)).transpose()?;
    private_file::create_dir_all(dir).map_err(io(dir))?;
    let staged = dir.join(format!("{DB_FILE_NAME}.restoring"));
    copy_durably(from, &staged)?;
    // Opening it checks the file and brings its schema up to this build's.
    if let Err(e) = open(&staged) {
        let _ = fs::remove_file(&staged);
        return Err(e);
    }
    drop(current);
    let before = dir.join(format!("{DB_FILE_NAME}.before-restore"));
    if live.exists() {
        fs::rename(&live, &before).map_err(io(&live))?;
    }
    fs::rename(&staged, &live).map_err(io(&live))?;
    if let Ok(dir) = fs::File::open(dir) {
        // The renames themselves are durable once the directory is.
        let _ = dir.sync_all();
    }
    Ok(before)
}

/// Writes `bytes` (a backup received from a running server) to `dest` durably, owner-only.
pub fn write_backup(dest: &Path, bytes: &[u8]) -> Result<()> {
    let partial = partial_name(dest);
    let mut file = private_file::create(&partial).map_err(io(&partial))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(io(&partial))?;
    fs::rename(&partial, dest).map_err(io(dest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::users::{self, NewUser};
    use crate::{Quota, UserId};

    fn user(store: &Store, name: &str) -> UserId {
        store
            .write_blocking(|wtx| {
                users::insert(
                    wtx,
                    NewUser {
                        username: name.into(),
                        display_name: String::new(),
                        password_hash: String::new(),
                        role: users::ROLE_COMMON,
                        group: "default".into(),
                        quota: Quota(7),
                        email: String::new(),
                        aff_code: String::new(),
                        inviter_id: 0,
                        created_at: 0,
                    },
                )
            })
            .map(|u| u.id)
            .unwrap_or_else(|e| unreachable!("{e}"))
    }

    #[test]
    fn a_backup_of_an_open_store_opens_with_its_data_and_restores() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| unreachable!("{e}"));
        let live = dir.path().join("live");
        let store = Store::open_dir(&live).unwrap_or_else(|e| unreachable!("{e}"));
        let first = user(&store, "first");
        let copy = dir.path().join("copy.redb");
        assert!(
            store
                .backup_to(&copy)
                .unwrap_or_else(|e| unreachable!("{e}"))
                > 0
        );
        let later = user(&store, "later");
        // A server holds the live file: restoring over it is refused.
        assert!(matches!(
            restore(&copy, &live, &Keyring::plaintext()),
            Err(StorageError::AlreadyOpen { .. })
        ));
        drop(store);
        restore(&copy, &live, &Keyring::plaintext()).unwrap_or_else(|e| unreachable!("{e}"));
        let back = Store::open_dir(&live).unwrap_or_else(|e| unreachable!("{e}"));
        let (a, b) = back
            .read_blocking(|rtx| {
                Ok::<_, StorageError>((users::get(rtx, first)?, users::get(rtx, later)?))
            })
            .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(a.map(|u| u.quota), Some(Quota(7)), "the backup's data");
        assert!(b.is_none(), "nothing written after the backup");
        assert!(live.join(format!("{DB_FILE_NAME}.before-restore")).exists());
    }

    #[test]
    fn a_file_that_is_not_a_database_is_not_restored() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| unreachable!("{e}"));
        let junk = dir.path().join("junk");
        fs::write(&junk, b"not a database").unwrap_or_else(|e| unreachable!("{e}"));
        let live = dir.path().join("live");
        drop(Store::open_dir(&live).unwrap_or_else(|e| unreachable!("{e}")));
        assert!(restore(&junk, &live, &Keyring::plaintext()).is_err());
        assert!(Store::open_dir(&live).is_ok(), "the live file is untouched");
        assert!(!live.join(format!("{DB_FILE_NAME}.restoring")).exists());
    }
}
