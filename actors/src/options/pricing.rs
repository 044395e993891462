//! The price table: ModelRatio, CompletionRatio, CacheRatio, ModelPrice and GroupRatio parsed
//! once per options publish (never per request), over a built-in default table.
//!
//! Units follow new-api: a model ratio of 1 is US$0.002 per 1K prompt tokens, i.e. one quota
//! unit per token at the default QuotaPerUnit of 500,000; ModelPrice is US$ per call.

use foldhash::HashMap;

use serde::de::DeserializeOwned;

use super::component_prices::ComponentTable;

/// Built-in model ratios (US$ per 1M input tokens ÷ 2) for the common models of the supported
/// providers. The admin's ModelRatio option overrides and extends them.
const DEFAULT_MODEL_RATIOS: &[(&str, f64)] = &[
    // OpenAI.
    ("gpt-4o", 1.25),
    ("gpt-4o-2024-05-13", 2.5),
    ("gpt-4o-2024-08-06", 1.25),
    ("gpt-4o-2024-11-20", 1.25),
    ("chatgpt-4o-latest", 2.5),
    ("gpt-4o-mini", 0.075),
    ("gpt-4o-mini-2024-07-18", 0.075),
    ("gpt-4o-audio-preview", 1.25),
    ("gpt-4o-mini-audio-preview", 0.075),
    ("gpt-audio", 1.25),
    ("gpt-4.1", 1.0),
    ("gpt-4.1-2025-04-14", 1.0),
    ("gpt-4.1-mini", 0.2),
    ("gpt-4.1-mini-2025-04-14", 0.2),
    ("gpt-4.1-nano", 0.05),
    ("gpt-4.1-nano-2025-04-14", 0.05),
    ("gpt-4.5-preview", 37.5),
    ("gpt-5", 0.625),
    ("gpt-5-chat-latest", 0.625),
    ("gpt-5-mini", 0.125),
    ("gpt-5-nano", 0.025),
    ("gpt-4", 15.0),
    ("gpt-4-32k", 30.0),
    ("gpt-4-turbo", 5.0),
    ("gpt-4-turbo-2024-04-09", 5.0),
    ("gpt-4-turbo-preview", 5.0),
    ("gpt-4-0125-preview", 5.0),
    ("gpt-4-1106-preview", 5.0),
    ("gpt-3.5-turbo", 0.25),
    ("gpt-3.5-turbo-0125", 0.25),
    ("gpt-3.5-turbo-1106", 0.5),
    ("gpt-3.5-turbo-instruct", 0.75),
    ("o1", 7.5),
    ("o1-2024-12-17", 7.5),
    ("o1-preview", 7.5),
    ("o1-mini", 0.55),
    ("o1-pro", 75.0),
    ("o3", 1.0),
    ("o3-2025-04-16", 1.0),
    ("o3-pro", 10.0),
    ("o3-mini", 0.55),
    ("o3-mini-2025-01-31", 0.55),
    ("o4-mini", 0.55),
    ("o4-mini-2025-04-16", 0.55),
    ("text-embedding-3-small", 0.01),
    ("text-embedding-3-large", 0.065),
    ("text-embedding-ada-002", 0.05),
    ("whisper-1", 15.0),
    ("tts-1", 7.5),
    ("tts-1-hd", 15.0),
    // Anthropic.
    ("claude-3-haiku-20240307", 0.125),
    ("claude-3-5-haiku-20241022", 0.4),
    ("claude-3-5-haiku-latest", 0.4),
    ("claude-haiku-4-5-20251001", 0.5),
    ("claude-haiku-4-5", 0.5),
    ("claude-3-sonnet-20240229", 1.5),
    ("claude-3-5-sonnet-20240620", 1.5),
    ("claude-3-5-sonnet-20241022", 1.5),
    ("claude-3-5-sonnet-latest", 1.5),
    ("claude-3-7-sonnet-20250219", 1.5),
    ("claude-3-7-sonnet-latest", 1.5),
    ("claude-sonnet-4-20250514", 1.5),
    ("claude-sonnet-4-0", 1.5),
    ("claude-sonnet-4-5-20250929", 1.5),
    ("claude-sonnet-4-5", 1.5),
    ("claude-3-opus-20240229", 7.5),
    ("claude-3-opus-latest", 7.5),
    ("claude-opus-4-20250514", 7.5),
    ("claude-opus-4-0", 7.5),
    ("claude-opus-4-1-20250805", 7.5),
    ("claude-opus-4-1", 7.5),
    // Google.
    ("gemini-1.5-flash", 0.0375),
    ("gemini-1.5-flash-8b", 0.01875),
    ("gemini-1.5-pro", 0.625),
    ("gemini-2.0-flash", 0.05),
    ("gemini-2.0-flash-lite", 0.0375),
    ("gemini-2.5-flash", 0.15),
    ("gemini-2.5-flash-lite", 0.05),
    ("gemini-2.5-pro", 0.625),
    ("gemini-embedding-001", 0.075),
    // DeepSeek.
    ("deepseek-chat", 0.135),
    ("deepseek-reasoner", 0.275),
    // Alibaba Qwen.
    ("qwen-turbo", 0.025),
    ("qwen-plus", 0.2),
    ("qwen-max", 1.2),
    ("qwen-long", 0.035),
    ("qwen-vl-plus", 0.105),
    ("qwen-vl-max", 0.4),
    ("qwq-plus", 0.4),
    ("qwen2.5-72b-instruct", 0.7),
    ("qwen3-235b-a22b", 0.35),
    ("qwen3-coder-plus", 0.5),
    // Others.
    ("moonshot-v1-8k", 0.5),
    ("moonshot-v1-32k", 1.0),
    ("moonshot-v1-128k", 2.0),
    ("kimi-k2-0711-preview", 0.3),
    ("glm-4", 0.05),
    ("glm-4-plus", 0.35),
    ("glm-4.5", 0.3),
    ("mistral-large-latest", 1.0),
    ("mistral-small-latest", 0.05),
    ("grok-3", 1.5),
    ("grok-3-mini", 0.15),
    ("grok-4", 1.5),
    // Tencent Hunyuan: Turbo S at ¥0.8 / ¥2 per 1M input / output tokens (Tencent's
    // announcement, https://github.com/Tencent/Hunyuan-TurboS), at ¥7.3 per US$ (the default
    // top-up Price). Its other models' prices were not found published: priced by the admin.
    ("hunyuan-turbos-latest", 0.0548),
];

