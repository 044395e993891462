//! The in-memory token index: API key → what the relay must know about the token, so that
//! authenticating a request reads no storage.
//!
//! A sharded concurrent map (dashmap): a lookup locks one shard for the duration of a hash probe
//! and different keys rarely share a shard, so there is no global lock on the hot path. It is
//! patched on every token change (create, update, status, delete) by the console, so a disabled
//! key stops working on the next request. The remaining quota is NOT here: the user's quota actor
//! owns balances.
//!
//! Entries are kept while used: [`TokenIndex::sweep`] (run every idle period) drops those no
//! request looked up during a whole period, and [`TokenIndex::lookup`] reads one back from
//! storage on its key's next request. What is kept for every stored key is its digest (a keyed
//! 64-bit hash, 8 bytes a key, random per process), so a key whose digest is not there is
//! refused without a storage read: the digests have no false negatives (every stored key's is
//! added at load and on create; a deleted key's stays until the next start, so it costs a read
//! and is refused), and a false positive only costs one read.
//!
//! Patches reach the map in the order their changes were committed: each goes through
//! [`TokenIndex::edit`], which holds one edit lock across the storage commit and the patch.
//! Without it an update that committed before a delete could patch the map after it, and the
//! deleted key would authenticate again until the next restart. An entry read back on demand is
//! kept only when no patch ran while it was read (the edit generation), so a read that raced a
//! change never puts the old record back.

use std::collections::HashSet;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use dashmap::{DashMap, DashSet};
use ipnet::IpNet;
use tollgate_storage::tokens::{self, STATUS_ENABLED, Token};
use tollgate_storage::{StorageError, Store, TokenId, UserId};

/// What the relay needs to know about a token.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenEntry {
    /// Token id.
    pub id: TokenId,
    /// Owner.
    pub user_id: UserId,
    /// Name (for logs).
    pub name: String,
    /// Stored status (1 enabled).
    pub status: i32,
    /// Unix seconds of expiry, -1 for never.
    pub expired_time: i64,
    /// No per-token quota limit.
    pub unlimited_quota: bool,
    /// Allowed models when restricted.
    pub model_limits: Option<HashSet<String>>,
    /// Allowed client networks; empty allows every address.
    pub allow_ips: Vec<IpNet>,
    /// Billing group; empty means the user's group.
    pub group: String,
}

impl TokenEntry {
    /// Builds the entry of a stored token.
    pub fn from_token(token: &Token) -> TokenEntry {
        TokenEntry {
            id: token.id,
            user_id: token.user_id,
            name: token.name.clone(),
            status: token.status,
            expired_time: token.expired_time,
            unlimited_quota: token.unlimited_quota,
            model_limits: token.model_limits_enabled.then(|| {
                token
                    .model_limits
                    .split(',')
                    .map(str::trim)
                    .filter(|m| !m.is_empty())
                    .map(str::to_owned)
                    .collect()
            }),
            allow_ips: parse_allow_ips(&token.allow_ips).unwrap_or_default(),
            group: token.group.clone(),
        }
    }

    /// Whether the token is enabled and not past its expiry at `now`.
    pub fn is_usable(&self, now: i64) -> bool {
        self.status == STATUS_ENABLED && (self.expired_time == -1 || self.expired_time > now)
    }

    /// Whether `ip` may use the token.
    pub fn allows_ip(&self, ip: IpAddr) -> bool {
        self.allow_ips.is_empty() || self.allow_ips.iter().any(|net| net.contains(&ip))
    }

    /// Whether the token may call `model`.
    pub fn allows_model(&self, model: &str) -> bool {
        self.model_limits
            .as_ref()
            .is_none_or(|set| set.contains(model))
    }
}

/// Parses an allow list: one IP or CIDR per line (commas also separate); blank lines ignored.
/// The error names the first entry that is neither.
pub fn parse_allow_ips(text: &str) -> Result<Vec<IpNet>, String> {
    text.split(['\n', ','])
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| {
            l.parse::<IpNet>()
                .or_else(|_| l.parse::<IpAddr>().map(IpNet::from))
                .map_err(|_| l.to_owned())
        })
        .collect()
}

