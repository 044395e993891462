//! Health rules: when an outcome disables or re-enables a channel. Pure and unit-tested; the
//! actor applies the [`Verdict`] (persist, republish).
//!
//! - Auto-disable needs the option AutomaticDisableChannelEnabled **and** the channel's
//!   `auto_ban = 1`, and only ever touches an enabled (status 1) channel; a manual disable
//!   (status 2) is never changed by these rules.
//! - Unambiguous failures disable at once: HTTP 401, or an error text containing one of the
//!   AutomaticDisableKeywords (one per line, case-insensitive) in an answer about the channel
//!   itself (401, 403, 429, 5xx, or no answer). Keywords never act on other statuses (a 400 may
//!   echo the client's own text, so a prompt could otherwise disable a channel). On a channel with several key
//!   lines only the failing key is disabled ([`Verdict::DisableKey`]); the channel itself is
//!   auto-disabled when its last usable key goes.
//! - Transient failures (no response: timeout or connect error; HTTP 408 or 5xx) disable after
//!   [`TRANSIENT_FAILURES_TO_DISABLE`] in a row; a success resets the count. Other statuses
//!   (400, 403, 404, 429, …) are neither: they neither count nor reset.
//! - An admin test slower than ChannelDisableThreshold seconds (0 = off) disables too.
//! - A success on an auto-disabled (status 3) channel re-enables it when
//!   AutomaticEnableChannelEnabled is on.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tollgate_storage::ChannelId;
use tollgate_storage::channels::{Channel, STATUS_AUTO_DISABLED, STATUS_ENABLED, other_info};

use super::outcome::{Outcome, OutcomeSource};
use crate::options::OptionsSnapshot;

/// Consecutive transient failures that auto-disable a channel.
pub const TRANSIENT_FAILURES_TO_DISABLE: u32 = 3;

/// The options the rules read, taken from one options snapshot.
#[derive(Debug, Clone, Default)]
pub struct HealthPolicy {
    /// AutomaticDisableChannelEnabled.
    pub auto_disable: bool,
    /// AutomaticEnableChannelEnabled.
    pub auto_enable: bool,
    /// AutomaticDisableKeywords, lower-cased, blank lines dropped.
    pub keywords: Vec<String>,
    /// ChannelDisableThreshold as a duration; `None` when 0 (off).
    pub slow_test: Option<Duration>,
}

impl HealthPolicy {
    /// Reads the policy from the options.
    pub fn from_options(options: &OptionsSnapshot) -> HealthPolicy {
        let threshold = options.number("ChannelDisableThreshold");
        HealthPolicy {
            auto_disable: options.flag("AutomaticDisableChannelEnabled"),
            auto_enable: options.flag("AutomaticEnableChannelEnabled"),
            keywords: options
                .text("AutomaticDisableKeywords")
                .lines()
                .map(|l| l.trim().to_lowercase())
                .filter(|l| !l.is_empty())
                .collect(),
            slow_test: (threshold > 0.0)
                .then(|| Duration::try_from_secs_f64(threshold).ok())
                .flatten(),
        }
    }
}

/// What the actor should do after an outcome.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum Verdict {
    /// Nothing changes.
    Keep,
    /// Auto-disable (status 3) with this reason.
    Disable(String),
    /// Disable one key line of a multi-key channel (the others keep serving).
    DisableKey {
        /// The 0-based key line.
        index: usize,
        /// Why.
        reason: String,
    },
    /// Re-enable (status 1).
    Enable,
}

/// How an outcome counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    /// The call worked.
    Success,
    /// Disables at once; the reason.
    Fatal(String),
    /// Counts towards [`TRANSIENT_FAILURES_TO_DISABLE`]; the reason.
    Transient(String),
    /// Neither counts nor resets.
    Neutral,
}

