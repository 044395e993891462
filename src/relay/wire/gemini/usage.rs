//! Gemini's `usageMetadata` typed: read (every field lenient, see
//! [`crate::relay::wire::typed`]) by the whole-answer converter, the stream decoder and
//! billing alike, and written (keys in name order, as a `Value` writes them).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::relay::measure::price::Usage;
use crate::relay::wire::typed::{Int, List, Str, view};

/// A `usageMetadata` object as read.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct UsageIn<'a> {
    /// Prompt tokens, the cached content included.
    pub prompt_token_count: Int,
    /// Output tokens, thinking excluded.
    pub candidates_token_count: Int,
    /// Prompt tokens read from the cache.
    pub cached_content_token_count: Int,
    /// Thinking tokens.
    pub thoughts_token_count: Int,
    /// What a server tool fed the model, outside `promptTokenCount`.
    pub tool_use_prompt_token_count: Int,
    /// The prompt by modality.
    #[serde(borrow)]
    pub prompt_tokens_details: List<Modality<'a>>,
    /// The output by modality.
    #[serde(borrow)]
    pub candidates_tokens_details: List<Modality<'a>>,
    /// The tool-use prompt by modality.
    #[serde(borrow)]
    pub tool_use_prompt_tokens_details: List<Modality<'a>>,
}

/// A `ModalityTokenCount`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Modality<'a> {
    /// `TEXT`, `AUDIO`, `IMAGE`, …
    #[serde(borrow)]
    pub modality: Str<'a>,
    /// Its tokens.
    pub token_count: Int,
}

/// The `AUDIO` entry of a `ModalityTokenCount` list.
fn audio_in(details: &List<Modality>) -> i64 {
    details
        .iter()
        .filter(|d| d.modality.get() == Some("AUDIO"))
        .map(|d| d.token_count.0.unwrap_or(0).max(0))
        .fold(0, i64::saturating_add)
}

impl UsageIn<'_> {
    /// As [`Usage`]: `promptTokenCount` counts the cached content (`cachedContentTokenCount`)
    /// inside; thinking tokens (`thoughtsTokenCount`) are billed as output; the tool-use
    /// prompt (`toolUsePromptTokenCount`: what a server tool such as Google Search fed the
    /// model) is counted outside `promptTokenCount` and billed as prompt; audio is read from
    /// the per-modality lists `promptTokensDetails` / `candidatesTokensDetails` (and
    /// `toolUsePromptTokensDetails`), each `[{modality, tokenCount}]`
    /// (<https://ai.google.dev/api/generate-content#UsageMetadata>).
    pub fn usage(&self) -> Usage {
        let int = |i: Int| i.0.unwrap_or(0);
        let thoughts = int(self.thoughts_token_count);
        let tool_use = int(self.tool_use_prompt_token_count).max(0);
        Usage {
            prompt_tokens: int(self.prompt_token_count).saturating_add(tool_use),
            completion_tokens: int(self.candidates_token_count).saturating_add(thoughts),
            cached_tokens: int(self.cached_content_token_count),
            reasoning_tokens: thoughts,
            audio_prompt_tokens: audio_in(&self.prompt_tokens_details)
                .saturating_add(audio_in(&self.tool_use_prompt_tokens_details)),
            audio_completion_tokens: audio_in(&self.candidates_tokens_details),
            cache_in_prompt: true,
            ..Usage::default()
        }
    }
}

/// A `usageMetadata` object as [`Usage`] (see [`UsageIn::usage`]).
pub fn usage_of(meta: &Value) -> Usage {
    view::<UsageIn>(meta).usage()
}

/// A `usageMetadata` object as written.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageOut {
    /// Prompt tokens read from the cache.
    pub cached_content_token_count: i64,
    /// Output tokens.
    pub candidates_token_count: i64,
    /// Prompt tokens.
    pub prompt_token_count: i64,
    /// Both.
    pub total_token_count: i64,
}

impl From<&Usage> for UsageOut {
    fn from(usage: &Usage) -> UsageOut {
        UsageOut {
            cached_content_token_count: usage.cached_tokens,
            candidates_token_count: usage.completion_tokens,
            prompt_token_count: usage.prompt_tokens,
            total_token_count: usage.prompt_tokens.saturating_add(usage.completion_tokens),
        }
    }
}
