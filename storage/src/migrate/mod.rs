//! Schema versions and the migration runner.
//!
//! The metadata table records the schema version of the file. On open, [`run`]:
//! - initialises a new file at [`CURRENT_SCHEMA`] (creating every table);
//! - upgrades an older file one step at a time, all steps inside ONE write transaction, so a
//!   failed upgrade leaves the file exactly as it was;
//! - refuses a file from a newer build ([`StorageError::NewerSchema`]);
//! - creates every table of the current schema that is missing, on every open.
//!
//! So a *new* table needs no version bump (it is created on the next open); changing the layout
//! of an existing table does: give it a new versioned name and add a step here.
//!
//! History:
//! - 1: users (`users.v1`) without OAuth ids, invite data, settings or soft delete; no email index.
//! - 2: `users.v2` with every field of spec 01 §3; `user_by_email.v1` index.
//! - 3: log filter indexes (`log_by_key.v1` replaces `log_by_user.v1`), hour counters
//!   (`log_counts.v1`) and dashboard aggregates (`dash_*.v1`), rebuilt from the rows.
//! - 4: more log filter keys (user + group, model + channel, typed keys of rows other than
//!   consume) in `log_by_key.v1` and `log_counts.v1`, rebuilt from the rows.
//! - 5: `user_credited.v1`, each user's credited total, filled as balance + used quota.
//! - 6: `options.v2` holds option values as bytes (sealed when a secret key is configured);
//!   the session secret moves to a sealed entry ([`crate::sealing`]).
//! - 7: the log filter index is postings (`log_postings.v1` replaces `log_by_key.v1`; the
//!   newest hours are counted by their postings, `log_counts_recent.v1` is dropped; the
//!   `sealed_before` mark in `log_marks.v1`), rebuilt from the rows.
//!
//! After the steps, in the same transaction, [`crate::seal_file::settle`] checks the file's
//! secrets against the configured key (and seals a plain file when a key is given).

mod v1_to_v2;
mod v2_to_v3;
mod v3_to_v4;
mod v4_to_v5;
mod v5_to_v6;
mod v6_to_v7;

use redb::{Database, WriteTransaction};

use crate::seal_file::{self, Settled};
use crate::sealing::Keyring;
use crate::tables::{
    ABILITIES, CHANNEL_BY_TAG, CHANNELS, DASH_BY_MODEL, DASH_BY_USER, DASH_BY_USER_MODEL,
    LOG_BY_TIME, LOG_COUNTS, LOG_MARKS, LOG_POSTINGS, LOGS, META, ONE_TIME_CODES, OPTIONS,
    REDEMPTION_BY_KEY, REDEMPTIONS, REMINDERS, TASK_BY_KEY, TASK_COUNTS, TASK_OPEN, TASKS,
    TOKEN_BY_KEY, TOKENS, TOKENS_BY_USER, TOPUP_BY_TRADE_NO, TOPUPS, TOPUPS_BY_USER,
    USER_BY_ACCESS_TOKEN, USER_BY_AFF_CODE, USER_BY_EMAIL, USER_BY_IDENTITY, USER_BY_USERNAME,
    USER_CREDITED, USER_SESSIONS, USER_TWO_FACTOR, USERS,
};
use crate::{Result, StorageError, meta};

/// The schema version this build writes.
pub const CURRENT_SCHEMA: u32 = 7;

/// One upgrade step: from version `n` to `n + 1`.
type Step = fn(&WriteTransaction) -> Result<()>;

/// Steps indexed by the version they start from (`STEPS[0]` upgrades 1 → 2).
const STEPS: [Step; 6] = [
    v1_to_v2::run,
    v2_to_v3::run,
    v3_to_v4::run,
    v4_to_v5::run,
    v5_to_v6::run,
    v6_to_v7::run,
];

/// Brings the file to [`CURRENT_SCHEMA`] and settles its secrets under `keyring` (which must
/// be installed on this thread: [`sealing::scoped`]). Blocking.
pub fn run(db: &Database, keyring: &Keyring) -> Result<Settled> {
    let wtx = db.begin_write()?;
    match meta::schema_version(&wtx)? {
        None => {
            meta::set_schema_version(&wtx, CURRENT_SCHEMA)?;
            tracing::info!(version = CURRENT_SCHEMA, "initialised a new database");
        }
        Some(found) if found > CURRENT_SCHEMA => {
            return Err(StorageError::NewerSchema {
                found,
                supported: CURRENT_SCHEMA,
            });
        }
        Some(found) => {
            for from in found..CURRENT_SCHEMA {
                let step = usize::try_from(from)
                    .ok()
                    .and_then(|i| i.checked_sub(1))
                    .and_then(|i| STEPS.get(i))
                    .ok_or(StorageError::Migration {
                        from,
                        reason: "no migration step for this version".into(),
                    })?;
                step(&wtx)?;
                tracing::info!(from, to = from + 1, "migrated the database schema");
            }
            meta::set_schema_version(&wtx, CURRENT_SCHEMA)?;
        }
    }
    create_tables(&wtx)?;
    let settled = seal_file::settle(&wtx, keyring)?;
    wtx.commit()?;
    Ok(settled)
}

/// Creates every current table, so readers never meet a missing one.
fn create_tables(wtx: &WriteTransaction) -> Result<()> {
    wtx.open_table(META)?;
    wtx.open_table(OPTIONS)?;
    wtx.open_table(USERS)?;
    wtx.open_table(USER_BY_USERNAME)?;
    wtx.open_table(USER_CREDITED)?;
    wtx.open_table(USER_SESSIONS)?;
    wtx.open_table(USER_TWO_FACTOR)?;
    wtx.open_table(USER_BY_EMAIL)?;
    wtx.open_table(USER_BY_ACCESS_TOKEN)?;
    wtx.open_table(USER_BY_AFF_CODE)?;
    wtx.open_table(USER_BY_IDENTITY)?;
    wtx.open_table(ONE_TIME_CODES)?;
    wtx.open_table(TOKENS)?;
    wtx.open_table(TOKEN_BY_KEY)?;
    wtx.open_table(TOKENS_BY_USER)?;
    wtx.open_table(LOGS)?;
    wtx.open_table(LOG_BY_TIME)?;
    wtx.open_table(LOG_POSTINGS)?;
    wtx.open_table(LOG_COUNTS)?;
    wtx.open_table(LOG_MARKS)?;
    wtx.open_table(DASH_BY_MODEL)?;
    wtx.open_table(DASH_BY_USER_MODEL)?;
    wtx.open_table(DASH_BY_USER)?;
    wtx.open_table(CHANNELS)?;
    wtx.open_table(ABILITIES)?;
    wtx.open_table(CHANNEL_BY_TAG)?;
    wtx.open_table(REDEMPTIONS)?;
    wtx.open_table(REDEMPTION_BY_KEY)?;
    wtx.open_table(TOPUPS)?;
    wtx.open_table(TOPUP_BY_TRADE_NO)?;
    wtx.open_table(TOPUPS_BY_USER)?;
    wtx.open_table(REMINDERS)?;
    wtx.open_table(TASKS)?;
    wtx.open_table(TASK_BY_KEY)?;
    wtx.open_table(TASK_OPEN)?;
    wtx.open_table(TASK_COUNTS)?;
    Ok(())
}
