//! Password hashing with argon2id (default parameters: 19 MiB, 2 passes) on one dedicated
//! thread, [`Hasher`], that owns the algorithm's 19 MiB of working memory and reuses it for
//! every hash. One hash takes tens of milliseconds, so it never runs on the async workers; and
//! not on the blocking pool, because each hash there allocated and freed its own 19 MiB and the
//! allocator kept freed pages per thread: a first-run setup and three sign-ins left Tollgate at
//! 64 MB instead of 43, and a flood of sign-ins could claim 19 MiB per pool thread. Sign-ins
//! queue behind each other here (a few dozen a second on one core), which the per-IP limit of
//! these routes keeps short.

use std::sync::mpsc;

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{Output, ParamsString, PasswordHash, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, Version};

use crate::error::ConsoleError;

/// A valid argon2id hash of a random password, verified against when the user does not exist
/// so that "no such user" and "wrong password" take the same time.
const DECOY_HASH: &str =
    "$argon2id$v=19$m=19456,t=2,p=1$Zm9vYmFyYmF6cXV4$9mdC8sBqTtKH3Jg/2Bf0nUddoxHSsFkRPGcNoRf1t4Q";

/// Work for the hashing thread, given its working memory.
type Job = Box<dyn FnOnce(&mut Memory) + Send>;

/// The hashing thread's working memory: kept at the default parameters' size once used; a
/// stored hash with a larger memory cost gets a buffer of its own for that one hash.
#[derive(Default)]
struct Memory {
    blocks: Vec<Block>,
}

impl Memory {
    /// Runs argon2 `with` its parameters on `password` and `salt`, into `out`.
    fn hash_into(
        &mut self,
        with: &Argon2<'_>,
        password: &[u8],
        salt: &[u8],
        out: &mut [u8],
    ) -> argon2::Result<()> {
        let needed = with.params().block_count();
        if needed > Params::DEFAULT.block_count() {
            let mut own = vec![Block::default(); needed];
            return with.hash_password_into_with_memory(password, salt, out, &mut own[..]);
        }
        if self.blocks.len() < needed {
            self.blocks.resize(needed, Block::default());
        }
        let blocks = self.blocks.get_mut(..needed).unwrap_or_default();
        with.hash_password_into_with_memory(password, salt, out, blocks)
    }

    /// Hashes `password` with a new salt and the default parameters into a PHC string.
    fn hash(&mut self, password: &[u8]) -> Result<String, argon2::password_hash::Error> {
        let argon = Argon2::default();
        let salt = SaltString::generate(&mut OsRng);
        let mut salt_bytes = [0u8; 64];
        let salt_bytes = salt.as_salt().decode_b64(&mut salt_bytes)?;
        let output = Output::init_with(Params::DEFAULT_OUTPUT_LEN, |out| {
            Ok(self.hash_into(&argon, password, salt_bytes, out)?)
        })?;
        let phc = PasswordHash {
            algorithm: Algorithm::Argon2id.ident(),
            version: Some(Version::V0x13.into()),
            params: ParamsString::try_from(argon.params())?,
            salt: Some(salt.as_salt()),
            hash: Some(output),
        };
        Ok(phc.to_string())
    }

    /// Whether `password` matches the PHC string `phc` (compared in constant time).
    fn verify(&mut self, password: &[u8], phc: &str) -> Result<bool, argon2::password_hash::Error> {
        use argon2::password_hash::Error;
        let parsed = PasswordHash::new(phc)?;
        let (Some(expected), Some(salt)) = (parsed.hash, parsed.salt) else {
            return Err(Error::PhcStringField);
        };
        let algorithm = Algorithm::try_from(parsed.algorithm)?;
        let version = parsed
            .version
            .map(Version::try_from)
            .transpose()?
            .unwrap_or_default();
        let argon = Argon2::new(algorithm, version, Params::try_from(&parsed)?);
        let mut salt_bytes = [0u8; 64];
        let salt_bytes = salt.decode_b64(&mut salt_bytes)?;
        let computed = Output::init_with(expected.len(), |out| {
            Ok(self.hash_into(&argon, password, salt_bytes, out)?)
        })?;
        Ok(computed == expected)
    }
}

/// Handle on the hashing thread. Cheap to clone; the thread ends when every handle is dropped.
#[derive(Clone)]
pub struct Hasher {
    jobs: mpsc::Sender<Job>,
}

impl Hasher {
    /// Starts the hashing thread.
    pub fn spawn() -> std::io::Result<Hasher> {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("tollgate-argon2".into())
            .spawn(move || {
                let mut memory = Memory::default();
                for job in queue {
                    job(&mut memory);
                }
            })?;
        Ok(Hasher { jobs })
    }

