//! The crash journal: every settlement and every open reservation, appended to a file next to
//! the database before the request that made it answers its last byte, so a process crash
//! (`kill -9`, a panic that aborts, the OOM killer) loses no charge. The database itself is only
//! committed every gather interval (see [`crate::log_writer`]); the journal covers the gap.
//!
//! An append is one `write(2)` of framed records to the page cache, without fsync: it survives
//! the process, not the machine (power loss can lose what the last database commit did not
//! cover, at most the commit interval). It runs inline on the request's thread, a named exception
//! to "no blocking I/O on async workers": a write to the page cache costs a few µs (measured in
//! `benches/hot_path.rs`, `journal/*`), less than handing the record to a journal thread and
//! waiting for its acknowledgement, and it only blocks longer when the kernel throttles a
//! process that dirties pages faster than the disk takes them.
//!
//! A reservation's opened record is not written when the reservation is made but with the
//! journal's next append (anyone's), and at the latest when its answer's first output is read
//! ([`Journal::answering`]), before that output leaves: a settlement closes the reservation in
//! its own record, so a whole answer (settled before its first byte leaves) costs one append,
//! and a reservation released before it was written costs none. What a crash can miss is a
//! reservation whose client has received no output yet (nothing of an answer to charge).
//!
//! Each record is framed by its length and a CRC-32 (flagged in the length word; records of
//! older files carry FNV-1a and read the same).
//!
//! Records carry the settlement's number (the log writer's sequence): at start every journalled
//! settlement above the database's [`tollgate_storage::meta::settled_through`] is committed, and
//! one at or below it is known to be there already, so replaying twice applies nothing twice. A
//! reservation opened but neither settled nor released is charged its prompt estimate plus the
//! output of its last progress record (`usage_source: partial`, reason `crash`).
//!
//! Files: `tollgate.journal.<generation>` in the data directory. After a commit covers every
//! settlement of the current file and no reservation is open, it is emptied; a file grown past
//! [`ROTATE_BYTES`] is replaced by a new generation holding the open reservations, and deleted
//! once a commit covers its settlements. The file work that can take milliseconds (creating the
//! next generation, deleting a covered one) runs outside the lock appends take ([`trim`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tollgate_storage::logs::LogEntry;
use tollgate_storage::tasks::Task;
use tollgate_storage::usage::BalanceChange;
use tollgate_storage::{TokenId, UserId};

/// The journal files' name prefix (a generation number follows).
pub const FILE_PREFIX: &str = "tollgate.journal.";

/// Size past which the journal moves to a new file (see the module docs).
pub const ROTATE_BYTES: u64 = 4 * 1024 * 1024;

/// Length and checksum in front of every record.
const HEADER: usize = 4 + 8;

/// Set in a record's length word when its checksum word holds a CRC-32; records written
/// without it (by earlier versions) carry FNV-1a.
const CRC_FLAG: u32 = 1 << 31;

/// Largest record accepted when reading, and so when writing: a larger one is never written
/// ([`frame`] refuses it; a settlement's log row is bounded first, see [`Journal::settled`]).
const RECORD_MAX: usize = 1 << 24;

/// What a reservation would be charged if the process died before settling it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HoldStart {
    /// Whose balance.
    pub user: UserId,
    /// The key used, if any.
    pub token: Option<TokenId>,
    /// Prompt tokens as estimated at admission.
    pub prompt_tokens: i64,
    /// What the prompt estimate alone costs: the least a crashed request is charged.
    pub prompt_cost: i64,
    /// The log row written for a crash charge (its quota, tokens and `other` are filled then);
    /// `None` while `LogConsumeEnabled` is off (the charge is still made).
    pub row: Option<LogEntry>,
}

/// A record as written (borrowing what it journals).
#[derive(Serialize)]
enum RecordOut<'a> {
    Settled {
        seq: u64,
        hold: Option<u64>,
        change: Option<BalanceChange>,
        log: Option<&'a LogEntry>,
    },
    Opened {
        hold: u64,
        start: &'a HoldStart,
    },
    Progress {
        hold: u64,
        completion_tokens: i64,
        cost: i64,
    },
    Closed {
        hold: u64,
    },
    /// A submit's settlement with the task it pays for (last, so older files read the same).
    SettledTask {
        seq: u64,
        hold: Option<u64>,
        change: Option<BalanceChange>,
        log: Option<&'a LogEntry>,
        task: &'a Task,
    },
}

