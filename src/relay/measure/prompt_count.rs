//! Prompt tokens of request texts: every text of a prompt-like value, counted with a model's
//! counter (exact for OpenAI-family models, Tollgate's estimator otherwise), plus OpenAI's chat
//! framing.

use serde_json::Value;

use crate::relay::measure::tokenize::Counter;

/// Calls `f` on every text in a prompt-like value (a string, or an array of strings / parts).
pub(in crate::relay) fn each_text<'a>(value: &'a Value, f: &mut impl FnMut(&'a str)) {
    match value {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter().for_each(|v| each_text(v, f)),
        Value::Object(map) => {
            if let Some(v) = map.get("text").or_else(|| map.get("content")) {
                each_text(v, f);
            }
        }
        _ => {}
    }
}

/// Every text part of chat `messages`.
pub fn message_texts(messages: &[Value]) -> Vec<&str> {
    let mut texts = Vec::new();
    for message in messages {
        each_text(&message["content"], &mut |t| texts.push(t));
    }
    texts
}

/// Prompt tokens of chat `messages` as the OpenAI path counts them: the text parts with the
/// model's counter (exact for OpenAI-family models), plus 3 per message and 3 for the reply.
pub fn prompt_tokens(model: &str, messages: &[Value]) -> i64 {
    count_prompt(model, &message_texts(messages), Some(messages.len()))
}

/// Prompt tokens of `texts` with the model's counter (exact for OpenAI-family models, by
/// Tollgate's estimator otherwise), plus OpenAI's chat framing when `messages` is given: 3 per
/// message and 3 for the reply priming.
pub fn count_prompt(model: &str, texts: &[&str], messages: Option<usize>) -> i64 {
    count_prompt_with(Counter::for_model(model), texts, messages)
}

/// [`count_prompt`] with a given counter (e.g. [`Counter::Estimate`] for a reservation).
pub fn count_prompt_with(counter: Counter, texts: &[&str], messages: Option<usize>) -> i64 {
    let tokens = texts
        .iter()
        .fold(0i64, |n, t| n.saturating_add(counter.count(t)));
    let Some(messages) = messages else {
        return tokens;
    };
    let framing = i64::try_from(messages)
        .unwrap_or(i64::MAX)
        .saturating_mul(3)
        .saturating_add(3);
    tokens.saturating_add(framing)
}
