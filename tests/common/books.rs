//! The billing suite's conservation check (DESIGN.md "Rules that make billing true":
//! sum(balances) + sum(logged charges) == credited total), per user in storage.
//!
//! Logged charges are the consume rows Tollgate wrote plus, for a user brought over by
//! `tollgate import new-api`, its one opening row (type 4 with `other.import`), which records
//! the used quota it arrived with. The incumbent's own log rows copied by `--with-logs`
//! (`other.imported`) are history already counted by that opening row, so they are not added.

use serde_json::Value;
use tollgate_storage::logs::{self, LOG_CONSUME, LOG_SYSTEM, LogEntry};
use tollgate_storage::{StorageError, UserId, users};

use super::TestServer;

fn other_has(entry: &LogEntry, key: &str) -> bool {
    serde_json::from_str::<Value>(&entry.other).is_ok_and(|o| o.get(key).is_some())
}

/// Whether `entry` is a charge in the conservation law's sense.
pub fn is_charge(entry: &LogEntry) -> bool {
    (entry.log_type == LOG_CONSUME && !other_has(entry, "imported"))
        || (entry.log_type == LOG_SYSTEM && other_has(entry, "import"))
}

/// Asserts the conservation laws of one user in storage: balance + used == credited, and the
/// logged charges == used (no log row was deleted in the tests that call this).
#[expect(
    clippy::expect_used,
    reason = "test helper: a failed read fails the test"
)]
pub async fn assert_books(server: &TestServer, user: i64) {
    server.flush().await;
    let (quota, used, credited, logged) = server
        .store()
        .read_blocking(|rtx| {
            let u = users::get(rtx, UserId(user))?.expect("user");
            let credited = users::credited(rtx, UserId(user))?;
            let logged: i64 = logs::recent_for_user(rtx, UserId(user), 100_000)?
                .iter()
                .filter(|l| is_charge(l))
                .map(|l| l.quota)
                .sum();
            Ok::<_, StorageError>((u.quota.0, u.used_quota.0, credited, logged))
        })
        .expect("read");
    assert_eq!(
        quota + used,
        credited,
        "user {user}: balance + used == credited"
    );
    assert_eq!(logged, used, "user {user}: logged charges == used");
}
