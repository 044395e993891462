//! Store lifecycle: data survives reopen, a second opener gets a clear error, ids are sequential.

use tollgate_storage::users::{self, NewUser};
use tollgate_storage::{Quota, StorageError, Store, meta, options};

fn new_user(name: &str, email: &str) -> NewUser {
    NewUser {
        username: name.into(),
        display_name: String::new(),
        password_hash: "hash".into(),
        email: email.into(),
        role: users::ROLE_COMMON,
        group: "default".into(),
        quota: Quota(10),
        aff_code: String::new(),
        inviter_id: 0,
        created_at: 1,
    }
}

#[test]
fn reopen_after_close_keeps_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let store = Store::open_dir(dir.path()).expect("open");
        store
            .write_blocking(|wtx| {
                users::insert(wtx, new_user("alice", "a@example.com"))?;
                options::put(wtx, "SystemName", "Mine")
            })
            .expect("write");
    }
    let store = Store::open_dir(dir.path()).expect("reopen");
    let (alice, opts) = store
        .read_blocking(|rtx| {
            Ok::<_, StorageError>((
                users::find_by_username(rtx, "ALICE")?,
                options::load_all(rtx)?,
            ))
        })
        .expect("read");
    let alice = alice.expect("alice survives the reopen");
    assert_eq!(
        alice.display_name, "alice",
        "display name defaults to username"
    );
    assert_eq!(opts.get("SystemName").map(String::as_str), Some("Mine"));
}

#[test]
fn second_opener_gets_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let _first = Store::open_dir(dir.path()).expect("open");
    let err = Store::open_dir(dir.path()).expect_err("second open must fail");
    assert!(
        matches!(err, StorageError::AlreadyOpen { .. }),
        "got {err:?}"
    );
    assert!(err.to_string().contains("already in use"), "message: {err}");
}

#[test]
fn usernames_and_emails_are_unique_case_insensitively() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_dir(dir.path()).expect("open");
    store
        .write_blocking(|wtx| users::insert(wtx, new_user("bob", "b@x.io")).map(|_| ()))
        .expect("first");
    let dup = store.write_blocking(|wtx| users::insert(wtx, new_user("BOB", "")).map(|_| ()));
    assert!(matches!(
        dup,
        Err(StorageError::Duplicate { what: "username" })
    ));
    let dup =
        store.write_blocking(|wtx| users::insert(wtx, new_user("carol", "B@X.io")).map(|_| ()));
    assert!(matches!(
        dup,
        Err(StorageError::Duplicate { what: "email" })
    ));
    let carol = store
        .write_blocking(|wtx| users::insert(wtx, new_user("carol", "")))
        .expect("carol");
    assert_eq!(carol.id.0, 2, "a failed insert must not consume an id");
}

#[test]
fn update_moves_index_entries() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_dir(dir.path()).expect("open");
    let mut dan = store
        .write_blocking(|wtx| users::insert(wtx, new_user("dan", "d@x.io")))
        .expect("dan");
    dan.username = "daniel".into();
    dan.email = "daniel@x.io".into();
    store
        .write_blocking(|wtx| users::update(wtx, &dan))
        .expect("update");
    store
        .read_blocking(|rtx| {
            assert!(users::find_by_username(rtx, "dan")?.is_none());
            assert!(users::find_by_email(rtx, "d@x.io")?.is_none());
            assert_eq!(
                users::find_by_username(rtx, "daniel")?.map(|u| u.id),
                Some(dan.id)
            );
            assert_eq!(
                users::find_by_email(rtx, "DANIEL@x.io")?.map(|u| u.id),
                Some(dan.id)
            );
            Ok::<_, StorageError>(())
        })
        .expect("read");
}

#[test]
fn session_secret_is_generated_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = {
        let store = Store::open_dir(dir.path()).expect("open");
        store
            .write_blocking(|wtx| meta::session_secret_or_init(wtx, || vec![7; 64]))
            .expect("init")
    };
    let store = Store::open_dir(dir.path()).expect("reopen");
    let second = store
        .write_blocking(|wtx| meta::session_secret_or_init(wtx, || vec![9; 64]))
        .expect("read");
    assert_eq!(
        first, second,
        "the persisted secret must be reused after a restart"
    );
}

#[test]
fn update_maintains_access_token_and_invite_code_indexes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_dir(dir.path()).expect("open");
    let mut eve = store
        .write_blocking(|wtx| users::insert(wtx, new_user("eve", "")))
        .expect("eve");
    eve.access_token_hash = Some("abc123".into());
    eve.aff_code = "INVITE1".into();
    store
        .write_blocking(|wtx| users::update(wtx, &eve))
        .expect("update");
    let found = store
        .read_blocking(|rtx| users::find_by_access_token(rtx, "abc123"))
        .expect("read");
    assert_eq!(
        found.map(|u| u.id),
        Some(eve.id),
        "token index written on update"
    );
    let by_code = store
        .write_blocking(|wtx| users::find_by_aff_code_rw(wtx, "invite1"))
        .expect("read");
    assert_eq!(
        by_code.map(|u| u.id),
        Some(eve.id),
        "invite index written on update"
    );

    eve.access_token_hash = None;
    store
        .write_blocking(|wtx| users::update(wtx, &eve))
        .expect("revoke");
    let found = store
        .read_blocking(|rtx| users::find_by_access_token(rtx, "abc123"))
        .expect("read");
    assert!(found.is_none(), "a revoked token no longer resolves");
}
