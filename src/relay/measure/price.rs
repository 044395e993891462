//! Pure pricing: what a request is reserved before forwarding and charged after (DESIGN.md
//! "Money", reference §3.3/§3.5). No I/O; every result is an `i64` of quota units or an error,
//! never a wrapped or negative amount.
//!
//! - Ratio-priced: `round(group × model × (uncached prompt + cached × cache + 5-minute cache
//!   writes × 1.25 + 1-hour cache writes × 2 + completion × completion_ratio))`, priced from the
//!   one usage record ([`crate::relay::measure::usage::Usage`]); a request that used tokens on a priced model costs at least 1 unit;
//!   a request that reports zero tokens costs 0.
//! - Per-call: `round(price × QuotaPerUnit × group)`, whatever the tokens; a task submit is
//!   priced per call whatever its model's pricing ([`per_call`]).
//! - Reservation: `max(prompt estimate, PreConsumedQuota) + output bound × completion_ratio`, at
//!   the model and group ratios, where the output bound is the request's `max_tokens` (or
//!   `max_completion_tokens` / `max_output_tokens`), else the model's max output capped at
//!   DefaultOutputReserve. Unlike new-api, the completion ratio IS applied, so the reservation
//!   bounds what the request can cost. Admission needs only the prompt and at most
//!   DefaultOutputReserve of the output to be available.
//! - Generating routes ([`output_ask`]): the output bound is instead the limit L the quota book
//!   decides with the reservation (what the available balance covers, at most the client's
//!   limit or the model's maximum / DefaultOutputCap), and [`ceiling_tokens`] is the output a
//!   stream may reach before its cost passes the reservation + DebtAllowance.

use tollgate_actors::options::pricing::ModelPricing;
use tollgate_actors::quota::{OutputAsk, Reservation};

pub use crate::relay::measure::usage::Usage;

/// 5-minute cache writes cost this many prompt tokens: Anthropic's 5-minute cache write price
/// (1.25 × input), new-api's default CreateCacheRatio for Claude models.
pub const CACHE_WRITE_RATIO: f64 = 1.25;

/// 1-hour cache writes cost this many prompt tokens: Anthropic's 1-hour cache write price
/// (2 × input).
pub const CACHE_WRITE_1H_RATIO: f64 = 2.0;

/// Why a price could not be computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PriceError {
    /// A token count was negative.
    #[error("token counts cannot be negative")]
    NegativeTokens,
    /// A ratio or price was negative or not a number.
    #[error("the configured price or ratio is invalid")]
    InvalidRatio,
    /// The amount does not fit in an i64.
    #[error("the amount is too large")]
    Overflow,
}

/// An amount of units rounded to the nearest integer; refused when negative, NaN or past i64.
pub(in crate::relay) fn to_units(amount: f64) -> Result<i64, PriceError> {
    let rounded = amount.round();
    if rounded.is_nan() || rounded < 0.0 {
        return Err(PriceError::InvalidRatio);
    }
    // 2^63 as f64 (infinity included); every f64 below it converts exactly into i64's range.
    if rounded >= 9_223_372_036_854_775_808.0 {
        return Err(PriceError::Overflow);
    }
    #[expect(clippy::cast_possible_truncation, reason = "range checked just above")]
    Ok(rounded as i64)
}

/// Every value finite and non-negative.
pub(in crate::relay) fn check_ratios(values: &[f64]) -> Result<(), PriceError> {
    if values.iter().all(|v| v.is_finite() && *v >= 0.0) {
        Ok(())
    } else {
        Err(PriceError::InvalidRatio)
    }
}

/// No token count of `usage` is negative.
fn check_tokens(usage: &Usage) -> Result<(), PriceError> {
    if usage.prompt_tokens < 0
        || usage.completion_tokens < 0
        || usage.cached_tokens < 0
        || usage.cache_write_5m_tokens < 0
        || usage.cache_write_1h_tokens < 0
    {
        return Err(PriceError::NegativeTokens);
    }
    Ok(())
}