/// A record as read (the same variants in the same order as [`RecordOut`]).
#[derive(Deserialize)]
enum RecordIn {
    Settled {
        seq: u64,
        hold: Option<u64>,
        change: Option<BalanceChange>,
        log: Option<LogEntry>,
    },
    Opened {
        hold: u64,
        start: HoldStart,
    },
    Progress {
        hold: u64,
        completion_tokens: i64,
        cost: i64,
    },
    Closed {
        hold: u64,
    },
    SettledTask {
        seq: u64,
        hold: Option<u64>,
        change: Option<BalanceChange>,
        log: Option<LogEntry>,
        task: Box<Task>,
    },
}

/// A journalled settlement to commit at start.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    /// Its number.
    pub seq: u64,
    /// The reservation it settled, if any.
    pub hold: Option<u64>,
    /// The balance change.
    pub change: Option<BalanceChange>,
    /// The log row.
    pub log: Option<LogEntry>,
    /// The task a submit's settlement pays for (inserted with the charge).
    pub task: Option<Box<Task>>,
}

/// CRC-32: detects a record torn by a power loss (no adversary writes this file).
fn checksum(bytes: &[u8]) -> u64 {
    u64::from(crc32fast::hash(bytes))
}

/// FNV-1a, 64 bits: the checksum of records written by earlier versions (read only).
fn checksum_fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Appends one framed record to `buf`; a record larger than recovery reads ([`RECORD_MAX`]) is
/// refused (`InvalidInput`) and `buf` left as it was.
fn frame(buf: &mut Vec<u8>, record: &RecordOut<'_>) -> std::io::Result<()> {
    let start = buf.len();
    buf.extend_from_slice(&[0; HEADER]);
    let mut out = std::mem::take(buf);
    out = postcard::to_extend(record, out).map_err(std::io::Error::other)?;
    let len = out.len() - start - HEADER;
    if len > RECORD_MAX {
        out.truncate(start);
        *buf = out;
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("a journal record of {len} bytes is larger than recovery reads"),
        ));
    }
    let sum = checksum(&out[start + HEADER..]);
    let len = u32::try_from(len).map_err(std::io::Error::other)? | CRC_FLAG;
    out[start..start + 4].copy_from_slice(&len.to_le_bytes());
    out[start + 4..start + HEADER].copy_from_slice(&sum.to_le_bytes());
    *buf = out;
    Ok(())
}

/// The path of generation `generation` in `dir`.
fn path_of(dir: &Path, generation: u64) -> PathBuf {
    dir.join(format!("{FILE_PREFIX}{generation}"))
}

/// Opens (creating, owner-only) a journal file for appending.
fn open_append(path: &Path) -> std::io::Result<File> {
    tollgate_storage::private_file::options()
        .create(true)
        .append(true)
        .open(path)
}

/// An open reservation's records, rewritten into a new generation on rotation.
#[derive(Debug, Default)]
struct OpenHold {
    /// Its opened record, framed.
    opened: Vec<u8>,
    /// Its last progress record, framed (empty: none yet).
    progress: Vec<u8>,
    /// The opened record is in the file (else it waits in [`Journal::deferred`]).
    written: bool,
}

/// The journal being written. Not shared by itself: the log writer keeps it under the lock that
/// numbers settlements, so records are in number order.
#[derive(Debug)]
pub struct Journal {
    dir: PathBuf,
    generation: u64,
    file: File,
    /// Bytes in the current file.
    len: u64,
    /// The highest settlement number in the current file (0: none).
    last_seq: u64,
    /// Reservations open now.
    open: HashMap<u64, OpenHold, foldhash::fast::RandomState>,
    /// Reservations whose opened record is not in the file yet, in the order they were opened:
    /// the next append writes those still open in front of its own record.
    deferred: Vec<u64>,
    /// The previous generation and its highest settlement number, deleted once committed.
    previous: Option<(u64, u64)>,
    /// Reused encoding buffer.
    buf: Vec<u8>,
    /// An append failed and the bytes it may have left past `len` are not cut off yet: the
    /// next append cuts them first (a record after a torn one would never be read back).
    torn: bool,
    /// Tests only: the next append writes this many bytes of its record, then fails.
    #[cfg(test)]
    short_write: Option<usize>,
}

impl Journal {
    /// Starts generation `generation` in `dir` (an empty new file).
    pub fn create(dir: &Path, generation: u64) -> std::io::Result<Journal> {
        let path = path_of(dir, generation);
        let file = open_append(&path)?;
        file.set_len(0)?;
        Ok(Journal {
            dir: dir.to_path_buf(),
            generation,
            file,
            len: 0,
            last_seq: 0,
            open: HashMap::default(),
            deferred: Vec::new(),
            previous: None,
            buf: Vec::with_capacity(1024),
            torn: false,
            #[cfg(test)]
            short_write: None,
        })
    }