/// Hashes a digest (already a keyed hash) to itself, so the digest set hashes nothing again.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only u64 digests are hashed here; fold anything else in rather than panic.
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A loaded entry and the sweep period it was last looked up in.
struct Slot {
    entry: Arc<TokenEntry>,
    used: AtomicU64,
}

/// What [`TokenIndex`] has done, for `/metrics` and tests.
#[derive(Debug, Default)]
pub struct TokenIndexStats {
    /// Storage reads of an entry on demand (a digest known, the entry not loaded).
    loads: AtomicU64,
    /// Entries dropped by sweeps.
    evicted: AtomicU64,
}

impl TokenIndexStats {
    /// Storage reads made to look keys up since start.
    pub fn loads(&self) -> u64 {
        self.loads.load(Ordering::Relaxed)
    }

    /// Entries dropped for idleness since start.
    pub fn evicted(&self) -> u64 {
        self.evicted.load(Ordering::Relaxed)
    }
}

/// Shared handle on the index. Cheap to clone.
#[derive(Clone, Default)]
pub struct TokenIndex {
    /// key (without `sk-`) → entry, for the keys in use. Writers: the console's token service,
    /// on every change; [`TokenIndex::lookup`] on demand; [`TokenIndex::sweep`].
    map: Arc<DashMap<String, Slot>>,
    /// The digest of every stored key (and of deleted ones until the next start).
    digests: Arc<DashSet<u64, BuildHasherDefault<Prehashed>>>,
    /// Keys the digests, fresh per process.
    digest_key: RandomState,
    /// Held across a token change's commit and its patch of `map` ([`TokenIndex::edit`]), so
    /// patches apply in commit order; taken briefly to keep an entry read on demand.
    edits: Arc<Mutex<()>>,
    /// Counts patches (changed under `edits`).
    generation: Arc<AtomicU64>,
    /// The current sweep period (advanced by [`TokenIndex::sweep`]).
    period: Arc<AtomicU64>,
    /// Where evicted entries are read back from (none: nothing is ever evicted).
    store: Option<Store>,
    /// Reads and evictions.
    stats: Arc<TokenIndexStats>,
}

impl TokenIndex {
    /// Reads every stored key's digest, loading no entry (they are read on first use).
    /// Blocking (startup).
    pub fn load(store: &Store) -> Result<TokenIndex, StorageError> {
        let index = TokenIndex {
            store: Some(store.clone()),
            ..TokenIndex::default()
        };
        store.read_blocking(|rtx| tokens::each(rtx, |t| index.know(&t.key)))?;
        Ok(index)
    }

    fn digest(&self, key: &str) -> u64 {
        self.digest_key.hash_one(key)
    }

    fn know(&self, key: &str) {
        self.digests.insert(self.digest(key));
    }

    /// Looks up a loaded key (no storage read; see [`TokenIndex::lookup`]).
    pub fn get(&self, key: &str) -> Option<Arc<TokenEntry>> {
        let slot = self.map.get(key)?;
        let period = self.period.load(Ordering::Relaxed);
        if slot.used.load(Ordering::Relaxed) != period {
            slot.used.store(period, Ordering::Relaxed);
        }
        Some(Arc::clone(&slot.entry))
    }

    /// Looks a key up: its loaded entry, or, when its digest is known, its record read back
    /// from storage (on the blocking pool) and kept. A key whose digest is unknown is answered
    /// `None` without a read.
    pub async fn lookup(&self, key: &str) -> Result<Option<Arc<TokenEntry>>, StorageError> {
        if let Some(entry) = self.get(key) {
            return Ok(Some(entry));
        }
        if !self.digests.contains(&self.digest(key)) {
            return Ok(None);
        }
        let Some(store) = self.store.clone() else {
            return Ok(None);
        };
        let (index, key) = (self.clone(), key.to_owned());
        tokio::task::spawn_blocking(move || index.read_back(&store, key)).await?
    }

