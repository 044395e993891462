//! The one usage record of a request: what every answer (whole or streamed, any wire, any
//! ending) is turned into by the meter ([`crate::relay::pipeline::meter`]) and what [`crate::relay::measure::price::charge`]
//! prices. Each provider's report is normalised once, where it is parsed:
//!
//! - OpenAI (chat completions, completions, Responses): `prompt_tokens` / `input_tokens` count
//!   the cached tokens inside (`prompt_tokens_details.cached_tokens`,
//!   `input_tokens_details.cached_tokens`); [`OpenAiUsage`] reads both shapes.
//! - Anthropic: `input_tokens` counts neither cache reads (`cache_read_input_tokens`) nor writes
//!   (`cache_creation_input_tokens`, split by TTL in `cache_creation.ephemeral_5m_input_tokens`
//!   / `ephemeral_1h_input_tokens`); the record adds them in ([`crate::relay::wire::anthropic::usage_of`]).
//! - Gemini: `promptTokenCount` counts `cachedContentTokenCount` inside; thinking tokens are
//!   output ([`crate::relay::wire::gemini::usage_of`]).
//!
//! So in the record `prompt_tokens` always includes cache reads and writes, and
//! `cache_in_prompt` keeps how the provider itself reported them. Audio tokens are counted
//! inside the prompt and completion figures and apart from them (`audio_prompt_tokens`,
//! `audio_completion_tokens`) so they can be priced at AudioRatio / AudioCompletionRatio;
//! server tool calls (`tool_calls`, by [`Tool`]) are priced per call at ToolCallPrice
//! ([`crate::relay::measure::components`]).

use serde::Deserialize;
use tollgate_actors::options::component_prices::Tool;

/// Token counts of one request and where they came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Prompt tokens, cache reads and writes included.
    pub prompt_tokens: i64,
    /// Completion tokens, reasoning included.
    pub completion_tokens: i64,
    /// Prompt tokens read from the provider's cache (a subset of `prompt_tokens`).
    pub cached_tokens: i64,
    /// Prompt tokens written to a 5-minute cache entry (a subset of `prompt_tokens`; Anthropic
    /// writes without a TTL split count here).
    pub cache_write_5m_tokens: i64,
    /// Prompt tokens written to a 1-hour cache entry (a subset of `prompt_tokens`).
    pub cache_write_1h_tokens: i64,
    /// Reasoning tokens (a subset of `completion_tokens`; shown, not priced apart).
    pub reasoning_tokens: i64,
    /// Audio prompt tokens (a subset of `prompt_tokens`, priced at AudioRatio).
    pub audio_prompt_tokens: i64,
    /// Audio completion tokens (a subset of `completion_tokens`, priced at AudioRatio ×
    /// AudioCompletionRatio).
    pub audio_completion_tokens: i64,
    /// Server tool calls the upstream reports, by [`Tool::index`] (priced at ToolCallPrice).
    pub tool_calls: [i64; 3],
    /// Image tokens (prompt and completion; shown, not priced apart).
    pub image_tokens: i64,
    /// Whether the provider counted cached tokens inside its prompt figure (OpenAI, Gemini)
    /// or beside it (Anthropic). `prompt_tokens` above includes them either way.
    pub cache_in_prompt: bool,
    /// Where the counts came from.
    pub source: UsageSource,
}

impl Usage {
    /// Every cache write, whatever its TTL.
    pub fn cache_write_tokens(&self) -> i64 {
        self.cache_write_5m_tokens
            .saturating_add(self.cache_write_1h_tokens)
    }

    /// The calls of `tool` the upstream reported.
    pub fn calls(&self, tool: Tool) -> i64 {
        self.tool_calls[tool.index()]
    }

    /// The same counts with another provenance.
    #[must_use]
    pub fn with_source(self, source: UsageSource) -> Usage {
        Usage { source, ..self }
    }
}

/// Where the token counts of a settlement came from (`usage_source` in the log row's `other`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum UsageSource {
    /// Reported by the upstream for a complete answer.
    #[default]
    Upstream,
    /// Counted by Tollgate because the upstream reported none.
    Estimated,
    /// The answer did not end normally: what was produced (see [`PartialReason`]).
    Partial(PartialReason),
}

