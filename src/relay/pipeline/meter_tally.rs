//! The meter's running count of an answer's output (P17 item 1): instead of the whole text, a
//! streamed answer keeps the tokens counted so far and only the text not counted yet.
//!
//! Text is counted — with the model's counter ([`Counter`]: the exact encoding for
//! OpenAI-family models, Tollgate's estimator for the others) — and dropped when the uncounted
//! text passes [`KEEP`] bytes, when the crash journal's progress is due, and at settlement. A
//! count is cut only where the encodings' pre-tokenizer always cuts (before a space that follows
//! a letter or digit, see [`safe_cut`]), so the sum of the counts is the count of the whole
//! text: exact for OpenAI-family models. The estimator rounds each count up, so for other models
//! the sum may exceed the whole's estimate by one token per count: an over-estimate. Text that
//! goes [`FORCE`] bytes without such a place (a long run of CJK text, say) is counted where it
//! stands; the token cut there may be counted twice.
//!
//! The mid-stream ceiling's estimate ([`Tally::estimate`]) is kept beside it: text dropped
//! before the ceiling looked at it is estimated first.

use crate::relay::measure::estimate;
use crate::relay::measure::tokenize::Counter;

/// Uncounted text a streamed answer keeps before counting part of it.
pub const KEEP: usize = 4 * 1024;

/// Uncounted text counted even without a safe place to cut.
pub const FORCE: usize = 64 * 1024;

/// An answer's output: tokens counted so far and the text not counted yet.
#[derive(Debug, Default)]
pub struct Tally {
    /// Text not counted yet.
    pending: String,
    /// Bytes of output before `pending`.
    base: usize,
    /// Tokens of the output before `pending`, by the model's counter.
    counted: i64,
    /// Whether text is counted as it comes (a stream); a whole answer keeps its text, which it
    /// holds anyway, and is counted once, at settlement.
    running: bool,
    /// Whether the ceiling's estimate is kept.
    ceiling: bool,
    /// Estimated tokens (the ceiling's estimator) of the output before `estimated_to`.
    estimated: i64,
    /// Bytes of output the ceiling's estimate covers.
    estimated_to: usize,
}

impl Tally {
    /// A tally of a streamed answer (`running`: counted as it comes) whose mid-stream ceiling
    /// needs an estimate (`ceiling`).
    pub fn new(running: bool, ceiling: bool) -> Tally {
        Tally {
            running,
            ceiling,
            ..Tally::default()
        }
    }

    /// Bytes of output so far.
    pub fn len(&self) -> usize {
        self.base + self.pending.len()
    }

    /// Whether no output came.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether output waits to be counted.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// More output of `model`'s answer.
    pub fn push(&mut self, text: &str, model: &str) {
        self.pending.push_str(text);
        if self.running && self.pending.len() >= KEEP {
            self.fold(model);
        }
    }

    /// Counts the uncounted text up to its last safe cut (all of it past [`FORCE`]) and drops
    /// it.
    pub fn fold(&mut self, model: &str) {
        let cut = match safe_cut(&self.pending) {
            Some(cut) => cut,
            None if self.pending.len() >= FORCE => self.pending.len(),
            None => return,
        };
        self.estimate_to(cut);
        self.counted = self
            .counted
            .saturating_add(Counter::for_model(model).count(&self.pending[..cut]));
        self.pending.drain(..cut);
        self.base += cut;
    }

    /// Tokens of all the output so far (the uncounted text counted, and kept).
    pub fn tokens(&self, model: &str) -> i64 {
        if self.pending.is_empty() {
            return self.counted;
        }
        self.counted
            .saturating_add(Counter::for_model(model).count(&self.pending))
    }

    /// The counted tokens and the uncounted text, taken (to count on the blocking pool).
    pub fn take(&mut self) -> (i64, String) {
        (self.counted, std::mem::take(&mut self.pending))
    }

    /// The ceiling's estimate of all the output so far.
    pub fn estimate(&mut self) -> i64 {
        self.estimate_to(self.pending.len());
        self.estimated
    }

    /// Brings the ceiling's estimate up to `pending[..end]`.
    fn estimate_to(&mut self, end: usize) {
        let from = self.estimated_to.saturating_sub(self.base);
        if !self.ceiling || from >= end {
            return;
        }
        let fresh = self.pending.get(from..end).unwrap_or_default();
        self.estimated = self.estimated.saturating_add(estimate::text(fresh));
        self.estimated_to = self.base + end;
    }
}

