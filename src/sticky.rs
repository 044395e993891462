//! Which conversation a relayed request belongs to, for sticky routing (P15 item 4; the map is
//! [`tollgate_actors::limiter::sticky`]): the client's `prompt_cache_key`, `session_id` or
//! `metadata.user_id`; only when none is present, a hash of the body up to its first
//! `cache_control` breakpoint, else of its system prompt (`system`, `instructions`,
//! `systemInstruction`, the leading system and developer messages) and its tools. A request with
//! none of these belongs to no conversation. The body is read once without building a value:
//! what is hashed is hashed as it is read.
//!
//! Computed only when the option `StickyRoutingMaxEntries` is above 0, the route has more than
//! one channel and no channel is pinned.

use std::borrow::Cow;
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::relay::pipeline::auth::Caller;
use crate::state::AppState;

/// The options of sticky routing: (most conversations held, their TTL in milliseconds), or
/// `None` when it is off.
pub fn settings(state: &AppState) -> Option<(usize, i64)> {
    let options = state.options.current();
    let entries = usize::try_from(options.relay().sticky_max_entries).unwrap_or(0);
    let ttl = options
        .relay()
        .sticky_ttl_seconds
        .max(0)
        .saturating_mul(1_000);
    (entries > 0).then_some((entries, ttl))
}

/// The conversation key of `body` (a request of `caller` for `model`), when sticky routing is
/// on and can choose: the route has more than one channel.
pub fn conversation(
    state: &AppState,
    caller: &Caller,
    model: &str,
    body: Option<&[u8]>,
) -> Option<u64> {
    let body = body?;
    if caller.pinned.is_some() || settings(state).is_none() {
        return None;
    }
    let table = state.channel_pool.table().load();
    let route = table.route(&caller.group, model)?;
    if route.tiers.iter().map(|t| t.channels.len()).sum::<usize>() < 2 {
        return None;
    }
    let digest = key_of(body)?;
    let mut h = DefaultHasher::new();
    caller.group.hash(&mut h);
    model.hash(&mut h);
    digest.hash(&mut h);
    Some(h.finish())
}

/// The conversation digest of a request body (see the module's order), if it has one.
pub fn key_of(body: &[u8]) -> Option<u64> {
    let head: Head<'_> = serde_json::from_slice(body).ok()?;
    let explicit = head
        .prompt_cache_key
        .map(|k| ("prompt_cache_key", k))
        .or(head.session_id.map(|k| ("session_id", k)))
        .or(head
            .metadata
            .and_then(|m| m.user_id)
            .map(|k| ("metadata.user_id", k)));
    let mut h = DefaultHasher::new();
    if let Some((field, key)) = explicit {
        field.hash(&mut h);
        key.hash(&mut h);
        return Some(h.finish());
    }
    if let Some(at) = memchr::memmem::find(body, b"\"cache_control\"") {
        "cache_control".hash(&mut h);
        body.get(..at).hash(&mut h);
        return Some(h.finish());
    }
    let parts = [
        head.system,
        head.instructions,
        head.system_instruction,
        head.messages.map(|m| m.0).filter(|d| *d != 0),
        head.tools,
    ];
    if parts.iter().all(Option::is_none) {
        return None;
    }
    "system".hash(&mut h);
    parts.hash(&mut h);
    Some(h.finish())
}

/// What the conversation key is read from; every other field is skipped.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow, default)]
    prompt_cache_key: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    session_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    metadata: Option<Metadata<'a>>,
    #[serde(default, deserialize_with = "digest")]
    system: Option<u64>,
    #[serde(default, deserialize_with = "digest")]
    instructions: Option<u64>,
    #[serde(default, rename = "systemInstruction", deserialize_with = "digest")]
    system_instruction: Option<u64>,
    #[serde(default)]
    messages: Option<SystemMessages>,
    #[serde(default, deserialize_with = "digest")]
    tools: Option<u64>,
}

#[derive(Deserialize)]
struct Metadata<'a> {
    #[serde(borrow, default)]
    user_id: Option<Cow<'a, str>>,
}

fn digest<'de, D: de::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let mut h = DefaultHasher::new();
    d.deserialize_any(HashValue(&mut h))?;
    Ok(Some(h.finish()))
}

/// Hashes any JSON value into the hasher as it is read.
struct HashValue<'h>(&'h mut DefaultHasher);