impl UsageSource {
    /// The log's `usage_source`.
    pub fn as_str(self) -> &'static str {
        match self {
            UsageSource::Upstream => "upstream",
            UsageSource::Estimated => "estimated",
            UsageSource::Partial(_) => "partial",
        }
    }

    /// The log's `partial_reason` (only for partial settlements).
    pub fn reason(self) -> Option<PartialReason> {
        match self {
            UsageSource::Partial(reason) => Some(reason),
            UsageSource::Upstream | UsageSource::Estimated => None,
        }
    }
}

/// Why an answer was billed as partial (`partial_reason` in the log row's `other`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PartialReason {
    /// The client went away before the answer was over.
    ClientGone,
    /// The upstream's connection broke or ended without its end-of-stream marker.
    UpstreamCut,
    /// The upstream stayed quiet past `--relay-timeout-secs`.
    IdleTimeout,
    /// An upstream event grew past the reader's limit.
    OversizedEvent,
    /// A 2xx answer whose body is not the JSON (or SSE) it should be.
    NonJson,
    /// The process died before the settlement (replayed from the journal at start).
    Crash,
    /// The mid-stream ceiling ended the answer: its cost reached the reservation +
    /// DebtAllowance.
    Capped,
}

impl PartialReason {
    /// The reason as the log writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            PartialReason::ClientGone => "client_gone",
            PartialReason::UpstreamCut => "upstream_cut",
            PartialReason::IdleTimeout => "idle_timeout",
            PartialReason::OversizedEvent => "oversized_event",
            PartialReason::NonJson => "non_json",
            PartialReason::Crash => "crash",
            PartialReason::Capped => "capped",
        }
    }
}

/// Usage as OpenAI reports it: chat completions and completions (`prompt_tokens`,
/// `completion_tokens`, `*_tokens_details`) and the Responses API (`input_tokens`,
/// `output_tokens`, `*_tokens_details`). Cached tokens are inside the prompt figure.
#[derive(Debug, Default, Deserialize)]
pub struct OpenAiUsage {
    /// Prompt tokens.
    #[serde(default, alias = "input_tokens")]
    pub prompt_tokens: i64,
    /// Completion tokens.
    #[serde(default, alias = "output_tokens")]
    pub completion_tokens: i64,
    /// `prompt_tokens_details` / `input_tokens_details`.
    #[serde(default, alias = "input_tokens_details")]
    pub prompt_tokens_details: Option<PromptDetails>,
    /// `completion_tokens_details` / `output_tokens_details`.
    #[serde(default, alias = "output_tokens_details")]
    pub completion_tokens_details: Option<CompletionDetails>,
    /// `total_tokens`: the only figure of some input-only answers (Jina's rerank,
    /// <https://jina.ai/reranker/>: `usage: {"total_tokens"}`), taken as the prompt then.
    #[serde(default)]
    pub total_tokens: i64,
}

/// `usage.prompt_tokens_details`.
#[derive(Debug, Default, Deserialize)]
pub struct PromptDetails {
    /// Cached prompt tokens.
    #[serde(default)]
    pub cached_tokens: i64,
    /// Tollgate's extension: cache writes carried through the hub format (from Anthropic).
    #[serde(default)]
    pub cache_creation_tokens: i64,
    /// Tollgate's extension: the 1-hour part of `cache_creation_tokens`.
    #[serde(default)]
    pub cache_creation_1h_tokens: i64,
    /// Audio prompt tokens.
    #[serde(default)]
    pub audio_tokens: i64,
    /// Image prompt tokens.
    #[serde(default)]
    pub image_tokens: i64,
}

/// `usage.completion_tokens_details`.
#[derive(Debug, Default, Deserialize)]
pub struct CompletionDetails {
    /// Reasoning tokens.
    #[serde(default)]
    pub reasoning_tokens: i64,
    /// Audio completion tokens.
    #[serde(default)]
    pub audio_tokens: i64,
    /// Image completion tokens.
    #[serde(default)]
    pub image_tokens: i64,
}

