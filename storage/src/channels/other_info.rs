//! The channel's `other_info` JSON text: why and when the health rules disabled it
//! (`status_reason`, `status_time`) and which of its keys are disabled (`disabled_keys`).
//!
//! A disabled key is recorded as `{index, fingerprint, reason, time}`: `fingerprint` (the
//! first 8 bytes of the key's SHA-256, hex) identifies the key, so the record survives edits
//! that reorder or add key lines and is dropped when the key is removed; `index` is the
//! 0-based key line at the time, for display. The fingerprint cannot be turned back into a
//! key, so `other_info` stays safe to show in GET responses.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// One disabled key of a multi-key channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisabledKey {
    /// The key line's 0-based position when it was disabled.
    pub index: usize,
    /// [`fingerprint`] of the key.
    pub fingerprint: String,
    /// Why (key-free).
    pub reason: String,
    /// Unix seconds.
    pub time: i64,
}

/// A short, irreversible identifier of a key: hex of the first 8 bytes of its SHA-256.
pub fn fingerprint(key: &str) -> String {
    Sha256::digest(key.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn parse(other_info: &str) -> Map<String, Value> {
    serde_json::from_str(other_info).unwrap_or_default()
}

/// `other_info` with `status_reason` and `status_time` set (other keys kept).
pub fn with_status_reason(other_info: &str, reason: &str, at: i64) -> String {
    let mut map = parse(other_info);
    map.insert("status_reason".into(), reason.into());
    map.insert("status_time".into(), at.into());
    Value::Object(map).to_string()
}

/// The disabled keys recorded in `other_info` (none when absent or unreadable).
pub fn disabled_keys(other_info: &str) -> Vec<DisabledKey> {
    parse(other_info)
        .remove("disabled_keys")
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default()
}

/// The 0-based positions of the `lines` not recorded as disabled in `other_info`.
pub fn usable_keys(other_info: &str, lines: &[&str]) -> Vec<usize> {
    let disabled: Vec<String> = disabled_keys(other_info)
        .into_iter()
        .map(|k| k.fingerprint)
        .collect();
    lines
        .iter()
        .enumerate()
        .filter(|(_, line)| !disabled.contains(&fingerprint(line)))
        .map(|(i, _)| i)
        .collect()
}

/// `other_info` with `key` recorded as disabled (replacing an earlier record of it).
pub fn with_disabled_key(other_info: &str, key: DisabledKey) -> String {
    let mut keys = disabled_keys(other_info);
    keys.retain(|k| k.fingerprint != key.fingerprint);
    keys.push(key);
    keys.sort_by_key(|k| k.index);
    let mut map = parse(other_info);
    map.insert(
        "disabled_keys".into(),
        serde_json::to_value(keys).unwrap_or(Value::Null),
    );
    Value::Object(map).to_string()
}

/// `other_info` keeping only the disabled keys still among `lines` (the channel's key lines
/// after an edit), with their indexes updated to the lines' new positions.
pub fn retain_keys(other_info: &str, lines: &[&str]) -> String {
    let keys = disabled_keys(other_info);
    if keys.is_empty() {
        return other_info.to_owned();
    }
    let kept: Vec<DisabledKey> = keys
        .into_iter()
        .filter_map(|mut k| {
            let index = lines.iter().position(|l| fingerprint(l) == k.fingerprint)?;
            k.index = index;
            Some(k)
        })
        .collect();
    let mut map = parse(other_info);
    if kept.is_empty() {
        map.remove("disabled_keys");
    } else {
        map.insert(
            "disabled_keys".into(),
            serde_json::to_value(kept).unwrap_or(Value::Null),
        );
    }
    Value::Object(map).to_string()
}

/// `other_info` without any disabled keys (every key usable again).
pub fn without_disabled_keys(other_info: &str) -> String {
    let mut map = parse(other_info);
    if map.remove("disabled_keys").is_none() {
        return other_info.to_owned();
    }
    Value::Object(map).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_reason_is_merged() {
        let merged = with_status_reason(r#"{"keep":1}"#, "why", 42);
        let v: Value = serde_json::from_str(&merged).unwrap_or_default();
        assert_eq!(v["keep"], 1);
        assert_eq!(v["status_reason"], "why");
        assert_eq!(v["status_time"], 42);
        let fresh: Value =
            serde_json::from_str(&with_status_reason("not json", "x", 1)).unwrap_or_default();
        assert_eq!(fresh["status_reason"], "x");
    }

    #[test]
    fn disabled_keys_round_trip_and_clear() {
        let k = |index: usize, key: &str| DisabledKey {
            index,
            fingerprint: fingerprint(key),
            reason: "401".into(),
            time: 7,
        };
        let info = with_disabled_key(r#"{"status_reason":"x"}"#, k(2, "b"));
        let info = with_disabled_key(&info, k(0, "a"));
        let info = with_disabled_key(&info, k(0, "a"));
        let keys = disabled_keys(&info);
        assert_eq!(keys, vec![k(0, "a"), k(2, "b")], "sorted, no duplicates");
        assert_eq!(fingerprint("a").len(), 16);
        assert!(!info.contains("\"a\""));
        let cleared = without_disabled_keys(&info);
        assert!(disabled_keys(&cleared).is_empty());
        assert!(cleared.contains("status_reason"));
        assert_eq!(without_disabled_keys("{}"), "{}");
        assert_eq!(usable_keys(&info, &["a", "x", "b", "y"]), vec![1, 3]);
        let edited = retain_keys(&info, &["c", "b"]);
        let keys = disabled_keys(&edited);
        assert_eq!(keys.len(), 1, "the removed key's record goes");
        assert_eq!(
            (keys[0].index, keys[0].fingerprint.as_str()),
            (1, fingerprint("b").as_str())
        );
        assert!(disabled_keys(&retain_keys(&info, &["z"])).is_empty());
    }
}
