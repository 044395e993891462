//! Log storage: the schema 2 → 4 upgrade builds the new indexes and counters; counters, indexes
//! and rows stay consistent through deletions; deleted space is reused; totals of uncovered
//! filters are estimated past the scan budget while the page stays exact; stats of uncovered
//! filters are sampled past their budget; uncovered filters are checked on composite keys and
//! whole hours of postings; type filters use the typed keys and consume totals
//! are exact by subtraction; counters split between the recent (hour-major) and the key-major
//! table give exact answers.

use redb::{Database, ReadableDatabase, TableDefinition};
use tollgate_storage::logs::query::{self, COUNT_SCAN_LIMIT, LogFilter, STAT_SCAN_LIMIT};
use tollgate_storage::logs::{self, LOG_CONSUME, LOG_ERROR, LogEntry, dashboard};
use tollgate_storage::migrate::CURRENT_SCHEMA;
use tollgate_storage::tables::LOG_COUNTS;
use tollgate_storage::{Store, UserId};

fn rows(n: i64, start: i64) -> Vec<LogEntry> {
    (0..n)
        .map(|i| LogEntry {
            id: i + 1,
            created_at: start + i * 37,
            log_type: if i % 7 == 0 { LOG_ERROR } else { LOG_CONSUME },
            user_id: UserId(1 + i % 3),
            token_name: format!("t{}", i % 2),
            model_name: ["a", "b", "c", "d"][(i % 4) as usize].to_owned(),
            channel_id: 1 + (i / 3) % 5,
            group: if i % 5 == 0 { "vip" } else { "default" }.to_owned(),
            prompt_tokens: i % 100,
            completion_tokens: i % 10,
            quota: i % 1000,
            ..LogEntry::default()
        })
        .collect()
}

fn brute(all: &[LogEntry], f: &LogFilter) -> u64 {
    all.iter().filter(|e| f.matches(e)).count() as u64
}

fn filters() -> Vec<LogFilter> {
    let mut out = vec![LogFilter::default()];
    for user in [None, Some(UserId(2))] {
        for model in [None, Some("b".to_owned())] {
            for channel in [None, Some(3)] {
                for range in [None, Some((1_000_500, 1_020_000))] {
                    out.push(LogFilter {
                        user,
                        model_name: model.clone(),
                        channel,
                        start: range.map(|r| r.0),
                        end: range.map(|r| r.1),
                        log_type: Some(LOG_CONSUME),
                        ..LogFilter::default()
                    });
                }
            }
        }
    }
    out
}

#[test]
fn schema_2_file_with_logs_is_upgraded_and_indexed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tollgate.redb");
    let old = rows(500, 1_000_000);
    {
        let db = Database::create(&path).expect("create");
        let wtx = db.begin_write().expect("write");
        {
            let meta: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
            let logs_t: TableDefinition<i64, &[u8]> = TableDefinition::new("logs.v1");
            let by_time: TableDefinition<(i64, i64), ()> = TableDefinition::new("log_by_time.v1");
            let by_user: TableDefinition<(i64, i64, i64), ()> =
                TableDefinition::new("log_by_user.v1");
            let mut m = wtx.open_table(meta).expect("meta");
            m.insert(
                "schema_version",
                postcard::to_stdvec(&2u32).expect("enc").as_slice(),
            )
            .expect("version");
            m.insert(
                "next_id.logs",
                postcard::to_stdvec(&501i64).expect("enc").as_slice(),
            )
            .expect("seq");
            let mut l = wtx.open_table(logs_t).expect("logs");
            let mut t = wtx.open_table(by_time).expect("time");
            let mut u = wtx.open_table(by_user).expect("user");
            for e in &old {
                l.insert(e.id, postcard::to_stdvec(e).expect("enc").as_slice())
                    .expect("row");
                t.insert((e.created_at, e.id), ()).expect("time");
                u.insert((e.user_id.0, e.created_at, e.id), ())
                    .expect("user");
            }
        }
        wtx.commit().expect("commit");
    }
    let store = Store::open(&path).expect("upgrade");
    for f in filters() {
        let page = store
            .read_blocking(|rtx| query::page(rtx, &f, 0, 10))
            .expect("page");
        assert_eq!(page.total, brute(&old, &f), "{f:?}");
    }
    let mine = store
        .read_blocking(|rtx| logs::recent_for_user(rtx, UserId(2), 1000))
        .expect("recent");
    assert_eq!(mine.len(), old.iter().filter(|e| e.user_id.0 == 2).count());
    let dash = store
        .read_blocking(|rtx| dashboard::by_model(rtx, 0, i64::MAX / 2))
        .expect("dash");
    let consume: u64 = old.iter().filter(|e| e.log_type == LOG_CONSUME).count() as u64;
    assert_eq!(dash.iter().map(|r| r.count).sum::<u64>(), consume);
    drop(store);
    let db = Database::open(&path).expect("reopen raw");
    let rtx = db.begin_read().expect("read");
    let gone: TableDefinition<(i64, i64, i64), ()> = TableDefinition::new("log_by_user.v1");
    assert!(
        rtx.open_table(gone).is_err(),
        "the old user index is dropped"
    );
    let _ = CURRENT_SCHEMA;
}

