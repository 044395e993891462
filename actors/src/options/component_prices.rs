//! Prices of what the ratio formula alone does not see: audio tokens (AudioRatio,
//! AudioCompletionRatio), server-side tool calls (ToolCallPrice) and long-context tiers
//! (ModelPriceTiers). Each option's stored text IS its table: the default is the seeded table
//! below (published prices), an admin edits it whole, and a model or tool left out has no
//! price — the relay then refuses a request that would use it (`src/relay/components.rs`).
//!
//! Meanings (the incumbent's for the two audio maps, reference §3.5 "Audio"):
//! - AudioRatio: model → audio prompt token price ÷ text prompt token price.
//! - AudioCompletionRatio: model → audio completion token price ÷ audio prompt token price.
//! - ToolCallPrice: tool → US$ per call, for [`Tool`]'s keys only.
//! - ModelPriceTiers: model → `[{above_prompt_tokens, model_ratio, completion_ratio}]`: a request
//!   whose prompt has more than `above_prompt_tokens` tokens is priced at that tier's ratios (the
//!   highest such tier), the cache ratio applying on top as usual.
//!
//! Seeded prices (US$ per 1M tokens unless said), from the providers' pages:
//! - OpenAI <https://platform.openai.com/docs/pricing>: gpt-4o-audio-preview text $2.50 in,
//!   audio $40 in / $80 out; gpt-4o-mini-audio-preview text $0.15, audio $10 / $20; gpt-audio
//!   text $2.50, audio $32 / $64. Web search tool calls $10 per 1K calls
//!   (<https://platform.openai.com/docs/guides/tools-web-search>).
//! - Anthropic <https://docs.anthropic.com/en/docs/build-with-claude/tool-use/web-search-tool>:
//!   web search $10 per 1K searches (`usage.server_tool_use.web_search_requests`); Sonnet 4 /
//!   4.5 prompts above 200K input tokens (1M context, `anthropic-beta: context-1m-2025-08-07`)
//!   $6 in / $22.50 out instead of $3 / $15
//!   (<https://docs.anthropic.com/en/docs/about-claude/pricing#long-context-pricing>).
//! - Google <https://ai.google.dev/gemini-api/docs/pricing>: audio input gemini-2.5-flash $1.00
//!   (text $0.30), gemini-2.5-flash-lite $0.30 (text $0.10), gemini-2.0-flash $0.70 (text
//!   $0.10), gemini-2.5-pro and 1.5 audio as text; gemini-2.5-pro prompts above 200K tokens
//!   $2.50 in / $15 out (else $1.25 / $10); gemini-1.5-pro and -flash above 128K twice their
//!   short-prompt price; Grounding with Google Search $35 per 1K grounded prompts.

use foldhash::HashMap;

use serde::Deserialize;

/// The most tiers one model may have (ModelPriceTiers), so a model's tiers fit in a `Copy`
/// value the relay carries per request.
pub const MAX_TIERS: usize = 4;

/// The largest ratio or per-call price the options accept (a typo guard, far above any
/// published price).
const MAX_VALUE: f64 = 1e6;

/// AudioRatio's seeded table.
pub const DEFAULT_AUDIO_RATIO: &str = r#"{"gpt-4o-audio-preview":16,"gpt-4o-mini-audio-preview":66.67,"gpt-audio":12.8,"gemini-2.5-flash":3.33,"gemini-2.5-flash-lite":3,"gemini-2.0-flash":7,"gemini-2.5-pro":1,"gemini-1.5-pro":1,"gemini-1.5-flash":1}"#;

/// AudioCompletionRatio's seeded table.
pub const DEFAULT_AUDIO_COMPLETION_RATIO: &str =
    r#"{"gpt-4o-audio-preview":2,"gpt-4o-mini-audio-preview":2,"gpt-audio":2}"#;

/// ToolCallPrice's seeded table (US$ per call).
pub const DEFAULT_TOOL_CALL_PRICE: &str =
    r#"{"openai:web_search":0.01,"anthropic:web_search":0.01,"gemini:google_search":0.035}"#;

