//! Unit tests of task storage: the charge and its task together, lists by filter, leases,
//! updates and the refund's conservation.

use super::query::{self, TaskFilter};
use super::*;
use crate::logs::{self, LOG_CONSUME, LogEntry};
use crate::tokens::{self, Token};
use crate::usage::BalanceChange;
use crate::users::{self, NewUser};
use crate::{Quota, Store};

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_dir(dir.path()).expect("open");
    (dir, store)
}

fn user_and_token(store: &Store, limited: bool) -> (UserId, TokenId) {
    store
        .write_blocking(|wtx| {
            let u = users::insert(
                wtx,
                NewUser {
                    username: "alice".into(),
                    display_name: String::new(),
                    password_hash: String::new(),
                    email: String::new(),
                    role: 1,
                    group: "default".into(),
                    quota: Quota(1_000),
                    aff_code: String::new(),
                    inviter_id: 0,
                    created_at: 1,
                },
            )?;
            let t = tokens::insert(
                wtx,
                Token {
                    id: TokenId(0),
                    user_id: u.id,
                    name: "k".into(),
                    key: "a".repeat(48),
                    status: 1,
                    created_time: 1,
                    accessed_time: 1,
                    expired_time: -1,
                    remain_quota: Quota(500),
                    unlimited_quota: !limited,
                    used_quota: Quota(0),
                    model_limits_enabled: false,
                    model_limits: String::new(),
                    allow_ips: String::new(),
                    group: String::new(),
                },
            )?;
            Ok::<_, crate::StorageError>((u.id, t.id))
        })
        .expect("user")
}

fn submit(
    store: &Store,
    user: UserId,
    token: TokenId,
    kind: TaskKind,
    upstream: &str,
    at: i64,
) -> Task {
    let task = Task {
        kind,
        user_id: user,
        token_id: Some(token),
        model_name: "mj_imagine".into(),
        channel_id: crate::ChannelId(3),
        action: "IMAGINE".into(),
        upstream_id: upstream.into(),
        code: 1,
        status: SUBMITTED.into(),
        progress: "0%".into(),
        created_at: at,
        submit_time: at,
        ..Task::default()
    };
    let change = BalanceChange {
        user_id: user,
        token_id: Some(token),
        charged: 100,
        is_request: true,
        at,
    };
    let log = LogEntry {
        created_at: at,
        log_type: LOG_CONSUME,
        user_id: user,
        model_name: "mj_imagine".into(),
        channel_id: 3,
        ..LogEntry::default()
    };
    store
        .write_blocking(|wtx| insert_charged(wtx, task, change, log))
        .expect("insert")
}

/// (quota, used, credited, consume rows' sum, token remain, token used)
fn books(store: &Store, user: UserId, token: TokenId) -> (i64, i64, i64, i64, i64, i64) {
    store
        .read_blocking(|rtx| {
            let u = users::get(rtx, user)?.expect("user");
            let t = tokens::get(rtx, token)?.expect("token");
            let logged = logs::all(rtx)?
                .iter()
                .filter(|l| l.log_type == LOG_CONSUME)
                .map(|l| l.quota)
                .sum();
            Ok::<_, crate::StorageError>((
                u.quota.0,
                u.used_quota.0,
                users::credited(rtx, user)?,
                logged,
                t.remain_quota.0,
                t.used_quota.0,
            ))
        })
        .expect("read")
}

