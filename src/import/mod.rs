//! `tollgate import new-api`: moves an installation of new-api (or one-api) into a stopped
//! Tollgate data directory with no setup done, so its users sign in with their old passwords
//! and second factor and their clients keep their old `sk-` keys.
//!
//! - [`dsn`]: the incumbent's `SQL_DSN` / `SQLITE_PATH`, read from `TOLLGATE_IMPORT_FROM` or
//!   `--from-file` (a DSN with a password is refused on the command line).
//! - [`source`]: one read-only REPEATABLE READ snapshot of the source (its database is only
//!   read: keeping the incumbent running is the rollback).
//! - [`mapping`]: rows to records, with the incumbent's models cited beside each mapping.
//! - [`tasks`]: the drawing and task records, unfinished ones polled on or marked.
//! - [`subscriptions`]: quota held outside `users.quota`, listed per user.
//! - [`report`]: the source's figures beside the ones Tollgate reads back.
//!
//! Everything but the usage logs is written in one transaction through
//! [`tollgate_storage::import`]; `--with-logs` then copies the logs a batch per transaction,
//! resumable with `--resume`. `--dry-run` reads and validates everything and writes nothing.

pub mod dsn;
pub mod mapping;
pub mod progress;
pub mod report;
pub mod source;
pub mod subscriptions;
pub mod tasks;

use std::collections::{BTreeMap, HashSet};

use tollgate_storage::audit::AuditEntry;
use tollgate_storage::import::{self as store_import, Records};
use tollgate_storage::{StorageError, Store};

use self::mapping::Notes;
use self::progress::Progress;
use self::source::Reader;
use crate::config::{Config, ImportArgs};

/// The environment variable the source may be read from.
pub const FROM_ENV: &str = "TOLLGATE_IMPORT_FROM";

/// Log rows per transaction with `--with-logs`.
const LOG_BATCH: usize = 1000;

/// Why an import failed (printed to the operator; never holds the DSN).
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// No usable source was given.
    #[error("{0}")]
    Dsn(#[from] dsn::DsnError),
    /// The source could not be read.
    #[error("reading the source database: {0}")]
    Source(String),
    /// The source holds something Tollgate cannot store.
    #[error("the source cannot be imported: {0}")]
    Invalid(String),
    /// The target data directory is not empty.
    #[error(
        "the data directory {0} already holds data or has been set up: import into a new, \
         empty data directory (merging into a running installation is not supported)"
    )]
    NotEmpty(String),
    /// Tollgate's database failed.
    #[error("{0}")]
    Storage(#[from] StorageError),
    /// A file could not be read.
    #[error("{0}")]
    Io(String),
    /// What was written does not read back as what was read.
    #[error("the import wrote data that does not read back as the source:\n{0}")]
    Mismatch(String),
}

/// The source setting: `--from` (only without a password), `--from-file`, or the environment.
fn source_value(args: &ImportArgs) -> Result<String, ImportError> {
    if let Some(file) = &args.from_file {
        let text = std::fs::read_to_string(file)
            .map_err(|e| ImportError::Io(format!("cannot read {}: {e}", file.display())))?;
        return Ok(text.lines().next().unwrap_or_default().trim().to_owned());
    }
    if let Some(value) = &args.from {
        if holds_password(value) {
            return Err(ImportError::Invalid(format!(
                "a DSN with a password is not taken from the command line (other users of the \
                 machine can read it there): put it in {FROM_ENV} or a file given to --from-file"
            )));
        }
        return Ok(value.clone());
    }
    std::env::var(FROM_ENV).map_err(|_| ImportError::Dsn(dsn::DsnError::Empty))
}

/// Whether a DSN carries a password (`user:pass@…`).
fn holds_password(value: &str) -> bool {
    let rest = value.split_once("://").map_or(value, |(_, r)| r);
    rest.rsplit_once('@')
        .is_some_and(|(credentials, _)| credentials.contains(':'))
}

