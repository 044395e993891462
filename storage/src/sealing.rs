//! Secrets at rest: channel keys, API keys, redemption codes, option values and the session
//! secret are sealed (XChaCha20-Poly1305) in their records when the operator configures a
//! secret key.
//!
//! - [`Keyring`] holds the keys derived from the operator's secret (HKDF-SHA256): one for the
//!   AEAD, one for the HMAC that keys the API-key and redemption-code indexes, so no index
//!   holds a key. A keyring without a key ([`Keyring::plaintext`]) stores secrets as plain
//!   text.
//! - A sealed value is `0xFE ‖ nonce (24) ‖ ciphertext ‖ tag`. A value not starting with `0xFE`
//!   is plain text: a UTF-8 string never starts with that byte, so plain records written
//!   before sealing existed (postcard writes a string and a byte string alike) still decode.
//! - The record functions take a bare redb transaction (so a future PostgreSQL backend can sit
//!   behind the same functions), and serde has no way to hand a key to a field's encoder. So the
//!   [`Store`](crate::Store) installs its keyring on the thread that runs a transaction, for the
//!   length of that transaction ([`scoped`]), and the field adaptors ([`string`], and
//!   [`crate::secret::stored`]) read it. Encoding a secret with no keyring installed is an
//!   error, never a silent plain-text write.
//! - Whole-file operations (the check value, sealing a plain file, changing the key) are in
//!   [`crate::seal_file`].

use std::cell::RefCell;
use std::sync::Arc;

use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::{Result, StorageError};

/// First byte of a sealed value (never the first byte of UTF-8 text).
const SEALED: u8 = 0xFE;
/// Nonce length of XChaCha20-Poly1305.
const NONCE_LEN: usize = 24;
/// Shortest secret key accepted, in characters (e.g. `openssl rand -hex 32` gives 64).
pub const MIN_SECRET_KEY_LEN: usize = 32;

/// The keys derived from one secret.
struct Keys {
    aead: XChaCha20Poly1305,
    index: [u8; 32],
}

/// The keys secrets are sealed with, or none (plain text). Cheap to clone.
#[derive(Clone, Default)]
pub struct Keyring {
    keys: Option<Arc<Keys>>,
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keyring")
            .field("sealing", &self.is_sealing())
            .finish()
    }
}

/// A secret key the operator gave that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error(
    "the secret key must be at least {MIN_SECRET_KEY_LEN} characters (e.g. `openssl rand -hex 32`)"
)]
pub struct WeakSecretKey;

impl Keyring {
    /// A keyring that stores secrets as plain text.
    pub fn plaintext() -> Keyring {
        Keyring { keys: None }
    }

    /// Derives the keys from the operator's secret (surrounding whitespace ignored).
    pub fn from_secret(secret: &str) -> std::result::Result<Keyring, WeakSecretKey> {
        let secret = secret.trim();
        if secret.chars().count() < MIN_SECRET_KEY_LEN {
            return Err(WeakSecretKey);
        }
        let hk = hkdf::Hkdf::<Sha256>::new(Some(b"tollgate secrets at rest"), secret.as_bytes());
        let mut aead = [0u8; 32];
        let mut index = [0u8; 32];
        // 32 bytes is far below HKDF-SHA256's limit (255 × 32), so expand cannot fail.
        hk.expand(b"aead", &mut aead).map_err(|_| WeakSecretKey)?;
        hk.expand(b"index", &mut index).map_err(|_| WeakSecretKey)?;
        Ok(Keyring {
            keys: Some(Arc::new(Keys {
                aead: XChaCha20Poly1305::new(&aead.into()),
                index,
            })),
        })
    }

    /// Whether secrets are sealed (a key is configured).
    pub fn is_sealing(&self) -> bool {
        self.keys.is_some()
    }

    /// Seals `plain` (a copy of it without a key).
    pub fn seal(&self, plain: &[u8]) -> Result<Vec<u8>> {
        let Some(keys) = &self.keys else {
            return Ok(plain.to_vec());
        };
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        let sealed = keys
            .aead
            .encrypt(&nonce, plain)
            .map_err(|_| StorageError::Sealing("encryption failed"))?;
        let mut out = Vec::with_capacity(1 + NONCE_LEN + sealed.len());
        out.push(SEALED);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    /// Opens a stored value: plain text as it is, a sealed value with the key.
    pub fn open(&self, stored: &[u8]) -> Result<Vec<u8>> {
        let Some((&SEALED, rest)) = stored.split_first() else {
            return Ok(stored.to_vec());
        };
        let keys = self.keys.as_ref().ok_or(StorageError::SecretKeyRequired)?;
        if rest.len() < NONCE_LEN {
            return Err(StorageError::Sealing("a sealed value is truncated"));
        }
        let (nonce, sealed) = rest.split_at(NONCE_LEN);
        keys.aead
            .decrypt(XNonce::from_slice(nonce), sealed)
            .map_err(|_| StorageError::WrongSecretKey)
    }

    /// Seals a string.
    pub fn seal_str(&self, plain: &str) -> Result<Vec<u8>> {
        self.seal(plain.as_bytes())
    }

    /// Opens a stored string.
    pub fn open_str(&self, stored: &[u8]) -> Result<String> {
        String::from_utf8(self.open(stored)?)
            .map_err(|_| StorageError::Sealing("a secret is not UTF-8 text"))
    }

    /// What the API-key index is keyed by: the HMAC-SHA256 (hex) of the key when sealing, the
    /// key itself otherwise.
    pub fn index_key(&self, secret: &str) -> String {
        let Some(keys) = &self.keys else {
            return secret.to_owned();
        };
        let Ok(mut mac) = <Hmac<Sha256> as Mac>::new_from_slice(&keys.index) else {
            // HMAC takes a key of any length; this arm is never taken.
            return secret.to_owned();
        };
        mac.update(secret.as_bytes());
        mac.finalize()
            .into_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

thread_local! {
    /// The keyring of the transaction running on this thread (see the module header).
    static CURRENT: RefCell<Option<Keyring>> = const { RefCell::new(None) };
}

/// Runs `f` with `keyring` installed for this thread's record encoding and decoding, then puts
/// back whatever was installed before.
pub fn scoped<T>(keyring: &Keyring, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<Keyring>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CURRENT.with(|c| *c.borrow_mut() = previous);
        }
    }
    let previous = CURRENT.with(|c| c.borrow_mut().replace(keyring.clone()));
    let _restore = Restore(previous);
    f()
}

/// The keyring installed on this thread.
pub fn current() -> Result<Keyring> {
    CURRENT
        .with(|c| c.borrow().clone())
        .ok_or(StorageError::Sealing("no keyring for this transaction"))
}

/// Serde adaptor for a `String` field sealed in storage: `#[serde(with = "crate::sealing::string")]`.
pub mod string {
    use serde::{Deserializer, Serializer};

