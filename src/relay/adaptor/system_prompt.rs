//! A channel's `setting.system_prompt`, put into the upstream request in the upstream's wire:
//! OpenAI and Cohere `messages`, Anthropic `system`, Gemini `systemInstruction`, Responses
//! `instructions`. When the client sent its
//! own system prompt, the channel's is put before it only with `system_prompt_override`;
//! otherwise the client's stands.

use serde_json::{Value, json};

use crate::relay::wire::Wire;

/// Adds `prompt` to `body` (a request in `wire`'s format).
pub fn apply(wire: Wire, body: &mut Value, prompt: &str, override_client: bool) {
    match wire {
        // Cohere's system messages are OpenAI's (`role: system`, text content).
        Wire::OpenAi | Wire::Cohere => openai(body, prompt, override_client),
        Wire::Anthropic => anthropic(body, prompt, override_client),
        Wire::Gemini => gemini(body, prompt, override_client),
        Wire::Converse => converse(body, prompt, override_client),
        Wire::Responses => responses(body, prompt, override_client),
    }
}

fn converse(body: &mut Value, prompt: &str, override_client: bool) {
    let Value::Object(map) = body else { return };
    match map.get_mut("system").and_then(Value::as_array_mut) {
        Some(system) if override_client => system.insert(0, json!({"text": prompt})),
        Some(_) => {}
        None => {
            map.insert("system".into(), json!([{"text": prompt}]));
        }
    }
}

/// Puts `prompt` before `content` (a string, or an array of parts with `part` as the shape).
fn prepend(content: &mut Value, prompt: &str, part: Value) {
    match content {
        Value::String(text) => *text = format!("{prompt}\n{text}"),
        Value::Array(parts) => parts.insert(0, part),
        other => *other = Value::String(prompt.to_owned()),
    }
}

fn openai(body: &mut Value, prompt: &str, override_client: bool) {
    let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else {
        return;
    };
    let own = messages
        .iter_mut()
        .find(|m| m["role"] == "system" || m["role"] == "developer");
    match own {
        Some(message) if override_client => prepend(
            &mut message["content"],
            prompt,
            json!({"type": "text", "text": prompt}),
        ),
        Some(_) => {}
        None => messages.insert(0, json!({"role": "system", "content": prompt})),
    }
}

fn anthropic(body: &mut Value, prompt: &str, override_client: bool) {
    let Value::Object(map) = body else { return };
    match map.get_mut("system") {
        Some(system) if override_client => {
            prepend(system, prompt, json!({"type": "text", "text": prompt}));
        }
        Some(_) => {}
        None => {
            map.insert("system".into(), Value::String(prompt.to_owned()));
        }
    }
}

fn gemini(body: &mut Value, prompt: &str, override_client: bool) {
    let Value::Object(map) = body else { return };
    let key = if map.contains_key("system_instruction") {
        "system_instruction"
    } else {
        "systemInstruction"
    };
    match map.get_mut(key) {
        Some(instruction) if override_client => {
            let part = json!({"text": prompt});
            match instruction.get_mut("parts").and_then(Value::as_array_mut) {
                Some(parts) => parts.insert(0, part),
                None => *instruction = json!({"parts": [part]}),
            }
        }
        Some(_) => {}
        None => {
            map.insert(key.into(), json!({"parts": [{"text": prompt}]}));
        }
    }
}

fn responses(body: &mut Value, prompt: &str, override_client: bool) {
    let Value::Object(map) = body else { return };
    match map.get_mut("instructions") {
        Some(Value::String(own)) if !own.is_empty() => {
            if override_client {
                *own = format!("{prompt}\n{own}");
            }
        }
        _ => {
            map.insert("instructions".into(), Value::String(prompt.to_owned()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_adds_a_system_message_or_respects_the_clients() {
        let mut body = json!({"messages": [{"role": "user", "content": "hi"}]});
        apply(Wire::OpenAi, &mut body, "Be brief.", false);
        assert_eq!(
            body["messages"][0],
            json!({"role": "system", "content": "Be brief."})
        );
        let mut body = json!({"messages": [{"role": "system", "content": "Mine."}]});
        apply(Wire::OpenAi, &mut body, "Be brief.", false);
        assert_eq!(body["messages"][0]["content"], "Mine.");
        apply(Wire::OpenAi, &mut body, "Be brief.", true);
        assert_eq!(body["messages"][0]["content"], "Be brief.\nMine.");
        let mut body = json!({"messages": [{"role": "system", "content": [{"type": "text", "text": "Mine."}]}]});
        apply(Wire::OpenAi, &mut body, "Be brief.", true);
        assert_eq!(body["messages"][0]["content"][0]["text"], "Be brief.");
    }

    #[test]
    fn anthropic_and_gemini_use_their_system_fields() {
        let mut body = json!({"messages": []});
        apply(Wire::Anthropic, &mut body, "Be brief.", false);
        assert_eq!(body["system"], "Be brief.");
        let mut body = json!({"system": [{"type": "text", "text": "Mine."}]});
        apply(Wire::Anthropic, &mut body, "Be brief.", true);
        assert_eq!(body["system"][0]["text"], "Be brief.");
        let mut body = json!({"contents": []});
        apply(Wire::Gemini, &mut body, "Be brief.", false);
        assert_eq!(body["systemInstruction"]["parts"][0]["text"], "Be brief.");
        let mut body = json!({"system_instruction": {"parts": [{"text": "Mine."}]}});
        apply(Wire::Gemini, &mut body, "Be brief.", true);
        assert_eq!(body["system_instruction"]["parts"][0]["text"], "Be brief.");
        assert_eq!(body["system_instruction"]["parts"][1]["text"], "Mine.");
        let mut body = json!({"input": "hi"});
        apply(Wire::Responses, &mut body, "Be brief.", false);
        assert_eq!(body["instructions"], "Be brief.");
        let mut body = json!({"input": "hi", "instructions": "Mine."});
        apply(Wire::Responses, &mut body, "Be brief.", false);
        assert_eq!(body["instructions"], "Mine.");
        apply(Wire::Responses, &mut body, "Be brief.", true);
        assert_eq!(body["instructions"], "Be brief.\nMine.");
    }
}
