//! Filter keys: one dimension of a log row and its value, as text, e.g. `u:17` (user 17),
//! `m:gpt-4o` (model), `um:17:gpt-4o` (user 17 and model gpt-4o). Every row is indexed
//! ([`crate::tables::LOG_POSTINGS`]) and counted per hour ([`crate::tables::LOG_COUNTS`]) under
//! each of its keys; [`ALL`] counts every row (its index is [`crate::tables::LOG_BY_TIME`]).
//!
//! The composite keys (user + model, user + token name, user + group) exist because a user's own
//! log view always filters by user: "my logs of this model / this key / this group" is then one
//! exact index range. Model + channel is the admin's "how does this channel serve this model".
//!
//! Rows of a type other than consume (top-ups, manage, system, errors: a few per cent of the
//! rows) are also indexed under each key prefixed with their type, e.g. `t5/c:7` (errors of
//! channel 7): "errors of X" is one exact range, and the consume rows of X are counted exactly
//! as X minus its typed counters. The prefix `t{type}/` cannot collide with another key (`t:`
//! is the only other key starting with `t`).

use super::{LOG_CONSUME, LogEntry};

/// The counter key of every row.
pub const ALL: &str = "*";

/// Seconds per counter bucket.
pub const HOUR: i64 = 3600;

/// The start of the hour holding `ts`.
pub fn hour(ts: i64) -> i64 {
    ts.div_euclid(HOUR).saturating_mul(HOUR)
}

/// Rows of a user.
pub fn user(id: i64) -> String {
    format!("u:{id}")
}

/// Rows of a model (the name the client asked for).
pub fn model(name: &str) -> String {
    format!("m:{name}")
}

/// Rows of a token name.
pub fn token(name: &str) -> String {
    format!("k:{name}")
}

/// Rows of a channel.
pub fn channel(id: i64) -> String {
    format!("c:{id}")
}

/// Rows of a log type.
pub fn log_type(t: i32) -> String {
    format!("t:{t}")
}

/// Rows of a billing group.
pub fn group(name: &str) -> String {
    format!("g:{name}")
}

/// Rows of a user and a model.
pub fn user_model(id: i64, name: &str) -> String {
    format!("um:{id}:{name}")
}

/// Rows of a user and a token name.
pub fn user_token(id: i64, name: &str) -> String {
    format!("uk:{id}:{name}")
}

/// Rows of a user and a billing group.
pub fn user_group(id: i64, name: &str) -> String {
    format!("ug:{id}:{name}")
}

/// Rows of a channel and a model.
pub fn model_channel(channel: i64, model: &str) -> String {
    format!("mc:{channel}:{model}")
}

/// `key` restricted to rows of type `t` (only written for types other than consume).
pub fn typed(t: i32, key: &str) -> String {
    format!("t{t}/{key}")
}

/// Whether rows of type `t` get typed keys.
pub fn has_typed_keys(t: i32) -> bool {
    t != LOG_CONSUME
}

