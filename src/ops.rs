//! The operations kit: `tollgate backup`, `tollgate restore` and `tollgate admin
//! reset-password`, run instead of the server (see [`crate::config::Command`]).
//!
//! - **backup** copies the database consistently: when no server holds the data file it is
//!   opened and copied here; when one does, the running server is asked for its copy
//!   (`GET /api/backup` with a backup token that root made in the console's personal settings).
//! - **restore** puts a backup in place; refused while a server holds the data file, and when
//!   the backup is not a Tollgate database this build can open. The replaced file is kept as
//!   `tollgate.redb.before-restore`, and the crash journal (which continues the replaced file,
//!   not the backup) is renamed `tollgate.journal.<n>.before-restore`, so the next start does
//!   not replay it into the backup.
//! - **admin reset-password** sets a user's password; refused while a server holds the file.
//! - **import new-api** moves a new-api or one-api installation into an empty data directory
//!   ([`crate::import`]).
//! - **rekey** re-encrypts the database's secrets under a new secret key (or stores them as
//!   plain text again) and compacts the file; refused while a server holds the file.

use std::path::Path;

use rand::Rng;
use rand::distr::Alphanumeric;
use thiserror::Error;
use tollgate_storage::store::DB_FILE_NAME;
use tollgate_storage::{Keyring, StorageError, Store, backup, users};

use crate::config::{AdminCommand, BackupArgs, Command, Config, ImportCommand, read_keyring};
use crate::console::service::accounts::validate_password;
use crate::console::service::password::Hasher;

/// Why an operation failed (printed to the operator).
#[derive(Debug, Error)]
pub enum OpsError {
    /// The database could not be opened, copied or written.
    #[error("{0}")]
    Storage(#[from] StorageError),
    /// A server holds the data file and no server to ask was given.
    #[error(
        "a running Tollgate holds {path}: pass --server and --token (a backup token, made by \
         root in the console's personal settings) to ask it for a consistent copy, or stop it \
         first"
    )]
    ServerRunning {
        /// The locked file.
        path: String,
    },
    /// The running server could not be asked, or refused.
    #[error("the server answered: {0}")]
    Server(String),
    /// No such user.
    #[error("no user named {0}")]
    NoUser(String),
    /// The new password is not acceptable.
    #[error("{0}")]
    Password(String),
    /// The backup is in place, but the crash journal could not be moved aside.
    #[error(
        "restored, but moving the crash journal aside failed (move the tollgate.journal.* files \
         out of the data directory before starting): {0}"
    )]
    Journal(String),
    /// A secret key cannot be read or is too short.
    #[error("{0}")]
    SecretKey(String),
    /// An import failed (nothing but complete log batches was written).
    #[error("{0}")]
    Import(#[from] crate::import::ImportError),
}

/// The configured keyring (reads the key file: blocking).
fn keyring(config: &Config) -> Result<Keyring, OpsError> {
    config.keyring().map_err(OpsError::SecretKey)
}

