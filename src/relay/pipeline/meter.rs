//! The one meter: every answer — whole or streamed, any wire, any ending — is turned into one
//! [`Usage`] record here and settled exactly once. The OpenAI pass-through stream
//! ([`crate::relay::pipeline::stream`]), the adaptor pipe ([`crate::relay::pipeline::pipe`]) and the whole-answer paths feed it
//! what they read (the upstream's usage reports and the answer's output text) and tell it how
//! the answer ended; the rules below are the same for all of them:
//!
//! | ending | upstream reported usage | no usage reported |
//! |---|---|---|
//! | complete | the report (`upstream`); a completion of 0 with output counted is the count | prompt counted, output counted (`estimated`) |
//! | cut short | prompt reported, completion = max(last reported, output counted) (`partial`) | prompt counted, output counted (`partial`) |
//!
//! A meter dropped before it settled (the client went away and the response body with it)
//! settles as `partial` / `client_gone`.
//!
//! The output is kept as a running count ([`crate::relay::pipeline::meter_tally`]): a streamed
//! answer holds the tokens counted so far and at most a few KB of text not counted yet, never
//! its whole text.
//!
//! A streamed answer also carries the one mid-stream ceiling ([`Meter::set_ceiling`]): the most
//! output tokens its reservation + DebtAllowance covers. Each piece of output costs one integer
//! compare against the byte length at which the ceiling is next checked; a check counts only the
//! text since the last one with Tollgate's cheap estimator (an over-count of every tokenizer the
//! bill uses), and the next check is set no earlier than the remaining tokens could arrive. Past
//! the ceiling [`Meter::capped`] turns true and the reader ends the answer (`partial` /
//! `capped`).

use std::time::Instant;

use tollgate_actors::quota::Hold;

use crate::relay::measure::prompt::Prompt;
use crate::relay::measure::tokenize::Counter;
use crate::relay::measure::usage::{PartialReason, Usage, UsageSource};
use crate::relay::pipeline::durable::{self, Progress};
use crate::relay::pipeline::meter_tally::Tally;
use crate::relay::pipeline::settle::SettleCtx;

/// How an answer ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The upstream finished the answer (its end-of-stream marker, or the whole body read).
    Complete,
    /// The answer stopped before its end.
    Cut(PartialReason),
}

/// The request's money while its answer is read; settles exactly once.
pub struct Meter {
    /// Boxed: the meter moves from the attempt loop into the answer's future and stream, and
    /// each move of a future holding it copies its bytes (the context is most of them).
    ctx: Box<SettleCtx>,
    hold: Option<Hold>,
    prompt: Prompt,
    /// The last usage the upstream reported (each report replaces the one before).
    reported: Option<Usage>,
    /// The answer's output so far — text, reasoning, tool names and arguments —, counted as it
    /// streams ([`Tally`]); its count is billed only when the upstream's report is missing or
    /// falls short.
    output: Tally,
    /// Whether any well-formed piece of the answer (a JSON event) was read.
    answered: bool,
    /// What the crash journal last heard of the output.
    progress: Progress,
    /// Counts a streamed answer as active (`/metrics`) while the meter lives.
    _active: Option<crate::metrics::relay::ActiveStream>,
    /// The mid-stream ceiling in output tokens (`None`: none).
    ceiling: Option<i64>,
    /// The output's byte length at which the ceiling is next checked.
    check_at: usize,
    /// Output tokens by the ceiling's estimator at the last check.
    estimated: i64,
    /// The ceiling was passed.
    capped: bool,
}