    /// The current generation.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Writes what is in the buffer (one `write(2)` for a record of any usual size). A failed or
    /// short write (a full disk) is cut back to the last whole record at once, or before the
    /// next append when that fails too, so no record ever follows a torn one.
    fn flush_buf(&mut self) -> std::io::Result<()> {
        let result = self.cut_torn().and_then(|()| self.write_buf());
        match &result {
            Ok(()) => {
                self.len = self
                    .len
                    .saturating_add(u64::try_from(self.buf.len()).unwrap_or(u64::MAX));
                // The buffer began with the deferred opened records (see `begin`).
                for hold in self.deferred.drain(..) {
                    if let Some(open) = self.open.get_mut(&hold) {
                        open.written = true;
                    }
                }
            }
            Err(_) => {
                self.torn = true;
                // Best effort now; `cut_torn` retries before the next append.
                let _ = self.cut_torn();
            }
        }
        self.buf.clear();
        result
    }

    /// Starts an append: the buffer holds the opened records of the reservations still open
    /// whose records are not written yet (marked written once the append succeeds).
    fn begin(&mut self) {
        self.buf.clear();
        for hold in &self.deferred {
            if let Some(open) = self.open.get(hold).filter(|open| !open.written) {
                self.buf.extend_from_slice(&open.opened);
            }
        }
    }

    /// Cuts the file back to its last whole record after a failed append.
    fn cut_torn(&mut self) -> std::io::Result<()> {
        if self.torn {
            self.file.set_len(self.len)?;
            self.torn = false;
        }
        Ok(())
    }

    /// The buffer's one write.
    fn write_buf(&mut self) -> std::io::Result<()> {
        #[cfg(test)]
        if let Some(n) = self.short_write.take() {
            let n = n.min(self.buf.len());
            self.file.write_all(&self.buf[..n])?;
            return Err(std::io::Error::other("injected short write"));
        }
        self.file.write_all(&self.buf)
    }

    /// Journals a settlement numbered `seq` (of reservation `hold`, if any).
    pub fn settled(
        &mut self,
        seq: u64,
        hold: Option<u64>,
        change: Option<BalanceChange>,
        log: Option<&LogEntry>,
    ) -> std::io::Result<()> {
        if let Some(hold) = hold {
            self.open.remove(&hold);
        }
        self.begin();
        let framed = frame(
            &mut self.buf,
            &RecordOut::Settled {
                seq,
                hold,
                change,
                log,
            },
        );
        if let Err(e) = framed {
            // A row too large to journal is journalled as it will be stored: bounded.
            let Some(mut bounded) = log
                .filter(|_| e.kind() == std::io::ErrorKind::InvalidInput)
                .cloned()
            else {
                return Err(e);
            };
            bounded.bound();
            frame(
                &mut self.buf,
                &RecordOut::Settled {
                    seq,
                    hold,
                    change,
                    log: Some(&bounded),
                },
            )?;
        }
        self.last_seq = self.last_seq.max(seq);
        self.flush_buf()
    }

    /// Journals a submit's settlement numbered `seq` together with the `task` it pays for, so a
    /// crash before the database commit replays the charge and the task together.
    pub fn settled_task(
        &mut self,
        seq: u64,
        hold: Option<u64>,
        change: Option<BalanceChange>,
        log: Option<&LogEntry>,
        task: &Task,
    ) -> std::io::Result<()> {
        if let Some(hold) = hold {
            self.open.remove(&hold);
        }
        self.begin();
        let bounded = log.cloned().map(|mut row| {
            row.bound();
            row
        });
        let mut task = task.clone();
        task.bound();
        frame(
            &mut self.buf,
            &RecordOut::SettledTask {
                seq,
                hold,
                change,
                log: bounded.as_ref(),
                task: &task,
            },
        )?;
        self.last_seq = self.last_seq.max(seq);
        self.flush_buf()
    }

    /// Journals an opened reservation: its record is written with the next append, and at the
    /// latest by [`Journal::answering`] (see the module docs). Writes nothing itself.
    pub fn opened(&mut self, hold: u64, start: &HoldStart) -> std::io::Result<()> {
        let mut opened = Vec::with_capacity(256);
        if let Err(e) = frame(&mut opened, &RecordOut::Opened { hold, start }) {
            if e.kind() != std::io::ErrorKind::InvalidInput {
                return Err(e);
            }
            let mut bounded = start.clone();
            if let Some(row) = &mut bounded.row {
                row.bound();
            }
            frame(
                &mut opened,
                &RecordOut::Opened {
                    hold,
                    start: &bounded,
                },
            )?;
        }
        self.open.insert(
            hold,
            OpenHold {
                opened,
                progress: Vec::new(),
                written: false,
            },
        );
        self.deferred.push(hold);
        Ok(())
    }

