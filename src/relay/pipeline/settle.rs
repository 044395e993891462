//! Phase 6: what a finished (or abandoned) request costs, and its log row. The charge itself is
//! the quota book's [`Hold::settle`](tollgate_actors::quota::Hold::settle), which queues the
//! balance change and the log row to the writer together.

use std::time::Instant;

use tollgate_actors::options::pricing::ModelPricing;
use tollgate_actors::quota::{Billed, Hold};
use tollgate_storage::ChannelId;
use tollgate_storage::logs::{LOG_CONSUME, LogEntry};

use crate::clock::now_unix;
use crate::relay::measure::components::{self, Components};
use crate::relay::measure::price::{self, Usage};
use crate::relay::pipeline::auth::Caller;

pub use crate::relay::measure::usage::{PartialReason, UsageSource};

/// One upstream attempt of a request, as the log's `other.admin_info.attempts` keeps it
/// (short keys: a request may try several channels and every row carries its timeline).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Attempt {
    /// Channel id.
    pub c: i64,
    /// HTTP status the upstream answered, 0 when none came.
    pub s: u16,
    /// Milliseconds from sending to the answer's headers (or to the failure).
    pub ms: u64,
    /// Error class, empty on success: `auth` (401/403), `rate_limit` (429), `timeout` (408 or
    /// no answer in time), `server` (5xx), `client` (other 4xx), `connect`, `network`,
    /// `unsupported` (a channel type the relay cannot speak yet).
    pub e: &'static str,
}

impl Attempt {
    /// The class of an HTTP answer.
    pub fn class_of(status: u16) -> &'static str {
        match status {
            200..=399 => "",
            401 | 403 => "auth",
            408 => "timeout",
            429 => "rate_limit",
            500.. => "server",
            _ => "client",
        }
    }
}

/// A consume row's `other` (the fields in the order a JSON object map would sort them).
#[derive(serde::Serialize)]
struct Other<'a> {
    admin_info: AdminInfo<'a>,
    /// Audio and server tool counts and their prices (fields only when used).
    #[serde(flatten)]
    components: ComponentsLog,
    cache_creation_ratio: f64,
    cache_creation_ratio_1h: f64,
    cache_creation_ratio_5m: f64,
    cache_creation_tokens: i64,
    cache_creation_tokens_1h: i64,
    cache_creation_tokens_5m: i64,
    cache_ratio: f64,
    cache_tokens: i64,
    completion_ratio: f64,
    cost: i64,
    /// The charge left the user or the key in debt (negative balance or remaining quota).
    #[serde(skip_serializing_if = "Option::is_none")]
    debt: Option<Debt>,
    /// The model has no price: charged at DefaultModelRatio.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    default_model_ratio: bool,
    frt: i64,
    group_ratio: f64,
    is_model_mapped: bool,
    model_price: f64,
    model_ratio: f64,
    /// The output limit (tokens per answer) decided at admission, for a generating request.
    #[serde(skip_serializing_if = "Option::is_none")]
    output_limit: Option<i64>,
    /// Whether Tollgate wrote `output_limit` into the upstream body (the balance covered less
    /// than the upstream would otherwise allow).
    #[serde(skip_serializing_if = "Option::is_none")]
    output_limit_set: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    partial_reason: Option<&'static str>,
    upstream_model_name: &'a str,
    usage_source: &'static str,
}

/// `other.debt`: what the user and the key were left with after a charge that overdrew them.
#[derive(serde::Serialize)]
struct Debt {
    /// The user's balance after the charge.
    balance: i64,
    /// The key's remaining quota after the charge (limited keys only).
    #[serde(skip_serializing_if = "Option::is_none")]
    token_remain: Option<i64>,
}

/// The component fields of `other` (new-api's names where it has them): audio tokens and their
/// ratios, server tool calls and their US$ price per call, the long-context tier applied.
#[derive(serde::Serialize, Default)]
struct ComponentsLog {
    #[serde(skip_serializing_if = "Option::is_none")]
    audio_input: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    audio_output: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    audio_ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    audio_completion_ratio: Option<f64>,
    /// Tool key → calls billed.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    tool_calls: std::collections::BTreeMap<&'static str, i64>,
    /// Tool key → US$ per call.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    tool_call_price: std::collections::BTreeMap<&'static str, f64>,
    /// The tier applied (its `above_prompt_tokens`).
    #[serde(skip_serializing_if = "Option::is_none")]
    price_tier: Option<i64>,
}

impl ComponentsLog {
    fn of(components: &Components, usage: &Usage) -> ComponentsLog {
        use tollgate_actors::options::component_prices::Tool;
        let prices = &components.prices;
        let audio = usage.audio_prompt_tokens > 0 || usage.audio_completion_tokens > 0;
        let mut log = ComponentsLog {
            price_tier: prices
                .tier_for(usage.prompt_tokens)
                .map(|t| t.above_prompt_tokens),
            ..ComponentsLog::default()
        };
        if audio {
            log.audio_input = Some(usage.audio_prompt_tokens);
            log.audio_output = Some(usage.audio_completion_tokens);
            log.audio_ratio = prices.audio_ratio;
            log.audio_completion_ratio = prices.audio_completion_ratio;
        }
        for (tool, calls) in Tool::ALL
            .into_iter()
            .zip(components::billed_calls(components, usage))
        {
            if calls > 0 {
                log.tool_calls.insert(tool.key(), calls);
                if let Some(p) = prices.tool(tool) {
                    log.tool_call_price.insert(tool.key(), p);
                }
            }
        }
        log
    }
}

/// `other.admin_info`: the channels tried and the attempt timeline.
#[derive(serde::Serialize)]
struct AdminInfo<'a> {
    attempts: &'a [Attempt],
    use_channel: &'a [ChannelId],
}