/// ModelPriceTiers' seeded table.
pub const DEFAULT_MODEL_PRICE_TIERS: &str = r#"{"gemini-2.5-pro":[{"above_prompt_tokens":200000,"model_ratio":1.25,"completion_ratio":6}],"gemini-1.5-pro":[{"above_prompt_tokens":128000,"model_ratio":1.25,"completion_ratio":4}],"gemini-1.5-flash":[{"above_prompt_tokens":128000,"model_ratio":0.075,"completion_ratio":4}],"claude-sonnet-4-20250514":[{"above_prompt_tokens":200000,"model_ratio":3,"completion_ratio":3.75}],"claude-sonnet-4-0":[{"above_prompt_tokens":200000,"model_ratio":3,"completion_ratio":3.75}],"claude-sonnet-4-5-20250929":[{"above_prompt_tokens":200000,"model_ratio":3,"completion_ratio":3.75}],"claude-sonnet-4-5":[{"above_prompt_tokens":200000,"model_ratio":3,"completion_ratio":3.75}]}"#;

/// Prompt sizes above which providers publish a higher price (model → tokens). A request whose
/// prompt estimate passes one of these with no configured tier from there on is refused.
const PUBLISHED_BOUNDARIES: &[(&str, i64)] = &[
    ("gemini-2.5-pro", 200_000),
    ("gemini-1.5-pro", 128_000),
    ("gemini-1.5-flash", 128_000),
    ("claude-sonnet-4-20250514", 200_000),
    ("claude-sonnet-4-0", 200_000),
    ("claude-sonnet-4-5-20250929", 200_000),
    ("claude-sonnet-4-5", 200_000),
];

/// A server-side tool billed per call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// OpenAI's web search (`web_search*` tools of the Responses API, chat's
    /// `web_search_options`).
    OpenAiWebSearch,
    /// Anthropic's web search (`web_search_*` server tool).
    AnthropicWebSearch,
    /// Gemini's Grounding with Google Search (`google_search` tool).
    GeminiGoogleSearch,
}

impl Tool {
    /// Every tool, in [`ToolPrices`] order.
    pub const ALL: [Tool; 3] = [
        Tool::OpenAiWebSearch,
        Tool::AnthropicWebSearch,
        Tool::GeminiGoogleSearch,
    ];

    /// Its key in ToolCallPrice.
    pub fn key(self) -> &'static str {
        match self {
            Tool::OpenAiWebSearch => "openai:web_search",
            Tool::AnthropicWebSearch => "anthropic:web_search",
            Tool::GeminiGoogleSearch => "gemini:google_search",
        }
    }

    /// Its index in per-tool arrays.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// One long-context tier of ModelPriceTiers.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceTier {
    /// The tier applies to prompts of more than this many tokens.
    pub above_prompt_tokens: i64,
    /// The model ratio in this tier.
    pub model_ratio: f64,
    /// The completion ratio in this tier.
    pub completion_ratio: f64,
}

/// What one model's request may cost beside its text tokens, resolved at admission and carried
/// to settlement (`Copy`: no allocation per request).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ComponentPrices {
    /// AudioRatio of the model, if set.
    pub audio_ratio: Option<f64>,
    /// AudioCompletionRatio of the model, if set.
    pub audio_completion_ratio: Option<f64>,
    /// US$ per call of each [`Tool`] (by [`Tool::index`]), if set.
    pub tools: [Option<f64>; 3],
    /// The model's tiers, ascending by `above_prompt_tokens`.
    pub tiers: [Option<PriceTier>; MAX_TIERS],
}

impl ComponentPrices {
    /// The tier a prompt of `prompt_tokens` is priced at (the highest it is above), if any.
    pub fn tier_for(&self, prompt_tokens: i64) -> Option<PriceTier> {
        self.tiers
            .iter()
            .rev()
            .flatten()
            .find(|t| prompt_tokens > t.above_prompt_tokens)
            .copied()
    }

    /// The price of one call of `tool`, if set.
    pub fn tool(&self, tool: Tool) -> Option<f64> {
        self.tools[tool.index()]
    }
}

/// The four options parsed (once per publish).
#[derive(Debug, Clone, Default)]
pub struct ComponentTable {
    audio_ratio: HashMap<String, f64>,
    audio_completion_ratio: HashMap<String, f64>,
    tools: [Option<f64>; 3],
    tiers: HashMap<String, Vec<PriceTier>>,
}

impl ComponentTable {
    /// Parses the four options' texts (validated on save; a text that does not parse counts as
    /// an empty table, so nothing is priced rather than mispriced).
    pub fn new(audio: &str, audio_completion: &str, tools: &str, tiers: &str) -> ComponentTable {
        let tool_map: HashMap<String, f64> = serde_json::from_str(tools).unwrap_or_default();
        let mut tier_map: HashMap<String, Vec<PriceTier>> =
            serde_json::from_str(tiers).unwrap_or_default();
        for list in tier_map.values_mut() {
            list.sort_by_key(|t| t.above_prompt_tokens);
            list.truncate(MAX_TIERS);
        }
        ComponentTable {
            audio_ratio: serde_json::from_str(audio).unwrap_or_default(),
            audio_completion_ratio: serde_json::from_str(audio_completion).unwrap_or_default(),
            tools: Tool::ALL.map(|t| tool_map.get(t.key()).copied()),
            tiers: tier_map,
        }
    }