/// One dimension of a row (or a composite pair of them) with its value borrowed from the row:
/// a filter key before it is formatted ([`RowKey::text`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dim<'a> {
    /// [`user`].
    User(i64),
    /// [`model`].
    Model(&'a str),
    /// [`token`].
    Token(&'a str),
    /// [`channel`].
    Channel(i64),
    /// [`group`].
    Group(&'a str),
    /// [`user_model`].
    UserModel(i64, &'a str),
    /// [`user_token`].
    UserToken(i64, &'a str),
    /// [`user_group`].
    UserGroup(i64, &'a str),
    /// [`model_channel`] (channel, model).
    ModelChannel(i64, &'a str),
    /// [`log_type`].
    Type(i32),
}

/// A filter key of a row, borrowed from it: a [`Dim`], restricted to rows of a type when
/// `typed` is set ([`typed`]). The log writer groups a batch's rows by these and formats each
/// distinct key once, instead of formatting every key of every row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RowKey<'a> {
    /// The type the key is restricted to (only for types with [`has_typed_keys`]).
    pub typed: Option<i32>,
    /// The dimension and its value.
    pub dim: Dim<'a>,
}

impl RowKey<'_> {
    /// The key as stored: the same text as [`of`] gives for it.
    pub fn text(&self) -> String {
        let key = match self.dim {
            Dim::User(u) => user(u),
            Dim::Model(m) => model(m),
            Dim::Token(t) => token(t),
            Dim::Channel(c) => channel(c),
            Dim::Group(g) => group(g),
            Dim::UserModel(u, m) => user_model(u, m),
            Dim::UserToken(u, t) => user_token(u, t),
            Dim::UserGroup(u, g) => user_group(u, g),
            Dim::ModelChannel(c, m) => model_channel(c, m),
            Dim::Type(t) => log_type(t),
        };
        match self.typed {
            Some(t) => typed(t, &key),
            None => key,
        }
    }
}

/// Every filter key of a row (not [`ALL`]), unformatted, in the order of [`of`]: its
/// dimensions, their composite pairs, for rows other than consume the typed variants of both,
/// and its type.
pub fn row_keys(e: &LogEntry) -> impl Iterator<Item = RowKey<'_>> {
    let u = e.user_id.0;
    let dims = [
        Dim::User(u),
        Dim::Model(&e.model_name),
        Dim::Token(&e.token_name),
        Dim::Channel(e.channel_id),
        Dim::Group(&e.group),
        Dim::UserModel(u, &e.model_name),
        Dim::UserToken(u, &e.token_name),
        Dim::UserGroup(u, &e.group),
        Dim::ModelChannel(e.channel_id, &e.model_name),
    ];
    let typed = has_typed_keys(e.log_type).then_some(e.log_type);
    let plain = dims.into_iter().map(|dim| RowKey { typed: None, dim });
    let typed_keys = typed.into_iter().flat_map(move |t| {
        dims.into_iter().map(move |dim| RowKey {
            typed: Some(t),
            dim,
        })
    });
    plain.chain(typed_keys).chain(std::iter::once(RowKey {
        typed: None,
        dim: Dim::Type(e.log_type),
    }))
}

/// Every filter key of a row (not [`ALL`]): its dimensions, their composite pairs, and for
/// rows other than consume the typed variants of both ([`row_keys`], formatted).
pub fn of(e: &LogEntry) -> Vec<String> {
    row_keys(e).map(|k| k.text()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hours_round_down_also_before_1970() {
        assert_eq!(hour(7199), 3600);
        assert_eq!(hour(7200), 7200);
        assert_eq!(hour(-1), -3600);
    }

    #[test]
    fn composite_keys_cannot_collide_with_single_ones() {
        // The user id is digits, so "um:1:2:x" is user 1 with model "2:x", never user 12.
        assert_ne!(user_model(1, "2:x"), user_model(12, ":x"));
        assert_ne!(model("a"), token("a"));
        assert_ne!(model_channel(1, "2:x"), model_channel(12, ":x"));
        // A model named like a typed key stays apart from the typed key.
        assert_ne!(model("t5/m:a"), typed(5, &model("a")));
    }

    /// The keys as they were formatted before [`row_keys`] (the stored form must not change).
    fn formatted(e: &LogEntry) -> Vec<String> {
        let u = e.user_id.0;
        let mut out = vec![
            user(u),
            model(&e.model_name),
            token(&e.token_name),
            channel(e.channel_id),
            group(&e.group),
            user_model(u, &e.model_name),
            user_token(u, &e.token_name),
            user_group(u, &e.group),
            model_channel(e.channel_id, &e.model_name),
        ];
        if has_typed_keys(e.log_type) {
            let typed_keys: Vec<String> = out.iter().map(|k| typed(e.log_type, k)).collect();
            out.extend(typed_keys);
        }
        out.push(log_type(e.log_type));
        out
    }

    #[test]
    fn row_keys_format_as_the_stored_keys() {
        for t in 1..=5 {
            let e = LogEntry {
                log_type: t,
                user_id: crate::UserId(17),
                model_name: "gpt-4o:x".into(),
                token_name: "k 1".into(),
                channel_id: 7,
                group: "vip".into(),
                ..LogEntry::default()
            };
            assert_eq!(of(&e), formatted(&e), "type {t}");
            assert_eq!(of(&LogEntry::default()), formatted(&LogEntry::default()));
        }
    }

    #[test]
    fn only_rows_other_than_consume_get_typed_keys() {
        let mut e = LogEntry {
            log_type: LOG_CONSUME,
            ..LogEntry::default()
        };
        assert_eq!(of(&e).len(), 10);
        e.log_type = super::super::LOG_ERROR;
        let k = of(&e);
        assert_eq!(k.len(), 19);
        assert!(k.contains(&"t5/c:0".to_owned()));
    }
}