#[test]
fn deletion_keeps_counters_and_indexes_consistent_and_space_is_reused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tollgate.redb");
    let store = Store::open(&path).expect("open");
    let insert = |batch: Vec<LogEntry>| {
        store
            .write_blocking(|wtx| logs::insert_batch(wtx, batch, true))
            .expect("insert")
    };
    let n = 20_000;
    insert(rows(n, 1_000_000));
    let size_full = std::fs::metadata(&path).expect("size").len();

    // Delete in small batches up to the middle; the rest must still count and page right.
    let cut = 1_000_000 + 37 * (n / 2) + 5;
    loop {
        let deleted = store
            .write_blocking(|wtx| logs::delete_before(wtx, cut, 256))
            .expect("delete");
        if deleted == 0 {
            break;
        }
    }
    let left = store.read_blocking(logs::all).expect("all");
    assert!(left.iter().all(|e| e.created_at >= cut));
    assert_eq!(left.len() as i64, n - n / 2 - 1);
    for f in filters() {
        let (page, stat) = store
            .read_blocking(|rtx| {
                Ok::<_, tollgate_storage::StorageError>((
                    query::page(rtx, &f, 3, 5)?,
                    query::stat(rtx, &f, 0)?,
                ))
            })
            .expect("query");
        assert_eq!(page.total, brute(&left, &f), "{f:?}");
        let mut want: Vec<&LogEntry> = left.iter().filter(|e| f.matches(e)).collect();
        want.sort_by_key(|e| std::cmp::Reverse(e.id));
        let want_ids: Vec<i64> = want.iter().skip(3).take(5).map(|e| e.id).collect();
        assert_eq!(
            page.items.iter().map(|e| e.id).collect::<Vec<_>>(),
            want_ids
        );
        let any_type = LogFilter {
            log_type: None,
            ..f.clone()
        };
        let quota: i64 = left
            .iter()
            .filter(|e| e.log_type == LOG_CONSUME && any_type.matches(e))
            .map(|e| e.quota)
            .sum();
        assert_eq!(stat.quota, quota, "{f:?}");
    }
    let count = store
        .read_blocking(|rtx| query::count_before(rtx, i64::MAX))
        .expect("count");
    assert_eq!(count, left.len() as u64);

    // Delete everything, insert as many rows again: the file does not grow (free pages reused).
    while store
        .write_blocking(|wtx| logs::delete_before(wtx, i64::MAX, 1000))
        .expect("delete all")
        > 0
    {}
    assert_eq!(store.read_blocking(logs::count).expect("count"), 0);
    // Deleting rewrites the postings it cuts (copy on write), so the file may grow while it
    // deletes; the rows inserted again then fit in the pages freed.
    let size_deleted = std::fs::metadata(&path).expect("size").len();
    assert!(
        size_deleted <= size_full * 2,
        "deletion grew the file: {size_full} → {size_deleted}"
    );
    insert(rows(n, 2_000_000));
    let size_again = std::fs::metadata(&path).expect("size").len();
    assert!(
        size_again <= size_deleted.max(size_full) + size_full / 10,
        "the freed pages were reused: {size_full} → {size_deleted} → {size_again}"
    );
}

