//! The metadata table: schema version, id counters, setup state and generated secrets.

use redb::{ReadTransaction, ReadableTable, WriteTransaction};
use serde::{Deserialize, Serialize};

use crate::sealing::{self, Keyring};
use crate::{Result, StorageError, codec, tables::META};

const SCHEMA_VERSION: &str = "schema_version";
const SETUP: &str = "setup";
/// The session secret: sealed hex ([`crate::sealing`]); not postcard.
const SESSION_SECRET: &str = "session_secret.sealed";
/// Where schema 5 and older kept the session secret (postcard bytes, plain).
pub(crate) const SESSION_SECRET_V1: &str = "session_secret";
const SETTLED_THROUGH: &str = "settled_through";
const HEALTH_PROBE: &str = "health_probe";

/// Length in bytes of the generated session secret.
pub const SESSION_SECRET_LEN: usize = 64;

/// Whether first-run setup has been completed, and when.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetupState {
    /// True once POST /api/setup succeeded.
    pub done: bool,
    /// Unix seconds of the setup, 0 when not done.
    pub at: i64,
}

fn get_in<T: serde::de::DeserializeOwned>(
    table: &impl ReadableTable<&'static str, &'static [u8]>,
    key: &str,
) -> Result<Option<T>> {
    match table.get(key)? {
        Some(guard) => Ok(Some(codec::decode(guard.value())?)),
        None => Ok(None),
    }
}

fn put<T: Serialize>(wtx: &WriteTransaction, key: &str, value: &T) -> Result<()> {
    let bytes = codec::encode(value)?;
    wtx.open_table(META)?.insert(key, bytes.as_slice())?;
    Ok(())
}

fn get_rw<T: serde::de::DeserializeOwned>(wtx: &WriteTransaction, key: &str) -> Result<Option<T>> {
    get_in(&wtx.open_table(META)?, key)
}

