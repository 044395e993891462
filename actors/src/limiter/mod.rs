//! The rate-limit engine (P15 item 1): concurrent requests, requests per minute, tokens per
//! minute and requests per day, for users, API keys, channels and channel keys (their
//! [`Limits`], stored in `rate_limits.v1`) and for the group and model rules of the option
//! `RateLimitRules` ([`Rule`]); the spec's per-user model request limit (ModelRequestRateLimit*,
//! [`RateLimit`]: requests and successful requests per N minutes) is one more user-level rule,
//! counted on the user's counter ([`span`]). Every applicable rule is checked and the strictest wins: a
//! request is admitted only when every counter has room, and then counts on all of them; a
//! refusal names its rule ([`Refusal`]). Tokens per minute are reserved from the estimate at
//! admission and corrected at settlement ([`Admission::settle`]). A rule with a queue holds up
//! to N waiting requests for at most T ([`Limiter::admit_queued`]); a client that leaves drops
//! its future and so its place.
//!
//! Each counter ([`counter::Counter`]) is shared by every request of its scope: the in-flight
//! count is an atomic, the windows sit behind the counter's own short lock (held for the check
//! and the add, never across an await), so different scopes never contend and the hot path
//! makes no actor call. Counters are created on a scope's first request and dropped once idle
//! (nothing in flight or queued, every window empty): when a new counter is made, at most once
//! a minute, the idle ones are swept, so memory is bounded by the callers active within their
//! longest window (a day for requests per day). Not here: where the relay calls it (admission, the channel pick) and the
//! wire shape of a refusal.

mod admission;
mod admit;
mod clock;
mod counter;
mod engine;
mod refusal;
mod scope;
mod span;
pub mod sticky;
pub mod window;

pub use admission::{Admission, duration_text};
pub use admit::Ask;
pub use clock::{MillisClock, system_millis};
pub use engine::{Limiter, SWEEP_MS};
pub use refusal::{LimiterStats, Refusal};
pub use scope::{Headroom, Kind, Scope};

#[cfg(test)]
mod tests;