/// Classifies an outcome under `policy`.
pub fn classify(policy: &HealthPolicy, outcome: &Outcome) -> Class {
    let Some(error) = &outcome.error else {
        if outcome.source == OutcomeSource::Test
            && let Some(limit) = policy.slow_test
            && outcome.latency > limit
        {
            return Class::Fatal(format!(
                "response time {:.2}s exceeds the threshold {:.2}s",
                outcome.latency.as_secs_f64(),
                limit.as_secs_f64()
            ));
        }
        return Class::Success;
    };
    let lower = error.to_lowercase();
    if outcome.status == Some(401) {
        return Class::Fatal(format!("status 401: {error}"));
    }
    let about_the_channel = match outcome.status {
        None => true,
        Some(s) => matches!(s, 401 | 403 | 429) || s >= 500,
    };
    if about_the_channel
        && let Some(word) = policy.keywords.iter().find(|k| lower.contains(k.as_str()))
    {
        return Class::Fatal(format!("matched \"{word}\": {error}"));
    }
    match outcome.status {
        None | Some(408) => Class::Transient(error.clone()),
        Some(s) if s >= 500 => Class::Transient(format!("status {s}: {error}")),
        Some(_) => Class::Neutral,
    }
}

/// Consecutive transient failures per channel; owned by the pool actor.
#[derive(Debug, Default)]
pub struct Counters {
    /// channel → failures in a row.
    failures: HashMap<ChannelId, u32>,
    /// How many channels have failures counted, published for [`super::ChannelPool::report`]:
    /// while none has, a relayed success changes nothing and is not even sent.
    failing: Arc<AtomicUsize>,
}

impl Counters {
    /// Counters publishing how many channels have failures counted to `failing`.
    pub fn new(failing: Arc<AtomicUsize>) -> Counters {
        Counters {
            failures: HashMap::new(),
            failing,
        }
    }

    /// Forgets a channel (deleted, or re-enabled by an admin).
    pub fn reset(&mut self, id: ChannelId) {
        self.failures.remove(&id);
        self.publish();
    }

    /// Keeps only the channels `keep` accepts.
    pub fn retain(&mut self, mut keep: impl FnMut(ChannelId) -> bool) {
        self.failures.retain(|id, _| keep(*id));
        self.publish();
    }

    /// Counts one more failure in a row of `id`; returns the count.
    fn fail(&mut self, id: ChannelId) -> u32 {
        let count = self.failures.entry(id).or_insert(0);
        *count = count.saturating_add(1);
        let count = *count;
        self.publish();
        count
    }

    /// Publishes how many channels have failures counted (after every outcome, as the handle
    /// counts failures ahead of the actor).
    pub fn publish(&self) {
        self.failing.store(self.failures.len(), Ordering::Relaxed);
    }

    /// Current count of `id`.
    pub fn get(&self, id: ChannelId) -> u32 {
        self.failures.get(&id).copied().unwrap_or(0)
    }
}

/// Applies the rules to one outcome of `channel`, updating `counters`.
pub fn judge(
    policy: &HealthPolicy,
    channel: &Channel,
    outcome: &Outcome,
    counters: &mut Counters,
) -> Verdict {
    let may_disable =
        policy.auto_disable && channel.auto_ban == 1 && channel.status == STATUS_ENABLED;
    match classify(policy, outcome) {
        Class::Success => {
            counters.reset(channel.id);
            if policy.auto_enable && channel.status == STATUS_AUTO_DISABLED {
                Verdict::Enable
            } else {
                Verdict::Keep
            }
        }
        Class::Neutral => {
            // Nothing to count, but the handle may have counted this failure ahead.
            counters.publish();
            Verdict::Keep
        }
        Class::Fatal(reason) => {
            counters.reset(channel.id);
            if !may_disable {
                Verdict::Keep
            } else if let Some(index) = outcome.key.filter(|_| channel.key_lines().len() > 1) {
                disable_key(channel, index, reason)
            } else {
                Verdict::Disable(reason)
            }
        }
        Class::Transient(reason) => {
            let count = counters.fail(channel.id);
            if may_disable && count >= TRANSIENT_FAILURES_TO_DISABLE {
                counters.reset(channel.id);
                Verdict::Disable(format!("{count} consecutive failures, last: {reason}"))
            } else {
                Verdict::Keep
            }
        }
    }
}

/// The verdict for a fatal failure of key line `index` of a multi-key channel: that key alone,
/// or the channel once no other key is left.
fn disable_key(channel: &Channel, index: usize, reason: String) -> Verdict {
    let others_left = other_info::usable_keys(&channel.other_info, &channel.key_lines())
        .into_iter()
        .any(|i| i != index);
    if others_left {
        Verdict::DisableKey { index, reason }
    } else {
        Verdict::Disable(format!("all keys are disabled; last: {reason}"))
    }
}

#[cfg(test)]
mod tests;