impl Meter {
    /// Holds `hold` until the answer ends.
    pub fn new(ctx: SettleCtx, hold: Hold, prompt: Prompt) -> Meter {
        let pricing = durable::Pricing {
            pricing: ctx.pricing,
            group_ratio: ctx.group_ratio,
            quota_per_unit: ctx.quota_per_unit,
        };
        let progress = Progress::new(pricing, prompt.estimate());
        let active = ctx
            .stream
            .then(|| crate::metrics::relay::ActiveStream::new(std::sync::Arc::clone(&ctx.cell)));
        let ceiling = ctx.ceiling.filter(|_| ctx.stream);
        let stream = ctx.stream;
        let mut meter = Meter {
            _active: active,
            progress,
            ctx: Box::new(ctx),
            hold: Some(hold),
            prompt,
            reported: None,
            output: Tally::new(stream, ceiling.is_some()),
            answered: false,
            ceiling: None,
            check_at: usize::MAX,
            estimated: 0,
            capped: false,
        };
        meter.set_ceiling(ceiling);
        meter
    }

    /// Sets the mid-stream ceiling: the most output tokens (every answer together) the answer
    /// may have before it is ended (`None`: none).
    pub fn set_ceiling(&mut self, tokens: Option<i64>) {
        self.ceiling = tokens;
        self.check_at = match tokens {
            Some(t) => usize::try_from(t.max(0) / 2).unwrap_or(usize::MAX),
            None => usize::MAX,
        };
    }

    /// Whether the answer passed its ceiling (the reader ends it).
    pub fn capped(&self) -> bool {
        self.capped
    }

    /// Output tokens counted so far for the ceiling (the larger of the estimate and the last
    /// report).
    pub fn output_tokens(&self) -> i64 {
        let reported = self.reported.map_or(0, |u| u.completion_tokens);
        self.estimated.max(reported)
    }

    /// Checks the ceiling: counts the text since the last check and, below the ceiling, sets
    /// the next check no earlier than the remaining tokens could arrive (the estimator counts
    /// little more than a token per byte at most, so `left` tokens take more than `left / 2`
    /// bytes).
    fn check_ceiling(&mut self) {
        let Some(ceiling) = self.ceiling else {
            self.check_at = usize::MAX;
            return;
        };
        self.estimated = self.output.estimate();
        let used = self.output_tokens();
        if used > ceiling {
            self.capped = true;
            self.check_at = usize::MAX;
        } else {
            let left = usize::try_from((ceiling - used) / 2).unwrap_or(usize::MAX);
            self.check_at = self.output.len().saturating_add(left.max(1));
        }
    }

    /// The settlement context (model names, channel, price).
    pub fn ctx(&self) -> &SettleCtx {
        &self.ctx
    }

    /// The settlement context (e.g. to stamp the first byte).
    pub fn ctx_mut(&mut self) -> &mut SettleCtx {
        &mut self.ctx
    }

    /// The upstream's answer was read from (every read calls it): stamps the first byte, and
    /// the first time makes sure the reservation is in the crash journal before anything of the
    /// answer leaves (its record waits for the journal's next append until then).
    pub fn first_read(&mut self) {
        if self.ctx.first_byte.is_none() {
            self.ctx.first_byte = Some(Instant::now());
            if let Some(hold) = &self.hold {
                hold.answering();
            }
        }
    }

    /// More output of the answer.
    pub fn output(&mut self, text: &str) {
        let model = &self.ctx.upstream_model;
        self.output.push(text, model);
        if self.output.len() >= self.check_at {
            self.check_ceiling();
        }
        self.progress.tick(
            self.hold.as_ref(),
            &mut self.output,
            &self.ctx.upstream_model,
        );
    }

    /// The prompt's size as the answer tells it, for requests whose prompt cannot be counted
    /// before (an audio upload is worth its duration, which only the transcription says).
    pub fn prompt_learned(&mut self, tokens: i64) {
        self.prompt = Prompt::known(tokens);
    }

    /// A usage report of the upstream (replaces any earlier one).
    pub fn reported(&mut self, usage: Usage) {
        self.reported = Some(usage);
        if self
            .ceiling
            .is_some_and(|ceiling| usage.completion_tokens > ceiling)
        {
            self.capped = true;
        }
    }

    /// A well-formed piece of the answer was read.
    pub fn mark_answered(&mut self) {
        self.answered = true;
    }