/// Built-in completion ratios (output price ÷ input price).
const DEFAULT_COMPLETION_RATIOS: &[(&str, f64)] = &[
    ("gpt-4o", 4.0),
    ("gpt-4o-2024-05-13", 3.0),
    ("gpt-4o-2024-08-06", 4.0),
    ("gpt-4o-2024-11-20", 4.0),
    ("chatgpt-4o-latest", 3.0),
    ("gpt-4o-mini", 4.0),
    ("gpt-4o-mini-2024-07-18", 4.0),
    ("gpt-4o-audio-preview", 4.0),
    ("gpt-4o-mini-audio-preview", 4.0),
    ("gpt-audio", 4.0),
    ("gpt-4.1", 4.0),
    ("gpt-4.1-2025-04-14", 4.0),
    ("gpt-4.1-mini", 4.0),
    ("gpt-4.1-mini-2025-04-14", 4.0),
    ("gpt-4.1-nano", 4.0),
    ("gpt-4.1-nano-2025-04-14", 4.0),
    ("gpt-4.5-preview", 2.0),
    ("gpt-5", 8.0),
    ("gpt-5-chat-latest", 8.0),
    ("gpt-5-mini", 8.0),
    ("gpt-5-nano", 8.0),
    ("gpt-4", 2.0),
    ("gpt-4-32k", 2.0),
    ("gpt-4-turbo", 3.0),
    ("gpt-4-turbo-2024-04-09", 3.0),
    ("gpt-4-turbo-preview", 3.0),
    ("gpt-4-0125-preview", 3.0),
    ("gpt-4-1106-preview", 3.0),
    ("gpt-3.5-turbo", 3.0),
    ("gpt-3.5-turbo-0125", 3.0),
    ("gpt-3.5-turbo-1106", 2.0),
    ("gpt-3.5-turbo-instruct", 1.33),
    ("o1", 4.0),
    ("o1-2024-12-17", 4.0),
    ("o1-preview", 4.0),
    ("o1-mini", 4.0),
    ("o1-pro", 4.0),
    ("o3", 4.0),
    ("o3-2025-04-16", 4.0),
    ("o3-pro", 4.0),
    ("o3-mini", 4.0),
    ("o3-mini-2025-01-31", 4.0),
    ("o4-mini", 4.0),
    ("o4-mini-2025-04-16", 4.0),
    ("claude-3-haiku-20240307", 5.0),
    ("claude-3-5-haiku-20241022", 5.0),
    ("claude-3-5-haiku-latest", 5.0),
    ("claude-haiku-4-5-20251001", 5.0),
    ("claude-haiku-4-5", 5.0),
    ("claude-3-sonnet-20240229", 5.0),
    ("claude-3-5-sonnet-20240620", 5.0),
    ("claude-3-5-sonnet-20241022", 5.0),
    ("claude-3-5-sonnet-latest", 5.0),
    ("claude-3-7-sonnet-20250219", 5.0),
    ("claude-3-7-sonnet-latest", 5.0),
    ("claude-sonnet-4-20250514", 5.0),
    ("claude-sonnet-4-0", 5.0),
    ("claude-sonnet-4-5-20250929", 5.0),
    ("claude-sonnet-4-5", 5.0),
    ("claude-3-opus-20240229", 5.0),
    ("claude-3-opus-latest", 5.0),
    ("claude-opus-4-20250514", 5.0),
    ("claude-opus-4-0", 5.0),
    ("claude-opus-4-1-20250805", 5.0),
    ("claude-opus-4-1", 5.0),
    ("gemini-1.5-flash", 4.0),
    ("gemini-1.5-flash-8b", 4.0),
    ("gemini-1.5-pro", 4.0),
    ("gemini-2.0-flash", 4.0),
    ("gemini-2.0-flash-lite", 4.0),
    ("gemini-2.5-flash", 8.33),
    ("gemini-2.5-flash-lite", 4.0),
    ("gemini-2.5-pro", 8.0),
    ("deepseek-chat", 4.0),
    ("deepseek-reasoner", 4.0),
    ("qwen-turbo", 2.0),
    ("qwen-plus", 2.5),
    ("qwen-max", 4.0),
    ("qwen-long", 4.0),
    ("qwen-vl-plus", 3.0),
    ("qwen-vl-max", 4.0),
    ("qwq-plus", 3.0),
    ("qwen2.5-72b-instruct", 4.0),
    ("qwen3-235b-a22b", 4.0),
    ("qwen3-coder-plus", 5.0),
    ("kimi-k2-0711-preview", 4.17),
    ("glm-4.5", 4.0),
    ("mistral-large-latest", 3.0),
    ("mistral-small-latest", 3.0),
    ("grok-3", 5.0),
    ("grok-3-mini", 1.67),
    ("grok-4", 5.0),
    ("hunyuan-turbos-latest", 2.5),
];