/// Runs the import; returns the report.
pub async fn run(args: ImportArgs, config: &Config) -> Result<String, ImportError> {
    let value = source_value(&args)?;
    let source = dsn::parse(&value)?;
    drop(value);
    let keyring = config.keyring().map_err(ImportError::Io)?;
    let dir = config.data_dir.clone();
    let store = tokio::task::spawn_blocking(move || {
        Store::open_dir_wrapped(
            &dir,
            tollgate_storage::store::DEFAULT_CACHE_BYTES,
            None,
            keyring,
        )
    })
    .await
    .map_err(|e| ImportError::Io(e.to_string()))??;
    let empty = blocking(&store, store_import::store_is_empty).await?;
    let mut reader = Reader::open(&source).await?;
    let outcome = if args.resume {
        if empty {
            Err(ImportError::Invalid(
                "--resume continues an earlier import, but the data directory is empty".into(),
            ))
        } else {
            copy_logs(&mut reader, &store, true)
                .await
                .map(|n| format!("{n} more log rows imported"))
        }
    } else if !empty {
        Err(ImportError::NotEmpty(config.data_dir.display().to_string()))
    } else {
        import_all(&mut reader, &store, &args).await
    };
    reader.close().await;
    outcome
}

async fn blocking<T: Send + 'static>(
    store: &Store,
    f: impl FnOnce(&Store) -> Result<T, StorageError> + Send + 'static,
) -> Result<T, ImportError> {
    let store = store.clone();
    tokio::task::spawn_blocking(move || f(&store))
        .await
        .map_err(|e| ImportError::Io(e.to_string()))?
        .map_err(ImportError::from)
}

