//! One-time codes: email verification codes and password-reset tokens.
//!
//! Only a hash of the secret is stored. A code is bound to a purpose and an email address,
//! expires, and is consumed by a successful check (single use). Keeping them in the database
//! (not in memory) means a restart does not invalidate mails already sent.

use redb::{ReadableTable, WriteTransaction};
use serde::{Deserialize, Serialize};

use crate::tables::ONE_TIME_CODES;
use crate::{Result, codec};

/// A stored one-time code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OneTimeCode {
    /// Hash of the secret (the caller chooses the hash; compared as text).
    pub secret_hash: String,
    /// Unix seconds after which the code is void.
    pub expires_at: i64,
    /// Unix seconds when it was issued (for resend throttling).
    pub issued_at: i64,
}

fn key(purpose: &str, email: &str) -> String {
    format!("{purpose}:{}", email.trim().to_lowercase())
}

/// Issues a code unless one was issued less than `min_interval` seconds ago; returns `false`
/// (and stores nothing) when throttled.
pub fn issue(
    wtx: &WriteTransaction,
    purpose: &str,
    email: &str,
    code: OneTimeCode,
    min_interval: i64,
) -> Result<bool> {
    let mut table = wtx.open_table(ONE_TIME_CODES)?;
    let k = key(purpose, email);
    if let Some(existing) = table.get(k.as_str())? {
        let existing: OneTimeCode = codec::decode(existing.value())?;
        if code.issued_at.saturating_sub(existing.issued_at) < min_interval {
            return Ok(false);
        }
    }
    table.insert(k.as_str(), codec::encode(&code)?.as_slice())?;
    Ok(true)
}

/// Checks `secret_hash` against the stored code at `now`; on a match the code is consumed.
pub fn consume(
    wtx: &WriteTransaction,
    purpose: &str,
    email: &str,
    secret_hash: &str,
    now: i64,
) -> Result<bool> {
    let mut table = wtx.open_table(ONE_TIME_CODES)?;
    let k = key(purpose, email);
    let stored: OneTimeCode = match table.get(k.as_str())? {
        Some(bytes) => codec::decode(bytes.value())?,
        None => return Ok(false),
    };
    if now > stored.expires_at {
        table.remove(k.as_str())?;
        return Ok(false);
    }
    if stored.secret_hash != secret_hash {
        return Ok(false);
    }
    table.remove(k.as_str())?;
    Ok(true)
}
