//! The output limit Tollgate writes into an upstream body when the caller's balance covers
//! less than the upstream would otherwise allow ([`crate::relay::pipeline::admission::OutputLimit`]).
//! One field per wire, from each provider's API reference:
//!
//! | wire | field | reference |
//! |---|---|---|
//! | OpenAI chat | `max_completion_tokens` when the client used it or the model is a reasoning model (`max_tokens` is deprecated and refused by the o-series), else `max_tokens` | <https://platform.openai.com/docs/api-reference/chat/create> |
//! | OpenAI legacy completions | never written (`max_tokens` defaults to 16; reserved as 16) | <https://platform.openai.com/docs/api-reference/completions/create> |
//! | Responses | `max_output_tokens` (reasoning included) | <https://platform.openai.com/docs/api-reference/responses/create> |
//! | Anthropic | `max_tokens`; `thinking.budget_tokens` (≥ 1,024 and below `max_tokens`) lowered to L − 1 | <https://docs.anthropic.com/en/api/messages> |
//! | Gemini | `generationConfig.maxOutputTokens` | <https://ai.google.dev/api/generate-content#generationconfig> |
//! | Bedrock Converse | `inferenceConfig.maxTokens` | <https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InferenceConfiguration.html> |
//! | Cohere | `max_tokens` | <https://docs.cohere.com/reference/chat> |
//!
//! Gemini's `thinkingConfig.thinkingBudget` is left alone: its reference does not say that
//! thinking is counted outside `maxOutputTokens`, and the mid-stream ceiling bounds the answer
//! either way.

use serde_json::{Value, json};

use super::Wire;

/// Anthropic's smallest `thinking.budget_tokens`.
pub const ANTHROPIC_MIN_THINKING: i64 = 1024;

/// Why a limit cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    /// Anthropic's thinking needs a budget of at least 1,024 tokens below `max_tokens`: the
    /// balance covers less.
    #[error(
        "insufficient quota: this request's extended thinking needs at least {needed} output \
         tokens and the balance covers {covered}"
    )]
    ThinkingBudget {
        /// Output tokens the thinking needs.
        needed: i64,
        /// Output tokens the balance covers.
        covered: i64,
    },
}

/// Whether OpenAI's `model` is a reasoning model (o-series, gpt-5), which takes
/// `max_completion_tokens` only.
fn reasoning_model(model: &str) -> bool {
    let bare = model.rsplit('/').next().unwrap_or(model);
    ["o1", "o3", "o4", "gpt-5"]
        .iter()
        .any(|p| bare.starts_with(p))
}

/// Writes the output limit `limit` into `body`, an upstream request of `wire` for `model`.
pub fn write(wire: Wire, body: &mut Value, limit: i64, model: &str) -> Result<(), LimitError> {
    let Value::Object(map) = body else {
        return Ok(());
    };
    match wire {
        Wire::OpenAi => {
            let completion = map.contains_key("max_completion_tokens")
                || (!map.contains_key("max_tokens") && reasoning_model(model));
            if completion {
                map.insert("max_completion_tokens".into(), json!(limit));
                if map.contains_key("max_tokens") {
                    map.insert("max_tokens".into(), json!(limit));
                }
            } else {
                map.insert("max_tokens".into(), json!(limit));
            }
        }
        Wire::Responses => {
            map.insert("max_output_tokens".into(), json!(limit));
        }
        Wire::Cohere => {
            map.insert("max_tokens".into(), json!(limit));
        }
        Wire::Anthropic => {
            map.insert("max_tokens".into(), json!(limit));
            if let Some(thinking) = map.get_mut("thinking").and_then(Value::as_object_mut)
                && let Some(budget) = thinking.get("budget_tokens").and_then(Value::as_i64)
                && budget >= limit
            {
                let lowered = limit - 1;
                if lowered < ANTHROPIC_MIN_THINKING {
                    return Err(LimitError::ThinkingBudget {
                        needed: ANTHROPIC_MIN_THINKING + 1,
                        covered: limit,
                    });
                }
                thinking.insert("budget_tokens".into(), json!(lowered));
            }
        }
        Wire::Gemini => {
            // Gemini reads both spellings: the limit goes into the one the body uses.
            let key =
                if map.contains_key("generation_config") && !map.contains_key("generationConfig") {
                    "generation_config"
                } else {
                    "generationConfig"
                };
            let config = map.entry(key).or_insert_with(|| json!({}));
            if let Value::Object(config) = config {
                config.remove("max_output_tokens");
                config.insert("maxOutputTokens".into(), json!(limit));
            }
        }
        Wire::Converse => {
            let config = map.entry("inferenceConfig").or_insert_with(|| json!({}));
            if let Value::Object(config) = config {
                config.insert("maxTokens".into(), json!(limit));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