/// Built-in cache-read ratios (cached prompt tokens cost this fraction of a prompt token).
const DEFAULT_CACHE_RATIOS: &[(&str, f64)] = &[
    ("gpt-4o", 0.5),
    ("gpt-4o-mini", 0.5),
    ("gpt-4.1", 0.25),
    ("gpt-4.1-mini", 0.25),
    ("gpt-4.1-nano", 0.25),
    ("gpt-5", 0.1),
    ("gpt-5-mini", 0.1),
    ("gpt-5-nano", 0.1),
    ("o3", 0.25),
    ("o4-mini", 0.25),
    ("claude-3-5-haiku-20241022", 0.1),
    ("claude-haiku-4-5-20251001", 0.1),
    ("claude-3-5-sonnet-20241022", 0.1),
    ("claude-3-7-sonnet-20250219", 0.1),
    ("claude-sonnet-4-20250514", 0.1),
    ("claude-sonnet-4-5-20250929", 0.1),
    ("claude-opus-4-20250514", 0.1),
    ("claude-opus-4-1-20250805", 0.1),
    ("gemini-2.5-flash", 0.25),
    ("gemini-2.5-pro", 0.25),
    ("deepseek-chat", 0.1),
    ("deepseek-reasoner", 0.1),
];

/// Built-in maximum output tokens per answer, from the providers' model pages. A request without
/// `max_tokens` reserves at most this much output (and at most DefaultOutputReserve).
const DEFAULT_MAX_OUTPUT: &[(&str, i64)] = &[
    ("gpt-3.5-turbo", 4_096),
    ("gpt-3.5-turbo-0125", 4_096),
    ("gpt-3.5-turbo-1106", 4_096),
    ("gpt-4", 8_192),
    ("gpt-4-turbo", 4_096),
    ("gpt-4-turbo-2024-04-09", 4_096),
    ("gpt-4o", 16_384),
    ("gpt-4o-mini", 16_384),
    ("gpt-4.1", 32_768),
    ("gpt-4.1-mini", 32_768),
    ("gpt-4.1-nano", 32_768),
    ("gpt-5", 128_000),
    ("gpt-5-mini", 128_000),
    ("gpt-5-nano", 128_000),
    ("o1", 100_000),
    ("o3", 100_000),
    ("o3-mini", 100_000),
    ("o4-mini", 100_000),
    ("claude-3-haiku-20240307", 4_096),
    ("claude-3-5-haiku-20241022", 8_192),
    ("claude-3-5-sonnet-20241022", 8_192),
    ("claude-3-7-sonnet-20250219", 64_000),
    ("claude-sonnet-4-20250514", 64_000),
    ("claude-sonnet-4-5-20250929", 64_000),
    ("claude-haiku-4-5-20251001", 64_000),
    ("claude-opus-4-20250514", 32_000),
    ("claude-opus-4-1-20250805", 32_000),
    ("gemini-2.0-flash", 8_192),
    ("gemini-2.5-flash", 65_536),
    ("gemini-2.5-pro", 65_536),
    ("deepseek-chat", 8_192),
    ("deepseek-reasoner", 64_000),
];

