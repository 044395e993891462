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
//!
//! The queue is bounded (`--password-hash-queue`, [`DEFAULT_QUEUE`]): when it is full a sign-in
//! is refused at once (429) instead of waiting behind a flood from many addresses, which the
//! per-IP limit does not stop. A queued hash whose client has left (its request dropped, and
//! with it the answer's receiver) is skipped, not computed for nobody.

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

/// Hashes that may wait for the hashing thread by default (a few seconds of work).
pub const DEFAULT_QUEUE: usize = 64;

/// Work for the hashing thread.
type Job = Box<dyn FnOnce() + Send>;

/// Handle on the hashing thread. Cheap to clone; the thread ends when every handle is dropped.
#[derive(Clone)]
pub struct Hasher {
    /// The bounded queue of the hashing thread.
    jobs: mpsc::SyncSender<Job>,
}

impl Hasher {
    /// Starts the hashing thread with a queue of [`DEFAULT_QUEUE`].
    pub fn spawn() -> std::io::Result<Hasher> {
        Hasher::with_queue(DEFAULT_QUEUE)
    }

    /// Starts the hashing thread; at most `queue` hashes wait for it (at least 1).
    pub fn with_queue(queue: usize) -> std::io::Result<Hasher> {
        let (jobs, queue) = mpsc::sync_channel::<Job>(queue.max(1));
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
        self.submit(work)?
            .await
            .map_err(|_| ConsoleError::Internal("password hashing failed without an answer".into()))
    }

    /// Queues `work` for the hashing thread, or refuses at once when the queue is full; the
    /// answer comes on the receiver. Dropping the receiver (the caller left) skips the work.
    fn submit<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<tokio::sync::oneshot::Receiver<T>, ConsoleError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            // The caller left (its request was dropped): nobody waits for this hash.
            if tx.is_closed() {
                return;
            }
            let _ = tx.send(work());
        });
        self.jobs.try_send(job).map_err(|e| match e {
            mpsc::TrySendError::Full(_) => ConsoleError::TooManyRequests,
            mpsc::TrySendError::Disconnected(_) => {
                ConsoleError::Internal("the password hashing thread has stopped".into())
            }
        })?;
        Ok(rx)
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
    async fn a_full_queue_refuses_at_once_and_a_left_callers_hash_is_skipped() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};

        let hasher = Hasher::with_queue(2).expect("hashing thread");
        // The thread is busy until `release` is sent.
        let (started_tx, started) = mpsc::channel::<()>();
        let (release, wait) = mpsc::channel::<()>();
        let busy = hasher
            .submit(move || {
                let _ = started_tx.send(());
                let _ = wait.recv();
            })
            .expect("queued");
        started.recv().expect("the first job started");

        let ran = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&ran);
        let left = hasher
            .submit(move || flag.store(true, Ordering::SeqCst))
            .expect("queued");
        let waiting = hasher.submit(|| 7).expect("queued");
        assert!(
            matches!(hasher.submit(|| 0), Err(ConsoleError::TooManyRequests)),
            "a full queue refuses at once"
        );

        drop(left);
        let _ = release.send(());
        assert!(busy.await.is_ok());
        assert_eq!(waiting.await.ok(), Some(7));
        assert!(
            !ran.load(Ordering::SeqCst),
            "the hash of a caller who left was skipped"
        );
        assert_eq!(hasher.run(|| 1).await.ok(), Some(1), "room again");
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