    /// The answer of reservation `hold` has output to send: writes its opened record (with any
    /// other deferred) if it is not in the file yet, so a crash from now on charges it. Whether
    /// it appended.
    pub fn answering(&mut self, hold: u64) -> std::io::Result<bool> {
        if self.open.get(&hold).is_none_or(|open| open.written) {
            return Ok(false);
        }
        self.begin();
        self.flush_buf().map(|()| true)
    }

    /// Journals a reservation's progress: the output so far and what it costs with the prompt.
    pub fn progress(
        &mut self,
        hold: u64,
        completion_tokens: i64,
        cost: i64,
    ) -> std::io::Result<()> {
        self.begin();
        let at = self.buf.len();
        frame(
            &mut self.buf,
            &RecordOut::Progress {
                hold,
                completion_tokens,
                cost,
            },
        )?;
        if let Some(open) = self.open.get_mut(&hold) {
            open.progress.clear();
            open.progress.extend_from_slice(&self.buf[at..]);
        }
        self.flush_buf()
    }

    /// Journals a reservation released without a charge (nothing to write when its opened
    /// record was not written yet). Whether it appended.
    pub fn closed(&mut self, hold: u64) -> std::io::Result<bool> {
        let Some(open) = self.open.remove(&hold) else {
            return Ok(false);
        };
        if !open.written {
            self.deferred.retain(|h| *h != hold);
            return Ok(false);
        }
        self.begin();
        frame(&mut self.buf, &RecordOut::Closed { hold })?;
        self.flush_buf().map(|()| true)
    }

    /// Appends a record that changes nothing (closes no reservation): whether the journal can
    /// be written again after a failure.
    pub fn probe(&mut self) -> std::io::Result<()> {
        self.begin();
        frame(&mut self.buf, &RecordOut::Closed { hold: 0 })?;
        self.flush_buf()
    }
}

