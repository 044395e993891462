//! Token counting: Tollgate's estimator sizes the OpenAI routes' reservations (see
//! [`crate::relay::measure::prompt`]); the exact encodings count prompts and answers that arrive without usage,
//! and the count-tokens routes.
//!
//! - OpenAI-family models (whatever `tiktoken-rs` knows: gpt-4o/4.1/5, o-series, gpt-4,
//!   gpt-3.5, embeddings, …) are counted exactly with their encoding (o200k_base or
//!   cl100k_base). The encodings are built into the binary and loaded once, on first use.
//! - Every other model (Claude, Gemini, DeepSeek, Qwen, …) uses Tollgate's estimator: one token
//!   per CJK character (Han, kana, hangul) plus one per 4 other characters, rounded up. Pure
//!   characters ÷ 4 would undercount Chinese text about fourfold.

use tiktoken_rs::CoreBPE;
use tiktoken_rs::tokenizer::{Tokenizer, get_tokenizer};

/// How the tokens of one model are counted.
#[derive(Clone, Copy)]
pub enum Counter {
    /// An exact OpenAI encoding.
    Bpe(&'static CoreBPE),
    /// Tollgate's estimator (see the module docs).
    Estimate,
}

impl Counter {
    /// The counter for `model`.
    pub fn for_model(model: &str) -> Counter {
        match get_tokenizer(model) {
            Some(Tokenizer::O200kBase | Tokenizer::O200kHarmony) => {
                Counter::Bpe(tiktoken_rs::o200k_base_singleton())
            }
            Some(Tokenizer::Cl100kBase | Tokenizer::P50kBase | Tokenizer::P50kEdit) => {
                Counter::Bpe(tiktoken_rs::cl100k_base_singleton())
            }
            Some(Tokenizer::R50kBase | Tokenizer::Gpt2) | None => Counter::Estimate,
        }
    }

    /// Whether `model` is counted with an exact encoding ([`Counter::for_model`] would return
    /// [`Counter::Bpe`]), without loading the encoding's tables (~46 MB for o200k).
    pub fn is_exact(model: &str) -> bool {
        matches!(
            get_tokenizer(model),
            Some(
                Tokenizer::O200kBase
                    | Tokenizer::O200kHarmony
                    | Tokenizer::Cl100kBase
                    | Tokenizer::P50kBase
                    | Tokenizer::P50kEdit
            )
        )
    }

    /// Tokens of `text`.
    pub fn count(self, text: &str) -> i64 {
        let n = match self {
            Counter::Bpe(bpe) => bpe.count_ordinary(text),
            Counter::Estimate => return estimate(text),
        };
        i64::try_from(n).unwrap_or(i64::MAX)
    }
}

/// Tollgate's estimator: CJK characters count one token each, other characters one per four.
pub fn estimate(text: &str) -> i64 {
    let (cjk, other) = text.chars().fold((0usize, 0usize), |(cjk, other), c| {
        if is_cjk(c) {
            (cjk + 1, other)
        } else {
            (cjk, other + 1)
        }
    });
    i64::try_from(cjk + other.div_ceil(4)).unwrap_or(i64::MAX)
}

fn is_cjk(c: char) -> bool {
    matches!(u32::from(c),
        0x3040..=0x30FF      // hiragana, katakana
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xAC00..=0xD7AF    // hangul syllables
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0xFF00..=0xFFEF    // full-width forms
        | 0x20000..=0x2FFFF) // CJK extensions B–F
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_models_are_counted_exactly() {
        // "Hello, world!" is 4 tokens in both o200k_base and cl100k_base.
        assert_eq!(Counter::for_model("gpt-4o-mini").count("Hello, world!"), 4);
        assert_eq!(
            Counter::for_model("gpt-3.5-turbo").count("Hello, world!"),
            4
        );
        assert!(matches!(Counter::for_model("gpt-4.1"), Counter::Bpe(_)));
        for model in [
            "gpt-4o-mini",
            "gpt-3.5-turbo",
            "gpt-4.1",
            "claude-sonnet-4-5",
            "x",
        ] {
            assert_eq!(
                Counter::is_exact(model),
                matches!(Counter::for_model(model), Counter::Bpe(_)),
                "{model}"
            );
        }
        assert!(matches!(
            Counter::for_model("text-embedding-3-small"),
            Counter::Bpe(_)
        ));
    }

    #[test]
    fn other_models_use_the_estimator() {
        assert!(matches!(
            Counter::for_model("claude-sonnet-4-5"),
            Counter::Estimate
        ));
        assert_eq!(Counter::for_model("deepseek-chat").count("abcdefgh"), 2);
        assert_eq!(estimate("你好世界"), 4, "one token per Han character");
        assert_eq!(estimate("hi 你好"), 3, "3 other chars → 1, plus 2");
        assert_eq!(estimate(""), 0);
    }
}
