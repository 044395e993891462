//! Admission, the same for every relay route: the key may use the model, the prompt passes the
//! sensitive-word check, fits some channel and has a price, and the user's quota actor counts
//! the request against the rate limits and reserves the most it can cost ([`admit`]).
//!
//! A generating request ([`Body::Writable`], [`Body::Fixed`]) has its output limit decided in
//! that same reservation, inside the user's critical section
//! ([`tollgate_actors::quota::output`]): the answer may be as long as the available balance
//! covers ([`OutputLimit`]), so concurrent requests cannot leave deep debts; the streamed
//! answer's mid-stream ceiling ([`crate::relay::pipeline::meter`]) holds it to that. A client's
//! spend ceiling (`max_cost`, [`crate::relay::pipeline::max_cost`]) lowers both the same way.

use std::time::Duration;

use tollgate_actors::options::pricing::ModelPricing;
use tollgate_actors::quota::{Hold, OutputAsk, QuotaError, Refusal};

use crate::error::RelayError;
use crate::relay::measure::components::{self, Components, Needs};
use crate::relay::measure::price::{self, OutputBound, OutputRule};
use crate::relay::pipeline::auth::Caller;
use crate::relay::pipeline::durable;
use crate::relay::pipeline::keepalive;
use crate::relay::pipeline::max_cost;
use crate::state::AppState;

/// The longest model name a request may name (it is stored in every log row).
pub const MAX_MODEL_BYTES: usize = 256;

/// What admission decided: the price and the reservation.
pub struct Admission {
    /// How the request is priced.
    pub price: Price,
    /// The reservation.
    pub hold: Hold,
}

/// How an admitted request is priced (and the options it was admitted under).
#[derive(Debug, Clone, Copy)]
pub struct Price {
    /// How the model is priced.
    pub pricing: ModelPricing,
    /// The model has no price and was admitted at DefaultModelRatio.
    pub default_ratio: bool,
    /// The billing group's ratio.
    pub group_ratio: f64,
    /// QuotaPerUnit at request time.
    pub quota_per_unit: i64,
    /// LogConsumeEnabled at request time.
    pub log_enabled: bool,
    /// RetryTimes at request time.
    pub retries: usize,
    /// Prompt tokens by Tollgate's counter: channels whose `max_input_tokens` (> 0) is below it
    /// are never picked.
    pub prompt_estimate: i64,
    /// `global.pass_through_request_enabled` at request time.
    pub pass_through: bool,
    /// The keep-alive ping interval of streamed answers (`None`: off).
    pub ping: Option<Duration>,
    /// The output limit decided with the reservation.
    pub output: OutputLimit,
    /// Audio, server tool and long-context prices ([`components`]).
    pub components: Components,
}

/// The output limit of an admitted request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutputLimit {
    /// L, the most output tokens per answer (`None`: not a generating request, or priced per
    /// call).
    pub tokens: Option<i64>,
    /// L is below what the upstream would otherwise allow: Tollgate writes it into the
    /// upstream body (a body that may not change is refused instead).
    pub write: bool,
    /// The mid-stream ceiling: the most output tokens (every answer together) a streamed
    /// answer may produce before its cost passes the reservation + DebtAllowance (`None`:
    /// none).
    pub ceiling: Option<i64>,
}

/// Whether and how a request's upstream body may carry an output limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    /// Not a generating request (or one whose limit is not Tollgate's to decide): the
    /// reservation holds the output bound, needing DefaultOutputReserve of it covered.
    Plain,
    /// Tollgate may write a lower limit into the upstream body.
    Writable,
    /// The body is never changed (legacy completions): all of the client's limit, or
    /// `default` without one, must be covered.
    Fixed {
        /// The upstream's own default limit.
        default: Option<i64>,
    },
}