    /// The component prices of `model`.
    pub fn prices(&self, model: &str) -> ComponentPrices {
        let mut tiers = [None; MAX_TIERS];
        for (slot, tier) in tiers
            .iter_mut()
            .zip(self.tiers.get(model).into_iter().flatten())
        {
            *slot = Some(*tier);
        }
        ComponentPrices {
            audio_ratio: self.audio_ratio.get(model).copied(),
            audio_completion_ratio: self.audio_completion_ratio.get(model).copied(),
            tools: self.tools,
            tiers,
        }
    }

    /// The published price boundary a prompt of `prompt_tokens` passes for `model` with no
    /// configured tier priced from that boundary on, if any (the request would be billed below
    /// its real price).
    pub fn untiered_boundary(&self, model: &str, prompt_tokens: i64) -> Option<i64> {
        let boundary = PUBLISHED_BOUNDARIES
            .iter()
            .filter(|(m, b)| *m == model && prompt_tokens > *b)
            .map(|(_, b)| *b)
            .max()?;
        let covered = self
            .prices(model)
            .tier_for(prompt_tokens)
            .is_some_and(|t| t.above_prompt_tokens >= boundary);
        (!covered).then_some(boundary)
    }

    /// Whether the model has any tier configured.
    pub fn has_tiers(&self, model: &str) -> bool {
        self.tiers.get(model).is_some_and(|t| !t.is_empty())
    }
}

/// The shape an option of this module must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// model → ratio (AudioRatio, AudioCompletionRatio).
    RatioMap,
    /// tool → US$ per call (ToolCallPrice).
    ToolPrices,
    /// model → tiers (ModelPriceTiers).
    Tiers,
}

fn check_value(what: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && (0.0..=MAX_VALUE).contains(&v) {
        Ok(())
    } else {
        Err(format!("{what}: must be a number from 0 to {MAX_VALUE}"))
    }
}