#[test]
fn uncovered_filters_past_the_scan_budget_get_an_estimate_and_an_exact_page() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("t.redb")).expect("open");
    let n = 10 * COUNT_SCAN_LIMIT as i64;
    let all = rows(n, 1_000_000);
    let to_insert = all.clone();
    store
        .write_blocking(|wtx| logs::insert_batch(wtx, to_insert, true))
        .expect("insert");
    // model "b" (¼) and group "default" (⅘): no index covers both.
    let f = LogFilter {
        model_name: Some("b".into()),
        group: Some("default".into()),
        ..LogFilter::default()
    };
    let page = store
        .read_blocking(|rtx| query::page(rtx, &f, 0, 10))
        .expect("page");
    let truth = brute(&all, &f);
    assert!(!page.total_exact);
    let err = (page.total as f64 - truth as f64).abs() / truth as f64;
    assert!(err < 0.2, "estimate {} vs {truth}", page.total);
    let mut want: Vec<&LogEntry> = all.iter().filter(|e| f.matches(e)).collect();
    want.sort_by_key(|e| std::cmp::Reverse(e.id));
    assert_eq!(
        page.items.iter().map(|e| e.id).collect::<Vec<_>>(),
        want.iter().take(10).map(|e| e.id).collect::<Vec<_>>()
    );
}

#[test]
fn uncovered_stats_past_the_scan_budget_are_sampled_estimates() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("t.redb")).expect("open");
    let n = 8 * STAT_SCAN_LIMIT as i64;
    let all = rows(n, 1_000_000);
    let to_insert = all.clone();
    store
        .write_blocking(|wtx| logs::insert_batch(wtx, to_insert, true))
        .expect("insert");
    let quota = |f: &LogFilter| -> i64 {
        all.iter()
            .filter(|e| e.log_type == LOG_CONSUME && f.matches(e))
            .map(|e| e.quota)
            .sum()
    };
    // Model "b" and group "default": no index covers both, and "b" holds ¼ of the rows.
    let wide = LogFilter {
        model_name: Some("b".into()),
        group: Some("default".into()),
        ..LogFilter::default()
    };
    let stat = store
        .read_blocking(|rtx| query::stat(rtx, &wide, 0))
        .expect("stat");
    assert!(!stat.exact);
    let truth = quota(&wide);
    let err = (stat.quota as f64 - truth as f64).abs() / truth as f64;
    assert!(err < 0.1, "estimate {} vs {truth}", stat.quota);

    // The same filter over a short time range (fewer candidates than the budget) is exact.
    let narrow = LogFilter {
        start: Some(1_000_000 + 37 * 1000),
        end: Some(1_000_000 + 37 * 3000),
        ..wide.clone()
    };
    let stat = store
        .read_blocking(|rtx| query::stat(rtx, &narrow, 0))
        .expect("stat");
    assert!(stat.exact);
    assert_eq!(stat.quota, quota(&narrow));

    // Covered pairs are exact from the counters whatever the size.
    for f in [
        LogFilter {
            user: Some(UserId(2)),
            group: Some("vip".into()),
            ..LogFilter::default()
        },
        LogFilter {
            model_name: Some("c".into()),
            channel: Some(4),
            ..LogFilter::default()
        },
    ] {
        let stat = store
            .read_blocking(|rtx| query::stat(rtx, &f, 0))
            .expect("stat");
        assert!(stat.exact, "{f:?}");
        assert_eq!(stat.quota, quota(&f), "{f:?}");
    }
}

