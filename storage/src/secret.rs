//! `Secret`: a string that never shows itself in `Debug`, `Display` or `Serialize` output.
//!
//! Channel keys live in a `Secret`. Printing or JSON-encoding a struct that holds one yields
//! `*****`. The only ways to the text are [`Secret::expose`] (for the one place that sends it
//! upstream or reveals it to root) and the [`stored`] serde adaptor, which the storage records
//! opt into field by field so that postcard keeps the value on disk, sealed when the operator
//! configured a secret key ([`crate::sealing`]).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What a secret prints as.
pub const REDACTED: &str = "*****";

/// A secret string (a channel key, a password being checked, …).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps `value`.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The secret text. Call it only where the value must leave the process or be compared.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// True when the secret is the empty string.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(REDACTED)
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Secret)
    }
}

/// Serde adaptor that writes the real text, sealed under the transaction's keyring:
/// `#[serde(with = "crate::secret::stored")]`. Only storage records use it.
pub mod stored {
    use serde::{Deserializer, Serializer};

    use super::Secret;

    /// Serialises the exposed text, sealed.
    pub fn serialize<S: Serializer>(secret: &Secret, serializer: S) -> Result<S::Ok, S::Error> {
        crate::sealing::serialize_sealed(secret.expose(), serializer)
    }

    /// Deserialises a sealed or plain string.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Secret, D::Error> {
        crate::sealing::deserialize_sealed(deserializer).map(Secret::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Serialize, Deserialize, PartialEq)]
    struct Rec {
        #[serde(with = "stored")]
        key: Secret,
    }

    #[test]
    fn debug_display_and_serialize_are_redacted() {
        let s = Secret::new("sk-live-123");
        assert_eq!(format!("{s:?}"), REDACTED);
        assert_eq!(s.to_string(), REDACTED);
        let json = postcard::to_stdvec(&s).expect("encode");
        assert!(!String::from_utf8_lossy(&json).contains("sk-live"));
        assert_eq!(s.expose(), "sk-live-123");
    }

    #[test]
    fn stored_adaptor_keeps_the_value_and_debug_still_hides_it() {
        let rec = Rec {
            key: Secret::new("sk-abc"),
        };
        let plain = crate::sealing::Keyring::plaintext();
        let bytes = crate::sealing::scoped(&plain, || postcard::to_stdvec(&rec)).expect("encode");
        let back: Rec =
            crate::sealing::scoped(&plain, || postcard::from_bytes(&bytes)).expect("decode");
        assert_eq!(back, rec);
        assert!(!format!("{back:?}").contains("sk-abc"));
    }
}
