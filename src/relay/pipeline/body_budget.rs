//! The memory budget the relay's request bodies share: all of them together (option
//! `RelayBodyBudgetMB`) and each API key's (option `RelayBodyBudgetPerKeyMB`). A request is
//! charged as its body's bytes arrive, announced or chunked alike, so what is in flight is
//! always exactly what has been read; its charge is given back when the request is answered
//! (or its read is cut). A slow upload therefore holds only what it has sent, and one key's
//! uploads cannot take more than its share of the whole.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use dashmap::DashMap;
use tollgate_storage::{TokenId, UserId};

/// Whose share a body is charged to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShareKey {
    /// An API key.
    Token(TokenId),
    /// A console user (the playground, which takes no API key).
    User(UserId),
}

/// Bytes of request bodies in flight on the relay routes. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct BodyBudget {
    /// Sum of every charge.
    in_flight: Arc<AtomicU64>,
    /// Sum of the charges of each key with bytes in flight (a key at zero is removed). Its shard
    /// lock is held for one addition.
    per_key: Arc<DashMap<ShareKey, u64, foldhash::fast::RandomState>>,
}

/// The budget's limits in bytes (0: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// All bodies together.
    pub global: u64,
    /// One key's bodies together.
    pub per_key: u64,
}

impl Limits {
    /// Whether a body of `bytes` can ever be read under these limits (checked against a
    /// body's announced length before it is read; bytes are only charged as they arrive).
    pub fn admits(self, bytes: u64) -> Result<(), Over> {
        if self.global != 0 && bytes > self.global {
            return Err(Over::Global);
        }
        if self.per_key != 0 && bytes > self.per_key {
            return Err(Over::Key);
        }
        Ok(())
    }
}

/// Which limit a byte would pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Over {
    /// All bodies together.
    Global,
    /// The key's share.
    Key,
}

/// One request's charge against the [`BodyBudget`], given back on drop.
#[derive(Debug)]
pub struct Charge {
    budget: BodyBudget,
    key: ShareKey,
    limits: Limits,
    /// Bytes charged so far.
    bytes: u64,
}

impl BodyBudget {
    /// An empty charge of `key` under `limits`.
    pub fn charge(&self, key: ShareKey, limits: Limits) -> Charge {
        Charge {
            budget: self.clone(),
            key,
            limits,
            bytes: 0,
        }
    }

    /// Bytes in flight on all routes.
    pub fn in_flight(&self) -> u64 {
        self.in_flight.load(Ordering::Acquire)
    }

    /// Bytes in flight for `key`.
    pub fn key_in_flight(&self, key: ShareKey) -> u64 {
        self.per_key.get(&key).map_or(0, |n| *n)
    }

    fn take_global(&self, bytes: u64, limit: u64) -> bool {
        self.in_flight
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
                let next = now.checked_add(bytes)?;
                (limit == 0 || next <= limit).then_some(next)
            })
            .is_ok()
    }

    fn give_global(&self, bytes: u64) {
        self.in_flight.fetch_sub(bytes, Ordering::AcqRel);
    }

    fn take_key(&self, key: ShareKey, bytes: u64, limit: u64) -> bool {
        let mut entry = self.per_key.entry(key).or_insert(0);
        match entry.checked_add(bytes) {
            Some(next) if limit == 0 || next <= limit => {
                *entry = next;
                true
            }
            _ => {
                let empty = *entry == 0;
                drop(entry);
                if empty {
                    self.per_key.remove_if(&key, |_, n| *n == 0);
                }
                false
            }
        }
    }

    fn give_key(&self, key: ShareKey, bytes: u64) {
        if let Some(mut entry) = self.per_key.get_mut(&key) {
            *entry = entry.saturating_sub(bytes);
        }
        self.per_key.remove_if(&key, |_, n| *n == 0);
    }
}