/// The text tokens of `usage` in prompt-token equivalents: uncached prompt + cached × `cache` +
/// cache writes at their ratios + completion × `completion` (before the model and group
/// ratios).
pub(in crate::relay) fn weighted(
    usage: Usage,
    completion: f64,
    cache: f64,
) -> Result<f64, PriceError> {
    check_tokens(&usage)?;
    check_ratios(&[completion, cache])?;
    // Reads and writes are parts of the prompt: each capped at what is left of it.
    let cached = usage.cached_tokens.min(usage.prompt_tokens);
    let written_1h = usage
        .cache_write_1h_tokens
        .min(usage.prompt_tokens - cached);
    let written_5m = usage
        .cache_write_5m_tokens
        .min(usage.prompt_tokens - cached - written_1h);
    let uncached = (usage.prompt_tokens - cached - written_1h - written_5m) as f64;
    Ok(uncached
        + cached as f64 * cache
        + written_5m as f64 * CACHE_WRITE_RATIO
        + written_1h as f64 * CACHE_WRITE_1H_RATIO
        + usage.completion_tokens as f64 * completion)
}

/// The quota a finished request costs.
pub fn charge(
    pricing: ModelPricing,
    group_ratio: f64,
    quota_per_unit: i64,
    usage: Usage,
) -> Result<i64, PriceError> {
    check_tokens(&usage)?;
    match pricing {
        ModelPricing::PerCall { price } => {
            check_ratios(&[price, group_ratio])?;
            to_units(price * quota_per_unit as f64 * group_ratio)
        }
        ModelPricing::Ratio {
            model,
            completion,
            cache,
        } => {
            check_ratios(&[model, completion, cache, group_ratio])?;
            if usage.prompt_tokens == 0 && usage.completion_tokens == 0 {
                return Ok(0);
            }
            let weighted = weighted(usage, completion, cache)?;
            let units = to_units(group_ratio * model * weighted)?;
            Ok(if units == 0 && model * group_ratio > 0.0 {
                1
            } else {
                units
            })
        }
    }
}

/// A model's pricing as a price per call, for requests priced per call whatever their model's
/// pricing (task submits, which have no tokens): `calls` × its ModelPrice, or `calls` × ratio / 2
/// for a model priced by ratio (the incumbent's per-call price of a task model given a ratio).
pub fn per_call(pricing: ModelPricing, calls: f64) -> ModelPricing {
    let each = match pricing {
        ModelPricing::PerCall { price } => price,
        ModelPricing::Ratio { model, .. } => model / 2.0,
    };
    ModelPricing::PerCall {
        price: each * calls,
    }
}

/// How many calls' worth a per-call priced image request costs: `n` images, each at its size's
/// and quality's share of the model's price (the price is that of one standard 1024×1024
/// image). DALL·E 2: 256² 0.8, 512² 0.9 (OpenAI's $0.016 / $0.018 against $0.020);
/// DALL·E 3: 1792-wide or -tall ×2, `hd` ×2 at 1024² and ×1.5 at 1792 ($0.08 / $0.12 against
/// $0.04). Other models: `n` alone. `n` below 1 counts as 1.
pub fn image_calls(model: &str, n: Option<i64>, size: Option<&str>, quality: Option<&str>) -> f64 {
    let n = n.unwrap_or(1).max(1) as f64;
    let size = size.unwrap_or("1024x1024");
    let wide = size.contains("1792");
    let each = match model {
        "dall-e-2" => match size {
            "256x256" => 0.8,
            "512x512" => 0.9,
            _ => 1.0,
        },
        "dall-e-3" => {
            let base = if wide { 2.0 } else { 1.0 };
            match (quality == Some("hd"), wide) {
                (true, true) => base * 1.5,
                (true, false) => base * 2.0,
                (false, _) => base,
            }
        }
        _ => 1.0,
    };
    n * each
}

/// The most answers one request is reserved for (OpenAI's limit of `n`); a request asking
/// for more is refused upstream, or billed in full if it is not.
const MAX_ANSWERS: i64 = 128;

/// The output tokens a request may produce, as the reservation counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputBound {
    /// The most output the answer can have: held while the request runs.
    pub tokens: i64,
    /// The part of it admission asks the balance to cover (≤ `tokens`).
    pub admit: i64,
}

impl OutputBound {
    /// The bound of a request that set `max_tokens` (or not) and asks for `answers` answers
    /// (chat's `n`, the completions' `best_of`: each may be that long), for a model whose
    /// answers have at most `model_max` tokens (when known), with DefaultOutputReserve
    /// `default_reserve`.
    pub fn new(
        max_tokens: Option<i64>,
        model_max: Option<i64>,
        default_reserve: i64,
        answers: i64,
    ) -> Self {
        let default_reserve = default_reserve.max(1);
        let each = match max_tokens {
            Some(asked) => asked.max(0),
            None => model_max.map_or(default_reserve, |m| m.clamp(1, default_reserve)),
        };
        let tokens = each.saturating_mul(answers.clamp(1, MAX_ANSWERS));
        OutputBound {
            tokens,
            admit: tokens.min(default_reserve),
        }
    }
}

