//! Anthropic's `usage` object typed: read leniently ([`UsageIn`]: a field of another type
//! counts 0, as `as_i64` of a value did), merged field by field as a stream reports it, and
//! written in the order of its keys ([`UsageOut`]).
//!
//! Anthropic reports `input_tokens` WITHOUT the cache reads and writes; the hub (and billing)
//! counts them inside the prompt: prompt = input + cache_read + cache_creation.

use serde::{Deserialize, Serialize};
use tollgate_actors::options::component_prices::Tool;

use crate::relay::measure::price::Usage;
use crate::relay::wire::typed::{Int, Obj};

/// An Anthropic `usage` object as read: each field `None` when absent or `null` (a stream's
/// later report keeps the earlier value of a field it leaves out or sends as `null`).
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
pub struct UsageIn {
    /// Prompt tokens outside the cache.
    pub input_tokens: Option<Int>,
    /// Prompt tokens read from the cache.
    pub cache_read_input_tokens: Option<Int>,
    /// Prompt tokens written to the cache.
    pub cache_creation_input_tokens: Option<Int>,
    /// Output tokens.
    pub output_tokens: Option<Int>,
    /// The cache writes by TTL.
    pub cache_creation: Option<Obj<CacheCreation>>,
    /// Server tools' use.
    pub server_tool_use: Option<Obj<ServerToolUse>>,
}

/// `usage.cache_creation`: the cache writes by TTL.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
pub struct CacheCreation {
    /// Written for 5 minutes.
    pub ephemeral_5m_input_tokens: Int,
    /// Written for an hour.
    pub ephemeral_1h_input_tokens: Int,
}

/// `usage.server_tool_use`.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
pub struct ServerToolUse {
    /// Web searches of the server tool.
    pub web_search_requests: Int,
}

fn int(field: Option<Int>) -> i64 {
    field.and_then(|i| i.0).unwrap_or(0)
}

impl UsageIn {
    /// Takes the fields `later` reports (not absent, not `null`) over these.
    pub fn merge(&mut self, later: UsageIn) {
        fn take<T>(to: &mut Option<T>, from: Option<T>) {
            if from.is_some() {
                *to = from;
            }
        }
        take(&mut self.input_tokens, later.input_tokens);
        take(
            &mut self.cache_read_input_tokens,
            later.cache_read_input_tokens,
        );
        take(
            &mut self.cache_creation_input_tokens,
            later.cache_creation_input_tokens,
        );
        take(&mut self.output_tokens, later.output_tokens);
        take(&mut self.cache_creation, later.cache_creation);
        take(&mut self.server_tool_use, later.server_tool_use);
    }

    /// The usage as [`Usage`], normalised: Anthropic counts cache reads and writes beside
    /// `input_tokens`, the record counts them inside the prompt. Writes are split by TTL from
    /// `cache_creation.ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens`; writes the
    /// split does not cover (older API versions report only the total) are 5-minute ones.
    /// Web searches of the server tool are `server_tool_use.web_search_requests`
    /// (<https://docs.anthropic.com/en/docs/build-with-claude/tool-use/web-search-tool>).
    pub fn usage(&self) -> Usage {
        let input = int(self.input_tokens);
        let read = int(self.cache_read_input_tokens);
        let split = self.cache_creation.unwrap_or_default().0;
        let written_1h = split.ephemeral_1h_input_tokens.0.unwrap_or(0).max(0);
        let written = int(self.cache_creation_input_tokens).max(
            split
                .ephemeral_5m_input_tokens
                .0
                .unwrap_or(0)
                .saturating_add(written_1h),
        );
        let searches = self
            .server_tool_use
            .unwrap_or_default()
            .0
            .web_search_requests
            .0
            .unwrap_or(0);
        Usage {
            prompt_tokens: input.saturating_add(read).saturating_add(written),
            completion_tokens: int(self.output_tokens),
            cached_tokens: read,
            cache_write_5m_tokens: written.saturating_sub(written_1h),
            cache_write_1h_tokens: written_1h,
            tool_calls: Tool::ALL.map(|t| match t {
                Tool::AnthropicWebSearch => searches.max(0),
                Tool::OpenAiWebSearch | Tool::GeminiGoogleSearch => 0,
            }),
            cache_in_prompt: false,
            ..Usage::default()
        }
    }
}

/// An Anthropic `usage` object as written (keys in name order, as a `Value` writes them).
#[derive(Debug, Serialize)]
pub struct UsageOut {
    /// The TTL split, only when something was written (an answer converted from another
    /// provider's has nothing to split).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_creation: Option<CacheCreationOut>,
    /// Prompt tokens written to the cache.
    pub cache_creation_input_tokens: i64,
    /// Prompt tokens read from the cache.
    pub cache_read_input_tokens: i64,
    /// Prompt tokens outside the cache.
    pub input_tokens: i64,
    /// Output tokens.
    pub output_tokens: i64,
}

/// `usage.cache_creation` as written.
#[derive(Debug, Serialize)]
pub struct CacheCreationOut {
    /// Written for an hour.
    pub ephemeral_1h_input_tokens: i64,
    /// Written for 5 minutes.
    pub ephemeral_5m_input_tokens: i64,
}

impl From<&Usage> for UsageOut {
    fn from(usage: &Usage) -> UsageOut {
        let written = usage.cache_write_tokens();
        let input = usage
            .prompt_tokens
            .saturating_sub(usage.cached_tokens)
            .saturating_sub(written)
            .max(0);
        UsageOut {
            cache_creation: (written > 0).then_some(CacheCreationOut {
                ephemeral_1h_input_tokens: usage.cache_write_1h_tokens,
                ephemeral_5m_input_tokens: usage.cache_write_5m_tokens,
            }),
            cache_creation_input_tokens: written,
            cache_read_input_tokens: usage.cached_tokens,
            input_tokens: input,
            output_tokens: usage.completion_tokens,
        }
    }
}