/// Everything settlement needs, gathered while the request ran.
#[derive(Debug, Clone)]
pub struct SettleCtx {
    /// Who called.
    pub caller: Caller,
    /// The model the client asked for.
    pub model: String,
    /// The model sent upstream (after the channel's mapping).
    pub upstream_model: String,
    /// The channel that answered.
    pub channel: ChannelId,
    /// Every channel tried, in order.
    pub tried: Vec<ChannelId>,
    /// The attempt timeline (one entry per channel tried, the answering one last).
    pub attempts: Vec<Attempt>,
    /// How the model is priced.
    pub pricing: ModelPricing,
    /// Audio, server tool and long-context prices.
    pub components: Components,
    /// The model has no price and is charged at DefaultModelRatio.
    pub default_ratio: bool,
    /// Ratio of the billing group.
    pub group_ratio: f64,
    /// QuotaPerUnit at request time.
    pub quota_per_unit: i64,
    /// Streamed answer.
    pub stream: bool,
    /// When the request arrived.
    pub started: Instant,
    /// When the first byte of the answer arrived.
    pub first_byte: Option<Instant>,
    /// LogConsumeEnabled at request time.
    pub log_enabled: bool,
    /// The `/metrics` counters of the channel and model.
    pub cell: std::sync::Arc<crate::metrics::relay::Cell>,
    /// The output limit decided at admission, and whether it was written upstream.
    pub output_limit: Option<(i64, bool)>,
    /// A streamed answer's mid-stream ceiling in output tokens (see [`crate::relay::pipeline::meter`]).
    pub ceiling: Option<i64>,
}

impl SettleCtx {
    /// Charges `usage` to `hold` in full (into debt if need be) and queues the log row (with
    /// `usage.source`). Returns the units billed.
    pub fn settle(&self, mut hold: Hold, usage: Usage) -> i64 {
        // Tokens per minute count what was used, not the admission's estimate.
        let used = usage.prompt_tokens.saturating_add(usage.completion_tokens);
        hold.settle_limits(u64::try_from(used).unwrap_or(0));
        let cost = match components::charge(
            self.pricing,
            &self.components,
            self.group_ratio,
            self.quota_per_unit,
            usage,
        ) {
            Ok(cost) => cost,
            Err(e) => {
                tracing::error!(error = %e, model = %self.model, "pricing failed; charging the reservation");
                hold.amount()
            }
        };
        let billed = hold.settle(
            cost,
            |billed| self.log_enabled.then(|| self.log(usage, cost, billed)),
            now_unix(),
        );
        if billed.debt() {
            tracing::info!(user = %self.caller.user.id, cost, balance = billed.balance, "charge left a debt");
        }
        let first_token = self
            .first_byte
            .filter(|_| self.stream)
            .map(|t| t.saturating_duration_since(self.started));
        self.cell
            .settled(billed.charged, self.started.elapsed(), first_token);
        billed.charged
    }

    fn log(&self, usage: Usage, cost: i64, billed: &Billed) -> LogEntry {
        let effective = components::effective(self.pricing, &self.components, usage.prompt_tokens);
        let (model_ratio, completion_ratio, cache_ratio, model_price) = match effective {
            ModelPricing::Ratio {
                model,
                completion,
                cache,
            } => (model, completion, cache, -1.0),
            ModelPricing::PerCall { price } => (0.0, 0.0, 0.0, price),
        };
        let frt_ms = self.first_byte.map_or(-1, |t| {
            i64::try_from(t.duration_since(self.started).as_millis()).unwrap_or(i64::MAX)
        });
        let other = Other {
            admin_info: AdminInfo {
                attempts: &self.attempts,
                use_channel: &self.tried,
            },
            components: ComponentsLog::of(&self.components, &usage),
            cache_creation_ratio: price::CACHE_WRITE_RATIO,
            cache_creation_ratio_1h: price::CACHE_WRITE_1H_RATIO,
            cache_creation_ratio_5m: price::CACHE_WRITE_RATIO,
            cache_creation_tokens: usage.cache_write_tokens(),
            cache_creation_tokens_1h: usage.cache_write_1h_tokens,
            cache_creation_tokens_5m: usage.cache_write_5m_tokens,
            cache_ratio,
            cache_tokens: usage.cached_tokens,
            completion_ratio,
            cost,
            debt: billed.debt().then_some(Debt {
                balance: billed.balance,
                token_remain: billed.token_remain.filter(|r| *r < 0),
            }),
            default_model_ratio: self.default_ratio,
            frt: frt_ms,
            group_ratio: self.group_ratio,
            is_model_mapped: self.upstream_model != self.model,
            model_price,
            model_ratio,
            output_limit: self.output_limit.map(|(tokens, _)| tokens),
            output_limit_set: self.output_limit.map(|(_, set)| set),
            partial_reason: usage.source.reason().map(PartialReason::as_str),
            upstream_model_name: &self.upstream_model,
            usage_source: usage.source.as_str(),
        };
        LogEntry {
            created_at: now_unix(),
            log_type: LOG_CONSUME,
            user_id: self.caller.user.id,
            username: self.caller.user.username.clone(),
            token_id: self.caller.token.id.0,
            token_name: self.caller.token.name.clone(),
            model_name: self.model.clone(),
            channel_id: self.channel.0,
            group: self.caller.group.clone(),
            is_stream: self.stream,
            use_time: i64::try_from(self.started.elapsed().as_secs()).unwrap_or(i64::MAX),
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            other: serde_json::to_string(&other).unwrap_or_default(),
            ..LogEntry::default()
        }
    }
}