#[test]
fn uncovered_filters_are_checked_on_composite_keys_and_whole_hours() {
    // About 97 rows an hour; user 2 + model "b" leaves ~8 candidates an hour, so each check
    // key is looked up a few times, then its whole hour is read.
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("t.redb")).expect("open");
    let all = rows(40_000, 1_000_000);
    let to_insert = all.clone();
    store
        .write_blocking(|wtx| logs::insert_batch(wtx, to_insert, true))
        .expect("insert");
    let window = Some((1_000_000 + 37 * 5_000 + 11, 1_000_000 + 37 * 30_000 + 7));
    for range in [None, window] {
        for (token, group, channel) in [
            (Some("t1"), Some("default"), None),
            (Some("t1"), None, Some(2)),
            (None, Some("vip"), Some(4)),
            (Some("t0"), Some("default"), None),
        ] {
            let f = LogFilter {
                user: Some(UserId(2)),
                model_name: Some("b".into()),
                token_name: token.map(str::to_owned),
                group: group.map(str::to_owned),
                channel,
                start: range.map(|r| r.0),
                end: range.map(|r| r.1),
                ..LogFilter::default()
            };
            let (plan, first, middle, stat) = store
                .read_blocking(|rtx| {
                    Ok::<_, tollgate_storage::StorageError>((
                        query::plan(rtx, &f)?,
                        query::page(rtx, &f, 0, 20)?,
                        query::page(rtx, &f, 300, 20)?,
                        query::stat(rtx, &f, 0)?,
                    ))
                })
                .expect("query");
            // Scanned on a composite key and checked on composite keys (the user's, model +
            // channel), never on a single key of a whole dimension.
            let keys = plan.key.iter().chain(plan.others.iter().map(|(k, _)| k));
            for key in keys {
                assert!(
                    ["um:", "uk:", "ug:", "mc:"]
                        .iter()
                        .any(|p| key.starts_with(p)),
                    "{f:?} → {plan:?}"
                );
            }
            assert!(!plan.others.is_empty(), "{f:?} → {plan:?}");
            let mut want: Vec<&LogEntry> = all.iter().filter(|e| f.matches(e)).collect();
            want.sort_by_key(|e| std::cmp::Reverse(e.id));
            let ids = |p: &query::LogPage| p.items.iter().map(|e| e.id).collect::<Vec<_>>();
            let want_ids = |skip: usize| -> Vec<i64> {
                want.iter().skip(skip).take(20).map(|e| e.id).collect()
            };
            assert_eq!(ids(&first), want_ids(0), "{f:?}");
            assert_eq!(ids(&middle), want_ids(300), "{f:?}");
            assert!(first.total_exact, "{f:?}");
            assert_eq!(first.total, brute(&all, &f), "{f:?}");
            let quota: i64 = want
                .iter()
                .filter(|e| e.log_type == LOG_CONSUME)
                .map(|e| e.quota)
                .sum();
            assert!(stat.exact, "{f:?}");
            assert_eq!(stat.quota, quota, "{f:?}");
        }
    }
}