/// Runs `command`; returns what to tell the operator.
pub async fn run(command: Command, config: &Config) -> Result<String, OpsError> {
    match command {
        Command::Backup(args) => backup(args, config).await,
        Command::Restore { file } => {
            let (from, dir) = (file.clone(), config.data_dir.clone());
            let keyring = keyring(config)?;
            let before = blocking(move || backup::restore(&from, &dir, &keyring)).await?;
            // The crash journal continues the replaced database, not the backup: replayed
            // into the backup it would apply charges the backup never had (or lacks the
            // users of). Kept, renamed where the next start does not read it.
            let dir = config.data_dir.clone();
            let moved = tokio::task::spawn_blocking(move || {
                tollgate_actors::journal::move_aside(&dir, "before-restore")
            })
            .await
            .map_err(|e| OpsError::Server(format!("the task failed: {e}")))?
            .map_err(|e| OpsError::Journal(e.to_string()))?;
            let journal = if moved.is_empty() {
                String::new()
            } else {
                format!(
                    "; the crash journal of the replaced database was moved aside ({})",
                    moved
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            Ok(format!(
                "restored {} into {} (the file it replaced, if any, is {}){journal}",
                file.display(),
                config.data_dir.display(),
                before.display()
            ))
        }
        Command::Import(ImportCommand::NewApi(args)) => Ok(crate::import::run(args, config).await?),
        Command::Admin(AdminCommand::ResetPassword { username, password }) => {
            reset_password(config, username, password).await
        }
        Command::Rekey {
            new_key_file,
            decrypt,
        } => {
            let from = keyring(config)?;
            let to = if decrypt {
                Keyring::plaintext()
            } else {
                read_keyring(new_key_file.as_deref(), None).map_err(OpsError::SecretKey)?
            };
            let path = config.data_dir.join(DB_FILE_NAME);
            let sealing = to.is_sealing();
            blocking(move || Store::rekey(&path, from, &to)).await?;
            Ok(if sealing {
                "the secrets are now encrypted with the new key: start Tollgate with it".to_owned()
            } else {
                "the secrets are now stored as plain text: start Tollgate without a key".to_owned()
            })
        }
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StorageError> + Send + 'static,
) -> Result<T, OpsError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| OpsError::Server(format!("the task failed: {e}")))?
        .map_err(OpsError::from)
}

async fn backup(args: BackupArgs, config: &Config) -> Result<String, OpsError> {
    let dir = config.data_dir.clone();
    let dest = args.file.clone();
    let keyring = keyring(config)?;
    let local = blocking(move || {
        let store = Store::open_dir_wrapped(
            &dir,
            tollgate_storage::store::DEFAULT_CACHE_BYTES,
            None,
            keyring,
        )?;
        store.backup_to(&dest)
    })
    .await;
    let bytes = match local {
        Ok(bytes) => bytes,
        Err(OpsError::Storage(StorageError::AlreadyOpen { path })) => {
            let (Some(server), Some(token)) = (&args.server, &args.token) else {
                return Err(OpsError::ServerRunning {
                    path: path.display().to_string(),
                });
            };
            ask_server(server, token, args.user_id, &args.file).await?
        }
        Err(e) => return Err(e),
    };
    Ok(format!("wrote {} ({bytes} bytes)", args.file.display()))
}

/// Fetches `GET {server}/api/backup` as root and writes it to `dest`.
async fn ask_server(server: &str, token: &str, user: i64, dest: &Path) -> Result<u64, OpsError> {
    let url = format!("{}/api/backup", server.trim_end_matches('/'));
    let resp = reqwest::Client::new()
        .get(url)
        .bearer_auth(token)
        .header("New-Api-User", user.to_string())
        .send()
        .await
        .map_err(|e| OpsError::Server(e.without_url().to_string()))?;
    if !resp.status().is_success() {
        let status = resp.status();
        let body = resp.text().await.unwrap_or_default();
        return Err(OpsError::Server(format!("{status}: {body}")));
    }
    let bytes = resp
        .bytes()
        .await
        .map_err(|e| OpsError::Server(e.without_url().to_string()))?;
    let dest = dest.to_path_buf();
    let size = bytes.len() as u64;
    blocking(move || backup::write_backup(&dest, &bytes)).await?;
    Ok(size)
}

async fn reset_password(
    config: &Config,
    username: String,
    password: Option<String>,
) -> Result<String, OpsError> {
    let generated = password.is_none();
    let password = password.unwrap_or_else(|| {
        rand::rng()
            .sample_iter(Alphanumeric)
            .take(16)
            .map(char::from)
            .collect()
    });
    validate_password(&password).map_err(|e| OpsError::Password(e.to_string()))?;
    let hasher = Hasher::spawn().map_err(|e| OpsError::Password(e.to_string()))?;
    let hash = hasher
        .hash(password.clone())
        .await
        .map_err(|e| OpsError::Password(e.to_string()))?;
    let dir = config.data_dir.clone();
    let name = username.clone();
    let keyring = keyring(config)?;
    let found = blocking(move || {
        let store = Store::open_dir_wrapped(
            &dir,
            tollgate_storage::store::DEFAULT_CACHE_BYTES,
            None,
            keyring,
        )?;
        store.write_blocking(|wtx| {
            let Some(mut user) = users::find_by_username_rw(wtx, &name)? else {
                return Ok(false);
            };
            user.password_hash = hash;
            users::update(wtx, &user)?;
            Ok::<_, StorageError>(true)
        })
    })
    .await?;
    if !found {
        return Err(OpsError::NoUser(username));
    }
    Ok(if generated {
        format!("the password of {username} is now: {password}")
    } else {
        format!("the password of {username} was changed")
    })
}
