//! What a log query asks for ([`LogFilter`]), the dimensions it sets and the index keys that
//! can serve it.

use crate::UserId;
use crate::logs::{LogEntry, keys};

/// What a log list or stat asks for. `None` (or type 0) means "any".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogFilter {
    /// Log type; 0 is "all".
    pub log_type: Option<i32>,
    /// Whose logs.
    pub user: Option<UserId>,
    /// Token name, exact.
    pub token_name: Option<String>,
    /// Model name, exact.
    pub model_name: Option<String>,
    /// Channel id.
    pub channel: Option<i64>,
    /// Billing group, exact.
    pub group: Option<String>,
    /// Created at or after (unix seconds).
    pub start: Option<i64>,
    /// Created at or before (unix seconds).
    pub end: Option<i64>,
}

pub(super) const USER: u8 = 1;
pub(super) const MODEL: u8 = 2;
pub(super) const TOKEN: u8 = 4;
pub(super) const CHANNEL: u8 = 8;
pub(super) const TYPE: u8 = 16;
pub(super) const GROUP: u8 = 32;

impl LogFilter {
    pub(super) fn log_type(&self) -> Option<i32> {
        self.log_type.filter(|t| *t != 0)
    }

    /// The dimensions set, as bits.
    pub(super) fn dims(&self) -> u8 {
        let mut d = 0;
        for (set, bit) in [
            (self.user.is_some(), USER),
            (self.model_name.is_some(), MODEL),
            (self.token_name.is_some(), TOKEN),
            (self.channel.is_some(), CHANNEL),
            (self.log_type().is_some(), TYPE),
            (self.group.is_some(), GROUP),
        ] {
            if set {
                d |= bit;
            }
        }
        d
    }

    /// Index keys that can serve this filter, with the dimensions each covers.
    pub(super) fn candidates(&self) -> Vec<(String, u8)> {
        let mut out = Vec::new();
        if let Some(u) = self.user {
            out.push((keys::user(u.0), USER));
            if let Some(m) = &self.model_name {
                out.push((keys::user_model(u.0, m), USER | MODEL));
            }
            if let Some(k) = &self.token_name {
                out.push((keys::user_token(u.0, k), USER | TOKEN));
            }
            if let Some(g) = &self.group {
                out.push((keys::user_group(u.0, g), USER | GROUP));
            }
        }
        if let Some(m) = &self.model_name {
            out.push((keys::model(m), MODEL));
            if let Some(c) = self.channel {
                out.push((keys::model_channel(c, m), MODEL | CHANNEL));
            }
        }
        if let Some(k) = &self.token_name {
            out.push((keys::token(k), TOKEN));
        }
        if let Some(c) = self.channel {
            out.push((keys::channel(c), CHANNEL));
        }
        if let Some(g) = &self.group {
            out.push((keys::group(g), GROUP));
        }
        if let Some(t) = self.log_type() {
            if keys::has_typed_keys(t) {
                let typed: Vec<(String, u8)> = out
                    .iter()
                    .map(|(k, bits)| (keys::typed(t, k), bits | TYPE))
                    .collect();
                out.extend(typed);
            }
            out.push((keys::log_type(t), TYPE));
        }
        out
    }

    /// Whether `e` passes every filter.
    pub fn matches(&self, e: &LogEntry) -> bool {
        self.user.is_none_or(|u| e.user_id == u)
            && self.log_type().is_none_or(|t| e.log_type == t)
            && self.token_name.as_deref().is_none_or(|t| e.token_name == t)
            && self.model_name.as_deref().is_none_or(|m| e.model_name == m)
            && self.channel.is_none_or(|c| e.channel_id == c)
            && self.group.as_deref().is_none_or(|g| e.group == g)
            && self.start.is_none_or(|s| e.created_at >= s)
            && self.end.is_none_or(|t| e.created_at <= t)
    }
}