#[test]
fn type_filters_use_typed_keys_and_consume_totals_are_exact() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("t.redb")).expect("open");
    let n = 10 * COUNT_SCAN_LIMIT as i64;
    let all = rows(n, 1_000_000);
    let to_insert = all.clone();
    store
        .write_blocking(|wtx| logs::insert_batch(wtx, to_insert, true))
        .expect("insert");
    let range = Some((1_000_000 + 37 * 500 + 11, 1_000_000 + 37 * 30_000 + 7));
    for log_type in [LOG_ERROR, LOG_CONSUME] {
        for (model, channel, group) in [
            (Some("b"), None, None),
            (None, Some(3), None),
            (None, Some(2), Some("vip")),
            (Some("a"), Some(1), None),
        ] {
            for range in [None, range] {
                let f = LogFilter {
                    log_type: Some(log_type),
                    model_name: model.map(str::to_owned),
                    channel,
                    group: group.map(str::to_owned),
                    start: range.map(|r| r.0),
                    end: range.map(|r| r.1),
                    ..LogFilter::default()
                };
                let (plan, page) = store
                    .read_blocking(|rtx| {
                        Ok::<_, tollgate_storage::StorageError>((
                            query::plan(rtx, &f)?,
                            query::page(rtx, &f, 40, 20)?,
                        ))
                    })
                    .expect("query");
                if log_type == LOG_ERROR && group.is_none() {
                    let key = plan.key.clone().unwrap_or_default();
                    assert!(key.starts_with("t5/"), "{f:?} → {plan:?}");
                    assert!(plan.covers_all, "{f:?} → {plan:?}");
                }
                if log_type == LOG_CONSUME && group.is_none() {
                    assert!(plan.consume_by_subtraction, "{f:?} → {plan:?}");
                }
                if group.is_none() {
                    assert!(page.total_exact, "{f:?}");
                    assert_eq!(page.total, brute(&all, &f), "{f:?}");
                }
                let mut want: Vec<&LogEntry> = all.iter().filter(|e| f.matches(e)).collect();
                want.sort_by_key(|e| std::cmp::Reverse(e.id));
                assert_eq!(
                    page.items.iter().map(|e| e.id).collect::<Vec<_>>(),
                    want.iter()
                        .skip(40)
                        .take(20)
                        .map(|e| e.id)
                        .collect::<Vec<_>>(),
                    "{f:?}"
                );
            }
        }
    }
}

#[test]
fn counted_inserts_are_every_entry_the_batch_wrote() {
    // One batch into a fresh file writes each entry of every log table once (plus the id
    // sequence), so the count the insert phase of the log benchmark prints is exactly that.
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("t.redb")).expect("open");
    let batch = rows(300, 1_000_000);
    let (ids, inserts) = store
        .write_blocking(|wtx| logs::write::insert_batch_counted(wtx, batch, true))
        .expect("insert");
    assert_eq!(ids.len(), 300);
    let tables = store.read_blocking(logs::footprint).expect("footprint");
    let entries: u64 = tables.iter().map(|t| t.entries).sum();
    assert_eq!(inserts, 1 + entries, "{tables:?}");
    assert_eq!(tables[0].entries, 300, "the rows come first");
}

/// Every total and stat quota of a set of filters and windows equals a count over `all`.
#[expect(clippy::expect_used, reason = "a test helper fails the test loudly")]
fn assert_exact_answers(store: &Store, all: &[LogEntry], windows: &[Option<(i64, i64)>]) {
    for window in windows {
        for user in [None, Some(UserId(2))] {
            for model in [None, Some("b".to_owned())] {
                for log_type in [None, Some(LOG_CONSUME), Some(LOG_ERROR)] {
                    let f = LogFilter {
                        user,
                        model_name: model.clone(),
                        log_type,
                        start: window.map(|w| w.0),
                        end: window.map(|w| w.1),
                        ..LogFilter::default()
                    };
                    let (page, stat) = store
                        .read_blocking(|rtx| {
                            Ok::<_, tollgate_storage::StorageError>((
                                query::page(rtx, &f, 0, 10)?,
                                query::stat(rtx, &f, 0)?,
                            ))
                        })
                        .expect("query");
                    assert!(page.total_exact, "{f:?}");
                    assert_eq!(page.total, brute(all, &f), "total of {f:?}");
                    let any_type = LogFilter {
                        log_type: None,
                        ..f.clone()
                    };
                    let quota: i64 = all
                        .iter()
                        .filter(|e| e.log_type == LOG_CONSUME && any_type.matches(e))
                        .map(|e| e.quota)
                        .sum();
                    assert!(stat.exact, "{f:?}");
                    assert_eq!(stat.quota, quota, "stat of {f:?}");
                }
            }
        }
    }
}