    /// Writes the sealed text as a byte string.
    pub fn serialize<S: Serializer>(text: &str, serializer: S) -> Result<S::Ok, S::Error> {
        super::serialize_sealed(text, serializer)
    }

    /// Reads a sealed or plain byte string.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
        super::deserialize_sealed(deserializer)
    }
}

/// Serialises `text` sealed under the current keyring.
pub(crate) fn serialize_sealed<S: serde::Serializer>(
    text: &str,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    use serde::ser::Error;
    let sealed = current()
        .and_then(|k| k.seal_str(text))
        .map_err(S::Error::custom)?;
    serializer.serialize_bytes(&sealed)
}

/// Deserialises a byte string and opens it under the current keyring.
pub(crate) fn deserialize_sealed<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> std::result::Result<String, D::Error> {
    use serde::de::Error;
    let bytes = deserializer.deserialize_byte_buf(BytesVisitor)?;
    current()
        .and_then(|k| k.open_str(&bytes))
        .map_err(D::Error::custom)
}

/// Reads a byte string (postcard writes strings the same way, so old plain records read too).
struct BytesVisitor;

impl<'de> serde::de::Visitor<'de> for BytesVisitor {
    type Value = Vec<u8>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a byte string")
    }
    fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> std::result::Result<Vec<u8>, E> {
        Ok(v.to_vec())
    }
    fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> std::result::Result<Vec<u8>, E> {
        Ok(v)
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<Vec<u8>, E> {
        Ok(v.as_bytes().to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec;

    fn key(text: &str) -> Keyring {
        Keyring::from_secret(text).unwrap_or_else(|e| unreachable!("{e}"))
    }

    #[test]
    fn sealed_values_open_only_with_their_key() {
        let a = key("a-secret-key-of-at-least-32-characters");
        let b = key("another-secret-key-of-32-characters-or-more");
        let sealed = a
            .seal_str("sk-upstream")
            .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(sealed.first(), Some(&SEALED));
        assert!(!sealed.windows(11).any(|w| w == b"sk-upstream"));
        assert_eq!(a.open_str(&sealed).ok().as_deref(), Some("sk-upstream"));
        assert!(matches!(
            b.open_str(&sealed),
            Err(StorageError::WrongSecretKey)
        ));
        assert!(matches!(
            Keyring::plaintext().open_str(&sealed),
            Err(StorageError::SecretKeyRequired)
        ));
        // Two seals of one value differ (a fresh nonce each time).
        assert_ne!(a.seal_str("x").ok(), a.seal_str("x").ok());
        // Plain text opens under any keyring.
        assert_eq!(a.open_str(b"plain").ok().as_deref(), Some("plain"));
    }

    #[test]
    fn short_keys_are_refused_and_the_index_hides_the_key() {
        assert!(Keyring::from_secret("  short  ").is_err());
        let k = key("0123456789abcdef0123456789abcdef");
        let indexed = k.index_key("abc");
        assert_eq!(indexed.len(), 64);
        assert_ne!(indexed, "abc");
        assert_eq!(indexed, k.index_key("abc"));
        assert_eq!(Keyring::plaintext().index_key("abc"), "abc");
    }

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Rec {
        #[serde(with = "string")]
        key: String,
        n: i64,
    }

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct OldRec {
        key: String,
        n: i64,
    }

    #[test]
    fn records_seal_in_scope_read_old_plain_records_and_refuse_without_a_keyring() {
        let rec = Rec {
            key: "sk-abc".into(),
            n: 3,
        };
        assert!(codec::encode(&rec).is_err(), "no keyring installed");
        let k = key("0123456789abcdef0123456789abcdef");
        let bytes = scoped(&k, || codec::encode(&rec)).unwrap_or_else(|e| unreachable!("{e}"));
        assert!(!bytes.windows(6).any(|w| w == b"sk-abc"));
        let back: Rec =
            scoped(&k, || codec::decode(&bytes)).unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(back, rec);
        // A record written before sealing existed (a plain string) reads under a key.
        let old = codec::encode(&OldRec {
            key: "sk-old".into(),
            n: 1,
        })
        .unwrap_or_else(|e| unreachable!("{e}"));
        let back: Rec = scoped(&k, || codec::decode(&old)).unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(back.key, "sk-old");
        // And a plain keyring writes exactly the old layout.
        let plain = scoped(&Keyring::plaintext(), || {
            codec::encode(&Rec {
                key: "sk-old".into(),
                n: 1,
            })
        })
        .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(plain, old);
    }
}