impl Charge {
    /// Charges `bytes` just read; refused (nothing charged) when they would pass a limit.
    pub fn add(&mut self, bytes: u64) -> Result<(), Over> {
        if bytes == 0 {
            return Ok(());
        }
        if !self.budget.take_global(bytes, self.limits.global) {
            return Err(Over::Global);
        }
        if !self.budget.take_key(self.key, bytes, self.limits.per_key) {
            self.budget.give_global(bytes);
            return Err(Over::Key);
        }
        self.bytes = self.bytes.saturating_add(bytes);
        Ok(())
    }

    /// Bytes charged so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Gives everything charged back now.
    pub fn clear(&mut self) {
        if self.bytes > 0 {
            self.budget.give_global(self.bytes);
            self.budget.give_key(self.key, self.bytes);
            self.bytes = 0;
        }
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: [ShareKey; 3] = [
        ShareKey::Token(TokenId(1)),
        ShareKey::Token(TokenId(2)),
        ShareKey::User(UserId(1)),
    ];

    /// A small deterministic generator (no dependency for a test's dice).
    fn next(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    #[test]
    fn bytes_in_flight_always_equal_bytes_read() {
        let budget = BodyBudget::default();
        let limits = Limits {
            global: 10_000,
            per_key: 4_000,
        };
        let mut live: Vec<(ShareKey, Charge, u64)> = Vec::new();
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..20_000 {
            match next(&mut seed) % 10 {
                0 | 1 if live.len() < 12 => {
                    let key = KEYS[usize::try_from(next(&mut seed) % 3).unwrap_or(0)];
                    live.push((key, budget.charge(key, limits), 0));
                }
                2 if !live.is_empty() => {
                    let i = usize::try_from(next(&mut seed)).unwrap_or(0) % live.len();
                    live.swap_remove(i);
                }
                3 if !live.is_empty() => {
                    let i = usize::try_from(next(&mut seed)).unwrap_or(0) % live.len();
                    live[i].1.clear();
                    live[i].2 = 0;
                }
                _ if !live.is_empty() => {
                    let i = usize::try_from(next(&mut seed)).unwrap_or(0) % live.len();
                    let chunk = next(&mut seed) % 1_500;
                    if live[i].1.add(chunk).is_ok() {
                        live[i].2 += chunk;
                    }
                }
                _ => {}
            }
            let read: u64 = live.iter().map(|(_, _, read)| read).sum();
            assert_eq!(budget.in_flight(), read, "in flight = bytes read");
            assert!(read <= limits.global);
            for key in KEYS {
                let of_key: u64 = live
                    .iter()
                    .filter(|(k, _, _)| *k == key)
                    .map(|(_, _, read)| read)
                    .sum();
                assert_eq!(budget.key_in_flight(key), of_key);
                assert!(of_key <= limits.per_key);
            }
            for (_, charge, read) in &live {
                assert_eq!(charge.bytes(), *read);
            }
        }
        live.clear();
        assert_eq!(budget.in_flight(), 0);
        assert!(budget.per_key.is_empty(), "keys at zero are forgotten");
    }

    #[test]
    fn a_refused_chunk_charges_nothing_and_names_the_limit() {
        let budget = BodyBudget::default();
        let limits = Limits {
            global: 100,
            per_key: 60,
        };
        let mut a = budget.charge(KEYS[0], limits);
        let mut b = budget.charge(KEYS[1], limits);
        assert_eq!(a.add(50), Ok(()));
        assert_eq!(a.add(11), Err(Over::Key));
        assert_eq!(b.add(50), Ok(()));
        assert_eq!(b.add(1), Err(Over::Global));
        assert_eq!(budget.in_flight(), 100);
        drop(a);
        assert_eq!(b.add(1), Ok(()));
        assert_eq!(budget.in_flight(), 51);
        assert_eq!(
            limits.admits(61),
            Err(Over::Key),
            "a body announced larger than a share can never be read"
        );
    }
}
