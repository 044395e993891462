//! What the crash journal learns of a request (see `tollgate_actors::journal`): at admission,
//! what its reservation would be charged if the process died before settling it (the prompt
//! estimate's cost, and the log row to write then; written with the journal's next append, and
//! at the latest at the upstream's first read of the answer, before anything of it leaves: see
//! `Meter::first_read`); while an answer streams, every [`PROGRESS_EVERY`], its output so far
//! and what that costs, so a crash mid-stream charges what was produced up to then.

use std::time::{Duration, Instant};

use tollgate_actors::journal::HoldStart;
use tollgate_actors::options::pricing::ModelPricing;
use tollgate_actors::quota::Hold;
use tollgate_storage::logs::{LOG_CONSUME, LogEntry};

use crate::clock::now_unix;
use crate::relay::measure::price::{self, Usage};
use crate::relay::pipeline::auth::Caller;
use crate::relay::pipeline::meter_tally::Tally;

/// How often a streaming answer journals its progress.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// How a request is priced, as far as a crash charge needs it.
#[derive(Debug, Clone, Copy)]
pub struct Pricing {
    /// How the model is priced.
    pub pricing: ModelPricing,
    /// The billing group's ratio.
    pub group_ratio: f64,
    /// QuotaPerUnit at request time.
    pub quota_per_unit: i64,
}

impl Pricing {
    /// What `prompt_tokens` and `completion_tokens` cost (`None` if the price cannot be
    /// applied; the reservation is charged then).
    fn cost(self, prompt_tokens: i64, completion_tokens: i64) -> Option<i64> {
        let usage = Usage {
            prompt_tokens,
            completion_tokens,
            ..Usage::default()
        };
        price::charge(self.pricing, self.group_ratio, self.quota_per_unit, usage).ok()
    }
}

/// Journals the admitted request's reservation (what a crash before its settlement charges).
pub fn journal_hold(
    hold: &mut Hold,
    caller: &Caller,
    model: &str,
    pricing: Pricing,
    prompt_estimate: i64,
    log_enabled: bool,
) {
    let prompt_cost = pricing
        .cost(prompt_estimate, 0)
        .unwrap_or_else(|| hold.amount());
    let row = log_enabled.then(|| LogEntry {
        created_at: now_unix(),
        log_type: LOG_CONSUME,
        user_id: caller.user.id,
        username: caller.user.username.clone(),
        token_id: caller.token.id.0,
        token_name: caller.token.name.clone(),
        model_name: model.to_owned(),
        group: caller.group.clone(),
        ..LogEntry::default()
    });
    let start = HoldStart {
        user: caller.user.id,
        token: (!caller.playground).then_some(caller.token.id),
        prompt_tokens: prompt_estimate,
        prompt_cost,
        row,
    };
    hold.journal(&start);
}

/// Journals a reservation that a crash before its settlement charges nothing (a task submit:
/// the client never learnt of the task; an accepted one's settlement is journalled with it).
pub fn journal_free(hold: &mut Hold, caller: &Caller) {
    hold.journal(&HoldStart {
        user: caller.user.id,
        token: (!caller.playground).then_some(caller.token.id),
        prompt_tokens: 0,
        prompt_cost: 0,
        row: None,
    });
}

/// A streaming answer's progress as last journalled.
#[derive(Debug)]
pub struct Progress {
    pricing: Pricing,
    prompt_tokens: i64,
    /// When the next record is due.
    due: Instant,
}

impl Progress {
    /// Progress of an answer priced by `pricing` to a prompt of `prompt_tokens`.
    pub fn new(pricing: Pricing, prompt_tokens: i64) -> Progress {
        Progress {
            pricing,
            prompt_tokens,
            due: Instant::now() + PROGRESS_EVERY,
        }
    }

    /// Called as the answer's `output` (of `model`) grows: journals the output so far when a
    /// record is due (the text not counted yet is counted then).
    pub fn tick(&mut self, hold: Option<&Hold>, output: &mut Tally, model: &str) {
        let Some(hold) = hold else { return };
        let now = Instant::now();
        if now < self.due {
            return;
        }
        self.due = now + PROGRESS_EVERY;
        output.fold(model);
        let tokens = output.tokens(model);
        let cost = self
            .pricing
            .cost(self.prompt_tokens, tokens)
            .unwrap_or_else(|| hold.amount());
        hold.progress(tokens, cost);
    }
}