#[test]
fn a_charge_comes_with_its_task_and_a_refund_returns_it_once() {
    let (_dir, store) = store();
    let (user, token) = user_and_token(&store, true);
    let task = submit(&store, user, token, TaskKind::Midjourney, "mj-1", 100);
    assert_eq!(task.quota, 100);
    assert_eq!(books(&store, user, token), (900, 100, 1_000, 100, 400, 100));
    assert_eq!(
        channel_used(&store),
        100,
        "the charge counts on its channel"
    );

    let refunded = store
        .write_blocking(|wtx| refund(wtx, task.id, "timeout", 200))
        .expect("refund")
        .expect("refunded");
    assert_eq!((refunded.amount, refunded.token), (100, Some(token)));
    let (quota, used, credited, logged, remain, token_used) = books(&store, user, token);
    assert_eq!((quota, used, remain, token_used), (1_000, 0, 500, 0));
    assert_eq!(quota + used, credited, "balance + used == credited");
    assert_eq!(logged, used, "consume rows (the refund negative) == used");
    assert_eq!(
        channel_used(&store),
        0,
        "the refund moves the channel's count back"
    );

    let again = store
        .write_blocking(|wtx| refund(wtx, task.id, "timeout", 300))
        .expect("refund");
    assert_eq!(again, None, "refunded once");
    let stored = store
        .read_blocking(|rtx| query::get(rtx, task.id))
        .expect("read")
        .expect("task");
    assert_eq!(stored.status, FAILURE);
    assert_eq!(stored.fail_reason, "timeout");
    assert!(stored.refunded);
    assert!(
        store
            .read_blocking(query::open_ids)
            .expect("open")
            .is_empty()
    );
    let counts = store.read_blocking(query::counts).expect("counts");
    assert_eq!(counts, vec![("mj".into(), FAILURE.into(), 1)]);
}

#[test]
fn an_unlimited_token_gets_no_remaining_quota_back() {
    let (_dir, store) = store();
    let (user, token) = user_and_token(&store, false);
    let task = submit(&store, user, token, TaskKind::Suno, "s-1", 100);
    let refunded = store
        .write_blocking(|wtx| refund(wtx, task.id, "failed", 200))
        .expect("refund")
        .expect("refunded");
    assert_eq!(refunded.token, None);
    let (quota, used, _, logged, remain, token_used) = books(&store, user, token);
    assert_eq!(
        (quota, used, logged, remain, token_used),
        (1_000, 0, 0, 500, 0)
    );
}

#[test]
fn a_leased_task_is_not_claimed_twice_until_its_lease_ends() {
    let (_dir, store) = store();
    let (user, token) = user_and_token(&store, true);
    let task = submit(&store, user, token, TaskKind::Video, "v-1", 100);
    let first = store
        .write_blocking(|wtx| claim(wtx, "a", 1_000, 60, 10))
        .expect("claim");
    assert_eq!(first.len(), 1);
    let second = store
        .write_blocking(|wtx| claim(wtx, "b", 1_030, 60, 10))
        .expect("claim");
    assert!(second.is_empty(), "held by a");
    // b cannot write over a's lease.
    let lost = store
        .write_blocking(|wtx| update(wtx, task.id, "b", TaskUpdate::default(), 1_030))
        .expect("update");
    assert_eq!(lost, None);
    let expired = store
        .write_blocking(|wtx| claim(wtx, "b", 1_061, 60, 10))
        .expect("claim");
    assert_eq!(expired.len(), 1, "a's lease ran out");
    let released = store
        .write_blocking(|wtx| release_leases(wtx, "b", None))
        .expect("release");
    assert_eq!(released, 1);
    let done = store
        .write_blocking(|wtx| {
            claim(wtx, "a", 1_070, 60, 10)?;
            update(
                wtx,
                task.id,
                "a",
                TaskUpdate {
                    status: Some(SUCCESS.into()),
                    progress: Some("100%".into()),
                    result_url: Some("https://v/1.mp4".into()),
                    ..TaskUpdate::default()
                },
                1_070,
            )
        })
        .expect("update")
        .expect("updated");
    assert_eq!((done.status.as_str(), done.finish_time), (SUCCESS, 1_070));
    assert!(
        store
            .read_blocking(query::open_ids)
            .expect("open")
            .is_empty()
    );
    let none = store
        .write_blocking(|wtx| claim(wtx, "a", 2_000, 60, 10))
        .expect("claim");
    assert!(none.is_empty(), "finished tasks are not polled");
}