/// Built-in per-call prices (US$ per request) for models not billed by tokens: images, and the
/// task models at the incumbent's defaults (its price map: Midjourney actions, Suno, and the
/// OpenAI video models, whose price is per second of video).
const DEFAULT_MODEL_PRICES: &[(&str, f64)] = &[
    ("dall-e-2", 0.02),
    ("dall-e-3", 0.04),
    ("mj_imagine", 0.1),
    ("mj_variation", 0.1),
    ("mj_reroll", 0.1),
    ("mj_blend", 0.1),
    ("mj_modal", 0.1),
    ("mj_zoom", 0.1),
    ("mj_shorten", 0.1),
    ("mj_high_variation", 0.1),
    ("mj_low_variation", 0.1),
    ("mj_pan", 0.1),
    ("mj_edits", 0.1),
    ("mj_inpaint", 0.0),
    ("mj_custom_zoom", 0.0),
    ("mj_describe", 0.05),
    ("mj_upscale", 0.05),
    ("mj_upload", 0.05),
    ("mj_video", 0.8),
    ("swap_face", 0.05),
    ("suno_music", 0.1),
    ("suno_lyrics", 0.01),
    ("sora-2", 0.3),
    ("sora-2-pro", 0.5),
];

/// How one model is priced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ModelPricing {
    /// By tokens: ratios.
    Ratio {
        /// Prompt-token ratio.
        model: f64,
        /// Completion tokens cost this many prompt tokens.
        completion: f64,
        /// Cached prompt tokens cost this many prompt tokens.
        cache: f64,
    },
    /// A fixed US$ price per call.
    PerCall {
        /// US$ per call.
        price: f64,
    },
}

/// Every price, parsed.
#[derive(Debug, Clone, Default)]
pub struct PriceTable {
    model_ratio: HashMap<String, f64>,
    completion_ratio: HashMap<String, f64>,
    cache_ratio: HashMap<String, f64>,
    model_price: HashMap<String, f64>,
    group_ratio: HashMap<String, f64>,
    max_output: HashMap<String, i64>,
    /// AudioRatio, AudioCompletionRatio, ToolCallPrice and ModelPriceTiers.
    components: ComponentTable,
}

fn merged<V: Copy + DeserializeOwned>(defaults: &[(&str, V)], option: &str) -> HashMap<String, V> {
    let mut map: HashMap<String, V> = defaults
        .iter()
        .map(|(k, v)| ((*k).to_owned(), *v))
        .collect();
    map.extend(parse::<HashMap<String, V>>(option));
    map
}

fn parse<T: DeserializeOwned + Default>(text: &str) -> T {
    serde_json::from_str(text).unwrap_or_default()
}

impl PriceTable {
    /// Parses the five price options over the built-in defaults.
    pub fn new(
        model_ratio: &str,
        completion_ratio: &str,
        cache_ratio: &str,
        model_price: &str,
        group_ratio: &str,
    ) -> PriceTable {
        PriceTable {
            model_ratio: merged(DEFAULT_MODEL_RATIOS, model_ratio),
            completion_ratio: merged(DEFAULT_COMPLETION_RATIOS, completion_ratio),
            cache_ratio: merged(DEFAULT_CACHE_RATIOS, cache_ratio),
            model_price: merged(DEFAULT_MODEL_PRICES, model_price),
            group_ratio: parse(group_ratio),
            max_output: merged(DEFAULT_MAX_OUTPUT, "{}"),
            components: ComponentTable::default(),
        }
    }

    /// Adds the component prices (AudioRatio, AudioCompletionRatio, ToolCallPrice,
    /// ModelPriceTiers: each option's text is its whole table).
    #[must_use]
    pub fn with_components(mut self, components: ComponentTable) -> PriceTable {
        self.components = components;
        self
    }

    /// The component prices: audio, server tools, long-context tiers.
    pub fn components(&self) -> &ComponentTable {
        &self.components
    }

