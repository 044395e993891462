//! Random secrets (codes, tokens, passwords) from the thread-local CSPRNG, and the SHA-256
//! digest used to store them.

use rand::Rng;
use rand::distr::Alphanumeric;
use sha2::{Digest, Sha256};

/// `len` random characters from `[0-9A-Za-z]`.
pub fn random_alnum(len: usize) -> String {
    rand::rng()
        .sample_iter(&Alphanumeric)
        .take(len)
        .map(char::from)
        .collect()
}

/// Lower-case hex SHA-256 of `text`. Used for high-entropy secrets (access tokens, reset
/// tokens), where a fast hash is enough; passwords use argon2id.
pub fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_strings_have_the_length_and_alphabet() {
        let s = random_alnum(48);
        assert_eq!(s.len(), 48);
        assert!(s.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(random_alnum(48), s, "two draws differ");
    }

    #[test]
    fn sha256_matches_a_known_vector() {
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
