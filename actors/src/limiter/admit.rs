//! Which rules apply to a request and its admission: the caller's (user, with the spec's model
//! request limit, and API key; checked inside the quota book's critical section), the covering
//! `RateLimitRules` rules (with their queues) and, at the pick, a channel and its key.

use std::sync::Arc;
use std::time::Duration;

use tollgate_storage::limits::Owner;
use tollgate_storage::{ChannelId, TokenId, UserId};

use super::admission::Admission;
use super::counter::Place;
use super::engine::{Check, Limiter, Queue};
use super::refusal::Refusal;
use super::scope::Scope;
use crate::options::limit_rules::Rule;
use crate::options::rate_limit::RateLimit;

/// What one request asks for.
#[derive(Debug, Clone, Copy)]
pub struct Ask<'a> {
    /// The caller.
    pub user: UserId,
    /// The caller's key.
    pub token: Option<TokenId>,
    /// The group the request is billed to.
    pub group: &'a str,
    /// The model asked for.
    pub model: &'a str,
    /// Estimated tokens (prompt + output limit), reserved against tokens-per-minute limits.
    pub tokens: u64,
}

impl Limiter {
    /// The user's (with the model request limit `model`) and the key's limits for `ask`.
    fn owner_rules(&self, ask: &Ask<'_>, model: Option<RateLimit>) -> Vec<Check> {
        let table = self.inner.table.load();
        let mut out = Vec::new();
        let limits = |owner: Owner| {
            table
                .owners
                .get(&owner)
                .map(|l| l.limits)
                .filter(|l| !l.is_none())
        };
        let user = limits(Owner::User(ask.user));
        if user.is_some() || model.is_some() {
            out.push(Check {
                scope: Scope::User(ask.user),
                limits: user.unwrap_or_default(),
                model,
                queue: Queue::NONE,
            });
        }
        if let Some((t, limits)) = ask.token.and_then(|t| Some((t, limits(Owner::Token(t))?))) {
            out.push(Check::of(Scope::Token(t), limits, Queue::NONE));
        }
        out
    }

    /// Every `RateLimitRules` rule covering `ask`.
    fn group_rules(ask: &Ask<'_>, rules: &[Rule]) -> Vec<Check> {
        let mut out = Vec::new();
        for rule in rules.iter().filter(|r| r.covers(ask.group, ask.model)) {
            let scope = Scope::Rule {
                group: rule.group.clone(),
                model: rule.model.clone(),
            };
            let queue = Queue {
                size: rule.queue,
                wait_ms: rule.queue_timeout_ms,
            };
            out.push(Check::of(scope, rule.limits(), queue));
        }
        out
    }

    /// Admits `ask` under the user's, the key's and the covering rules' limits at once (no
    /// queue), or refuses it with the first rule that has no room.
    pub fn admit(&self, ask: &Ask<'_>, rules: &[Rule]) -> Result<Admission, Refusal> {
        let mut all = self.owner_rules(ask, None);
        all.extend(Self::group_rules(ask, rules));
        self.take_all(all, ask.tokens)
            .map_err(|(refusal, _, counter)| self.refused(refusal, &counter))
    }

    /// Admits `ask` under its user's limits, the model request limit `model` (a user-level
    /// rule) and its key's limits, or refuses it naming the first that has no room. Never
    /// waits: the quota book runs it inside the user's critical section, with the reservation
    /// ([`crate::quota::QuotaBook::reserve_limited`]).
    pub fn admit_caller(
        &self,
        ask: &Ask<'_>,
        model: Option<RateLimit>,
    ) -> Result<Admission, Refusal> {
        self.take_all(self.owner_rules(ask, model), ask.tokens)
            .map_err(|(refusal, _, counter)| self.refused(refusal, &counter))
    }

    /// Admits `ask` under the covering `RateLimitRules` rules (group and model; the user's and
    /// the key's are [`Limiter::admit_caller`]'s): a refusal by a rule with a queue waits in it
    /// (when it has a free place) until the rule has room or the rule's wait is over. Dropping
    /// the future leaves the queue.
    pub async fn admit_queued(&self, ask: &Ask<'_>, rules: &[Rule]) -> Result<Admission, Refusal> {
        let mut place: Option<Place> = None;
        let mut deadline: Option<tokio::time::Instant> = None;
        loop {
            let (refusal, queue, counter) =
                match self.take_all(Self::group_rules(ask, rules), ask.tokens) {
                    Ok(admission) => return Ok(admission),
                    Err(refused) => refused,
                };
            if queue.size == 0 {
                return Err(self.refused(refusal, &counter));
            }
            if place.is_none() {
                match Place::join(&counter, queue.size) {
                    Some(p) => {
                        self.inner.stats.count_queued(&refusal);
                        place = Some(p);
                        deadline = Some(
                            tokio::time::Instant::now()
                                + Duration::from_millis(u64::from(queue.wait_ms)),
                        );
                    }
                    None => return Err(self.refused(refusal, &counter)),
                }
            }
            let end = deadline.unwrap_or_else(tokio::time::Instant::now);
            let retry =
                Duration::from_millis(u64::try_from(refusal.retry_after_ms.max(1)).unwrap_or(1));
            let wake = (tokio::time::Instant::now() + retry).min(end);
            if tokio::time::Instant::now() >= end {
                return Err(self.refused(refusal, &counter));
            }
            tokio::select! {
                () = counter.freed() => {}
                () = tokio::time::sleep_until(wake) => {}
            }
        }
    }

    /// Admits one attempt on `channel` (and its key on line `key`): a channel or key at its
    /// limit refuses, and the caller moves on to the next candidate.
    pub fn admit_channel(
        &self,
        channel: ChannelId,
        key: Option<u32>,
        tokens: u64,
    ) -> Result<Admission, Refusal> {
        let table = self.inner.table.load();
        let Some(limits) = table.owners.get(&Owner::Channel(channel)) else {
            return Ok(Admission::empty(Arc::clone(&self.inner.clock)));
        };
        let mut rules = Vec::new();
        if !limits.limits.is_none() {
            rules.push(Check::of(
                Scope::Channel(channel),
                limits.limits,
                Queue::NONE,
            ));
        }
        if let Some(k) = key
            .map(|k| (k, limits.key(k)))
            .filter(|(_, l)| !l.is_none())
        {
            rules.push(Check::of(Scope::ChannelKey(channel, k.0), k.1, Queue::NONE));
        }
        drop(table);
        self.take_all(rules, tokens)
            .map_err(|(refusal, _, counter)| self.refused(refusal, &counter))
    }
}
