//! Unit tests of the Gemini conversions.

use super::*;
use serde_json::json;

/// Golden: Gemini usage, cached content inside the prompt, thinking billed as output.
#[test]
fn usage_is_normalised() {
    let u = usage_of(
        &json!({"promptTokenCount": 1000, "candidatesTokenCount": 50,
        "thoughtsTokenCount": 25, "cachedContentTokenCount": 600, "totalTokenCount": 1075}),
    );
    assert_eq!(
        u,
        Usage {
            prompt_tokens: 1000,
            completion_tokens: 75,
            cached_tokens: 600,
            reasoning_tokens: 25,
            cache_in_prompt: true,
            ..Usage::default()
        }
    );
}

#[test]
fn request_round_trip() {
    let gemini = json!({
        "systemInstruction": {"parts": [{"text": "be brief"}]},
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {"a": 1}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"ok": true}}}]}
        ],
        "generationConfig": {"maxOutputTokens": 50, "temperature": 0.5}
    });
    let hub = request_to_hub(&gemini).expect("converts");
    assert_eq!(hub["messages"][0]["content"], "be brief");
    assert_eq!(hub["messages"][2]["tool_calls"][0]["id"], "call_0");
    assert_eq!(hub["messages"][3]["tool_call_id"], "call_0");
    assert_eq!(hub["max_tokens"], 50);
    let back = request_from_hub(&hub);
    assert_eq!(back["systemInstruction"]["parts"][0]["text"], "be brief");
    assert_eq!(
        back["contents"][1]["parts"][0]["functionCall"]["args"]["a"],
        1
    );
    assert_eq!(
        back["contents"][2]["parts"][0]["functionResponse"]["name"],
        "f"
    );
    assert_eq!(back["generationConfig"]["maxOutputTokens"], 50);
}

#[test]
fn usage_bills_thoughts_as_output() {
    let u = usage_of(&json!({"promptTokenCount": 10, "candidatesTokenCount": 4,
        "thoughtsTokenCount": 6, "cachedContentTokenCount": 2}));
    assert_eq!(
        (u.prompt_tokens, u.completion_tokens, u.cached_tokens),
        (10, 10, 2)
    );
}
