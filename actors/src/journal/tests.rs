//! The crash journal's tests: appends, rotation, recovery, torn and older-format files.

use super::*;

fn change(charged: i64) -> BalanceChange {
    BalanceChange {
        user_id: UserId(1),
        token_id: Some(TokenId(2)),
        charged,
        is_request: true,
        at: 5,
    }
}

/// Journals a settlement without a reservation or a row (a credit or a plain charge).
fn credit(journal: &mut Journal, seq: u64, charged: i64) {
    journal
        .settled(seq, None, Some(change(charged)), None)
        .expect("settled");
}

/// The settlement numbers a recovery found, in order.
fn seqs(all: &Recovered) -> Vec<u64> {
    all.pending.iter().map(|p| p.seq).collect()
}

fn start(prompt_cost: i64) -> HoldStart {
    HoldStart {
        user: UserId(1),
        token: Some(TokenId(2)),
        prompt_tokens: 10,
        prompt_cost,
        row: Some(LogEntry {
            model_name: "gpt-4o".into(),
            ..LogEntry::default()
        }),
    }
}

#[test]
fn settlements_above_the_committed_number_and_open_holds_are_recovered() {
    let dir = tempfile::tempdir().expect("dir");
    let mut journal = Journal::create(dir.path(), 1).expect("create");
    let row = LogEntry::default();
    journal.opened(1, &start(100)).expect("open");
    journal
        .settled(2, Some(1), Some(change(150)), Some(&row))
        .expect("settled");
    journal.opened(3, &start(40)).expect("open");
    journal.progress(3, 7, 90).expect("progress");
    journal.progress(3, 9, 95).expect("progress");
    journal.opened(4, &start(60)).expect("open");
    journal.closed(4).expect("closed");
    credit(&mut journal, 5, -1_000);
    drop(journal);

    let all = recover(dir.path(), 0, 99).expect("recover");
    assert_eq!(all.generations, vec![1]);
    assert_eq!(all.crashed, 1, "only hold 3 was left open");
    assert_eq!(
        seqs(&all),
        vec![2, 5, 6],
        "the crash charge is numbered after all"
    );
    let crash = &all.pending[2];
    assert_eq!(crash.hold, Some(3));
    assert_eq!(crash.change.map(|c| c.charged), Some(95));
    let log = crash.log.as_ref().expect("row");
    assert_eq!(
        (log.quota, log.prompt_tokens, log.completion_tokens),
        (95, 10, 9)
    );
    assert!(
        log.other.contains(r#""partial_reason":"crash""#),
        "{}",
        log.other
    );
    assert!(log.other.contains(r#""usage_source":"partial""#));
    assert_eq!(all.last_seq, 6);

    // Committed through 2: only 5 and the crash charge remain.
    let later = recover(dir.path(), 2, 99).expect("recover");
    assert_eq!(seqs(&later), vec![5, 6]);
}

/// Bytes in generation `generation`'s file.
fn file_len(dir: &Path, generation: u64) -> u64 {
    std::fs::metadata(path_of(dir, generation))
        .expect("meta")
        .len()
}

#[test]
fn an_opened_record_waits_for_the_next_append_or_the_first_output() {
    let dir = tempfile::tempdir().expect("dir");
    let mut journal = Journal::create(dir.path(), 1).expect("create");
    journal.opened(1, &start(100)).expect("open");
    assert_eq!(file_len(dir.path(), 1), 0, "nothing written at admission");
    assert!(journal.answering(1).expect("answering"), "written now");
    let len = file_len(dir.path(), 1);
    assert!(len > 0);
    assert!(!journal.answering(1).expect("answering"), "only once");
    // Another reservation's record goes out with the next append of anyone.
    journal.opened(2, &start(40)).expect("open");
    credit(&mut journal, 3, -5);
    assert!(!journal.answering(2).expect("answering"), "written already");
    // A whole answer: settled before anything wrote its record, which is never written.
    journal.opened(4, &start(60)).expect("open");
    let before = file_len(dir.path(), 1);
    journal
        .settled(5, Some(4), Some(change(70)), None)
        .expect("settled");
    let settled_only = file_len(dir.path(), 1) - before;
    // Released before it was written: no append at all.
    journal.opened(6, &start(60)).expect("open");
    let before = file_len(dir.path(), 1);
    assert!(!journal.closed(6).expect("closed"), "nothing to close");
    assert_eq!(file_len(dir.path(), 1), before);
    credit(&mut journal, 7, -5);
    drop(journal);
    let bytes = std::fs::read(path_of(dir.path(), 1)).expect("read");
    let mut at = 0;
    let mut opened = Vec::new();
    while let Some((record, next)) = read_record(&bytes, at) {
        if let RecordIn::Opened { hold, .. } = record {
            opened.push(hold);
        }
        at = next;
    }
    assert_eq!(opened, vec![1, 2], "4 and 6 were never written");
    assert!(
        settled_only < 40,
        "the settlement alone: {settled_only} bytes"
    );

    let all = recover(dir.path(), 0, 99).expect("recover");
    let crashed: Vec<Option<u64>> = all
        .pending
        .iter()
        .filter(|p| p.seq > 7)
        .map(|p| p.hold)
        .collect();
    assert_eq!(crashed, vec![Some(1), Some(2)], "the written and open ones");
}

#[test]
fn a_deferred_opened_record_survives_a_failed_append() {
    let dir = tempfile::tempdir().expect("dir");
    let mut journal = Journal::create(dir.path(), 1).expect("create");
    journal.opened(1, &start(100)).expect("open");
    journal.short_write = Some(5);
    assert!(journal.settled(2, None, Some(change(6)), None).is_err());
    credit(&mut journal, 3, 7);
    drop(journal);
    let all = recover(dir.path(), 0, 0).expect("recover");
    assert_eq!(all.crashed, 1, "the reservation's record was written again");
    assert_eq!(seqs(&all), vec![3, 4]);
}

#[test]
fn a_file_written_by_the_previous_version_replays_the_same() {
    // Written by da75103's `Journal` (FNV-1a checksums, every record appended at once):
    // opened 1, settled 2 (of 1, with a consume row), opened 3, progress 3 (9 tokens, 95),
    // opened 4, closed 4, a task settlement 5, a credit 6.
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(
        path_of(dir.path(), 7),
        include_bytes!("../../tests/fixtures/journal-da75103.7"),
    )
    .expect("fixture");
    let all = recover(dir.path(), 0, 99).expect("recover");
    assert_eq!(all.generations, vec![7]);
    assert_eq!(seqs(&all), vec![2, 5, 6, 7]);
    assert_eq!(all.crashed, 1);
    let settled = &all.pending[0];
    assert_eq!(settled.hold, Some(1));
    assert_eq!(settled.change, Some(change(150)));
    let row = settled.log.as_ref().expect("row");
    assert_eq!(
        (row.username.as_str(), row.model_name.as_str(), row.quota),
        ("alice", "gpt-4o", 150)
    );
    assert_eq!(
        all.pending[1].task.as_ref().map(|t| t.upstream_id.as_str()),
        Some("mj-1")
    );
    assert_eq!(all.pending[2].change, Some(change(-1_000)));
    let crash = &all.pending[3];
    assert_eq!(crash.hold, Some(3));
    assert_eq!(crash.change.map(|c| c.charged), Some(95));
    let log = crash.log.as_ref().expect("row");
    assert_eq!((log.prompt_tokens, log.completion_tokens), (10, 9));

    // The new version appends to it (and replays both kinds together).
    let mut journal = Journal::create(dir.path(), 8).expect("create");
    credit(&mut journal, 8, 3);
    drop(journal);
    let both = recover(dir.path(), 0, 99).expect("recover");
    assert_eq!(seqs(&both), vec![2, 5, 6, 8, 9]);
}

#[test]
fn a_task_settlement_is_recovered_with_its_task_and_closes_its_hold() {
    let dir = tempfile::tempdir().expect("dir");
    let mut journal = Journal::create(dir.path(), 1).expect("create");
    journal.opened(1, &start(0)).expect("open");
    let task = Task {
        upstream_id: "mj-1".into(),
        ..Task::default()
    };
    journal
        .settled_task(
            2,
            Some(1),
            Some(change(50)),
            Some(&LogEntry::default()),
            &task,
        )
        .expect("settled");
    drop(journal);
    let all = recover(dir.path(), 0, 99).expect("recover");
    assert_eq!(all.crashed, 0, "the settlement closed its hold");
    assert_eq!(all.pending.len(), 1);
    assert_eq!(all.pending[0].change, Some(change(50)));
    assert_eq!(
        all.pending[0].task.as_ref().map(|t| t.upstream_id.as_str()),
        Some("mj-1")
    );
    // Committed already: nothing to replay.
    assert!(
        recover(dir.path(), 2, 99)
            .expect("recover")
            .pending
            .is_empty()
    );
}

#[test]
fn a_torn_tail_is_ignored() {
    let dir = tempfile::tempdir().expect("dir");
    let mut journal = Journal::create(dir.path(), 3).expect("create");
    credit(&mut journal, 1, 5);
    credit(&mut journal, 2, 6);
    drop(journal);
    let path = path_of(dir.path(), 3);
    let len = std::fs::metadata(&path).expect("meta").len();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("open");
    file.set_len(len - 3).expect("tear");
    let all = recover(dir.path(), 0, 0).expect("recover");
    assert_eq!(seqs(&all), vec![1]);
}

#[test]
fn a_failed_short_append_is_cut_back_so_later_records_are_read() {
    let dir = tempfile::tempdir().expect("dir");
    let mut journal = Journal::create(dir.path(), 1).expect("create");
    credit(&mut journal, 1, 5);
    journal.short_write = Some(7);
    assert!(
        journal.settled(2, None, Some(change(6)), None).is_err(),
        "the disk filled mid-record"
    );
    credit(&mut journal, 3, 7);
    drop(journal);
    let all = recover(dir.path(), 0, 0).expect("recover");
    assert_eq!(
        seqs(&all),
        vec![1, 3],
        "the record after the torn one is read"
    );
}

#[test]
fn no_record_is_larger_than_recovery_reads() {
    let dir = tempfile::tempdir().expect("dir");
    let mut journal = Journal::create(dir.path(), 1).expect("create");
    let huge = LogEntry {
        content: "e".repeat(RECORD_MAX + 1),
        ..LogEntry::default()
    };
    journal
        .settled(1, None, Some(change(5)), Some(&huge))
        .expect("settled");
    let huge_start = HoldStart {
        row: Some(huge.clone()),
        ..start(10)
    };
    journal.opened(2, &huge_start).expect("opened");
    credit(&mut journal, 3, 7);
    drop(journal);
    let all = recover(dir.path(), 0, 0).expect("recover");
    assert_eq!(seqs(&all), vec![1, 3, 4], "every record is read back");
    let row = all.pending[0].log.as_ref().expect("row");
    assert_eq!(row.content.len(), tollgate_storage::logs::MAX_CONTENT_BYTES);
    assert_eq!(all.crashed, 1);
}

#[test]
fn journals_are_moved_aside_where_recovery_does_not_read() {
    let dir = tempfile::tempdir().expect("dir");
    let mut journal = Journal::create(dir.path(), 4).expect("create");
    credit(&mut journal, 1, 5);
    drop(journal);
    let moved = move_aside(dir.path(), "before-restore").expect("moved");
    assert_eq!(moved.len(), 1);
    assert!(moved[0].ends_with("tollgate.journal.4.before-restore"));
    let all = recover(dir.path(), 0, 0).expect("recover");
    assert!(all.pending.is_empty() && all.generations.is_empty());
}

#[test]
fn a_covered_file_is_truncated_and_a_large_one_rotated_keeping_open_holds() {
    let dir = tempfile::tempdir().expect("dir");
    let mut journal = Journal::create(dir.path(), 1).expect("create");
    credit(&mut journal, 1, 5);
    journal.committed(1).expect("committed");
    assert_eq!(journal.len, 0, "covered and nothing open: truncated");

    journal.opened(2, &start(10)).expect("open");
    let row = LogEntry {
        other: "x".repeat(4096),
        ..LogEntry::default()
    };
    let mut seq = 3;
    while journal.len <= ROTATE_BYTES {
        journal
            .settled(seq, None, Some(change(1)), Some(&row))
            .expect("settled");
        seq += 1;
    }
    journal.committed(seq - 1).expect("committed");
    assert_eq!(journal.generation(), 2, "rotated");
    assert!(
        journal.previous.is_none(),
        "the old file was covered: deleted at once"
    );
    let all = recover(dir.path(), seq - 1, 0).expect("recover");
    assert_eq!(all.generations, vec![2]);
    assert_eq!(all.crashed, 1, "the open hold moved to the new file");
}

/// Settles `rows` rows of 4 KiB each from number `seq` on (no reservation); the next number.
fn settle_large(journal: &mut Journal, mut seq: u64, rows: usize) -> u64 {
    let row = LogEntry {
        other: "x".repeat(4096),
        ..LogEntry::default()
    };
    for _ in 0..rows {
        journal
            .settled(seq, None, Some(change(1)), Some(&row))
            .expect("settled");
        seq += 1;
    }
    seq
}

/// A journal in `dir` whose reservation 1 was written to generation 1, grown past
/// [`ROTATE_BYTES`] and trimmed through every settlement (so moved to generation 2, the
/// reservation with it); the next number and the trim's deletions, not done yet.
fn rotated_with_an_open_hold(dir: &Path) -> (Journal, u64, Trimmed) {
    let mut journal = Journal::create(dir, 1).expect("create");
    journal.opened(1, &start(40)).expect("open");
    assert!(journal.answering(1).expect("answering"));
    let mut seq = 2;
    while journal.len <= ROTATE_BYTES {
        seq = settle_large(&mut journal, seq, 1);
    }
    let prepared = journal
        .next_file(seq - 1)
        .map(|f| f.create().expect("create"));
    let trimmed = journal.trim(seq - 1, prepared);
    (journal, seq, trimmed)
}

#[test]
fn a_covered_file_too_large_to_empty_in_place_moves_to_a_file_made_outside_the_lock() {
    let dir = tempfile::tempdir().expect("dir");
    let mut journal = Journal::create(dir.path(), 1).expect("create");
    let next = settle_large(&mut journal, 1, 20);
    assert!(journal.len > trim::EMPTY_IN_PLACE_BYTES);
    // The steps of the log writer's trim: the file is made between the two locked steps.
    let file = journal.next_file(next - 1).expect("a new file is wanted");
    let prepared = file.create().expect("create");
    let trimmed = journal.trim(next - 1, Some(prepared));
    assert_eq!(journal.generation(), 2, "moved to the prepared file");
    assert!(path_of(dir.path(), 1).exists(), "deleted only by finish");
    let removed = trimmed.finish().expect("finish");
    assert_eq!(removed, Some(1));
    journal.previous_removed(1);
    assert!(!path_of(dir.path(), 1).exists());
    assert!(journal.previous.is_none());
    assert_eq!(file_len(dir.path(), 2), 0);
    assert!(
        journal.next_file(next - 1).is_none(),
        "nothing left to trim"
    );
}

#[test]
fn a_file_prepared_before_appends_that_uncover_the_journal_is_deleted_unused() {
    let dir = tempfile::tempdir().expect("dir");
    let mut journal = Journal::create(dir.path(), 1).expect("create");
    let next = settle_large(&mut journal, 1, 20);
    let prepared = journal
        .next_file(next - 1)
        .expect("wanted")
        .create()
        .expect("create");
    // Between the steps a settlement the commit does not cover arrives.
    credit(&mut journal, next, 7);
    let trimmed = journal.trim(next - 1, Some(prepared));
    assert_eq!(journal.generation(), 1, "still the same file");
    assert_eq!(trimmed.finish().expect("finish"), None);
    assert!(!path_of(dir.path(), 2).exists(), "the unused file is gone");
    let all = recover(dir.path(), next - 1, 0).expect("recover");
    assert_eq!(seqs(&all), vec![next], "the uncovered settlement is kept");
}

#[test]
fn the_current_file_is_not_emptied_while_an_older_generation_is_still_on_disk() {
    let dir = tempfile::tempdir().expect("dir");
    // A reservation opened in generation 1 and written there, then moved to generation 2 by a
    // rotation, and settled in generation 2.
    let (mut journal, seq, trimmed) = rotated_with_an_open_hold(dir.path());
    assert_eq!(journal.generation(), 2);
    // Generation 1 cannot be deleted (a directory stands in its place).
    std::fs::remove_file(path_of(dir.path(), 1)).expect("rm");
    std::fs::create_dir(path_of(dir.path(), 1)).expect("mkdir");
    std::fs::write(path_of(dir.path(), 1).join("keep"), b"x").expect("write");
    assert!(trimmed.finish().is_err(), "the deletion failed");
    journal
        .settled(seq, Some(1), Some(change(40)), None)
        .expect("settled");
    // Everything is covered and nothing is open, but generation 1 may still hold the opened
    // record: emptying generation 2 would drop the settlement that closes it.
    let len = journal.len;
    assert!(journal.next_file(seq).is_none());
    let again = journal.trim(seq, None);
    assert_eq!(journal.len, len, "not emptied while generation 1 may exist");
    assert!(again.finish().is_err(), "still cannot delete it");
    // Once generation 1 is gone, the next trim confirms it and may empty generation 2.
    std::fs::remove_dir_all(path_of(dir.path(), 1)).expect("rm dir");
    assert_eq!(journal.trim(seq, None).finish().expect("finish"), Some(1));
    journal.previous_removed(1);
    let emptied = journal.trim(seq, None);
    assert_eq!(emptied.finish().expect("finish"), None);
    assert_eq!(
        journal.len, 0,
        "emptied in place once no older file is left"
    );
}

#[test]
fn a_crash_between_the_switch_and_the_deletion_recovers_without_a_second_charge() {
    let dir = tempfile::tempdir().expect("dir");
    let (mut journal, seq, trimmed) = rotated_with_an_open_hold(dir.path());
    drop(trimmed);
    journal
        .settled(seq, Some(1), Some(change(40)), None)
        .expect("settled");
    // The process dies before `finish`: both generations are on disk.
    drop(journal);
    let all = recover(dir.path(), seq - 1, 0).expect("recover");
    assert_eq!(all.generations, vec![1, 2]);
    assert_eq!(all.crashed, 0, "the reservation is closed in generation 2");
    assert_eq!(seqs(&all), vec![seq]);
}
