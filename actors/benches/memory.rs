//! Memory at 1 M API keys and 100 k active users (P17 item 3; budget 512 MB resident): the
//! process's resident set (VmRSS, and its peak VmHWM, from /proc/self/status) after each step of
//! what a server holds per key and per user —
//!
//! 1. the key index loaded: every stored key's digest, no entry;
//! 2. one key of each of 100 k users authenticated: their entries read back and kept;
//! 3. those users' ledgers loaded (balance and the key's remaining quota);
//! 4. two sweep periods with nothing used: entries and ledgers dropped;
//! 5. for comparison, every one of the 1 M entries loaded (what the index held before idle
//!    eviction).
//!
//! The database (100 k users, 1 M keys) is written first by a child process (this binary run
//! again), so its writes do not count in the figures. The system allocator is used (the server
//! runs mimalloc, which keeps a few MB more). Run:
//! `cargo bench -p tollgate-actors --bench memory` (`MEMORY_BENCH_KEYS`, `MEMORY_BENCH_USERS`
//! change the sizes).

#![expect(
    clippy::expect_used,
    clippy::print_stdout,
    reason = "bench: a failure aborts it; it prints its figures"
)]

use std::path::Path;
use std::time::{Duration, Instant};

use tollgate_actors::log_writer::LogWriter;
use tollgate_actors::quota::QuotaBook;
use tollgate_actors::token_index::TokenIndex;
use tollgate_storage::tokens::{self, Token};
use tollgate_storage::users::{self, NewUser};
use tollgate_storage::{Quota, StorageError, Store, TokenId, UserId};

/// Set in the child that writes the database (its directory).
const SEED_ENV: &str = "TOLLGATE_MEMORY_BENCH_SEED";

fn size(name: &str, default: i64) -> i64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The key of token `i` (48 characters, as generated keys are).
fn key(i: i64) -> String {
    format!("bench{i:043}")
}

/// (VmRSS, VmHWM) in MB.
fn rss() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| -> f64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn report(step: &str, started: Instant) {
    let (now, peak) = rss();
    println!(
        "{step:<58} RSS {now:>7.1} MB  peak {peak:>7.1} MB  ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
}

/// Writes `users` users, each with `keys / users` keys, in transactions of 10,000 keys.
fn seed(dir: &Path, users_n: i64, keys: i64) {
    let store = Store::open_dir(dir).expect("store");
    let per_user = (keys / users_n).max(1);
    let mut next = 0;
    while next < users_n {
        let end = (next + 10_000 / per_user).min(users_n);
        store
            .write_blocking(|wtx| {
                for u in next..end {
                    let user = users::insert(
                        wtx,
                        NewUser {
                            username: format!("u{u}"),
                            display_name: String::new(),
                            password_hash: String::new(),
                            email: String::new(),
                            role: 1,
                            group: "default".into(),
                            quota: Quota(1_000_000),
                            aff_code: format!("a{u}"),
                            inviter_id: 0,
                            created_at: 0,
                        },
                    )?;
                    for k in 0..per_user {
                        tokens::insert(
                            wtx,
                            Token {
                                id: TokenId(0),
                                user_id: user.id,
                                name: format!("key {k}"),
                                key: key(u * per_user + k),
                                status: 1,
                                created_time: 0,
                                accessed_time: 0,
                                expired_time: -1,
                                remain_quota: Quota(500_000),
                                unlimited_quota: false,
                                used_quota: Quota(0),
                                model_limits_enabled: false,
                                model_limits: String::new(),
                                allow_ips: String::new(),
                                group: String::new(),
                            },
                        )?;
                    }
                }
                Ok::<_, StorageError>(())
            })
            .expect("seed");
        next = end;
    }
}

fn main() {
    let users_n = size("MEMORY_BENCH_USERS", 100_000);
    let keys = size("MEMORY_BENCH_KEYS", 1_000_000);
    if let Ok(dir) = std::env::var(SEED_ENV) {
        seed(Path::new(&dir), users_n, keys);
        return;
    }
    let started = Instant::now();
    let dir = tempfile::tempdir().expect("tempdir");
    println!("memory at {keys} API keys and {users_n} active users (budget 512 MB resident)");
    let status = std::process::Command::new(std::env::current_exe().expect("exe"))
        .env(SEED_ENV, dir.path())
        .status()
        .expect("seed process");
    assert!(status.success(), "seeding failed");
    report("0. database written (by a child), nothing loaded", started);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let store = Store::open_dir(dir.path()).expect("store");
    report("   database opened", started);
    let index = TokenIndex::load(&store).expect("index");
    assert_eq!(index.digests(), usize::try_from(keys).unwrap_or(0));
    report(
        &format!("1. key index: {} digests, 0 entries", index.digests()),
        started,
    );

    let per_user = (keys / users_n).max(1);
    runtime.block_on(async {
        for u in 0..users_n {
            index
                .lookup(&key(u * per_user))
                .await
                .expect("read")
                .expect("a stored key");
        }
    });
    report(
        &format!("2. + {} active keys' entries read back", index.len()),
        started,
    );

    let (writer, _thread) = LogWriter::spawn(store.clone()).expect("writer");
    let book = QuotaBook::new(store.clone(), writer);
    runtime.block_on(async {
        for u in 0..users_n {
            // Token ids follow insertion: user u's first key is token u * per_user + 1.
            book.token_remain(UserId(u + 1), TokenId(u * per_user + 1))
                .await
                .expect("ledger");
        }
    });
    report(
        &format!("3. + {} active users' ledgers", book.ledgers_loaded()),
        started,
    );
    let (_, peak) = rss();
    println!(
        "   => peak {peak:.1} MB at {keys} keys and {users_n} active users: {} the 512 MB budget",
        if peak <= 512.0 { "within" } else { "OVER" }
    );

    index.sweep();
    index.sweep();
    let dropped = runtime.block_on(book.evict_idle(Duration::ZERO));
    report(
        &format!(
            "4. idle sweep: {} entries and {} ledgers left ({dropped} dropped)",
            index.len(),
            book.ledgers_loaded()
        ),
        started,
    );

    runtime.block_on(async {
        for i in 0..keys {
            index.lookup(&key(i)).await.expect("read");
        }
    });
    report(
        &format!(
            "5. for comparison: all {} entries loaded (no eviction)",
            index.len()
        ),
        started,
    );
}
