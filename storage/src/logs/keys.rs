//! Filter keys: one dimension of a log row and its value, as text, e.g. `u:17` (user 17),
//! `m:gpt-4o` (model), `um:17:gpt-4o` (user 17 and model gpt-4o). Every row is indexed
//! ([`crate::tables::LOG_BY_KEY`]) and counted per hour ([`crate::tables::LOG_COUNTS`]) under
//! each of its keys; [`ALL`] counts every row (its index is [`crate::tables::LOG_BY_TIME`]).
//!
//! The composite keys (user + model, user + token name) exist because a user's own log view
//! always filters by user: "my logs of this model / this key" is then one exact index range.

use super::LogEntry;

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

/// Every filter key of a row (not [`ALL`]).
pub fn of(e: &LogEntry) -> [String; 8] {
    let u = e.user_id.0;
    [
        user(u),
        model(&e.model_name),
        token(&e.token_name),
        channel(e.channel_id),
        log_type(e.log_type),
        group(&e.group),
        user_model(u, &e.model_name),
        user_token(u, &e.token_name),
    ]
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
    }
}