/// What admission reads of a request.
#[derive(Debug, Clone, Copy)]
pub struct Ask<'a> {
    /// The model the client asked for.
    pub model: &'a str,
    /// Prompt tokens by Tollgate's counter.
    pub prompt_estimate: i64,
    /// The request's max_tokens, if any.
    pub max_tokens: Option<i64>,
    /// How many answers the request asks for (chat's `n`, the completions' `best_of`): each
    /// may be `max_tokens` long.
    pub answers: i64,
    /// How many calls' worth a per-call priced request costs (1 but for image requests: see
    /// [`price::image_calls`]).
    pub calls: f64,
    /// What the request would use beside text (audio, server tools, long context).
    pub needs: Needs,
    /// Whether and how the upstream body may carry an output limit.
    pub body: Body,
    /// Priced per call whatever the model's pricing (task submits, which have no tokens):
    /// `calls` at ModelPrice, or at ratio / 2 for a model priced by ratio
    /// ([`price::per_call`]), and nothing for a model admitted without a price (a task is
    /// never billed at DefaultModelRatio). The reservation is then the whole price, which is
    /// what the task's settlement charges.
    pub per_call: bool,
}

impl<'a> Ask<'a> {
    /// A request billed on its input alone (embeddings, rerank, speech): no output tokens, one
    /// answer, one call, nothing beside text, a body Tollgate never writes a limit into.
    pub fn input_only(model: &'a str, prompt_estimate: i64) -> Ask<'a> {
        Ask {
            model,
            prompt_estimate,
            max_tokens: Some(0),
            answers: 1,
            calls: 1.0,
            needs: Needs::default(),
            body: Body::Plain,
            per_call: false,
        }
    }
}

/// Admission, the same for every relay route (called by [`crate::relay::pipeline::spine::run`] only): the key
/// may use the model, the prompt has no sensitive words (CheckSensitiveOnPromptEnabled with
/// StopOnSensitiveEnabled; `texts` is asked for the prompt's texts only then), the model has a
/// price, and the user's quota book checks the user's and the key's rate limits (the model
/// request limit among them, [`crate::rate_limit::gate`]) and reserves the most it can cost in
/// one critical section (the playground reserves on the user only). A generating
/// request ([`Body::Writable`], [`Body::Fixed`]) has its output limit decided with the
/// reservation ([`OutputLimit`]); with `global.pass_through_request_enabled` a writable body is
/// fixed (never changed). Without `crash_charge` the reservation is journalled to charge
/// nothing if the process dies before it settles (a task submit's). `max_cost` is the client's
/// spend ceiling in US dollars ([`max_cost`]): it lowers the output limit and the mid-stream
/// ceiling, and refuses (403) a request whose prompt alone costs more.
pub async fn admit<'t>(
    state: &AppState,
    caller: &Caller,
    (ask, max_cost): (Ask<'_>, Option<f64>),
    crash_charge: bool,
    texts: impl FnOnce() -> Vec<&'t str> + Send,
) -> Result<Admission, RelayError> {
    let model = ask.model;
    if model.is_empty() {
        return Err(RelayError::BadRequest("model is required".into()));
    }
    if !caller.token.allows_model(model) {
        return Err(RelayError::Forbidden(format!(
            "this API key cannot use model {model}"
        )));
    }
    let options = state.options.current();
    let relay = options.relay();
    if relay.stop_on_sensitive {
        let hits = options.sensitive_words().find(texts());
        if !hits.is_empty() {
            return Err(RelayError::SensitiveWords(hits.join(", ")));
        }
    }
    if model.len() > MAX_MODEL_BYTES {
        return Err(RelayError::BadRequest(format!(
            "the model name is longer than {MAX_MODEL_BYTES} bytes"
        )));
    }
    if let Some(largest) = fits_no_channel(state, caller, model, ask.prompt_estimate) {
        return Err(RelayError::BadRequest(format!(
            "the prompt (about {} tokens) is longer than any channel serving {model} accepts \
             (at most {largest} input tokens)",
            ask.prompt_estimate
        )));
    }
    let prices = options.prices();
    let (pricing, default_ratio) = match prices.model(model) {
        Some(p) if ask.per_call || matches!(p, ModelPricing::PerCall { .. }) => {
            (price::per_call(p, ask.calls), false)
        }
        Some(p) => (p, false),
        // A task admitted without a price costs nothing.
        None if relay.self_use_mode || caller.user.accept_unset_price => {
            if ask.per_call {
                (ModelPricing::PerCall { price: 0.0 }, false)
            } else {
                let pricing = ModelPricing::Ratio {
                    model: relay.default_model_ratio,
                    completion: 1.0,
                    cache: 1.0,
                };
                (pricing, true)
            }
        }
        None => return Err(RelayError::ModelUnpriced(model.to_owned())),
    };
    let components = components::resolve(
        ask.needs,
        model,
        pricing,
        ask.prompt_estimate,
        prices.components(),
    )?;
    let group_ratio = prices.group(&caller.group);
    let quota_per_unit = relay.quota_per_unit;
    let output = OutputBound::new(
        ask.max_tokens,
        prices.max_output(model),
        relay.default_output_reserve,
        ask.answers,
    );
    let reservation = price::reservation(
        pricing,
        group_ratio,
        quota_per_unit,
        ask.prompt_estimate,
        output,
        relay.pre_consumed_quota,
    )
    .map_err(|e| RelayError::BadRequest(e.to_string()))?;
    // An answer whose charge cannot be recorded is not sold (P13 item 9).
    if reservation.amount > 0 && !state.quota.storage_ok() {
        return Err(RelayError::StorageUnavailable);
    }
    let token = (!caller.playground).then_some(caller.token.id);
    let pass_through = relay.pass_through;
    let rule = match ask.body {
        Body::Plain => None,
        Body::Writable => Some((ask.max_tokens, pass_through)),
        Body::Fixed { default } => Some((ask.max_tokens.or(default), true)),
    };
    let output_ask = match rule {
        Some((asked, fixed)) => price::output_ask(
            pricing,
            group_ratio,
            ask.prompt_estimate,
            relay.pre_consumed_quota,
            OutputRule {
                asked,
                model_max: prices.max_output(model),
                default_reserve: relay.default_output_reserve,
                cap: relay.default_output_cap,
                answers: ask.answers,
                fixed,
            },
        )
        .map_err(|e| RelayError::BadRequest(e.to_string()))?,
        None => None,
    };
    let max_units = max_cost.map(|dollars| max_cost::units(dollars, quota_per_unit));
    let output_ask = output_ask.map(|out| OutputAsk { max_units, ..out });
    if let (Some(dollars), Some(max)) = (max_cost, max_units) {
        let prompt_units = match &output_ask {
            Some(out) => out.prompt_units,
            None => {
                let nothing = OutputBound {
                    tokens: 0,
                    admit: 0,
                };
                price::reservation(
                    pricing,
                    group_ratio,
                    quota_per_unit,
                    ask.prompt_estimate,
                    nothing,
                    relay.pre_consumed_quota,
                )
                .map_err(|e| RelayError::BadRequest(e.to_string()))?
                .amount
            }
        };
        if prompt_units > max {
            return Err(max_cost::refused(prompt_units, dollars, quota_per_unit));
        }
    }
    // The user's and the key's rate limits, checked with the reservation.
    let gate = crate::rate_limit::gate(state, caller, &ask);
    let refused = |e: QuotaError| match e {
        QuotaError::Limited(refusal) => crate::rate_limit::refuse(state, caller, model, &refusal),
        e => quota_error(e),
    };
    let (mut hold, output) = match output_ask {
        Some(out) => {
            let (hold, tokens) = state
                .quota
                .reserve_output(caller.user.id, token, out, gate)
                .await
                .map_err(refused)?;
            // The one mid-stream ceiling: min(reservation + DebtAllowance, max_cost).
            let debt = price::ceiling_tokens(&out, hold.amount(), relay.debt_allowance);
            let ceiling = match max_units.and_then(|max| price::ceiling_tokens(&out, max, 0)) {
                Some(spend) => Some(debt.map_or(spend, |debt| debt.min(spend))),
                None => debt,
            };
            let limit = OutputLimit {
                tokens: Some(tokens),
                write: tokens < out.most,
                ceiling,
            };
            (hold, limit)
        }
        None => {
            let hold = state
                .quota
                .reserve_limited(caller.user.id, token, reservation, gate)
                .await
                .map_err(refused)?;
            (hold, OutputLimit::default())
        }
    };
    let durable_price = durable::Pricing {
        pricing,
        group_ratio,
        quota_per_unit,
    };
    let log_enabled = relay.log_consume;
    if crash_charge {
        durable::journal_hold(
            &mut hold,
            caller,
            model,
            durable_price,
            ask.prompt_estimate,
            log_enabled,
        );
    } else {
        durable::journal_free(&mut hold, caller);
    }
    Ok(Admission {
        price: Price {
            pricing,
            default_ratio,
            group_ratio,
            quota_per_unit,
            log_enabled,
            retries: usize::try_from(relay.retry_times).unwrap_or(0),
            prompt_estimate: ask.prompt_estimate,
            pass_through,
            ping: keepalive::interval(relay),
            output,
            components,
        },
        hold,
    })
}

/// The largest `max_input_tokens` among the channels that could serve `model` to `caller`, when
/// every one of them has a limit (> 0) below `prompt`: no channel can take the request, which is
/// the client's to shorten (400). `None` when some channel fits, or none serves the model (the
/// attempt loop reports that).
fn fits_no_channel(state: &AppState, caller: &Caller, model: &str, prompt: i64) -> Option<i64> {
    let table = state.channel_pool.table().load();
    let fits = |limit: i64| limit <= 0 || limit >= prompt;
    if let Some(id) = caller.pinned {
        let limit = table.channel(id)?.channel.max_input_tokens;
        return (!fits(limit)).then_some(limit);
    }
    let mut largest = None;
    for channel in table
        .route(&caller.group, model)?
        .tiers
        .iter()
        .flat_map(|tier| tier.channels.iter())
    {
        let limit = channel.channel.max_input_tokens;
        if fits(limit) {
            return None;
        }
        largest = largest.max(Some(limit));
    }
    largest
}

/// The refusal of a channel that forwards bodies unchanged when the caller's balance covers
/// less than the answer's full output limit (only `limit` tokens).
pub(in crate::relay) fn pass_through_refused(limit: i64) -> RelayError {
    RelayError::InsufficientUserQuota(format!(
        "insufficient quota: this channel forwards the request unchanged, so its full output \
         limit must be covered; the balance covers {limit} output tokens"
    ))
}

pub(in crate::relay) fn quota_error(e: QuotaError) -> RelayError {
    match e {
        QuotaError::Refused(Refusal::UserQuota { available, needed }) => {
            RelayError::InsufficientUserQuota(format!(
                "insufficient user quota: {available} available, this request needs {needed} \
                 (its prompt and a share of its output); a lower max_tokens needs less"
            ))
        }
        QuotaError::Refused(Refusal::TokenQuota { available, needed }) => {
            RelayError::InsufficientTokenQuota(format!(
                "insufficient token quota: {available} available on this API key, this request \
                 needs {needed} (its prompt and a share of its output); a lower max_tokens needs less"
            ))
        }
        QuotaError::Refused(Refusal::Budget {
            key,
            state,
            reserved,
            retry_after,
        }) => crate::relay::pipeline::budget::reached(key, &state, reserved, retry_after),
        QuotaError::Limited(refusal) => crate::rate_limit::refused(&refusal),
        QuotaError::Storage(e) => RelayError::Internal(format!("loading the balance: {e}")),
    }
}
