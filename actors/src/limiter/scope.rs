//! What a rate limit is about: whose counter ([`Scope`]: a user, an API key, a
//! `RateLimitRules` rule, a channel or one of its keys), what it limits ([`Kind`]) and what is
//! left of it after a request ([`Headroom`], for the `x-ratelimit-*` answers).

use std::fmt;

use tollgate_storage::{ChannelId, TokenId, UserId};

/// How many kinds of limit there are.
pub(super) const KINDS: usize = 6;

/// What a rule limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Requests in flight at once.
    Concurrency,
    /// Requests per minute.
    Rpm,
    /// Tokens per minute.
    Tpm,
    /// Requests per day.
    Rpd,
    /// The model request limit (ModelRequestRateLimitCount): requests per `minutes`.
    ModelRequests {
        /// The window (ModelRequestRateLimitDurationMinutes).
        minutes: u64,
    },
    /// The model request limit on successful requests (ModelRequestRateLimitSuccessCount).
    ModelSuccesses {
        /// The window (ModelRequestRateLimitDurationMinutes).
        minutes: u64,
    },
}

impl Kind {
    /// Every kind, in the order of [`Kind::index`].
    /// (The model request kinds' windows are not part of their label: 0 here.)
    pub const ALL: [Kind; KINDS] = [
        Kind::Concurrency,
        Kind::Rpm,
        Kind::Tpm,
        Kind::Rpd,
        Kind::ModelRequests { minutes: 0 },
        Kind::ModelSuccesses { minutes: 0 },
    ];

    /// `concurrency`, `rpm`, `tpm`, `rpd`, `model_requests`, `model_successes` (metrics
    /// labels, log rows).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Concurrency => "concurrency",
            Kind::Rpm => "rpm",
            Kind::Tpm => "tpm",
            Kind::Rpd => "rpd",
            Kind::ModelRequests { .. } => "model_requests",
            Kind::ModelSuccesses { .. } => "model_successes",
        }
    }

    /// The window of a model request kind, in minutes.
    pub fn window_minutes(self) -> Option<u64> {
        match self {
            Kind::ModelRequests { minutes } | Kind::ModelSuccesses { minutes } => Some(minutes),
            _ => None,
        }
    }

    /// The kind's place in [`Kind::ALL`] (the stats' column).
    pub(super) fn index(self) -> usize {
        match self {
            Kind::Concurrency => 0,
            Kind::Rpm => 1,
            Kind::Tpm => 2,
            Kind::Rpd => 3,
            Kind::ModelRequests { .. } => 4,
            Kind::ModelSuccesses { .. } => 5,
        }
    }
}

/// Whose counter.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Every request of a user.
    User(UserId),
    /// Every request through an API key.
    Token(TokenId),
    /// Every request sent to a channel.
    Channel(ChannelId),
    /// Every request sent with one upstream key (its line) of a channel.
    ChannelKey(ChannelId, u32),
    /// A RateLimitRules rule: every request of its group, its model, or both.
    Rule {
        /// The rule's group.
        group: Option<String>,
        /// The rule's model.
        model: Option<String>,
    },
}

impl Scope {
    /// Every scope's label, in the order of [`Scope::index`].
    pub const LABELS: [&'static str; 5] = ["user", "token", "rule", "channel", "channel_key"];

    /// `user`, `token`, `rule`, `channel` or `channel_key` (metrics labels, log rows).
    pub fn label(&self) -> &'static str {
        Scope::LABELS[self.index()]
    }

    /// The scope's place in [`Scope::LABELS`] (the stats' row).
    pub(super) fn index(&self) -> usize {
        match self {
            Scope::User(_) => 0,
            Scope::Token(_) => 1,
            Scope::Rule { .. } => 2,
            Scope::Channel(_) => 3,
            Scope::ChannelKey(..) => 4,
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::User(u) => write!(f, "user {u}"),
            Scope::Token(t) => write!(f, "API key {t}"),
            Scope::Channel(c) => write!(f, "channel {c}"),
            Scope::ChannelKey(c, k) => write!(f, "key {k} of channel {c}"),
            Scope::Rule {
                group: Some(g),
                model: Some(m),
            } => write!(f, "group {g} with model {m}"),
            Scope::Rule { group: Some(g), .. } => write!(f, "group {g}"),
            Scope::Rule { model: Some(m), .. } => write!(f, "model {m}"),
            Scope::Rule { .. } => write!(f, "every request"),
        }
    }
}

/// The headroom of the strictest applicable rule, for `x-ratelimit-*` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headroom {
    /// The limit.
    pub limit: u64,
    /// What is left of it after this request.
    pub remaining: u64,
    /// Milliseconds until it is whole again.
    pub reset_ms: i64,
}