    /// Whether anything well-formed was read (a JSON event or a usage report): a body without
    /// it is not an answer (an HTML page or other text with a 2xx status).
    pub fn answered(&self) -> bool {
        self.answered || self.reported.is_some()
    }

    /// Whether the upstream reported usage.
    pub fn has_report(&self) -> bool {
        self.reported.is_some()
    }

    /// Whether it has settled already.
    pub fn settled(&self) -> bool {
        self.hold.is_none()
    }

    /// The settlement context and the reservation, for a plan that settles otherwise than by
    /// usage (a task submit settles with its task row, or releases a refusal by dropping the
    /// reservation); the meter then settles nothing. `None` once settled.
    pub fn into_hold(mut self) -> Option<(SettleCtx, Hold)> {
        let hold = self.hold.take()?;
        Some((SettleCtx::clone(&self.ctx), hold))
    }

    /// Settles (once; later calls do nothing) and returns the record billed. An exact count
    /// it needs (the model's BPE over the answer or the prompt, when the upstream's usage is
    /// missing or falls short) runs on the blocking pool, never on this async worker; the
    /// settlement waits for it, so it is queued before the caller answers.
    pub async fn settle(&mut self, ending: Ending) -> Option<Usage> {
        let hold = self.hold.take()?;
        if !self.counts_exactly(ending) {
            return Some(self.bill(hold, ending));
        }
        let bill = self.detach(hold, ending);
        tokio::task::spawn_blocking(move || bill.settle())
            .await
            .ok()
    }

    /// Settles (once) where nothing can wait: when the meter is dropped with its client. An
    /// exact count it needs is made, and the settlement queued, on the blocking pool.
    fn settle_now(&mut self, ending: Ending) {
        let Some(hold) = self.hold.take() else {
            return;
        };
        if self.counts_exactly(ending)
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let bill = self.detach(hold, ending);
            runtime.spawn_blocking(move || bill.settle());
            return;
        }
        self.bill(hold, ending);
    }

    /// Whether settling `ending` needs an exact count (cheap counts are made inline).
    fn counts_exactly(&self, ending: Ending) -> bool {
        let (prompt, output) = needs_counts(self.reported, ending);
        (prompt && !self.prompt.is_known())
            || (output && self.output.has_pending() && Counter::is_exact(&self.ctx.upstream_model))
    }

    /// Bills `ending` here.
    fn bill(&self, hold: Hold, ending: Ending) -> Usage {
        let usage = bill(
            self.reported,
            ending,
            || self.prompt.exact(),
            || self.output.tokens(&self.ctx.upstream_model),
        );
        self.ctx.settle(hold, usage);
        usage
    }

    /// Everything billing `ending` needs, owned (for the blocking pool).
    fn detach(&mut self, hold: Hold, ending: Ending) -> Detached {
        Detached {
            ctx: SettleCtx::clone(&self.ctx),
            hold,
            prompt: self.prompt.clone(),
            reported: self.reported,
            output: self.output.take(),
            ending,
        }
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        self.settle_now(Ending::Cut(PartialReason::ClientGone));
    }
}

/// A settlement moved off the async workers with what it needs.
struct Detached {
    ctx: SettleCtx,
    hold: Hold,
    prompt: Prompt,
    reported: Option<Usage>,
    /// Tokens counted, and the text not counted yet.
    output: (i64, String),
    ending: Ending,
}

impl Detached {
    fn settle(self) -> Usage {
        let model = &self.ctx.upstream_model;
        let (counted, text) = &self.output;
        let usage = bill(
            self.reported,
            self.ending,
            || self.prompt.exact(),
            || counted.saturating_add(Counter::for_model(model).count(text)),
        );
        self.ctx.settle(self.hold, usage);
        usage
    }
}

/// Which counts [`bill`] makes for an answer that ended so: (the prompt, the output).
fn needs_counts(reported: Option<Usage>, ending: Ending) -> (bool, bool) {
    match reported {
        None => (true, true),
        Some(usage) => (
            usage.prompt_tokens == 0,
            !(ending == Ending::Complete && usage.completion_tokens > 0),
        ),
    }
}