#[test]
fn counters_give_exact_answers_across_gaps_partial_hours_and_moves() {
    // Rows in bursts separated by empty days, one from 1970 and one from before it, then a
    // series of 100 hours written 64 rows a commit (the recent hour counters move into the
    // key-major ones along the way) and late rows for an hour already moved (added to its
    // key-major counter). Every total and stat quota equals a count over the rows, before and
    // after deletions, the second one cutting through an hour still counted in the recent table.
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("t.redb")).expect("open");
    let hour = 3_600;
    let t0 = 1_800_000; // an hour start
    let late_hour = t0 + 40 * hour;
    let mut all: Vec<LogEntry> = Vec::new();
    for (burst, start) in [1_000_000i64, 1_500_000, 1_503_600].iter().enumerate() {
        let mut batch = rows(700, *start);
        for e in &mut batch {
            e.created_at += burst as i64 * 13;
        }
        all.extend(batch);
    }
    for (created_at, log_type, quota) in [(5, LOG_ERROR, 0), (-7_205, LOG_CONSUME, 77)] {
        all.push(LogEntry {
            created_at,
            log_type,
            quota,
            user_id: UserId(2),
            model_name: "b".to_owned(),
            ..LogEntry::default()
        });
    }
    let mut series = rows(600, t0);
    for (i, e) in (0i64..).zip(series.iter_mut()) {
        e.created_at = t0 + i * 600;
    }
    all.extend(series);
    let mut late = rows(20, late_hour);
    for (i, e) in (0i64..).zip(late.iter_mut()) {
        e.created_at = late_hour + i * 10;
    }
    all.extend(late);
    for chunk in all.chunks_mut(64) {
        let batch: Vec<&mut LogEntry> = chunk.iter_mut().collect();
        store
            .write_blocking(|wtx| logs::insert_batch(wtx, batch, true))
            .expect("insert");
    }
    let in_key_major = store
        .read_blocking(|rtx| {
            let counts = rtx.open_table(LOG_COUNTS)?;
            Ok::<_, tollgate_storage::StorageError>(counts.get(("*", late_hour))?.is_some())
        })
        .expect("read");
    assert!(
        in_key_major,
        "the late rows' hour was sealed and its late rows counted key-major"
    );
    let recent_hour = t0 + 95 * hour;
    let windows = [
        None,
        Some((1_000_000, 1_003_599)),
        Some((1_010_001, 1_500_000 + 3_600 * 2 + 17)),
        Some((1_100_000, 1_400_000)),
        Some((1_503_599, t0 + 5_000)),
        Some((-100_000, 1_010_000)),
        Some((late_hour - 100, late_hour + 50)),
        Some((late_hour + 1, late_hour + hour - 1)),
        Some((t0 + 50 * hour + 7, t0 + 70 * hour + 1)),
        Some((recent_hour - 7, recent_hour + 3_000)),
        Some((t0 + 90 * hour, t0)),
    ];
    // Retention removes the first burst's first 200 rows (and the two old ones).
    let cut = 1_000_000 + 199 * 37 + 1;
    store
        .write_blocking(|wtx| logs::write::delete_before(wtx, cut, 10_000))
        .expect("delete");
    all.retain(|e| e.created_at >= cut);
    assert_exact_answers(&store, &all, &windows);
    // Then everything before the middle of an hour its postings count.
    let in_key_major = store
        .read_blocking(|rtx| {
            let counts = rtx.open_table(LOG_COUNTS)?;
            Ok::<_, tollgate_storage::StorageError>(counts.get(("*", recent_hour))?.is_some())
        })
        .expect("read");
    assert!(
        !in_key_major,
        "the newest hours are counted by their postings"
    );
    let cut = recent_hour + 95;
    store
        .write_blocking(|wtx| logs::write::delete_before(wtx, cut, 10_000))
        .expect("delete");
    all.retain(|e| e.created_at >= cut);
    assert_exact_answers(&store, &all, &windows);
    let before = store
        .read_blocking(|rtx| query::count_before(rtx, t0 + 98 * hour))
        .expect("count");
    assert_eq!(
        before,
        all.iter().filter(|e| e.created_at < t0 + 98 * hour).count() as u64
    );
}
