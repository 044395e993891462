//! Password hashing with argon2id (default parameters: 19 MiB, 2 passes), on the blocking pool
//! because one hash takes tens of milliseconds.

use argon2::Argon2;
use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};

use crate::error::ConsoleError;

/// A valid argon2id hash of a random password, verified against when the user does not exist
/// so that "no such user" and "wrong password" take the same time.
const DECOY_HASH: &str =
    "$argon2id$v=19$m=19456,t=2,p=1$Zm9vYmFyYmF6cXV4$9mdC8sBqTtKH3Jg/2Bf0nUddoxHSsFkRPGcNoRf1t4Q";

/// Hashes `password` into a PHC string.
pub async fn hash(password: String) -> Result<String, ConsoleError> {
    tokio::task::spawn_blocking(move || {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| ConsoleError::Internal(format!("hashing a password: {e}")))
    })
    .await
    .map_err(|e| ConsoleError::Internal(format!("hashing task: {e}")))?
}

/// Checks `password` against `hash` (or against a decoy when `hash` is `None`); false on any
/// mismatch or malformed hash.
pub async fn verify(password: String, hash: Option<String>) -> Result<bool, ConsoleError> {
    let exists = hash.is_some();
    let hash = hash.unwrap_or_else(|| DECOY_HASH.to_owned());
    let matches = tokio::task::spawn_blocking(move || {
        PasswordHash::new(&hash)
            .map(|parsed| {
                Argon2::default()
                    .verify_password(password.as_bytes(), &parsed)
                    .is_ok()
            })
            .unwrap_or(false)
    })
    .await
    .map_err(|e| ConsoleError::Internal(format!("verifying task: {e}")))?;
    Ok(exists && matches)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn hash_then_verify() {
        let hash = hash("correct horse".into()).await.expect("hash");
        assert!(hash.starts_with("$argon2id$"));
        assert!(
            verify("correct horse".into(), Some(hash.clone()))
                .await
                .expect("verify")
        );
        assert!(!verify("wrong".into(), Some(hash)).await.expect("verify"));
        assert!(
            !verify("anything".into(), None)
                .await
                .expect("decoy never matches")
        );
        assert!(
            !verify("x".into(), Some("not a hash".into()))
                .await
                .expect("malformed")
        );
    }

    #[test]
    fn decoy_hash_parses() {
        assert!(PasswordHash::new(DECOY_HASH).is_ok());
    }
}
