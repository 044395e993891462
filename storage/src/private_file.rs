//! Files that hold the data (the database, its backups and copies, the crash journal) are
//! created readable and writable by their owner only (0600 on Unix), and a data directory
//! Tollgate creates is 0700: they hold balances, hashed passwords and, without a secret key,
//! channel and API keys in plain text. `umask` cannot loosen this; an operator may still
//! widen a mode by hand afterwards. On other systems the platform's defaults apply.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::Path;

/// The mode of a data file.
#[cfg(unix)]
const FILE_MODE: u32 = 0o600;
/// The mode of a data directory Tollgate creates.
#[cfg(unix)]
const DIR_MODE: u32 = 0o700;

/// `OpenOptions` whose `create` makes an owner-only file.
pub fn options() -> OpenOptions {
    #[cfg_attr(not(unix), expect(unused_mut, reason = "the mode is set on Unix only"))]
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(FILE_MODE);
    }
    options
}

/// Creates (or truncates) `path` as an owner-only file for writing. A file that existed keeps
/// its inode, so its mode is set again.
pub fn create(path: &Path) -> io::Result<File> {
    let file = options()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    restrict(&file)?;
    Ok(file)
}

/// Makes an open file owner-only.
pub fn restrict(file: &File) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(fs::Permissions::from_mode(FILE_MODE))?;
    }
    #[cfg(not(unix))]
    let _ = file;
    Ok(())
}

/// Copies `from` into a new owner-only file `to` (unlike `fs::copy`, which gives the copy the
/// source's mode) and returns the bytes copied.
pub fn copy(from: &Path, to: &Path) -> io::Result<u64> {
    let mut source = File::open(from)?;
    let mut dest = create(to)?;
    io::copy(&mut source, &mut dest)
}

/// Creates `dir` and its missing parents; the directories created are owner-only.
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(DIR_MODE);
    }
    builder.create(dir)
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or_else(|e| unreachable!("{e}"))
    }

    #[test]
    fn files_copies_and_directories_are_owner_only() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| unreachable!("{e}"));
        let open = dir.path().join("open");
        fs::write(&open, b"data").unwrap_or_else(|e| unreachable!("{e}"));
        fs::set_permissions(&open, fs::Permissions::from_mode(0o644))
            .unwrap_or_else(|e| unreachable!("{e}"));
        let copy = dir.path().join("copy");
        assert_eq!(copy_checked(&open, &copy), 4);
        assert_eq!(mode(&copy), 0o600, "not the source's mode");
        // An existing file written again becomes owner-only too.
        drop(create(&open).unwrap_or_else(|e| unreachable!("{e}")));
        assert_eq!(mode(&open), 0o600);
        let nested = dir.path().join("a/b");
        create_dir_all(&nested).unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(mode(&nested), 0o700);
        assert_eq!(mode(&dir.path().join("a")), 0o700);
    }

    fn copy_checked(from: &Path, to: &Path) -> u64 {
        copy(from, to).unwrap_or_else(|e| unreachable!("{e}"))
    }
}