    /// Adds the ModelMaxOutput option (model → tokens) over the built-in table; entries that
    /// are not positive integers are ignored.
    #[must_use]
    pub fn with_max_output(mut self, max_output: &str) -> PriceTable {
        let admin: HashMap<String, i64> = parse(max_output);
        self.max_output
            .extend(admin.into_iter().filter(|(_, tokens)| *tokens > 0));
        self
    }

    /// The most output tokens one answer of `model` can have, when known.
    pub fn max_output(&self, model: &str) -> Option<i64> {
        self.max_output.get(model).copied()
    }

    /// How `model` is priced: a per-call price wins over ratios; `None` when neither is set.
    pub fn model(&self, model: &str) -> Option<ModelPricing> {
        if let Some(price) = self.model_price.get(model) {
            return Some(ModelPricing::PerCall { price: *price });
        }
        self.model_ratio
            .get(model)
            .map(|ratio| ModelPricing::Ratio {
                model: *ratio,
                completion: self.completion_ratio.get(model).copied().unwrap_or(1.0),
                cache: self.cache_ratio.get(model).copied().unwrap_or(1.0),
            })
    }

    /// The model ratio of `model`, if one is set (a per-call price does not hide it).
    pub fn model_ratio(&self, model: &str) -> Option<f64> {
        self.model_ratio.get(model).copied()
    }

    /// The completion ratio of `model` (1 when not set).
    pub fn completion_ratio(&self, model: &str) -> f64 {
        self.completion_ratio.get(model).copied().unwrap_or(1.0)
    }

    /// The per-call price of `model`, if one is set.
    pub fn model_price(&self, model: &str) -> Option<f64> {
        self.model_price.get(model).copied()
    }

    /// The ratio of `group` (1 for a group missing from GroupRatio).
    pub fn group(&self, group: &str) -> f64 {
        self.group_ratio.get(group).copied().unwrap_or(1.0)
    }

    /// The group ratios as configured.
    pub fn group_ratios(&self) -> &HashMap<String, f64> {
        &self.group_ratio
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_override_defaults_and_price_wins() {
        let table = PriceTable::new(
            r#"{"gpt-4o": 2.0, "my-model": 3}"#,
            r#"{"my-model": 2}"#,
            "{}",
            r#"{"dall-e-3": 0.04}"#,
            r#"{"default": 1, "vip": 0.8}"#,
        );
        assert_eq!(
            table.model("gpt-4o"),
            Some(ModelPricing::Ratio {
                model: 2.0,
                completion: 4.0,
                cache: 0.5
            })
        );
        assert_eq!(
            table.model("my-model"),
            Some(ModelPricing::Ratio {
                model: 3.0,
                completion: 2.0,
                cache: 1.0
            })
        );
        assert_eq!(
            table.model("dall-e-3"),
            Some(ModelPricing::PerCall { price: 0.04 })
        );
        assert_eq!(table.model("unknown"), None);
        assert_eq!(
            table.model("dall-e-3"),
            Some(ModelPricing::PerCall { price: 0.04 }),
            "built-in per-call prices apply"
        );
        assert_eq!(table.group("vip"), 0.8);
        assert_eq!(table.group("nope"), 1.0);
    }

    #[test]
    fn every_default_table_entry_is_sane() {
        for (name, ratio) in DEFAULT_MODEL_RATIOS {
            assert!(*ratio > 0.0 && ratio.is_finite(), "{name}");
        }
        for table in [DEFAULT_COMPLETION_RATIOS, DEFAULT_CACHE_RATIOS] {
            for (name, _) in table {
                assert!(
                    DEFAULT_MODEL_RATIOS.iter().any(|(m, _)| m == name),
                    "{name} has a completion or cache ratio but no model ratio"
                );
            }
        }
        let mut names: Vec<_> = DEFAULT_MODEL_RATIOS.iter().map(|(m, _)| *m).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "duplicate model in the default table");
    }

    #[test]
    fn max_output_comes_from_the_table_and_the_option() {
        let table = PriceTable::new("", "", "", "", "")
            .with_max_output(r#"{"my-model": 2048, "gpt-4o": 1000, "bad": -5}"#);
        assert_eq!(table.max_output("my-model"), Some(2048));
        assert_eq!(table.max_output("gpt-4o"), Some(1000), "the option wins");
        assert_eq!(table.max_output("claude-3-haiku-20240307"), Some(4_096));
        assert_eq!(
            table.max_output("bad"),
            None,
            "non-positive entries are ignored"
        );
        assert_eq!(table.max_output("unknown"), None);
    }

    #[test]
    fn malformed_json_falls_back_to_defaults() {
        let table = PriceTable::new("{oops", "", "", "", "");
        assert!(table.model("gpt-4o-mini").is_some());
    }
}
