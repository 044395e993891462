//! The crash journal's cost per relayed request, on one thread (no other request's append
//! writes a reservation's record first): a whole answer (its reservation opened at admission,
//! then settled with its consume row), a streamed one (the same, its first output announced in
//! between), and a settlement alone. The file is trimmed every 1,024 requests, as the log
//! writer's durable commits trim it.

#![expect(clippy::expect_used, reason = "a benchmark: a failure ends it")]

use criterion::{Criterion, criterion_group, criterion_main};
use tollgate_actors::journal::{HoldStart, Journal};
use tollgate_storage::logs::{LOG_CONSUME, LogEntry};
use tollgate_storage::usage::BalanceChange;
use tollgate_storage::{TokenId, UserId};

/// The row admission knows of a small chat request (who asks, for which model).
fn admitted_row() -> LogEntry {
    LogEntry {
        created_at: 1_767_225_600,
        log_type: LOG_CONSUME,
        user_id: UserId(1),
        username: "bench".into(),
        token_id: 2,
        token_name: "bench-key".into(),
        model_name: "gpt-4o-mini".into(),
        group: "default".into(),
        ..LogEntry::default()
    }
}

/// A consume row as the relay writes one for that request's answer.
fn consume_row() -> LogEntry {
    LogEntry {
        channel_id: 1,
        is_stream: true,
        use_time: 1,
        prompt_tokens: 12,
        completion_tokens: 20,
        quota: 1_234,
        other: r#"{"model_ratio":0.075,"completion_ratio":4,"group_ratio":1,"frt":1,"usage_source":"upstream","cache_tokens":0,"cache_ratio":1,"user_group_ratio":-1,"admin_info":{"use_channel":["1"]},"request_path":"/v1/chat/completions"}"#.into(),
        request_id: "20260101000000000000000000000001".into(),
        ..admitted_row()
    }
}

/// What admission journals for the same request.
fn hold_start() -> HoldStart {
    HoldStart {
        user: UserId(1),
        token: Some(TokenId(2)),
        prompt_tokens: 12,
        prompt_cost: 1,
        row: Some(admitted_row()),
    }
}

/// The answer's first output (the journal writes the reservation then if nothing did).
fn first_output(journal: &mut Journal, hold: u64) {
    journal.answering(hold).expect("answering");
}

fn journal(c: &mut Criterion) {
    let change = BalanceChange {
        user_id: UserId(1),
        token_id: Some(TokenId(2)),
        charged: 1_234,
        is_request: true,
        at: 0,
    };
    let row = consume_row();
    let mut group = c.benchmark_group("journal");
    for (name, stream, open) in [
        ("request_whole", false, true),
        ("request_stream", true, true),
        ("settlement", false, false),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut journal = Journal::create(dir.path(), 1).expect("journal");
        let mut seq = 0_u64;
        group.bench_function(name, |b| {
            b.iter(|| {
                let hold = open.then(|| {
                    seq += 1;
                    // Admission builds the record's row for every request.
                    let start = hold_start();
                    journal.opened(seq, &start).expect("opened");
                    seq
                });
                if let Some(hold) = hold.filter(|_| stream) {
                    first_output(&mut journal, hold);
                }
                seq += 1;
                journal
                    .settled(seq, hold, Some(change), Some(&row))
                    .expect("settled");
                if seq % 1_024 < 2 {
                    journal.committed(seq).expect("trim");
                }
            });
        });
    }
    group.finish();
}

criterion_group!(benches, journal);
criterion_main!(benches);