impl From<&OpenAiUsage> for Usage {
    fn from(u: &OpenAiUsage) -> Usage {
        let prompt = u.prompt_tokens_details.as_ref();
        let completion = u.completion_tokens_details.as_ref();
        let written = prompt.map_or(0, |d| d.cache_creation_tokens);
        let written_1h = prompt.map_or(0, |d| d.cache_creation_1h_tokens.clamp(0, written.max(0)));
        let input_only = u.prompt_tokens == 0 && u.completion_tokens == 0;
        Usage {
            prompt_tokens: if input_only {
                u.total_tokens
            } else {
                u.prompt_tokens
            },
            completion_tokens: u.completion_tokens,
            cached_tokens: prompt.map_or(0, |d| d.cached_tokens),
            cache_write_5m_tokens: written.saturating_sub(written_1h),
            cache_write_1h_tokens: written_1h,
            reasoning_tokens: completion.map_or(0, |d| d.reasoning_tokens),
            audio_prompt_tokens: prompt.map_or(0, |d| d.audio_tokens),
            audio_completion_tokens: completion.map_or(0, |d| d.audio_tokens),
            tool_calls: [0; 3],
            image_tokens: prompt
                .map_or(0, |d| d.image_tokens)
                .saturating_add(completion.map_or(0, |d| d.image_tokens)),
            cache_in_prompt: true,
            source: UsageSource::Upstream,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn openai(json: &str) -> Usage {
        let parsed: OpenAiUsage = serde_json::from_str(json).unwrap_or_default();
        Usage::from(&parsed)
    }

    /// Golden: an input-only answer that reports `total_tokens` alone (Jina's rerank) bills
    /// them as the prompt; a chat answer's total is never added.
    #[test]
    fn a_total_alone_is_the_prompt() {
        let u = openai(r#"{"total_tokens": 38}"#);
        assert_eq!((u.prompt_tokens, u.completion_tokens), (38, 0));
        let u = openai(r#"{"prompt_tokens": 8, "completion_tokens": 12, "total_tokens": 20}"#);
        assert_eq!((u.prompt_tokens, u.completion_tokens), (8, 12));
    }

    /// Golden: OpenAI chat usage, cached tokens inside the prompt.
    #[test]
    fn openai_chat_usage_is_normalised() {
        let u = openai(
            r#"{"prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500,
            "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 7},
            "completion_tokens_details": {"reasoning_tokens": 128, "audio_tokens": 5}}"#,
        );
        assert_eq!(
            u,
            Usage {
                prompt_tokens: 1200,
                completion_tokens: 300,
                cached_tokens: 1024,
                reasoning_tokens: 128,
                audio_prompt_tokens: 7,
                audio_completion_tokens: 5,
                cache_in_prompt: true,
                ..Usage::default()
            }
        );
    }

    /// Golden: Responses API usage (`input_tokens`, `input_tokens_details.cached_tokens`).
    #[test]
    fn openai_responses_usage_is_normalised() {
        let u = openai(
            r#"{"input_tokens": 900, "output_tokens": 40, "total_tokens": 940,
            "input_tokens_details": {"cached_tokens": 512},
            "output_tokens_details": {"reasoning_tokens": 16}}"#,
        );
        assert_eq!(
            (
                u.prompt_tokens,
                u.completion_tokens,
                u.cached_tokens,
                u.reasoning_tokens
            ),
            (900, 40, 512, 16)
        );
    }

    #[test]
    fn provenance_names() {
        assert_eq!(UsageSource::Upstream.as_str(), "upstream");
        assert_eq!(UsageSource::Estimated.reason(), None);
        let cut = UsageSource::Partial(PartialReason::UpstreamCut);
        assert_eq!(
            (cut.as_str(), cut.reason().map(PartialReason::as_str)),
            ("partial", Some("upstream_cut"))
        );
        assert_eq!(
            serde_json::to_value(PartialReason::ClientGone).ok(),
            Some(serde_json::json!("client_gone"))
        );
    }
}