/// Checks an option's text against its shape; `Err` says where and why.
pub fn check(shape: Shape, text: &str) -> Result<(), String> {
    match shape {
        Shape::RatioMap => {
            let map: HashMap<String, f64> =
                serde_json::from_str(text).map_err(|e| format!("model → ratio expected: {e}"))?;
            map.iter().try_for_each(|(m, v)| check_value(m, *v))
        }
        Shape::ToolPrices => {
            let map: HashMap<String, f64> = serde_json::from_str(text)
                .map_err(|e| format!("tool → US$ per call expected: {e}"))?;
            for (tool, price) in &map {
                if !Tool::ALL.iter().any(|t| t.key() == tool) {
                    let known: Vec<&str> = Tool::ALL.iter().map(|t| t.key()).collect();
                    return Err(format!(
                        "{tool}: unknown tool (known: {})",
                        known.join(", ")
                    ));
                }
                check_value(tool, *price)?;
            }
            Ok(())
        }
        Shape::Tiers => {
            let map: HashMap<String, Vec<PriceTier>> = serde_json::from_str(text).map_err(|e| {
                format!(
                    "model → [{{above_prompt_tokens, model_ratio, completion_ratio}}] expected: {e}"
                )
            })?;
            for (model, tiers) in &map {
                if tiers.len() > MAX_TIERS {
                    return Err(format!("{model}: at most {MAX_TIERS} tiers"));
                }
                let mut seen = Vec::new();
                for tier in tiers {
                    if tier.above_prompt_tokens <= 0 {
                        return Err(format!("{model}: above_prompt_tokens must be above 0"));
                    }
                    if seen.contains(&tier.above_prompt_tokens) {
                        return Err(format!(
                            "{model}: two tiers above {} prompt tokens",
                            tier.above_prompt_tokens
                        ));
                    }
                    seen.push(tier.above_prompt_tokens);
                    check_value(&format!("{model}.model_ratio"), tier.model_ratio)?;
                    check_value(&format!("{model}.completion_ratio"), tier.completion_ratio)?;
                }
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seeded() -> ComponentTable {
        ComponentTable::new(
            DEFAULT_AUDIO_RATIO,
            DEFAULT_AUDIO_COMPLETION_RATIO,
            DEFAULT_TOOL_CALL_PRICE,
            DEFAULT_MODEL_PRICE_TIERS,
        )
    }

    #[test]
    fn seeded_tables_pass_their_own_validation() {
        assert_eq!(check(Shape::RatioMap, DEFAULT_AUDIO_RATIO), Ok(()));
        assert_eq!(
            check(Shape::RatioMap, DEFAULT_AUDIO_COMPLETION_RATIO),
            Ok(())
        );
        assert_eq!(check(Shape::ToolPrices, DEFAULT_TOOL_CALL_PRICE), Ok(()));
        assert_eq!(check(Shape::Tiers, DEFAULT_MODEL_PRICE_TIERS), Ok(()));
        let table = seeded();
        for (model, boundary) in PUBLISHED_BOUNDARIES {
            assert_eq!(
                table.untiered_boundary(model, boundary + 1),
                None,
                "{model}'s published boundary has a seeded tier"
            );
        }
        assert_eq!(table.prices("gpt-4o-audio-preview").audio_ratio, Some(16.0));
        assert_eq!(table.prices("x").tool(Tool::AnthropicWebSearch), Some(0.01));
    }

    #[test]
    fn the_highest_tier_a_prompt_is_above_applies() {
        let table = ComponentTable::new(
            "{}",
            "{}",
            "{}",
            r#"{"m":[{"above_prompt_tokens":256000,"model_ratio":3,"completion_ratio":1},
                {"above_prompt_tokens":32000,"model_ratio":2,"completion_ratio":1}]}"#,
        );
        let p = table.prices("m");
        assert_eq!(p.tier_for(32_000), None, "not above the boundary");
        assert_eq!(p.tier_for(32_001).map(|t| t.model_ratio), Some(2.0));
        assert_eq!(p.tier_for(300_000).map(|t| t.model_ratio), Some(3.0));
        assert_eq!(table.prices("other").tier_for(1_000_000), None);
    }

    #[test]
    fn a_boundary_without_its_tier_is_reported() {
        let table = ComponentTable::new("{}", "{}", "{}", r#"{"gemini-2.5-pro":[]}"#);
        assert_eq!(table.untiered_boundary("gemini-2.5-pro", 200_000), None);
        assert_eq!(
            table.untiered_boundary("gemini-2.5-pro", 200_001),
            Some(200_000)
        );
        let low = ComponentTable::new(
            "{}",
            "{}",
            "{}",
            r#"{"gemini-2.5-pro":[{"above_prompt_tokens":100000,"model_ratio":1,"completion_ratio":1}]}"#,
        );
        assert_eq!(
            low.untiered_boundary("gemini-2.5-pro", 250_000),
            Some(200_000),
            "a tier below the published boundary does not cover it"
        );
        assert_eq!(table.untiered_boundary("unknown-model", 10_000_000), None);
    }

    #[test]
    fn validation_names_what_is_wrong() {
        assert!(check(Shape::RatioMap, r#"{"m": -1}"#).is_err());
        assert!(check(Shape::RatioMap, r#"{"m": "2"}"#).is_err());
        assert!(check(Shape::RatioMap, "[1]").is_err());
        let unknown = check(Shape::ToolPrices, r#"{"openai:file_search": 0.0025}"#);
        assert!(unknown.is_err_and(|e| e.contains("openai:file_search")));
        assert!(check(Shape::ToolPrices, r#"{"gemini:google_search": 1e9}"#).is_err());
        assert!(
            check(
                Shape::Tiers,
                r#"{"m":[{"above_prompt_tokens":0,"model_ratio":1,"completion_ratio":1}]}"#
            )
            .is_err()
        );
        assert!(
            check(
                Shape::Tiers,
                r#"{"m":[{"above_prompt_tokens":10,"model_ratio":1}]}"#
            )
            .is_err()
        );
        assert!(
            check(
                Shape::Tiers,
                r#"{"m":[{"above_prompt_tokens":10,"model_ratio":1,"completion_ratio":1,"x":1}]}"#
            )
            .is_err()
        );
        let dup = r#"{"m":[{"above_prompt_tokens":10,"model_ratio":1,"completion_ratio":1},{"above_prompt_tokens":10,"model_ratio":2,"completion_ratio":1}]}"#;
        assert!(check(Shape::Tiers, dup).is_err());
        let five: Vec<String> = (1..=5)
            .map(|i| {
                format!(r#"{{"above_prompt_tokens":{i},"model_ratio":1,"completion_ratio":1}}"#)
            })
            .collect();
        assert!(check(Shape::Tiers, &format!(r#"{{"m":[{}]}}"#, five.join(","))).is_err());
        assert_eq!(check(Shape::Tiers, "{}"), Ok(()));
    }
}
