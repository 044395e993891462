//! The in-memory token index: API key → what the relay must know about the token, so that
//! authenticating a request reads no storage.
//!
//! A sharded concurrent map (dashmap): a lookup locks one shard for the duration of a hash probe
//! and different keys rarely share a shard, so there is no global lock on the hot path. It is
//! patched on every token change (create, update, status, delete) by the console, so a disabled
//! key stops working on the next request. The remaining quota is NOT here: the user's quota actor
//! owns balances.
//!
//! Patches reach the map in the order their changes were committed: each goes through
//! [`TokenIndex::edit`], which holds one edit lock across the storage commit and the patch.
//! Without it an update that committed before a delete could patch the map after it, and the
//! deleted key would authenticate again until the next restart.

use std::collections::HashSet;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

use dashmap::DashMap;
use ipnet::IpNet;
use tollgate_storage::tokens::{STATUS_ENABLED, Token};
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

/// Shared handle on the index. Cheap to clone.
#[derive(Clone, Default)]
pub struct TokenIndex {
    /// key (without `sk-`) → entry. Writers: the console's token service, on every change.
    map: Arc<DashMap<String, Arc<TokenEntry>>>,
    /// Held across a token change's commit and its patch of `map` ([`TokenIndex::edit`]), so
    /// patches apply in commit order. Console edits only; lookups never take it.
    edits: Arc<Mutex<()>>,
}

impl TokenIndex {
    /// Loads every stored token. Blocking (startup).
    pub fn load(store: &Store) -> Result<TokenIndex, StorageError> {
        let tokens = store.read_blocking(tollgate_storage::tokens::all)?;
        let index = TokenIndex::default();
        for token in &tokens {
            index.upsert(token);
        }
        Ok(index)
    }

    /// Looks a key up.
    pub fn get(&self, key: &str) -> Option<Arc<TokenEntry>> {
        self.map.get(key).map(|e| Arc::clone(e.value()))
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
        Ok(value)
    }

    /// Adds or replaces the entry of `token` (outside [`TokenIndex::edit`]: at load only).
    pub fn upsert(&self, token: &Token) {
        self.map
            .insert(token.key.clone(), Arc::new(TokenEntry::from_token(token)));
    }

    /// Removes a key (inside [`TokenIndex::edit`]).
    pub fn remove(&self, key: &str) {
        self.map.remove(key);
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether the index is empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
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