/// The record billed for an answer that ended so, from the upstream's last report (if any),
/// Tollgate's prompt count and its count of the output (each asked for only when needed).
pub fn bill(
    reported: Option<Usage>,
    ending: Ending,
    prompt: impl FnOnce() -> i64,
    counted: impl FnOnce() -> i64,
) -> Usage {
    let source = match (ending, reported.is_some()) {
        (Ending::Complete, true) => UsageSource::Upstream,
        (Ending::Complete, false) => UsageSource::Estimated,
        (Ending::Cut(reason), _) => UsageSource::Partial(reason),
    };
    let Some(usage) = reported else {
        return Usage {
            prompt_tokens: prompt(),
            completion_tokens: counted(),
            source,
            ..Usage::default()
        };
    };
    // A prompt the upstream did not report is counted; an answer cut short is billed at least
    // the output that was read, and so is a complete one reported as empty.
    let prompt_tokens = if usage.prompt_tokens == 0 {
        prompt()
    } else {
        usage.prompt_tokens
    };
    let completion_tokens = if ending == Ending::Complete && usage.completion_tokens > 0 {
        usage.completion_tokens
    } else {
        usage.completion_tokens.max(counted())
    };
    Usage {
        prompt_tokens,
        completion_tokens,
        source,
        ..usage
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(prompt: i64, completion: i64) -> Option<Usage> {
        Some(Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            cached_tokens: 3,
            ..Usage::default()
        })
    }

    #[test]
    fn complete_answers_bill_the_report_or_the_count() {
        let u = bill(report(10, 20), Ending::Complete, || 99, || 99);
        assert_eq!(
            (
                u.prompt_tokens,
                u.completion_tokens,
                u.cached_tokens,
                u.source
            ),
            (10, 20, 3, UsageSource::Upstream)
        );
        let u = bill(None, Ending::Complete, || 7, || 5);
        assert_eq!(
            (u.prompt_tokens, u.completion_tokens, u.source),
            (7, 5, UsageSource::Estimated)
        );
        let u = bill(report(0, 0), Ending::Complete, || 7, || 5);
        assert_eq!(
            (u.prompt_tokens, u.completion_tokens, u.source),
            (7, 5, UsageSource::Upstream),
            "an empty report is filled in by the count"
        );
    }

    #[test]
    fn a_cut_answer_bills_the_larger_of_the_last_report_and_the_count() {
        let cut = Ending::Cut(PartialReason::UpstreamCut);
        let u = bill(report(10, 20), cut, || 99, || 5);
        assert_eq!((u.prompt_tokens, u.completion_tokens), (10, 20));
        let u = bill(report(10, 20), cut, || 99, || 50);
        assert_eq!((u.prompt_tokens, u.completion_tokens), (10, 50));
        assert_eq!(u.source, UsageSource::Partial(PartialReason::UpstreamCut));
        let u = bill(None, Ending::Cut(PartialReason::ClientGone), || 7, || 0);
        assert_eq!(
            (u.prompt_tokens, u.completion_tokens, u.source),
            (7, 0, UsageSource::Partial(PartialReason::ClientGone))
        );
    }

    /// `needs_counts` must say exactly when `bill` calls its counters: a count it misses would
    /// run on an async worker, a count it adds would send a settlement to the blocking pool
    /// for nothing.
    #[test]
    fn needs_counts_matches_what_bill_counts() {
        let cut = Ending::Cut(PartialReason::UpstreamCut);
        for reported in [
            None,
            report(0, 0),
            report(10, 0),
            report(0, 20),
            report(10, 20),
        ] {
            for ending in [Ending::Complete, cut] {
                let (mut prompt, mut output) = (false, false);
                bill(
                    reported,
                    ending,
                    || {
                        prompt = true;
                        1
                    },
                    || {
                        output = true;
                        1
                    },
                );
                assert_eq!(
                    needs_counts(reported, ending),
                    (prompt, output),
                    "{reported:?} {ending:?}"
                );
            }
        }
    }
}