    /// Runs `work` on the hashing thread and waits for its answer without blocking the worker.
    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Memory) -> T + Send + 'static,
    ) -> Result<T, ConsoleError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |memory| {
            let _ = tx.send(work(memory));
        });
        self.jobs.send(job).map_err(|_| {
            ConsoleError::Internal("the password hashing thread has stopped".into())
        })?;
        rx.await
            .map_err(|_| ConsoleError::Internal("password hashing failed without an answer".into()))
    }

    /// Hashes `password` into a PHC string.
    pub async fn hash(&self, password: String) -> Result<String, ConsoleError> {
        self.run(move |memory| {
            memory
                .hash(password.as_bytes())
                .map_err(|e| ConsoleError::Internal(format!("hashing a password: {e}")))
        })
        .await?
    }

    /// Checks `password` against `hash` (or against a decoy when `hash` is `None`); false on
    /// any mismatch or malformed hash.
    pub async fn verify(
        &self,
        password: String,
        hash: Option<String>,
    ) -> Result<bool, ConsoleError> {
        let exists = hash.is_some();
        let hash = hash.unwrap_or_else(|| DECOY_HASH.to_owned());
        let matches = self
            .run(move |memory| memory.verify(password.as_bytes(), &hash).unwrap_or(false))
            .await?;
        Ok(exists && matches)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn hash_then_verify() {
        let hasher = Hasher::spawn().expect("hashing thread");
        let hash = hasher.hash("correct horse".into()).await.expect("hash");
        assert!(hash.starts_with("$argon2id$"));
        assert!(
            hasher
                .verify("correct horse".into(), Some(hash.clone()))
                .await
                .expect("verify")
        );
        assert!(
            !hasher
                .verify("wrong".into(), Some(hash))
                .await
                .expect("verify")
        );
        assert!(
            !hasher
                .verify("anything".into(), None)
                .await
                .expect("decoy never matches")
        );
        assert!(
            !hasher
                .verify("x".into(), Some("not a hash".into()))
                .await
                .expect("malformed")
        );
    }

    #[tokio::test]
    async fn every_hash_runs_on_the_one_hashing_thread() {
        let hasher = Hasher::spawn().expect("hashing thread");
        let name = || std::thread::current().name().map(str::to_owned);
        let other = hasher.clone();
        let (first, second) = tokio::join!(
            hasher.run(move |_| (std::thread::current().id(), name())),
            other.run(|_| std::thread::current().id()),
        );
        let (first, thread_name) = first.expect("first job");
        assert_eq!(Some(first), second.ok(), "both jobs ran on the same thread");
        assert_eq!(thread_name.as_deref(), Some("tollgate-argon2"));
    }

    /// Hashes stored before the hashing thread (argon2's own `hash_password`) still verify,
    /// and the thread's hashes verify with argon2's own `verify_password`.
    #[tokio::test]
    async fn hashes_match_argon2s_own() {
        use argon2::password_hash::{PasswordHasher, PasswordVerifier};
        let hasher = Hasher::spawn().expect("hashing thread");
        let salt = SaltString::generate(&mut OsRng);
        let stored = Argon2::default()
            .hash_password(b"old password", &salt)
            .expect("argon2 hash")
            .to_string();
        assert!(
            hasher
                .verify("old password".into(), Some(stored.clone()))
                .await
                .expect("verify")
        );
        assert!(
            !hasher
                .verify("old passw0rd".into(), Some(stored))
                .await
                .expect("verify")
        );
        let ours = hasher.hash("new password".into()).await.expect("hash");
        let parsed = PasswordHash::new(&ours).expect("PHC string");
        assert!(
            Argon2::default()
                .verify_password(b"new password", &parsed)
                .is_ok()
        );
        assert!(
            Argon2::default()
                .verify_password(b"new passw0rd", &parsed)
                .is_err()
        );
        assert!(ours.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
    }

    /// A stored hash with other parameters (smaller or larger memory cost) verifies too.
    #[tokio::test]
    async fn other_parameters_verify() {
        use argon2::password_hash::PasswordHasher;
        let hasher = Hasher::spawn().expect("hashing thread");
        for m_cost in [8 * 1024, 32 * 1024] {
            let params = Params::new(m_cost, 1, 1, None).expect("params");
            let argon = Argon2::new(Algorithm::Argon2id, Version::V0x13, params);
            let salt = SaltString::generate(&mut OsRng);
            let stored = argon.hash_password(b"pw", &salt).expect("hash").to_string();
            assert!(
                hasher
                    .verify("pw".into(), Some(stored.clone()))
                    .await
                    .expect("verify")
            );
            assert!(
                !hasher
                    .verify("px".into(), Some(stored))
                    .await
                    .expect("verify")
            );
        }
    }

    #[test]
    fn decoy_hash_parses() {
        assert!(PasswordHash::new(DECOY_HASH).is_ok());
    }
}
