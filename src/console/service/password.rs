//! Password hashing with argon2id on one dedicated thread, [`Hasher`]. The parameters are
//! OWASP's 9 MiB / 4 passes configuration ([`M_COST_KIB`], [`T_COST`]), which the OWASP
//! password storage cheat sheet lists as equivalent to argon2's default 19 MiB / 2 passes at
//! about the same CPU time, for half the memory a hash holds: Tollgate's resident memory
//! peaked at set-up and sign-ins, when the allocator kept a freed 19 MiB hash buffer resident
//! for seconds. Hashes stored with other parameters verify with their own.
//!
//! One hash takes tens of milliseconds, so it never runs on the async workers; and one at a
//! time, not on the blocking pool, where every concurrent hash claimed its own memory: a flood
//! of sign-ins could take 9 MiB (19 MiB before) per pool thread (up to 512). Sign-ins
//! queue behind each other here (a few dozen a second on one core), which the per-IP limit of
//! these routes keeps short. Each hash frees its memory when done, so the rest of Tollgate can
//! reuse it (a buffer kept for the next hash instead cost 14 MB of peak RSS under load).
//!
//! bcrypt hashes (users imported from new-api) verify here too ([`is_bcrypt`]).

use std::sync::mpsc;

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};

use crate::error::ConsoleError;

/// Memory per hash, in KiB (OWASP: m=9216, t=4, p=1).
pub const M_COST_KIB: u32 = 9216;
/// Passes over that memory.
pub const T_COST: u32 = 4;

/// A valid argon2id hash of a random password with Tollgate's parameters, verified against
/// when the user does not exist so that "no such user" and "wrong password" take the same time.
const DECOY_HASH: &str = concat!(
    "$argon2id$v=19$m=9216,t=4,p=1$9pIwJ2vKg4H2Wd7vdh/43w$",
    "5ih9OhotwngNMJwp1GZQ5SAv33XMTzQjSVatJbU0cb4"
);

/// argon2id with Tollgate's parameters.
fn argon2() -> Argon2<'static> {
    match Params::new(M_COST_KIB, T_COST, 1, None) {
        Ok(params) => Argon2::new(Algorithm::Argon2id, Version::V0x13, params),
        // Unreachable with the constants above (argon2's own bounds); the default is safe.
        Err(_) => Argon2::default(),
    }
}

/// Whether `hash` is a bcrypt hash (`$2a$`, `$2b$`, `$2y$`): what an imported new-api or
/// one-api user brings (`tollgate import`). It verifies at sign-in on the hashing thread like
/// argon2, and the sign-in then replaces it with an argon2id hash of the same password.
pub fn is_bcrypt(hash: &str) -> bool {
    ["$2a$", "$2b$", "$2y$"].iter().any(|p| hash.starts_with(p))
}

/// Work for the hashing thread.
type Job = Box<dyn FnOnce() + Send>;

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
                for job in queue {
                    // A job that panics answers nobody (its caller gets an error) but does
                    // not take the thread, and every later sign-in, with it.
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                }
            })?;
        Ok(Hasher { jobs })
    }

    /// Runs `work` on the hashing thread and waits for its answer without blocking the worker.
    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ConsoleError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = tx.send(work());
        });
        self.jobs.send(job).map_err(|_| {
            ConsoleError::Internal("the password hashing thread has stopped".into())
        })?;
        rx.await
            .map_err(|_| ConsoleError::Internal("password hashing failed without an answer".into()))
    }

    /// Hashes `password` into a PHC string.
    pub async fn hash(&self, password: String) -> Result<String, ConsoleError> {
        self.run(move || {
            let salt = SaltString::generate(&mut OsRng);
            argon2()
                .hash_password(password.as_bytes(), &salt)
                .map(|h| h.to_string())
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
        // An account made through a provider has no password (""): it costs the same decoy
        // work as an unknown user, so timing does not tell such accounts apart.
        let hash = hash.filter(|h| !h.is_empty());
        let exists = hash.is_some();
        let hash = hash.unwrap_or_else(|| DECOY_HASH.to_owned());
        let matches = self
            .run(move || {
                if is_bcrypt(&hash) {
                    return bcrypt::verify(password.as_bytes(), &hash).unwrap_or(false);
                }
                PasswordHash::new(&hash)
                    .map(|parsed| {
                        // The hash's own parameters are used, whatever they are.
                        argon2()
                            .verify_password(password.as_bytes(), &parsed)
                            .is_ok()
                    })
                    .unwrap_or(false)
            })
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
            hasher.run(move || (std::thread::current().id(), name())),
            other.run(|| std::thread::current().id()),
        );
        let (first, thread_name) = first.expect("first job");
        assert_eq!(Some(first), second.ok(), "both jobs ran on the same thread");
        assert_eq!(thread_name.as_deref(), Some("tollgate-argon2"));
    }

    /// Hashes stored before the hashing thread (argon2's own `hash_password`) still verify,
    /// and the thread's hashes verify with argon2's own `verify_password`.
    #[tokio::test]
    async fn hashes_match_argon2s_own() {
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
        assert!(ours.starts_with("$argon2id$v=19$m=9216,t=4,p=1$"));
    }

    /// The decoy has the same parameters as every new hash: verifying it costs what verifying
    /// a real user's password does.
    #[test]
    fn the_decoy_costs_what_a_real_hash_costs() {
        let ours = argon2()
            .hash_password(b"x", &SaltString::generate(&mut OsRng))
            .expect("hash")
            .to_string();
        let ours = PasswordHash::new(&ours).expect("ours parses");
        let decoy = PasswordHash::new(DECOY_HASH).expect("decoy parses");
        assert_eq!(decoy.params, ours.params);
        assert_eq!(decoy.algorithm, ours.algorithm);
    }

    /// A stored hash with other parameters (smaller or larger memory cost) verifies too.
    #[tokio::test]
    async fn other_parameters_verify() {
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

    #[tokio::test]
    async fn a_panicking_job_does_not_stop_the_thread() {
        let hasher = Hasher::spawn().expect("hashing thread");
        let failed = hasher.run(|| -> u8 { panic!("a job failed") }).await;
        assert!(failed.is_err(), "the caller gets an error");
        assert!(hasher.hash("still works".into()).await.is_ok());
    }

    #[test]
    fn decoy_hash_parses() {
        assert!(PasswordHash::new(DECOY_HASH).is_ok());
    }
}
