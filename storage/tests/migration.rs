//! Migration runner: a file written by schema 1 (a committed fixture) opens and upgrades.
//!
//! `fixtures/schema_v1.redb` was made by `make_schema_v1_fixture` below, which writes the
//! tables exactly as schema 1 laid them out. Regenerate it only if schema 1 itself was wrong:
//! `cargo test -p tollgate-storage --test migration -- --ignored`.

use std::path::PathBuf;

use redb::{Database, TableDefinition};
use tollgate_storage::migrate::CURRENT_SCHEMA;
use tollgate_storage::{Quota, StorageError, Store, UserId, users};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/schema_v1.redb")
}

#[derive(serde::Serialize)]
struct UserV1 {
    id: i64,
    username: String,
    display_name: String,
    password_hash: String,
    email: String,
    group: String,
    quota: i64,
    used_quota: i64,
    request_count: i64,
    role: i32,
    status: i32,
    created_at: i64,
}

#[test]
#[ignore = "regenerates the committed fixture"]
fn make_schema_v1_fixture() {
    let path = fixture();
    let _ = std::fs::remove_file(&path);
    let db = Database::create(&path).expect("create");
    let wtx = db.begin_write().expect("write");
    {
        let meta: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
        let users_v1: TableDefinition<i64, &[u8]> = TableDefinition::new("users.v1");
        let by_name: TableDefinition<&str, i64> = TableDefinition::new("user_by_username.v1");
        let opts: TableDefinition<&str, &str> = TableDefinition::new("options.v1");
        let mut m = wtx.open_table(meta).expect("meta");
        m.insert(
            "schema_version",
            postcard::to_stdvec(&1u32).expect("enc").as_slice(),
        )
        .expect("version");
        m.insert(
            "next_id.users",
            postcard::to_stdvec(&3i64).expect("enc").as_slice(),
        )
        .expect("seq");
        let mut u = wtx.open_table(users_v1).expect("users");
        let mut n = wtx.open_table(by_name).expect("index");
        for (id, name, email, role, quota) in [
            (1, "root", "root@example.com", 100, 0),
            (2, "alice", "", 1, 12_345),
        ] {
            let rec = UserV1 {
                id,
                username: name.into(),
                display_name: name.into(),
                password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaA".into(),
                email: email.into(),
                group: "default".into(),
                quota,
                used_quota: 7,
                request_count: 3,
                role,
                status: 1,
                created_at: 1_700_000_000,
            };
            u.insert(id, postcard::to_stdvec(&rec).expect("enc").as_slice())
                .expect("user");
            n.insert(name, id).expect("index");
        }
        wtx.open_table(opts)
            .expect("opts")
            .insert("SystemName", "Legacy")
            .expect("opt");
    }
    wtx.commit().expect("commit");
}

#[test]
fn schema_v1_file_is_upgraded_on_open() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tollgate.redb");
    std::fs::copy(fixture(), &path).expect("copy fixture");

    let store = Store::open(&path).expect("open upgrades the file");
    store
        .read_blocking(|rtx| {
            let root = users::get(rtx, UserId(1))?.expect("root migrated");
            assert_eq!(root.role, users::ROLE_ROOT);
            assert_eq!(root.deleted_at, None);
            let alice = users::find_by_username(rtx, "alice")?.expect("alice migrated");
            assert_eq!(alice.quota, Quota(12_345));
            assert_eq!(alice.used_quota, Quota(7));
            assert_eq!(alice.request_count, 3);
            let by_mail = users::find_by_email(rtx, "ROOT@example.com")?;
            assert_eq!(by_mail.map(|u| u.id), Some(UserId(1)), "email index built");
            let opts = tollgate_storage::options::load_all(rtx)?;
            assert_eq!(opts.get("SystemName").map(String::as_str), Some("Legacy"));
            Ok::<_, StorageError>(())
        })
        .expect("read");
    let next = store
        .write_blocking(|wtx| tollgate_storage::meta::next_id(wtx, "users"))
        .expect("next id");
    assert_eq!(next, 3, "the id sequence continues after migration");
    drop(store);

    // Reopening an upgraded file is a no-op.
    let db = Database::open(&path).expect("raw open");
    let rtx = redb::ReadableDatabase::begin_read(&db).expect("read");
    let meta: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
    let table = rtx.open_table(meta).expect("meta");
    let version: u32 = postcard::from_bytes(
        table
            .get("schema_version")
            .expect("get")
            .expect("set")
            .value(),
    )
    .expect("decode");
    assert_eq!(version, CURRENT_SCHEMA);
}

#[test]
fn a_file_from_a_newer_build_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tollgate.redb");
    {
        let db = Database::create(&path).expect("create");
        let wtx = db.begin_write().expect("write");
        let meta: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
        wtx.open_table(meta)
            .expect("meta")
            .insert(
                "schema_version",
                postcard::to_stdvec(&99u32).expect("enc").as_slice(),
            )
            .expect("insert");
        wtx.commit().expect("commit");
    }
    let err = Store::open(&path).expect_err("newer schema must be refused");
    assert!(
        matches!(err, StorageError::NewerSchema { found: 99, .. }),
        "got {err:?}"
    );
}