#[test]
fn lists_filter_by_owner_channel_upstream_id_and_time() {
    let (_dir, store) = store();
    let (user, token) = user_and_token(&store, true);
    submit(&store, user, token, TaskKind::Midjourney, "mj-1", 100);
    submit(&store, user, token, TaskKind::Midjourney, "mj-2", 200);
    submit(&store, user, token, TaskKind::Suno, "s-1", 300);
    let page = |list, f: TaskFilter| {
        store
            .read_blocking(|rtx| query::page(rtx, list, &f, 0, 10))
            .expect("page")
    };
    let (items, total) = page(List::Drawing, TaskFilter::default());
    assert_eq!(total, 2);
    assert_eq!(items[0].upstream_id, "mj-2", "newest first");
    let (_, total) = page(
        List::Drawing,
        TaskFilter {
            start: Some(150),
            ..TaskFilter::default()
        },
    );
    assert_eq!(total, 1);
    let (items, _) = page(
        List::Drawing,
        TaskFilter {
            upstream_id: Some("mj-1".into()),
            user: Some(user),
            channel: Some(3),
            ..TaskFilter::default()
        },
    );
    assert_eq!(items.len(), 1);
    let (_, total) = page(
        List::Drawing,
        TaskFilter {
            user: Some(UserId(99)),
            ..TaskFilter::default()
        },
    );
    assert_eq!(total, 0, "another user's");
    let (items, total) = page(
        List::Tasks,
        TaskFilter {
            channel: Some(3),
            user: Some(user),
            ..TaskFilter::default()
        },
    );
    assert_eq!((total, items[0].upstream_id.as_str()), (1, "s-1"));
    let own = store
        .read_blocking(|rtx| query::find_own(rtx, List::Drawing, UserId(99), "mj-1"))
        .expect("find");
    assert_eq!(own, None, "scoped to the owner");
}

#[test]
fn progress_reads_as_a_percent() {
    let t = |p: &str| Task {
        progress: p.into(),
        ..Task::default()
    };
    assert_eq!(t("45%").progress_percent(), 45);
    assert_eq!(t("100%").progress_percent(), 100);
    assert_eq!(t("").progress_percent(), 0);
    assert_eq!(t("x").progress_percent(), 0);
}

/// Quota used through the tasks' channel (3), as the console's channel list shows it.
fn channel_used(store: &Store) -> i64 {
    store
        .read_blocking(|rtx| crate::channel_usage::used(rtx, crate::ChannelId(3)))
        .expect("read")
        .0
}

/// The quarter-hour budget spend of the user and of the key (in that order) since `since`.
fn budget_spend(store: &Store, user: UserId, token: TokenId, since: i64) -> (i64, i64) {
    use crate::budgets::{Owner, spend_since};
    store
        .read_blocking(|rtx| {
            let sum = |v: Vec<(i64, i64)>| v.iter().map(|(_, units)| units).sum::<i64>();
            Ok::<_, crate::StorageError>((
                sum(spend_since(rtx, Owner::User(user), since)?),
                sum(spend_since(rtx, Owner::Token(token), since)?),
            ))
        })
        .expect("read")
}

#[test]
fn a_refund_takes_the_charge_out_of_the_budget_spend_of_the_user_and_the_key() {
    let (_dir, store) = store();
    // An unlimited key: its remaining quota is not touched, but its budget spend is.
    let (user, token) = user_and_token(&store, false);
    let task = submit(&store, user, token, TaskKind::Suno, "s-1", 1_000);
    assert_eq!(budget_spend(&store, user, token, 0), (100, 100));

    let refunded = store
        .write_blocking(|wtx| refund(wtx, task.id, "failed", 90_000))
        .expect("refund")
        .expect("refunded");
    assert_eq!((refunded.key, refunded.charged_at), (Some(token), 1_000));
    assert_eq!(
        budget_spend(&store, user, token, 0),
        (0, 0),
        "the refund frees the windows the charge had used, a day later too"
    );
}