/// Deletes a file that may already be gone.
fn remove(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// What the journal files of a directory hold, read at start.
#[derive(Debug, Default)]
pub struct Recovered {
    /// Settlements above the committed number, in number order, then one crash charge per
    /// reservation left open (numbered after every number seen).
    pub pending: Vec<Pending>,
    /// The highest settlement number given (the next is one more).
    pub last_seq: u64,
    /// The generations found (to delete once a new one holds what is pending).
    pub generations: Vec<u64>,
    /// Reservations charged for a crash.
    pub crashed: usize,
}

/// Reads every journal file in `dir`. `settled`: the database's committed number. Settlements
/// at or below it are skipped; reservations neither settled nor released become crash charges
/// (at `now`, unix seconds) via [`crash_charge`].
pub fn recover(dir: &Path, settled: u64, now: i64) -> std::io::Result<Recovered> {
    let mut generations = Vec::new();
    match std::fs::read_dir(dir) {
        Ok(entries) => {
            for entry in entries {
                let name = entry?.file_name();
                if let Some(generation) = name
                    .to_str()
                    .and_then(|n| n.strip_prefix(FILE_PREFIX))
                    .and_then(|g| g.parse::<u64>().ok())
                {
                    generations.push(generation);
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    generations.sort_unstable();
    let mut settled_map: BTreeMap<u64, Pending> = BTreeMap::new();
    let mut opened: BTreeMap<u64, (HoldStart, i64, i64)> = BTreeMap::new();
    let mut closed: HashSet<u64> = HashSet::new();
    let mut last_seq = settled;
    for generation in &generations {
        let mut bytes = Vec::new();
        File::open(path_of(dir, *generation))?.read_to_end(&mut bytes)?;
        let mut at = 0;
        while let Some((record, next)) = read_record(&bytes, at) {
            at = next;
            match record {
                RecordIn::Settled {
                    seq,
                    hold,
                    change,
                    log,
                } => {
                    last_seq = last_seq.max(seq);
                    if let Some(hold) = hold {
                        closed.insert(hold);
                    }
                    if seq > settled {
                        settled_map.insert(
                            seq,
                            Pending {
                                seq,
                                hold,
                                change,
                                log,
                                task: None,
                            },
                        );
                    }
                }
                RecordIn::SettledTask {
                    seq,
                    hold,
                    change,
                    log,
                    task,
                } => {
                    last_seq = last_seq.max(seq);
                    if let Some(hold) = hold {
                        closed.insert(hold);
                    }
                    if seq > settled {
                        settled_map.insert(
                            seq,
                            Pending {
                                seq,
                                hold,
                                change,
                                log,
                                task: Some(task),
                            },
                        );
                    }
                }
                RecordIn::Opened { hold, start } => {
                    last_seq = last_seq.max(hold);
                    let cost = start.prompt_cost;
                    opened.entry(hold).or_insert((start, 0, cost));
                }
                RecordIn::Progress {
                    hold,
                    completion_tokens,
                    cost,
                } => {
                    if let Some(entry) = opened.get_mut(&hold) {
                        entry.1 = entry.1.max(completion_tokens);
                        entry.2 = entry.2.max(cost);
                    }
                }
                RecordIn::Closed { hold } => {
                    closed.insert(hold);
                }
            }
        }
        if at < bytes.len() {
            tracing::warn!(
                generation,
                ignored = bytes.len() - at,
                "the journal ends in a torn record (a power loss during its write); it is ignored"
            );
        }
    }
    let mut pending: Vec<Pending> = settled_map.into_values().collect();
    let mut crashed = 0;
    for (hold, (start, completion, cost)) in opened {
        if closed.contains(&hold) {
            continue;
        }
        last_seq = last_seq.saturating_add(1);
        pending.push(crash_charge(last_seq, hold, start, completion, cost, now));
        crashed += 1;
    }
    Ok(Recovered {
        pending,
        last_seq,
        generations,
        crashed,
    })
}

/// The settlement of a reservation the process died holding: its prompt estimate plus the
/// output of its last progress record (`cost`), logged as `usage_source: partial`, reason
/// `crash` (`partial_reason` in the row's `other`, as the relay writes it).
pub fn crash_charge(
    seq: u64,
    hold: u64,
    start: HoldStart,
    completion_tokens: i64,
    cost: i64,
    now: i64,
) -> Pending {
    let log = start.row.map(|mut row| {
        row.quota = cost;
        row.prompt_tokens = start.prompt_tokens;
        row.completion_tokens = completion_tokens;
        row.other = serde_json::json!({
            "cost": cost,
            "usage_source": "partial",
            "partial_reason": "crash",
        })
        .to_string();
        row
    });
    Pending {
        seq,
        hold: Some(hold),
        change: Some(BalanceChange {
            user_id: start.user,
            token_id: start.token,
            charged: cost,
            is_request: true,
            at: now,
        }),
        log,
        task: None,
    }
}

/// The record at `at` and where the next starts; `None` at the end or at a torn record.
fn read_record(bytes: &[u8], at: usize) -> Option<(RecordIn, usize)> {
    let header = bytes.get(at..at.checked_add(HEADER)?)?;
    let word = u32::from_le_bytes(header[..4].try_into().ok()?);
    let len = usize::try_from(word & !CRC_FLAG).ok()?;
    if len > RECORD_MAX {
        return None;
    }
    let sum = u64::from_le_bytes(header[4..].try_into().ok()?);
    let start = at + HEADER;
    let payload = bytes.get(start..start.checked_add(len)?)?;
    let expected = if word & CRC_FLAG == 0 {
        checksum_fnv(payload)
    } else {
        checksum(payload)
    };
    if expected != sum {
        return None;
    }
    let record = postcard::from_bytes(payload).ok()?;
    Some((record, start + len))
}

/// Renames every journal file of `dir` to `<name>.<suffix>`, where recovery does not read it:
/// for a database put back from a backup, whose history the journal does not continue.
/// Returns the new paths.
pub fn move_aside(dir: &Path, suffix: &str) -> std::io::Result<Vec<PathBuf>> {
    let mut moved = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(moved),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let name = entry?.file_name();
        let Some(name) = name.to_str() else { continue };
        let is_journal = name
            .strip_prefix(FILE_PREFIX)
            .is_some_and(|g| g.parse::<u64>().is_ok());
        if is_journal {
            let to = dir.join(format!("{name}.{suffix}"));
            std::fs::rename(dir.join(name), &to)?;
            moved.push(to);
        }
    }
    Ok(moved)
}

/// Deletes the journal files of `generations` (after a new generation holds what they had).
pub fn remove_generations(dir: &Path, generations: &[u64]) -> std::io::Result<()> {
    for generation in generations {
        remove(&path_of(dir, *generation))?;
    }
    Ok(())
}

mod trim;

pub use trim::{NextFile, Prepared, Trimmed};

#[cfg(test)]
mod tests;