    /// Reads `key`'s record and keeps its entry unless a patch ran meanwhile (then reads again,
    /// up to three times; the last read is answered uncached).
    fn read_back(
        &self,
        store: &Store,
        key: String,
    ) -> Result<Option<Arc<TokenEntry>>, StorageError> {
        let mut entry = None;
        for _ in 0..3 {
            let seen = self.generation.load(Ordering::Acquire);
            self.stats.loads.fetch_add(1, Ordering::Relaxed);
            entry = store
                .read_blocking(|rtx| tokens::find_by_key(rtx, &key))?
                .map(|t| Arc::new(TokenEntry::from_token(&t)));
            let _order = self.edits.lock().unwrap_or_else(PoisonError::into_inner);
            if self.generation.load(Ordering::Acquire) == seen {
                if let Some(entry) = &entry {
                    self.keep(key, Arc::clone(entry));
                }
                return Ok(entry);
            }
        }
        Ok(entry)
    }

    fn keep(&self, key: String, entry: Arc<TokenEntry>) {
        let used = AtomicU64::new(self.period.load(Ordering::Relaxed));
        self.map.insert(key, Slot { entry, used });
    }

    /// Commits a token change and patches the index with its outcome, in commit order: `commit`
    /// (a blocking storage write) and then `patch` run under the edit lock. Blocking: call it
    /// from `spawn_blocking`, where it also finishes when the caller goes away. Nothing is
    /// patched when `commit` fails.
    pub fn edit<T, E>(
        &self,
        commit: impl FnOnce() -> Result<T, E>,
        patch: impl FnOnce(&TokenIndex, &T),
    ) -> Result<T, E> {
        let _order = self.edits.lock().unwrap_or_else(PoisonError::into_inner);
        let value = commit()?;
        patch(self, &value);
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(value)
    }

    /// Adds or replaces the entry of `token` (inside [`TokenIndex::edit`]), its digest known.
    pub fn upsert(&self, token: &Token) {
        self.know(&token.key);
        self.keep(token.key.clone(), Arc::new(TokenEntry::from_token(token)));
    }

    /// Removes a key's entry (inside [`TokenIndex::edit`]); its digest stays (see the module).
    pub fn remove(&self, key: &str) {
        self.map.remove(key);
    }

    /// Ends a sweep period: drops the entries no lookup touched during the whole period that
    /// just ended, and returns how many. Run it every idle period (an entry then goes after
    /// between one and two periods unused).
    pub fn sweep(&self) -> usize {
        let ended = self.period.fetch_add(1, Ordering::Relaxed);
        if self.store.is_none() {
            return 0;
        }
        let before = self.map.len();
        self.map
            .retain(|_, slot| slot.used.load(Ordering::Relaxed) >= ended);
        let evicted = before.saturating_sub(self.map.len());
        self.stats
            .evicted
            .fetch_add(evicted as u64, Ordering::Relaxed);
        evicted
    }

    /// Number of entries loaded.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether no entry is loaded.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Number of key digests kept.
    pub fn digests(&self) -> usize {
        self.digests.len()
    }

    /// Reads and evictions so far.
    pub fn stats(&self) -> &TokenIndexStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_lists_parse_ips_and_cidrs() {
        let nets = parse_allow_ips("10.0.0.0/8\n 192.168.1.7 \n\n::1").expect("valid");
        assert_eq!(nets.len(), 3);
        assert_eq!(
            parse_allow_ips("10.0.0.1\nnot-an-ip"),
            Err("not-an-ip".to_owned())
        );
        assert_eq!(parse_allow_ips("300.1.1.1"), Err("300.1.1.1".to_owned()));
    }

    #[test]
    fn entry_rules() {
        let entry = TokenEntry {
            id: TokenId(1),
            user_id: UserId(1),
            name: "t".into(),
            status: STATUS_ENABLED,
            expired_time: 100,
            unlimited_quota: false,
            model_limits: Some(HashSet::from(["gpt-4o".to_owned()])),
            allow_ips: parse_allow_ips("10.0.0.0/8").expect("valid"),
            group: String::new(),
        };
        assert!(entry.is_usable(99));
        assert!(!entry.is_usable(100), "expired at its expiry second");
        assert!(entry.allows_ip("10.1.2.3".parse().expect("ip")));
        assert!(!entry.allows_ip("11.1.2.3".parse().expect("ip")));
        assert!(entry.allows_model("gpt-4o"));
        assert!(!entry.allows_model("gpt-4o-mini"));
    }
}
