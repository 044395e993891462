//! The log writer's tests: an idle committer that dies, durable commits under load and on a
//! flush.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use tollgate_storage::users::{self, NewUser};
use tollgate_storage::{Quota, StorageError, UserId, logs};

use super::commit::Failure;
use super::*;

/// Whether the injected committer has died once.
static DIED: AtomicBool = AtomicBool::new(false);

/// The first idle commit dies (its thread ends); later ones commit.
fn dies_once(
    store: &Store,
    batch: &mut Batch,
    shape: Shape,
    stats: Option<&WriterStats>,
) -> Result<Option<u64>, Failure> {
    if !DIED.swap(true, Ordering::SeqCst) {
        panic!("the idle committer dies");
    }
    commit(store, batch, shape, stats)
}

fn change(user: UserId, charged: i64) -> BalanceChange {
    BalanceChange {
        user_id: user,
        token_id: None,
        charged,
        is_request: true,
        at: 1,
    }
}

/// A user to charge, in `store`.
fn a_user(store: &Store) -> UserId {
    store
        .write_blocking(|wtx| {
            users::insert(
                wtx,
                NewUser {
                    username: "u".into(),
                    display_name: String::new(),
                    password_hash: String::new(),
                    email: String::new(),
                    role: 1,
                    group: "default".into(),
                    quota: Quota(1_000_000),
                    aff_code: String::new(),
                    inviter_id: 0,
                    created_at: 0,
                },
            )
        })
        .expect("user")
        .id
}

/// Bytes in the crash journal's files of `dir`.
fn journal_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .expect("dir")
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(journal::FILE_PREFIX)
        })
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

/// 400 settlements with log rows from `user`, over a few milliseconds.
fn burst(writer: &LogWriter, user: UserId) {
    for i in 0..400 {
        let log = LogEntry {
            user_id: user,
            created_at: 1_767_225_600,
            log_type: logs::LOG_CONSUME,
            quota: 1,
            ..LogEntry::default()
        };
        writer.record(Some(change(user, 1)), Some(log));
        if i % 40 == 0 {
            std::thread::sleep(Duration::from_millis(3));
        }
    }
}

#[test]
fn a_flush_makes_the_commits_not_durable_yet_durable() {
    let dir = tempfile::tempdir().expect("dir");
    let store = Store::open_dir(dir.path()).expect("open");
    let user = a_user(&store);
    // Durable commits at least every second: the burst's commit is not durable.
    let (writer, thread) =
        LogWriter::spawn_with(store.clone(), None, Duration::from_millis(200)).expect("writer");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    // A durable commit first (a flush), so the burst's commit comes within a second of it.
    writer.record(Some(change(user, 1)), None);
    runtime.block_on(writer.flush()).expect("flushed");
    burst(&writer, user);
    let deadline = Instant::now() + Duration::from_secs(10);
    while store.read_blocking(logs::count).expect("count") < 400 {
        assert!(Instant::now() < deadline, "the rows were not committed");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(
        journal_bytes(dir.path()) > 0,
        "committed, not durable yet (unless a second went by)"
    );
    runtime.block_on(writer.flush()).expect("flushed");
    assert_eq!(
        journal_bytes(dir.path()),
        0,
        "the journal is trimmed through a durable commit"
    );
    drop(writer);
    thread.join().expect("writer ends");
}

#[test]
fn settlements_under_load_end_in_a_durable_commit_without_a_flush() {
    let dir = tempfile::tempdir().expect("dir");
    let store = Store::open_dir(dir.path()).expect("open");
    let user = a_user(&store);
    let (writer, _thread) =
        LogWriter::spawn_with(store.clone(), None, Duration::from_millis(5)).expect("writer");
    // A burst over several gather intervals: commits between durable ones are not durable.
    burst(&writer, user);
    // No flush: once settlements stop, the writer makes its last commits durable (due
    // after 5 intervals) and trims the journal through them.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let rows = store.read_blocking(logs::count).expect("count");
        if rows == 400 && journal_bytes(dir.path()) == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{rows} rows, journal {} bytes",
            journal_bytes(dir.path())
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let through = store.read_blocking(meta::settled_through).expect("read");
    assert_eq!(through, 400);
    drop(writer);
}

#[test]
fn a_stopped_idle_committer_never_lets_settled_through_pass_its_batch() {
    let dir = tempfile::tempdir().expect("dir");
    let store = Store::open_dir(dir.path()).expect("open");
    let user = store
        .write_blocking(|wtx| {
            users::insert(
                wtx,
                NewUser {
                    username: "u".into(),
                    display_name: String::new(),
                    password_hash: String::new(),
                    email: String::new(),
                    role: 1,
                    group: "default".into(),
                    quota: Quota(1_000),
                    aff_code: String::new(),
                    inviter_id: 0,
                    created_at: 0,
                },
            )
        })
        .expect("user")
        .id;
    let (writer, thread) =
        LogWriter::spawn_inner(store.clone(), None, Duration::ZERO, dies_once).expect("writer");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    writer.record(Some(change(user, 10)), None);
    runtime.block_on(writer.flush()).expect("flushed");
    writer.record(Some(change(user, 20)), None);
    runtime.block_on(writer.flush()).expect("flushed");
    drop(writer);
    thread.join().expect("writer ends");
    if !DIED.load(Ordering::SeqCst) {
        // No idle scheduling here (not Linux, or refused): the writer commits itself.
        return;
    }
    let (quota, through) = store
        .read_blocking(|rtx| {
            let quota = users::get(rtx, user)?.map(|u| u.quota.0);
            Ok::<_, StorageError>((quota, meta::settled_through(rtx)?))
        })
        .expect("read");
    assert_eq!(
        quota,
        Some(970),
        "the batch of the dead committer is committed too"
    );
    assert_eq!(through, 2);
}