impl<'de> DeserializeSeed<'de> for HashValue<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for HashValue<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<(), E> {
        (1u8, v).hash(self.0);
        Ok(())
    }
    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        (2u8, v).hash(self.0);
        Ok(())
    }
    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        (3u8, v).hash(self.0);
        Ok(())
    }
    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        (4u8, v.to_bits()).hash(self.0);
        Ok(())
    }
    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        (5u8, v).hash(self.0);
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        6u8.hash(self.0);
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        6u8.hash(self.0);
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        7u8.hash(self.0);
        while seq.next_element_seed(HashValue(&mut *self.0))?.is_some() {}
        8u8.hash(self.0);
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        9u8.hash(self.0);
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            key.hash(self.0);
            map.next_value_seed(HashValue(&mut *self.0))?;
        }
        10u8.hash(self.0);
        Ok(())
    }
}

/// The digest of a `messages` list's leading system and developer messages (0: none); the
/// rest of the list is skipped.
struct SystemMessages(u64);

impl<'de> Deserialize<'de> for SystemMessages {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_seq(SystemMessagesVisitor)
    }
}

struct SystemMessagesVisitor;

impl<'de> Visitor<'de> for SystemMessagesVisitor {
    type Value = SystemMessages;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of messages")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SystemMessages, A::Error> {
        let mut h = DefaultHasher::new();
        let mut any = false;
        let mut leading = true;
        while leading {
            match seq.next_element::<Message>()? {
                Some(m) if m.system => {
                    m.digest.hash(&mut h);
                    any = true;
                }
                Some(_) => leading = false,
                None => return Ok(SystemMessages(if any { h.finish().max(1) } else { 0 })),
            }
        }
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(SystemMessages(if any { h.finish().max(1) } else { 0 }))
    }
}

/// One message: whether it is a system or developer message, and its digest.
struct Message {
    system: bool,
    digest: u64,
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(MessageVisitor)
    }
}

struct MessageVisitor;

impl<'de> Visitor<'de> for MessageVisitor {
    type Value = Message;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Message, A::Error> {
        let mut h = DefaultHasher::new();
        let mut system = false;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            key.hash(&mut h);
            if key == "role" {
                let role: Cow<'de, str> = map.next_value()?;
                system = role == "system" || role == "developer";
                role.hash(&mut h);
            } else {
                map.next_value_seed(HashValue(&mut h))?;
            }
        }
        Ok(Message {
            system,
            digest: h.finish(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::key_of;

    #[test]
    fn explicit_keys_come_first_then_the_breakpoint_then_the_system_prompt() {
        let a = key_of(
            br#"{"model":"m","prompt_cache_key":"c1","messages":[{"role":"user","content":"x"}]}"#,
        );
        let b = key_of(
            br#"{"model":"m","prompt_cache_key":"c1","messages":[{"role":"user","content":"y"}]}"#,
        );
        assert!(a.is_some());
        assert_eq!(a, b, "the key alone decides");
        let s = key_of(br#"{"session_id":"c1"}"#);
        assert_ne!(a, s, "a session id is another namespace");
        let u = key_of(br#"{"metadata":{"user_id":"u-1"},"messages":[]}"#);
        assert!(u.is_some());

        let sys = |user: &str| {
            key_of(
                format!(
                    r#"{{"messages":[{{"role":"system","content":"be brief"}},{{"role":"user","content":"{user}"}}],"tools":[{{"type":"function"}}]}}"#
                )
                .as_bytes(),
            )
        };
        assert!(sys("a").is_some());
        assert_eq!(
            sys("a"),
            sys("b"),
            "the conversation's later turns do not count"
        );
        let other = key_of(
            br#"{"messages":[{"role":"system","content":"be long"},{"role":"user","content":"a"}],"tools":[{"type":"function"}]}"#,
        );
        assert_ne!(sys("a"), other);
        let anthropic = key_of(br#"{"system":"s","messages":[{"role":"user","content":"a"}]}"#);
        assert!(anthropic.is_some());

        let bp = |tail: &str| {
            key_of(
                format!(
                    r#"{{"messages":[{{"role":"user","content":[{{"type":"text","text":"doc","cache_control":{{"type":"ephemeral"}}}}]}},{{"role":"user","content":"{tail}"}}]}}"#
                )
                .as_bytes(),
            )
        };
        assert!(bp("a").is_some());
        assert_eq!(
            bp("a"),
            bp("b"),
            "what follows the breakpoint does not count"
        );

        assert_eq!(
            key_of(br#"{"messages":[{"role":"user","content":"a"}]}"#),
            None
        );
        assert_eq!(key_of(b"not json"), None);
    }
}