fn get_ro<T: serde::de::DeserializeOwned>(rtx: &ReadTransaction, key: &str) -> Result<Option<T>> {
    match rtx.open_table(META) {
        Ok(table) => get_in(&table, key),
        Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The schema version recorded in the file, `None` for a file that has never been initialised.
pub fn schema_version(wtx: &WriteTransaction) -> Result<Option<u32>> {
    get_rw(wtx, SCHEMA_VERSION)
}

/// Records the schema version.
pub fn set_schema_version(wtx: &WriteTransaction, version: u32) -> Result<()> {
    put(wtx, SCHEMA_VERSION, &version)
}

/// Records the time of a health probe's write (`GET /api/health` proves the file is writable
/// by committing this).
pub fn touch_health_probe(wtx: &WriteTransaction, now: i64) -> Result<()> {
    put(wtx, HEALTH_PROBE, &now)
}

/// Allocates the next id of the named sequence (1, 2, 3, …).
pub fn next_id(wtx: &WriteTransaction, sequence: &str) -> Result<i64> {
    let key = format!("next_id.{sequence}");
    let next: i64 = get_rw(wtx, &key)?.unwrap_or(1);
    let after = next.checked_add(1).ok_or(StorageError::Overflow)?;
    put(wtx, &key, &after)?;
    Ok(next)
}

/// Makes the next id of the named sequence at least `at_least` (records stored under ids of
/// their own, as an import does, must never be handed out again).
pub fn raise_next_id(wtx: &WriteTransaction, sequence: &str, at_least: i64) -> Result<()> {
    let key = format!("next_id.{sequence}");
    let next: i64 = get_rw(wtx, &key)?.unwrap_or(1);
    if at_least > next {
        put(wtx, &key, &at_least)?;
    }
    Ok(())
}

/// Allocates `n` consecutive ids of the named sequence and returns the first (one read and one
/// write however many rows a batch inserts).
pub fn reserve_ids(wtx: &WriteTransaction, sequence: &str, n: usize) -> Result<i64> {
    let key = format!("next_id.{sequence}");
    let next: i64 = get_rw(wtx, &key)?.unwrap_or(1);
    let after = i64::try_from(n)
        .ok()
        .and_then(|n| next.checked_add(n))
        .ok_or(StorageError::Overflow)?;
    put(wtx, &key, &after)?;
    Ok(next)
}

/// The sequence number of the last settlement the log writer committed (0: none yet). A
/// settlement's number is given when it is queued (and journalled); a batch records the number of
/// its last settlement in the same transaction, so a retried or replayed settlement at or below
/// it is known to be in the file already and is never applied twice.
pub fn settled_through(rtx: &ReadTransaction) -> Result<u64> {
    Ok(get_ro(rtx, SETTLED_THROUGH)?.unwrap_or(0))
}

/// [`settled_through`] inside a write transaction.
pub fn settled_through_rw(wtx: &WriteTransaction) -> Result<u64> {
    Ok(get_rw(wtx, SETTLED_THROUGH)?.unwrap_or(0))
}

/// Records that every settlement numbered up to `seq` is committed.
pub fn set_settled_through(wtx: &WriteTransaction, seq: u64) -> Result<()> {
    put(wtx, SETTLED_THROUGH, &seq)
}

/// Reads the setup state.
pub fn setup_state(rtx: &ReadTransaction) -> Result<SetupState> {
    Ok(get_ro(rtx, SETUP)?.unwrap_or_default())
}

/// Reads the setup state inside a write transaction (to decide "exactly once" atomically).
pub fn setup_state_rw(wtx: &WriteTransaction) -> Result<SetupState> {
    Ok(get_rw(wtx, SETUP)?.unwrap_or_default())
}

/// Marks setup as done.
pub fn set_setup_state(wtx: &WriteTransaction, state: SetupState) -> Result<()> {
    put(wtx, SETUP, &state)
}

/// Returns the persisted session secret, generating it with `generate` on first use, so that
/// sessions survive restarts without the operator configuring anything.
pub fn session_secret_or_init(
    wtx: &WriteTransaction,
    generate: impl FnOnce() -> Vec<u8>,
) -> Result<Vec<u8>> {
    let keyring = sealing::current()?;
    let mut table = wtx.open_table(META)?;
    if let Some(stored) = table.get(SESSION_SECRET)? {
        return from_hex(&keyring.open_str(stored.value())?);
    }
    let secret = generate();
    table.insert(
        SESSION_SECRET,
        keyring.seal_str(&to_hex(&secret))?.as_slice(),
    )?;
    Ok(secret)
}

/// Moves the session secret of schema 5 (plain postcard bytes) to its sealed entry.
pub(crate) fn move_session_secret(wtx: &WriteTransaction) -> Result<()> {
    let Some(old) = get_rw::<Vec<u8>>(wtx, SESSION_SECRET_V1)? else {
        return Ok(());
    };
    let sealed = sealing::current()?.seal_str(&to_hex(&old))?;
    let mut table = wtx.open_table(META)?;
    table.insert(SESSION_SECRET, sealed.as_slice())?;
    table.remove(SESSION_SECRET_V1)?;
    Ok(())
}

/// Re-encodes the session secret: opened under `from`, sealed under `to`.
pub(crate) fn reseal(wtx: &WriteTransaction, from: &Keyring, to: &Keyring) -> Result<()> {
    let mut table = wtx.open_table(META)?;
    let Some(stored) = table.get(SESSION_SECRET)?.map(|v| v.value().to_vec()) else {
        return Ok(());
    };
    let plain = from.open(&stored)?;
    table.insert(SESSION_SECRET, to.seal(&plain)?.as_slice())?;
    Ok(())
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn from_hex(text: &str) -> Result<Vec<u8>> {
    let bad = || StorageError::Sealing("the stored session secret is not hex");
    if !text.len().is_multiple_of(2) {
        return Err(bad());
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            text.get(i..i + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                .ok_or_else(bad)
        })
        .collect()
}
