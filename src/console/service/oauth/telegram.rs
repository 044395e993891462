//! Telegram Login Widget: the widget hands the browser the user's fields and a hash; the hash
//! is the HMAC-SHA256 of the data-check string (every field but `hash`, sorted, `key=value`
//! joined by newlines) keyed with SHA-256 of the bot token
//! (<https://core.telegram.org/widgets/login#checking-authorization>).
//!
//! Telegram's page leaves the freshness rule to the site ("you can use the auth_date field to
//! prevent the usage of outdated data"); Tollgate takes a payload at most [`MAX_AGE_SECS`] old,
//! and once ([`verify`] returns the payload's hash; the caller spends it).

use std::collections::BTreeMap;

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use tollgate_storage::users::Provider;

use super::link::Identity;
use crate::error::{ConsoleError, ErrorCode};

/// Oldest `auth_date` accepted, in seconds before now (5 minutes).
pub const MAX_AGE_SECS: i64 = 300;
/// How far in the future an `auth_date` may be (clock skew), in seconds.
pub const FUTURE_SKEW_SECS: i64 = 300;

/// Fields the console adds to the widget's that are not signed by Telegram.
const UNSIGNED: &[&str] = &["hash", "lang", "aff"];

/// A verified widget payload: who it names, and what makes it single-use.
#[derive(Debug)]
pub struct Verified {
    /// The Telegram identity.
    pub identity: Identity,
    /// The payload's hash (what the caller spends, so the payload works once).
    pub hash: String,
    /// Unix seconds after which the payload is refused as too old anyway.
    pub expires_at: i64,
}

/// Checks the widget's fields (the query string): signed by the bot's token and at most
/// [`MAX_AGE_SECS`] old.
pub fn verify(
    fields: &BTreeMap<String, String>,
    bot_token: &str,
    now: i64,
) -> Result<Verified, ConsoleError> {
    let bad =
        |why: &'static str| ConsoleError::with_args(ErrorCode::TelegramRefused, [why.to_string()]);
    let hash = fields.get("hash").ok_or_else(|| bad("no hash"))?;
    let check: Vec<String> = fields
        .iter()
        .filter(|(k, _)| !UNSIGNED.contains(&k.as_str()))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let secret = Sha256::digest(bot_token.as_bytes());
    let mut mac = Hmac::<Sha256>::new_from_slice(&secret)
        .map_err(|_| ConsoleError::Internal("HMAC key".into()))?;
    mac.update(check.join("\n").as_bytes());
    let expected = decode_hex(hash).ok_or_else(|| bad("the hash does not match"))?;
    mac.verify_slice(&expected)
        .map_err(|_| bad("the hash does not match"))?;
    let auth_date: i64 = fields
        .get("auth_date")
        .and_then(|d| d.parse().ok())
        .ok_or_else(|| bad("no auth_date"))?;
    if now.saturating_sub(auth_date) > MAX_AGE_SECS {
        return Err(bad(
            "the authorization is older than 5 minutes; sign in with Telegram again",
        ));
    }
    if auth_date.saturating_sub(now) > FUTURE_SKEW_SECS {
        return Err(bad("the authorization date is in the future"));
    }
    let id = fields
        .get("id")
        .filter(|id| !id.is_empty())
        .ok_or_else(|| bad("no user id"))?;
    let field = |k: &str| fields.get(k).map(String::as_str).unwrap_or_default();
    let display = format!("{} {}", field("first_name"), field("last_name"));
    Ok(Verified {
        identity: Identity {
            provider: Provider::Telegram,
            external_id: id.clone(),
            username: field("username").to_owned(),
            display_name: display.trim().to_owned(),
            verified_email: None,
        },
        hash: hash.to_ascii_lowercase(),
        expires_at: auth_date.saturating_add(MAX_AGE_SECS),
    })
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            text.get(i..i + 2)
                .and_then(|b| u8::from_str_radix(b, 16).ok())
        })
        .collect()
}

/// The hash Telegram would send for `fields` (tests and the test widget).
pub fn sign(fields: &BTreeMap<String, String>, bot_token: &str) -> String {
    let check: Vec<String> = fields
        .iter()
        .filter(|(k, _)| !UNSIGNED.contains(&k.as_str()))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let secret = Sha256::digest(bot_token.as_bytes());
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&secret) else {
        return String::new();
    };
    mac.update(check.join("\n").as_bytes());
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(auth_date: i64) -> BTreeMap<String, String> {
        [
            ("id", "4242"),
            ("first_name", "Ada"),
            ("last_name", "L"),
            ("username", "ada"),
            ("auth_date", &auth_date.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
    }

    #[test]
    fn a_signed_fresh_login_verifies() {
        let mut f = fields(1_000_000);
        f.insert("hash".into(), sign(&f, "123:bot"));
        f.insert("lang".into(), "zh".into());
        let id = verify(&f, "123:bot", 1_000_100).expect("verifies").identity;
        assert_eq!(id.external_id, "4242");
        assert_eq!(id.username, "ada");
        assert_eq!(id.display_name, "Ada L");
    }

    #[test]
    fn wrong_hash_other_token_tampering_and_stale_dates_are_refused() {
        let mut f = fields(1_000_000);
        f.insert("hash".into(), sign(&f, "123:bot"));
        assert!(verify(&f, "999:other", 1_000_100).is_err(), "other bot");
        let mut tampered = f.clone();
        tampered.insert("id".into(), "1".into());
        assert!(verify(&tampered, "123:bot", 1_000_100).is_err(), "tampered");
        let mut junk = f.clone();
        junk.insert("hash".into(), "zz".into());
        assert!(verify(&junk, "123:bot", 1_000_100).is_err(), "junk hash");
        assert!(
            verify(&f, "123:bot", 1_000_000 + MAX_AGE_SECS + 1).is_err(),
            "older than 5 minutes"
        );
        assert!(verify(&f, "123:bot", 1_000_000 - 3600).is_err(), "future");
    }
}
