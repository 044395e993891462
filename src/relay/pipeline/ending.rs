//! The one ending rule of a streamed answer, for both stream readers (the OpenAI path's
//! [`crate::relay::pipeline::stream`] and the adaptors' [`crate::relay::pipeline::pipe`]): an answer is complete only when its
//! format's end was read.
//!
//! | format | complete when | reading stops at |
//! |---|---|---|
//! | OpenAI chat, completions | `[DONE]`, or a usage chunk after a `finish_reason` (some compatible servers omit `[DONE]`) | `[DONE]` |
//! | Responses | `response.completed` / `response.incomplete` / `response.failed` | the same |
//! | Anthropic | `message_stop` | `message_stop` |
//! | Gemini | a candidate's `finishReason` | the end of the body |
//! | Converse | `messageStop` (usage from `metadata` when it follows) | `metadata` |
//! | Cohere | `message-end` (or `[DONE]`) | the same |
//!
//! A stream whose body ends otherwise is `partial` / `upstream_cut` (completion = max(reported,
//! counted), see [`crate::relay::pipeline::meter`]), or `partial` / `non_json` when nothing in it was
//! well-formed. An in-band error event does not end an answer by itself: what follows it
//! decides. The readers report what they see as three signals — a finish reason, a usage
//! report, the format's end marker — and ask this rule the rest; each is a flag update.

use crate::relay::measure::usage::PartialReason;
use crate::relay::pipeline::meter::Ending;
use crate::relay::wire::Wire;

/// Watches one stream's signals against its format's rule.
#[derive(Debug, Clone, Copy)]
pub struct EndRule {
    wire: Wire,
    /// A finish reason was read.
    finished: bool,
    /// The answer is complete.
    complete: bool,
    /// Nothing after this point belongs to the answer: stop reading.
    over: bool,
}

impl EndRule {
    /// The rule of the upstream format `wire`.
    pub fn new(wire: Wire) -> EndRule {
        EndRule {
            wire,
            finished: false,
            complete: false,
            over: false,
        }
    }

    /// A finish reason was read (OpenAI's `finish_reason`, Gemini's `finishReason`, Converse's
    /// `messageStop`, ...).
    pub fn finish(&mut self) {
        self.finished = true;
        if matches!(self.wire, Wire::Gemini | Wire::Converse) {
            self.complete = true;
        }
    }

    /// A usage report was read.
    pub fn usage(&mut self) {
        if self.wire == Wire::OpenAi && self.finished {
            self.complete = true;
        }
    }

    /// The format's end-of-stream marker was read (`[DONE]`, `message_stop`,
    /// `response.completed`, Cohere's `message-end`; Converse's `metadata`, which ends the
    /// reading but not the answer).
    pub fn marker(&mut self) {
        self.over = true;
        if self.wire != Wire::Converse {
            self.complete = true;
        }
    }

    /// The upstream format.
    pub fn wire(&self) -> Wire {
        self.wire
    }

    /// Whether the reading stops here (the rest is not the answer's).
    pub fn over(&self) -> bool {
        self.over
    }

    /// Whether the answer is complete so far.
    pub fn complete(&self) -> bool {
        self.complete
    }

    /// How an answer whose body ended (or whose marker was read) ended: complete, cut, or
    /// not an answer at all (`answered`: whether anything in it was well-formed).
    pub fn at_end(&self, answered: bool) -> Ending {
        if self.complete {
            Ending::Complete
        } else if answered {
            Ending::Cut(PartialReason::UpstreamCut)
        } else {
            Ending::Cut(PartialReason::NonJson)
        }
    }
}

/// The text of the error event a converted stream ends with when its answer was cut.
pub fn cut_message(reason: PartialReason) -> &'static str {
    match reason {
        PartialReason::IdleTimeout => "the upstream stopped sending before the answer was complete",
        PartialReason::OversizedEvent => "the upstream sent an event too large to relay",
        PartialReason::NonJson => "the upstream's answer was not a stream of events",
        _ => "the upstream's stream ended before the answer was complete",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ending(wire: Wire, signals: &str) -> (Ending, bool) {
        let mut rule = EndRule::new(wire);
        for s in signals.chars() {
            match s {
                'f' => rule.finish(),
                'u' => rule.usage(),
                'm' => rule.marker(),
                _ => {}
            }
        }
        (rule.at_end(true), rule.over())
    }

    #[test]
    fn each_format_is_complete_only_at_its_end() {
        let cut = Ending::Cut(PartialReason::UpstreamCut);
        let done = Ending::Complete;
        assert_eq!(ending(Wire::OpenAi, "u"), (cut, false));
        assert_eq!(ending(Wire::OpenAi, "f"), (cut, false));
        assert_eq!(ending(Wire::OpenAi, "fu"), (done, false));
        assert_eq!(ending(Wire::OpenAi, "m"), (done, true));
        assert_eq!(ending(Wire::Anthropic, "uf"), (cut, false));
        assert_eq!(ending(Wire::Anthropic, "ufm"), (done, true));
        assert_eq!(ending(Wire::Gemini, "u"), (cut, false));
        assert_eq!(ending(Wire::Gemini, "fu"), (done, false));
        assert_eq!(ending(Wire::Converse, "m"), (cut, true));
        assert_eq!(ending(Wire::Converse, "f"), (done, false));
        assert_eq!(ending(Wire::Converse, "fum"), (done, true));
        assert_eq!(ending(Wire::Responses, "uf"), (cut, false));
        assert_eq!(ending(Wire::Responses, "ufm"), (done, true));
        assert_eq!(ending(Wire::Cohere, "m"), (done, true));
        assert_eq!(
            EndRule::new(Wire::Cohere).at_end(false),
            Ending::Cut(PartialReason::NonJson)
        );
    }
}
