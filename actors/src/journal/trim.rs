//! Trimming the journal after a commit, in steps that keep the slow file work outside the lock
//! every append takes (the log writer's numbering lock): deleting a 4 MiB generation takes ~1 ms
//! (~3 ms under load, its page cache dropped with it) and creating one ~0.1 ms, time in which no
//! request could settle. The log writer asks under the lock whether a new file is wanted
//! ([`Journal::next_file`]), creates it without the lock ([`NextFile::create`]), moves to it
//! under the lock ([`Journal::trim`]), deletes what that freed without the lock
//! ([`Trimmed::finish`]) and reports the deletion under the lock
//! ([`Journal::previous_removed`]). A crash between two steps leaves an empty new file or a
//! covered old one, which recovery reads like any generation.
//!
//! One rule makes the order safe: the current file is emptied or replaced only while no older
//! generation is on disk. An older file holds opened records whose settlements may be in the
//! current one; emptying the current file first would let recovery see those reservations open
//! and charge them a second time. So an old generation counts as gone only once its deletion
//! has been seen to succeed.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;

use super::{Journal, ROTATE_BYTES, open_append, path_of, remove};

/// Files up to this size are emptied in place when a commit covers them (truncating a few pages
/// costs µs); a larger covered file is replaced by a new generation and deleted outside the lock.
pub(super) const EMPTY_IN_PLACE_BYTES: u64 = 64 * 1024;

/// The next generation's file, to create outside the lock ([`Journal::next_file`]).
#[derive(Debug)]
pub struct NextFile {
    generation: u64,
    path: PathBuf,
}

impl NextFile {
    /// Creates the file, empty (an earlier attempt's empty file is reused).
    pub fn create(self) -> std::io::Result<Prepared> {
        let file = open_append(&self.path)?;
        file.set_len(0)?;
        Ok(Prepared {
            generation: self.generation,
            path: self.path,
            file,
        })
    }
}

/// A created next generation, empty, for [`Journal::trim`].
#[derive(Debug)]
pub struct Prepared {
    generation: u64,
    path: PathBuf,
    file: File,
}

/// What a trim freed, to delete outside the lock ([`Trimmed::finish`]).
#[derive(Debug, Default)]
#[must_use = "the freed files are deleted by `finish`"]
pub struct Trimmed {
    /// A prepared file the trim did not use.
    unused: Option<PathBuf>,
    /// The previous generation, covered by the commit.
    previous: Option<(u64, PathBuf)>,
    /// What failed under the lock (reported by `finish`, after the deletions).
    error: Option<std::io::Error>,
}

impl Trimmed {
    /// Deletes the freed files. Returns the previous generation once it is gone (for
    /// [`Journal::previous_removed`]), or the first failure; a previous generation whose
    /// deletion failed stays known to the journal, and the next trim tries again.
    pub fn finish(self) -> std::io::Result<Option<u64>> {
        let unused = self.unused.as_deref().map_or(Ok(()), remove);
        let previous = match &self.previous {
            Some((generation, path)) => remove(path).map(|()| Some(*generation)),
            None => Ok(None),
        };
        if let Some(e) = self.error {
            return Err(e);
        }
        unused.and(previous)
    }
}

impl Journal {
    /// Whether the trim after a commit through `through` will move to a new file: the current
    /// one has grown past [`ROTATE_BYTES`], or it is covered, holds no open reservation and is
    /// too large to empty in place. `None` while an older generation is still on disk.
    pub fn next_file(&self, through: u64) -> Option<NextFile> {
        if self.previous.is_some() {
            return None;
        }
        let covered_large = self.len > EMPTY_IN_PLACE_BYTES && self.covered(through);
        (self.len > ROTATE_BYTES || covered_large).then(|| {
            let generation = self.generation.saturating_add(1);
            NextFile {
                generation,
                path: path_of(&self.dir, generation),
            }
        })
    }

    /// The database now holds every settlement up to `through`: moves to `prepared` (from
    /// [`Journal::next_file`]) if the file has grown past [`ROTATE_BYTES`] or is covered, or,
    /// without one, empties a covered file in place. Returns what to delete outside the lock.
    pub fn trim(&mut self, through: u64, prepared: Option<Prepared>) -> Trimmed {
        let mut trimmed = Trimmed::default();
        let current = self.previous.is_none() && self.len > 0;
        let wanted = current && (self.len > ROTATE_BYTES || self.covered(through));
        match prepared {
            Some(next) if wanted && next.generation == self.generation.saturating_add(1) => {
                if let Err(e) = self.rotate(next.generation, next.file) {
                    trimmed.unused = Some(next.path);
                    trimmed.error = Some(e);
                }
            }
            // Appends since `next_file` changed the answer: the file is not needed.
            Some(next) => trimmed.unused = Some(next.path),
            None if current && self.covered(through) => {
                if let Err(e) = self.empty_in_place() {
                    trimmed.error = Some(e);
                }
            }
            None => {}
        }
        if let Some((generation, last)) = self.previous
            && last <= through
        {
            trimmed.previous = Some((generation, path_of(&self.dir, generation)));
        }
        trimmed
    }

    /// The previous generation `generation` is deleted ([`Trimmed::finish`]).
    pub fn previous_removed(&mut self, generation: u64) {
        if self.previous.is_some_and(|(g, _)| g == generation) {
            self.previous = None;
        }
    }

    /// [`Journal::trim`] with every step in turn, the file work included: for the replay at
    /// start, before anyone appends.
    pub fn committed(&mut self, through: u64) -> std::io::Result<()> {
        let prepared = self.next_file(through).map(NextFile::create).transpose()?;
        if let Some(generation) = self.trim(through, prepared).finish()? {
            self.previous_removed(generation);
        }
        Ok(())
    }

    /// Every settlement of the current file is committed and no reservation is open.
    fn covered(&self, through: u64) -> bool {
        self.last_seq <= through && self.open.is_empty()
    }

    /// Empties the current file (covered, and no older generation on disk).
    fn empty_in_place(&mut self) -> std::io::Result<()> {
        self.file.set_len(0)?;
        self.len = 0;
        self.last_seq = 0;
        self.torn = false;
        Ok(())
    }

    /// Moves to generation `generation` (`file`, created empty) holding the open reservations;
    /// the current file becomes the previous one, deleted once its settlements are committed.
    fn rotate(&mut self, generation: u64, mut file: File) -> std::io::Result<()> {
        let mut bytes = Vec::new();
        for open in self.open.values() {
            bytes.extend_from_slice(&open.opened);
            bytes.extend_from_slice(&open.progress);
        }
        file.write_all(&bytes)?;
        for open in self.open.values_mut() {
            open.written = true;
        }
        self.deferred.clear();
        self.previous = Some((self.generation, self.last_seq));
        self.generation = generation;
        self.file = file;
        self.len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        self.last_seq = 0;
        self.torn = false;
        Ok(())
    }
}