/// Reads, validates, writes (unless a dry run) and reads back.
async fn import_all(
    reader: &mut Reader,
    store: &Store,
    args: &ImportArgs,
) -> Result<String, ImportError> {
    let now = crate::clock::now_unix();
    let mut notes = Notes::default();
    let mut unknown_columns = BTreeMap::new();
    let mut read = async |spec: &source::TableSpec| -> Result<source::SourceTable, ImportError> {
        let shown = Progress::stderr().table(spec.name);
        let table = reader.read(spec).await?;
        shown.done(table.rows.len());
        Ok(table)
    };
    let users = read(&mapping::USERS).await?;
    let tokens = read(&mapping::TOKENS).await?;
    let channels = read(&mapping::CHANNELS).await?;
    let options = read(&mapping::OPTIONS).await?;
    let redemptions = read(&mapping::REDEMPTIONS).await?;
    let topups = read(&mapping::TOP_UPS).await?;
    let two_fas = read(&mapping::TWO_FAS).await?;
    let backup_codes = read(&mapping::BACKUP_CODES).await?;
    let passkeys = read(&mapping::PASSKEYS).await?;
    let drawings = read(&tasks::MIDJOURNEYS).await?;
    let task_rows = read(&tasks::TASKS).await?;
    let plans = read(&subscriptions::PLANS).await?;
    let subscription_rows = read(&subscriptions::SUBSCRIPTIONS).await?;
    let subscription_items = read(&subscriptions::ITEMS).await?;
    if !users.present {
        return Err(ImportError::Invalid(
            "the source has no users table: is it a new-api or one-api database?".into(),
        ));
    }
    let variant = mapping::variant(&tokens, &users);
    for (name, table) in [
        ("users", &users),
        ("tokens", &tokens),
        ("channels", &channels),
        ("redemptions", &redemptions),
        ("top_ups", &topups),
        ("two_fas", &two_fas),
        ("midjourneys", &drawings),
        ("tasks", &task_rows),
    ] {
        if !table.unknown.is_empty() {
            unknown_columns.insert(name, table.unknown.clone());
        }
    }

    // Options first: QuotaPerUnit prices the top-up orders.
    let mut records = Records::default();
    let mut quota_per_unit = 500_000.0;
    let mut oidc_issuer = None;
    for row in &options.rows {
        let (key, value) = (row.text("key"), row.text("value"));
        if tollgate_actors::options::catalog::find(&key).is_none() {
            notes.add("options Tollgate does not have (not carried)", key);
            continue;
        }
        match tollgate_actors::options::catalog::normalize(&key, &value) {
            Ok(normalized) => {
                if key == "QuotaPerUnit" {
                    quota_per_unit = normalized.parse().unwrap_or(quota_per_unit);
                }
                if key == "oidc.well_known" {
                    oidc_issuer = mapping::oidc_issuer(&normalized);
                }
                records.options.push((key, normalized));
            }
            Err(e) => notes.add("options refused by validation", format!("{key}: {e}")),
        }
    }

    let mut mapped_users = Vec::with_capacity(users.rows.len());
    for row in &users.rows {
        mapped_users.push(
            mapping::user(row, now, oidc_issuer.as_deref(), &mut notes)
                .map_err(ImportError::Invalid)?,
        );
    }
    mapping::dedupe_emails(&mut mapped_users, &mut notes);
    let user_ids: HashSet<i64> = mapped_users.iter().map(|(u, _)| u.id.0).collect();
    if !mapped_users
        .iter()
        .any(|(u, _)| u.role >= tollgate_storage::users::ROLE_ROOT && u.deleted_at.is_none())
    {
        return Err(ImportError::Invalid(
            "the source has no root user (role 100) who is not deleted".into(),
        ));
    }
    for (user, _) in &mapped_users {
        records.openings.push(mapping::opening(user, variant, now));
    }
    for row in &two_fas.rows {
        if let Some(record) = mapping::two_factor(row, now)
            && user_ids.contains(&record.user_id.0)
        {
            records.two_factor.push(record);
        }
    }
    let mut unused_codes: BTreeMap<i64, usize> = BTreeMap::new();
    for row in &backup_codes.rows {
        if row.is_null("deleted_at") && !row.flag("is_used") {
            *unused_codes.entry(row.int("user_id")).or_default() += 1;
        }
    }
    for (user, count) in unused_codes {
        notes.add(
            "two-factor recovery codes not carried (bcrypt-hashed: the user makes new ones)",
            format!("user {user}: {count} unused"),
        );
    }
    let mut passkey_count: BTreeMap<i64, usize> = BTreeMap::new();
    for row in &passkeys.rows {
        if row.is_null("deleted_at") {
            *passkey_count.entry(row.int("user_id")).or_default() += 1;
        }
    }
    for (user, count) in passkey_count {
        notes.add(
            "passkeys not carried (bound to the old site's address: the user registers them again)",
            format!("user {user}: {count} passkeys"),
        );
    }
    subscriptions::list(
        &plans,
        &subscription_rows,
        &subscription_items,
        now,
        &mut notes,
    );
    for row in &tokens.rows {
        if let Some(token) = mapping::token(row, variant, &mut notes) {
            if !user_ids.contains(&token.user_id.0) {
                notes.add(
                    "tokens not carried (their user does not exist)",
                    format!("token {} ({})", token.id, token.name),
                );
                continue;
            }
            if token.key.is_empty() || token.key.contains('-') {
                notes.add(
                    "tokens not carried (a key Tollgate cannot parse)",
                    format!("token {} ({})", token.id, token.name),
                );
                continue;
            }
            records.tokens.push(token);
        }
    }
    for row in &channels.rows {
        records.channels.push(mapping::channel(row, &mut notes));
    }
    for row in &redemptions.rows {
        if let Some(code) = mapping::redemption(row, now, &mut notes) {
            records.redemptions.push(code);
        }
    }
    for row in &topups.rows {
        records
            .topups
            .push(mapping::topup(row, quota_per_unit, &mut notes));
    }
    let known = tasks::Known {
        users: mapped_users
            .iter()
            .map(|(u, _)| (u.id.0, (u.username.clone(), u.group.clone())))
            .collect(),
        tokens: records
            .tokens
            .iter()
            .map(|t| (t.id.0, t.name.clone()))
            .collect(),
        channels: records
            .channels
            .iter()
            .map(|c| (c.id.0, c.channel_type))
            .collect(),
        now,
    };
    records.tasks.extend(
        drawings
            .rows
            .iter()
            .filter_map(|row| tasks::drawing(row, &known, &mut notes)),
    );
    records.tasks.extend(
        task_rows
            .rows
            .iter()
            .filter_map(|row| tasks::task(row, &known, &mut notes)),
    );
    records.users = mapped_users;
    let counts = serde_json::json!({
        "source": variant.name(),
        "engine": reader.engine().name(),
        "users": records.users.len(),
        "tokens": records.tokens.len(),
        "channels": records.channels.len(),
        "options": records.options.len(),
        "redemptions": records.redemptions.len(),
        "topups": records.topups.len(),
        "two_factor": records.two_factor.len(),
        "tasks": records.tasks.len(),
    });
    records.audit = AuditEntry {
        created_at: now,
        action: "import.new-api".into(),
        target: format!("import:{}", variant.name()),
        after: counts.to_string(),
        ..AuditEntry::default()
    };

    let source_figures = report::SourceFigures::of(&records);
    if args.dry_run {
        return Ok(report::render(
            variant,
            reader.engine(),
            &source_figures,
            None,
            &notes,
            &unknown_columns,
            true,
        ));
    }
    let records = std::sync::Arc::new(records);
    let writing = records.clone();
    blocking(store, move |s| store_import::write(s, &writing, now)).await?;
    let mut log_note = String::new();
    if args.with_logs {
        let n = copy_logs(reader, store, false).await?;
        log_note = format!("\n{n} log rows imported\n");
    }
    let (user_ids, token_ids, channel_ids) = source_figures.ids();
    let checked = blocking(store, move |s| {
        store_import::read_back(s, &user_ids, &token_ids, &channel_ids)
    })
    .await?;
    let mismatches = report::mismatches(&source_figures, &checked);
    let text = report::render(
        variant,
        reader.engine(),
        &source_figures,
        Some(&checked),
        &notes,
        &unknown_columns,
        false,
    ) + &log_note;
    if mismatches.is_empty() {
        Ok(text)
    } else {
        Err(ImportError::Mismatch(format!(
            "{text}\n{}",
            mismatches.join("\n")
        )))
    }
}

