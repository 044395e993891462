//! The sensitive-word matcher (CheckSensitiveEnabled, CheckSensitiveOnPromptEnabled,
//! SensitiveWords): built once per options snapshot, so the relay scans a prompt in one
//! Aho-Corasick pass whatever the number of words.

use aho_corasick::{AhoCorasick, MatchKind};

/// Finds the configured sensitive words in prompt text (ASCII case-insensitive).
#[derive(Debug, Clone, Default)]
pub struct SensitiveWords {
    /// The automaton, or `None` when prompt checks are off or the list is empty.
    matcher: Option<AhoCorasick>,
    /// The words, in the automaton's pattern order.
    words: Vec<String>,
}

impl SensitiveWords {
    /// Builds the matcher from `SensitiveWords` (one word per line; blank lines ignored) when
    /// `enabled` (CheckSensitiveEnabled and CheckSensitiveOnPromptEnabled both on).
    pub fn new(enabled: bool, list: &str) -> SensitiveWords {
        let words: Vec<String> = list
            .lines()
            .map(str::trim)
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect();
        if !enabled || words.is_empty() {
            return SensitiveWords::default();
        }
        let matcher = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostLongest)
            .build(&words)
            .map_err(|e| tracing::warn!(error = %e, "SensitiveWords could not be compiled; prompt checks are off"))
            .ok();
        SensitiveWords { matcher, words }
    }

    /// Whether prompts are checked at all.
    pub fn active(&self) -> bool {
        self.matcher.is_some()
    }

    /// The distinct words found in `texts`, in order of first appearance (empty when none).
    pub fn find<'t>(&self, texts: impl IntoIterator<Item = &'t str>) -> Vec<&str> {
        let Some(matcher) = &self.matcher else {
            return Vec::new();
        };
        let mut found: Vec<&str> = Vec::new();
        for text in texts {
            for m in matcher.find_iter(text) {
                let word = self
                    .words
                    .get(m.pattern().as_usize())
                    .map_or("", String::as_str);
                if !found.contains(&word) {
                    found.push(word);
                }
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_words_case_insensitively_once_each() {
        let words = SensitiveWords::new(true, "secret plan\n\n  FORBIDDEN \n");
        assert!(words.active());
        assert_eq!(
            words.find(["a Secret Plan and a forbidden one", "forbidden again"]),
            vec!["secret plan", "FORBIDDEN"]
        );
        assert!(words.find(["nothing here"]).is_empty());
    }

    #[test]
    fn off_or_empty_finds_nothing() {
        assert!(!SensitiveWords::new(false, "word").active());
        assert!(SensitiveWords::new(false, "word").find(["word"]).is_empty());
        assert!(!SensitiveWords::new(true, " \n").active());
    }
}
