//! The price table: ModelRatio, CompletionRatio, CacheRatio, ModelPrice and GroupRatio parsed
//! once per options publish (never per request), over a built-in default table.
//!
//! Units follow new-api: a model ratio of 1 is US$0.002 per 1K prompt tokens, i.e. one quota
//! unit per token at the default QuotaPerUnit of 500,000; ModelPrice is US$ per call.

use std::collections::HashMap;

use serde::de::DeserializeOwned;

/// Built-in model ratios (US$ per 1M input tokens ÷ 2) for common models. The admin's ModelRatio
/// option overrides and extends them.
const DEFAULT_MODEL_RATIOS: &[(&str, f64)] = &[
    ("gpt-4o", 1.25),
    ("gpt-4o-mini", 0.075),
    ("gpt-4.1", 1.0),
    ("gpt-4.1-mini", 0.2),
    ("gpt-4.1-nano", 0.05),
    ("gpt-4-turbo", 5.0),
    ("gpt-3.5-turbo", 0.25),
    ("o1", 7.5),
    ("o3", 1.0),
    ("o3-mini", 0.55),
    ("o4-mini", 0.55),
    ("text-embedding-3-small", 0.01),
    ("text-embedding-3-large", 0.065),
    ("text-embedding-ada-002", 0.05),
    ("claude-3-5-haiku-20241022", 0.4),
    ("claude-3-5-sonnet-20241022", 1.5),
    ("claude-3-7-sonnet-20250219", 1.5),
    ("claude-sonnet-4-20250514", 1.5),
    ("claude-opus-4-20250514", 7.5),
    ("gemini-1.5-flash", 0.0375),
    ("gemini-1.5-pro", 0.625),
    ("gemini-2.0-flash", 0.05),
    ("gemini-2.5-flash", 0.15),
    ("gemini-2.5-pro", 0.625),
    ("deepseek-chat", 0.135),
    ("deepseek-reasoner", 0.275),
    ("qwen-turbo", 0.025),
    ("qwen-plus", 0.2),
    ("qwen-max", 1.2),
    ("moonshot-v1-8k", 0.5),
    ("glm-4", 0.05),
    ("mistral-large-latest", 1.0),
    ("grok-3", 1.5),
];

/// Built-in completion ratios (output price ÷ input price).
const DEFAULT_COMPLETION_RATIOS: &[(&str, f64)] = &[
    ("gpt-4o", 4.0),
    ("gpt-4o-mini", 4.0),
    ("gpt-4.1", 4.0),
    ("gpt-4.1-mini", 4.0),
    ("gpt-4.1-nano", 4.0),
    ("gpt-4-turbo", 3.0),
    ("gpt-3.5-turbo", 3.0),
    ("o1", 4.0),
    ("o3", 4.0),
    ("o3-mini", 4.0),
    ("o4-mini", 4.0),
    ("claude-3-5-haiku-20241022", 5.0),
    ("claude-3-5-sonnet-20241022", 5.0),
    ("claude-3-7-sonnet-20250219", 5.0),
    ("claude-sonnet-4-20250514", 5.0),
    ("claude-opus-4-20250514", 5.0),
    ("gemini-1.5-flash", 4.0),
    ("gemini-1.5-pro", 4.0),
    ("gemini-2.0-flash", 4.0),
    ("gemini-2.5-flash", 8.33),
    ("gemini-2.5-pro", 8.0),
    ("deepseek-chat", 4.0),
    ("deepseek-reasoner", 4.0),
    ("qwen-turbo", 2.0),
    ("qwen-plus", 2.5),
    ("qwen-max", 4.0),
    ("mistral-large-latest", 3.0),
    ("grok-3", 5.0),
];

/// Built-in cache-read ratios (cached prompt tokens cost this fraction of a prompt token).
const DEFAULT_CACHE_RATIOS: &[(&str, f64)] = &[
    ("gpt-4o", 0.5),
    ("gpt-4o-mini", 0.5),
    ("gpt-4.1", 0.25),
    ("gpt-4.1-mini", 0.25),
    ("o3", 0.25),
    ("claude-sonnet-4-20250514", 0.1),
    ("claude-3-7-sonnet-20250219", 0.1),
    ("deepseek-chat", 0.1),
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
}

fn merged(defaults: &[(&str, f64)], option: &str) -> HashMap<String, f64> {
    let mut map: HashMap<String, f64> = defaults
        .iter()
        .map(|(k, v)| ((*k).to_owned(), *v))
        .collect();
    map.extend(parse::<HashMap<String, f64>>(option));
    map
}

fn parse<T: DeserializeOwned + Default>(text: &str) -> T {
    serde_json::from_str(text).unwrap_or_default()
}

impl PriceTable {
    /// Parses the five options over the built-in defaults.
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
            model_price: parse(model_price),
            group_ratio: parse(group_ratio),
        }
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
        assert_eq!(table.group("vip"), 0.8);
        assert_eq!(table.group("nope"), 1.0);
    }

    #[test]
    fn malformed_json_falls_back_to_defaults() {
        let table = PriceTable::new("{oops", "", "", "", "");
        assert!(table.model("gpt-4o-mini").is_some());
    }
}