/// What bounds a generating request's output, before the balance is consulted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputRule {
    /// The client's limit (`max_tokens`, `max_completion_tokens`, `max_output_tokens`, ...).
    pub asked: Option<i64>,
    /// The model's maximum output (`ModelMaxOutput` over the built-in table), when known.
    pub model_max: Option<i64>,
    /// DefaultOutputReserve: the most output admission asks to be covered.
    pub default_reserve: i64,
    /// DefaultOutputCap: the bound of a model with no known maximum.
    pub cap: i64,
    /// Answers asked for (each may be that long).
    pub answers: i64,
    /// The body may not be changed (pass-through, legacy completions): the limit is not
    /// lowered, and all of it must be covered.
    pub fixed: bool,
}

impl OutputRule {
    /// The most output (per answer) the request may have: the client's limit, at most the
    /// model's maximum; without a limit the model's maximum, or DefaultOutputCap when unknown.
    pub fn most(&self) -> i64 {
        let most = match (self.asked, self.model_max) {
            (Some(asked), Some(max)) => asked.min(max),
            (Some(asked), None) => asked,
            (None, Some(max)) => max,
            (None, None) => self.cap,
        };
        most.max(0)
    }
}

/// What a ratio-priced generating request asks of the ledger ([`OutputAsk`]): the prompt's
/// units, each output token's units (every answer together), and the output bounds of `rule`.
/// `None` for a per-call price (its reservation is the price, [`reservation`]).
pub fn output_ask(
    pricing: ModelPricing,
    group_ratio: f64,
    prompt_estimate: i64,
    pre_consumed_min: i64,
    rule: OutputRule,
) -> Result<Option<OutputAsk>, PriceError> {
    let ModelPricing::Ratio {
        model, completion, ..
    } = pricing
    else {
        return Ok(None);
    };
    if prompt_estimate < 0 {
        return Err(PriceError::NegativeTokens);
    }
    check_ratios(&[model, completion, group_ratio])?;
    let prompt = prompt_estimate.max(pre_consumed_min) as f64;
    let answers = rule.answers.clamp(1, MAX_ANSWERS) as f64;
    let most = rule.most();
    Ok(Some(OutputAsk {
        prompt_units: to_units(group_ratio * model * prompt)?,
        per_token: group_ratio * model * completion * answers,
        most,
        least: most.min(rule.default_reserve.max(1)),
        lowered_cap: if rule.model_max.is_some() {
            most
        } else {
            rule.cap.max(1)
        },
        fixed: rule.fixed,
        max_units: None,
    }))
}

/// The most output tokens (per answer) a streamed answer held `amount` units for may produce
/// before it costs more than `amount` + `allowance` (the mid-stream ceiling), or `None` when
/// its output costs nothing.
pub fn ceiling_tokens(ask: &OutputAsk, amount: i64, allowance: i64) -> Option<i64> {
    if ask.per_token <= 0.0 || !ask.per_token.is_finite() {
        return None;
    }
    let spare = amount
        .saturating_add(allowance.max(0))
        .saturating_sub(ask.prompt_units)
        .max(0) as f64;
    let tokens = (spare / ask.per_token).floor();
    if tokens >= 9.0e18 {
        return None;
    }
    #[expect(clippy::cast_possible_truncation, reason = "range checked just above")]
    let tokens = tokens as i64;
    Some(tokens)
}

/// The quota to reserve before forwarding, and the part of it admission needs available.
pub fn reservation(
    pricing: ModelPricing,
    group_ratio: f64,
    quota_per_unit: i64,
    prompt_estimate: i64,
    output: OutputBound,
    pre_consumed_min: i64,
) -> Result<Reservation, PriceError> {
    if prompt_estimate < 0 || output.tokens < 0 || output.admit < 0 {
        return Err(PriceError::NegativeTokens);
    }
    match pricing {
        ModelPricing::PerCall { .. } => Ok(Reservation::whole(charge(
            pricing,
            group_ratio,
            quota_per_unit,
            Usage::default(),
        )?)),
        ModelPricing::Ratio {
            model, completion, ..
        } => {
            check_ratios(&[model, completion, group_ratio])?;
            let prompt = prompt_estimate.max(pre_consumed_min) as f64;
            let units =
                |output: i64| to_units(group_ratio * model * (prompt + output as f64 * completion));
            let amount = units(output.tokens)?;
            let needed = units(output.admit)?.min(amount);
            Ok(Reservation { amount, needed })
        }
    }
}

#[cfg(test)]
mod tests;
