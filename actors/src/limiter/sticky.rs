//! Sticky routing for prompt caches (P15 item 4): the channel and key that last answered a
//! conversation, so its next request reaches the same upstream cache. The map is per node and
//! bounded: sixteen shards, each two generations of at most half its share of the entries (when
//! the young one is full it becomes the old one and the old one is dropped), so the least
//! recently used conversations go first; an entry older than the TTL is not used. A
//! conversation whose channel answered 429 or 5xx (or nothing) keeps the channel only to avoid
//! it on its next draw; the channel that answers next is recorded instead.

use std::collections::HashMap;
use std::sync::Mutex;

use tollgate_storage::ChannelId;

use super::clock::MillisClock;

const SHARDS: usize = 16;

/// Where a conversation goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stuck {
    /// To this channel and key line (while it serves the request).
    To(ChannelId, Option<u32>),
    /// Anywhere but this channel, which failed it last.
    Avoid(ChannelId),
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    stuck: Stuck,
    /// When it was last used (Unix milliseconds).
    at: i64,
}

#[derive(Debug, Default)]
struct Shard {
    young: HashMap<u64, Entry>,
    old: HashMap<u64, Entry>,
}

/// The per-node map of conversations to channels.
pub struct Sticky {
    shards: Box<[Mutex<Shard>]>,
    clock: MillisClock,
}

impl std::fmt::Debug for Sticky {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sticky").field("len", &self.len()).finish()
    }
}

impl Sticky {
    /// An empty map reading the time from `clock`.
    pub fn new(clock: MillisClock) -> Sticky {
        Sticky {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            clock,
        }
    }

    fn shard(&self, key: u64) -> std::sync::MutexGuard<'_, Shard> {
        let index = usize::try_from(key % SHARDS as u64).unwrap_or(0);
        self.shards
            .get(index)
            .unwrap_or(&self.shards[0])
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Where conversation `key` goes, if it was seen within `ttl_ms`.
    pub fn get(&self, key: u64, ttl_ms: i64) -> Option<Stuck> {
        let now = (self.clock)();
        let shard = self.shard(key);
        let entry = match shard.young.get(&key) {
            Some(e) => *e,
            None => *shard.old.get(&key)?,
        };
        (now.saturating_sub(entry.at) <= ttl_ms).then_some(entry.stuck)
    }

    /// Records that `channel` (key line `line`) answered conversation `key`; the map keeps at
    /// most about `max_entries`.
    pub fn answered(&self, key: u64, channel: ChannelId, line: Option<u32>, max_entries: usize) {
        self.put(key, Stuck::To(channel, line), max_entries);
    }

    /// Records that `channel` failed conversation `key` (429, 5xx, no answer): its next draw
    /// avoids it. Nothing changes when the conversation was not on that channel.
    pub fn failed(&self, key: u64, channel: ChannelId, max_entries: usize) {
        let on_it = matches!(self.get(key, i64::MAX), Some(Stuck::To(c, _)) if c == channel);
        if on_it {
            self.put(key, Stuck::Avoid(channel), max_entries);
        }
    }

    fn put(&self, key: u64, stuck: Stuck, max_entries: usize) {
        let half = (max_entries / SHARDS / 2).max(1);
        let at = (self.clock)();
        let mut shard = self.shard(key);
        shard.old.remove(&key);
        if shard.young.len() >= half && !shard.young.contains_key(&key) {
            shard.old = std::mem::take(&mut shard.young);
        }
        shard.young.insert(key, Entry { stuck, at });
    }

    /// Conversations held.
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| {
                let s = s.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                s.young.len() + s.old.len()
            })
            .sum()
    }

    /// Whether no conversation is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI64, Ordering};

    use super::*;

    fn map() -> (Sticky, Arc<AtomicI64>) {
        let now = Arc::new(AtomicI64::new(1_000));
        let clock = Arc::clone(&now);
        (
            Sticky::new(Arc::new(move || clock.load(Ordering::SeqCst))),
            now,
        )
    }

    #[test]
    fn a_conversation_sticks_fails_over_and_expires() {
        let (map, now) = map();
        assert_eq!(map.get(7, 60_000), None);
        map.answered(7, ChannelId(3), Some(1), 1_000);
        assert_eq!(map.get(7, 60_000), Some(Stuck::To(ChannelId(3), Some(1))));
        map.failed(7, ChannelId(4), 1_000);
        assert_eq!(
            map.get(7, 60_000),
            Some(Stuck::To(ChannelId(3), Some(1))),
            "another channel's failure changes nothing"
        );
        map.failed(7, ChannelId(3), 1_000);
        assert_eq!(map.get(7, 60_000), Some(Stuck::Avoid(ChannelId(3))));
        map.answered(7, ChannelId(5), None, 1_000);
        now.fetch_add(60_001, Ordering::SeqCst);
        assert_eq!(map.get(7, 60_000), None, "past its TTL");
    }

    #[test]
    fn the_map_stays_bounded_and_keeps_the_recent_conversations() {
        let (map, _) = map();
        let max = 320;
        for key in 0..10_000u64 {
            map.answered(key, ChannelId(1), None, max);
        }
        assert!(map.len() <= max, "{}", map.len());
        assert!(map.get(9_999, i64::MAX).is_some());
        assert!(map.get(0, i64::MAX).is_none());
    }
}