/// Copies the incumbent's logs after the last one imported; returns how many.
async fn copy_logs(reader: &mut Reader, store: &Store, resume: bool) -> Result<u64, ImportError> {
    let mut after = if resume {
        blocking(store, store_import::log_cursor).await?
    } else {
        0
    };
    let mut total = 0u64;
    let mut shown = Progress::stderr().logs(reader.count_after(&mapping::LOGS, after).await?);
    loop {
        let batch = reader.read_batch(&mapping::LOGS, after, LOG_BATCH).await?;
        if batch.rows.is_empty() {
            break;
        }
        let last = batch
            .rows
            .iter()
            .map(|r| r.int("id"))
            .max()
            .unwrap_or(after);
        let rows: Vec<_> = batch.rows.iter().map(mapping::log_row).collect();
        let n = rows.len();
        blocking(store, move |s| store_import::write_logs(s, rows, last)).await?;
        total += n as u64;
        after = last;
        shown.advance(n as u64);
        if n < LOG_BATCH {
            break;
        }
    }
    shown.finish();
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_refused_on_the_command_line() {
        assert!(holds_password("root:secret@tcp(db:3306)/newapi"));
        assert!(holds_password("postgres://u:secret@h/db"));
        assert!(!holds_password("postgres://u@h/db"));
        assert!(!holds_password("/var/lib/new-api/one-api.db"));
        let args = ImportArgs {
            from: Some("root:secret@tcp(db:3306)/newapi".into()),
            from_file: None,
            dry_run: false,
            with_logs: false,
            resume: false,
        };
        let err = source_value(&args).expect_err("refused");
        assert!(!err.to_string().contains("secret"), "{err}");
    }
}