/// The last place in `text` where OpenAI's encodings (cl100k_base, o200k_base) always cut: a
/// space after a letter or a digit. Their pre-tokenizer splits text into pieces — words with
/// one leading space or other non-letter, runs of up to three digits, punctuation runs,
/// whitespace runs — and encodes each piece alone; a letter or digit piece ends at a space, and
/// no piece runs from before such a space into it but a whitespace run, which a letter or
/// digit before it rules out. So the count of `text[..cut]` plus that of `text[cut..]` is the
/// count of `text`.
pub fn safe_cut(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut end = bytes.len();
    while let Some(space) = memchr::memrchr(b' ', &bytes[..end]) {
        if space > 0
            && text[..space]
                .chars()
                .next_back()
                .is_some_and(char::is_alphanumeric)
        {
            return Some(space);
        }
        end = space;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (the test needs no crate for it).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// Text mixing what the pre-tokenizer treats differently: words of both cases,
    /// contractions, digit runs, punctuation, whitespace runs, newlines, CJK, accents and
    /// combining marks, emoji.
    fn text(rng: &mut Rng, words: usize) -> String {
        const PIECES: [&str; 24] = [
            "hello", "World", "it's", "THEY'LL", "42", "123456", ", ", ".", "!?", "  ", " ", "\n",
            "\n\n", "\t", "你好", "世界", "café", "e\u{301}", "🙂", "/", "'s", "x", "--", "(a)",
        ];
        let mut out = String::new();
        for _ in 0..words {
            out.push_str(PIECES[rng.below(PIECES.len())]);
            if rng.below(3) > 0 {
                out.push(' ');
            }
        }
        out
    }

    #[test]
    fn counts_cut_at_safe_places_add_up_to_the_whole_count() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for model in ["gpt-4o-mini", "gpt-3.5-turbo"] {
            let counter = Counter::for_model(model);
            for round in 0..300 {
                let words = 1 + rng.below(60);
                let whole = text(&mut rng, words);
                let Some(cut) = safe_cut(&whole) else {
                    continue;
                };
                // Every safe place, not only the last.
                let mut places = vec![cut];
                let mut end = cut;
                while let Some(earlier) = safe_cut(&whole[..end]) {
                    places.push(earlier);
                    end = earlier;
                }
                for cut in places {
                    assert_eq!(
                        counter.count(&whole[..cut]) + counter.count(&whole[cut..]),
                        counter.count(&whole),
                        "{model} round {round}: {whole:?} cut at {cut}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_running_tally_counts_a_stream_as_its_whole_text() {
        let mut rng = Rng(7);
        for model in ["gpt-4o-mini", "gpt-4", "claude-sonnet-4-5"] {
            let counter = Counter::for_model(model);
            for _ in 0..20 {
                let words = 2_000 + rng.below(2_000);
                let whole = text(&mut rng, words);
                let mut tally = Tally::new(true, true);
                let mut at = 0;
                while at < whole.len() {
                    let mut end = (at + 1 + rng.below(12)).min(whole.len());
                    while !whole.is_char_boundary(end) {
                        end += 1;
                    }
                    tally.push(&whole[at..end], model);
                    at = end;
                }
                assert!(tally.pending.len() < KEEP + 64, "the text is not kept");
                assert_eq!(tally.len(), whole.len());
                let whole_count = counter.count(&whole);
                if matches!(counter, Counter::Bpe(_)) {
                    assert_eq!(tally.tokens(model), whole_count, "{model}: exact");
                } else {
                    let over = tally.tokens(model) - whole_count;
                    assert!((0..=whole.len() as i64 / KEEP as i64 + 1).contains(&over));
                }
                let estimated = tally.estimate();
                assert!(
                    estimated >= estimate::text(&whole),
                    "the ceiling's estimate"
                );
            }
        }
    }

    #[test]
    fn text_without_a_safe_place_is_counted_past_the_force_limit() {
        let mut tally = Tally::new(true, false);
        let cjk = "你好世界".repeat(FORCE / 12 + 1);
        tally.push(&cjk, "claude-sonnet-4-5");
        assert!(!tally.has_pending());
        assert_eq!(tally.tokens("claude-sonnet-4-5"), estimate_whole(&cjk));
        let mut whole = Tally::new(false, false);
        whole.push(&cjk, "claude-sonnet-4-5");
        assert_eq!(
            whole.pending.len(),
            cjk.len(),
            "a whole answer keeps its text"
        );
    }

    fn estimate_whole(text: &str) -> i64 {
        Counter::Estimate.count(text)
    }
}
