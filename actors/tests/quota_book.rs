//! QuotaBook + LogWriter against a real database: money is conserved under concurrency,
//! storage agrees with memory after a flush, and a dropped reservation is released.

use tollgate_actors::log_writer::LogWriter;
use tollgate_actors::quota::{QuotaBook, QuotaError, Refusal};
use tollgate_storage::logs::{self, LOG_CONSUME, LogEntry};
use tollgate_storage::tokens::{self, Token};
use tollgate_storage::usage::BalanceChange;
use tollgate_storage::users::{self, NewUser};
use tollgate_storage::{Quota, StorageError, Store, TokenId, UserId};

#[expect(
    clippy::expect_used,
    reason = "test helper: a failed seed fails the test"
)]
fn seed(store: &Store, users_n: i64, quota: i64) -> Vec<(UserId, TokenId)> {
    store
        .write_blocking(|wtx| {
            let mut out = Vec::new();
            for i in 0..users_n {
                let user = users::insert(
                    wtx,
                    NewUser {
                        username: format!("u{i}"),
                        display_name: String::new(),
                        password_hash: String::new(),
                        email: String::new(),
                        role: 1,
                        group: "default".into(),
                        quota: Quota(quota),
                        aff_code: String::new(),
                        inviter_id: 0,
                        created_at: 0,
                    },
                )?;
                let token = tokens::insert(
                    wtx,
                    Token {
                        id: TokenId(0),
                        user_id: user.id,
                        name: "t".into(),
                        key: format!("key{i:045}"),
                        status: 1,
                        created_time: 0,
                        accessed_time: 0,
                        expired_time: -1,
                        remain_quota: Quota(quota / 2),
                        unlimited_quota: false,
                        used_quota: Quota(0),
                        model_limits_enabled: false,
                        model_limits: String::new(),
                        allow_ips: String::new(),
                        group: String::new(),
                    },
                )?;
                out.push((user.id, token.id));
            }
            Ok::<_, StorageError>(out)
        })
        .expect("seed")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_settlements_conserve_money() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_dir(dir.path()).expect("open");
    let (writer, thread) = LogWriter::spawn(store.clone()).expect("writer");
    let book = QuotaBook::new(store.clone(), writer);
    let accounts = seed(&store, 10, 10_000);

    let mut tasks = Vec::new();
    for i in 0..1_000_i64 {
        let (user, token) = accounts[(i % 10) as usize];
        let book = book.clone();
        tasks.push(tokio::spawn(async move {
            let cost = 1 + (i * 37) % 23;
            match book.reserve(user, Some(token), 25).await {
                Ok(hold) if i % 7 == 0 => {
                    hold.release();
                    None
                }
                Ok(hold) => {
                    let log = LogEntry {
                        user_id: user,
                        token_id: token.0,
                        log_type: LOG_CONSUME,
                        ..LogEntry::default()
                    };
                    Some(hold.settle(cost, |_| Some(log), 1).charged)
                }
                Err(QuotaError::Refused(
                    Refusal::TokenQuota { .. } | Refusal::UserQuota { .. },
                )) => None,
                Err(e) => panic!("unexpected: {e}"),
            }
        }));
    }
    let mut charged = 0;
    let mut settled = 0;
    for t in tasks {
        if let Some(c) = t.await.expect("task") {
            charged += c;
            settled += 1;
        }
    }
    book.flush().await.expect("flush");

    let (balances, token_remains, logged) = store
        .read_blocking(|rtx| {
            let mut b = 0;
            let mut r = 0;
            for (user, token) in &accounts {
                b += users::get(rtx, *user)?.expect("user").quota.0;
                r += tokens::get(rtx, *token)?.expect("token").remain_quota.0;
            }
            let logged: i64 = logs::all(rtx)?.iter().map(|l| l.quota).sum();
            Ok::<_, StorageError>((b, r, logged))
        })
        .expect("read");
    assert_eq!(
        balances + logged,
        10 * 10_000,
        "sum(balances) + sum(logged quota) == initial"
    );
    assert_eq!(logged, charged, "every charge has its log");
    assert_eq!(
        token_remains + logged,
        10 * 5_000,
        "token balances agree with their logs"
    );
    let mut used = 0;
    let mut requests = 0;
    for (user, _) in &accounts {
        let stored = store
            .read_blocking(|rtx| users::get(rtx, *user))
            .expect("read")
            .expect("user");
        used += stored.used_quota.0;
        requests += stored.request_count;
        assert_eq!(
            book.balance(*user),
            Some(stored.quota.0),
            "memory and storage agree"
        );
        assert!(stored.quota.0 >= 0, "no negative balance");
    }
    assert_eq!(used, charged, "used quota is what was charged");
    assert_eq!(requests, settled, "one request counted per settlement");
    drop(book);
    thread
        .join()
        .expect("writer thread ends when the last handle is dropped");
}

#[tokio::test]
async fn a_dropped_hold_is_released_and_adjust_is_persisted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_dir(dir.path()).expect("open");
    let (writer, _thread) = LogWriter::spawn(store.clone()).expect("writer");
    let book = QuotaBook::new(store.clone(), writer);
    let (user, token) = seed(&store, 1, 100)[0];
    {
        let _hold = book.reserve(user, Some(token), 50).await.expect("fits");
        assert!(
            book.reserve(user, Some(token), 1).await.is_err(),
            "the token's 50 are held"
        );
    }
    book.reserve(user, Some(token), 50)
        .await
        .expect("released on drop")
        .release();
    book.adjust(user, 900, None, 1).await.expect("adjust");
    book.flush().await.expect("flush");
    let stored = store
        .read_blocking(|rtx| users::get(rtx, user))
        .expect("read")
        .expect("user");
    assert_eq!(stored.quota.0, 1_000);
    assert_eq!(stored.used_quota.0, 0, "a top-up is not usage");
}

#[tokio::test]
async fn a_batch_with_a_vanished_user_still_applies_the_others() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_dir(dir.path()).expect("open");
    let (writer, _thread) = LogWriter::spawn(store.clone()).expect("writer");
    let (user, token) = seed(&store, 1, 1_000)[0];
    let change = |user_id, charged, at| BalanceChange {
        user_id,
        token_id: Some(token),
        charged,
        is_request: true,
        at,
    };
    // Queued back to back: the writer usually takes them as one batch; either way the
    // vanished user's change must not stop the others.
    writer.record(Some(change(user, 10, 5)), None);
    writer.record(Some(change(UserId(999), 7, 6)), None);
    writer.record(Some(change(user, 20, 7)), None);
    writer.flush().await.expect("flush");
    let (stored, tok) = store
        .read_blocking(|rtx| {
            Ok::<_, StorageError>((users::get(rtx, user)?, tokens::get(rtx, token)?))
        })
        .expect("read");
    let (stored, tok) = (stored.expect("user"), tok.expect("token"));
    assert_eq!(stored.quota.0, 970);
    assert_eq!(stored.used_quota.0, 30);
    assert_eq!(stored.request_count, 2);
    assert_eq!(tok.remain_quota.0, 470);
    assert_eq!(tok.used_quota.0, 30);
    assert_eq!(tok.accessed_time, 7, "the last change's time");
}
