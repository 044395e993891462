//! The component arithmetic (checked i64, one rounding) and what admission detects.

use axum::http::{HeaderMap, HeaderValue};
use serde_json::json;
use tollgate_actors::options::component_prices::{ComponentTable, Tool};
use tollgate_actors::options::pricing::ModelPricing;

use super::*;

const RATIO: ModelPricing = ModelPricing::Ratio {
    model: 1.25,
    completion: 4.0,
    cache: 0.5,
};

fn table() -> ComponentTable {
    ComponentTable::new(
        r#"{"audio-model": 16}"#,
        r#"{"audio-model": 2}"#,
        r#"{"anthropic:web_search": 0.01, "gemini:google_search": 0.035}"#,
        r#"{"long-model":[{"above_prompt_tokens":200000,"model_ratio":2.5,"completion_ratio":6}]}"#,
    )
}

fn components(model: &str) -> Components {
    Components {
        prices: table().prices(model),
        per_request: [0; 3],
    }
}

fn usage(prompt: i64, completion: i64) -> Usage {
    Usage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        ..Usage::default()
    }
}

#[test]
fn audio_tokens_are_priced_at_the_audio_ratios() {
    let u = Usage {
        audio_prompt_tokens: 600,
        audio_completion_tokens: 200,
        ..usage(1000, 500)
    };
    // text (400 + 300 × 4) + audio (600 × 16 + 200 × 16 × 2) = 17,600, × 1.25.
    assert_eq!(
        charge(RATIO, &components("audio-model"), 1.0, 500_000, u),
        Ok(22_000)
    );
    // Without audio prices the same usage is text: (1000 + 500 × 4) × 1.25.
    assert_eq!(
        charge(RATIO, &components("text-model"), 1.0, 500_000, u),
        Ok(3_750)
    );
}

#[test]
fn tool_calls_add_their_price_in_units() {
    let mut u = usage(1000, 100);
    u.tool_calls[Tool::AnthropicWebSearch.index()] = 3;
    let base = charge(RATIO, &components("m"), 1.0, 500_000, usage(1000, 100));
    assert_eq!(base, Ok(1_750));
    // 3 × $0.01 × 500,000 = 15,000 units.
    assert_eq!(charge(RATIO, &components("m"), 1.0, 500_000, u), Ok(16_750));
    // At group 0.8 the sum is scaled and rounded once: (1,750 + 15,000) × 0.8.
    assert_eq!(charge(RATIO, &components("m"), 0.8, 500_000, u), Ok(13_400));
    // A search on a request that reported no tokens still costs its call.
    let mut only = usage(0, 0);
    only.tool_calls[Tool::GeminiGoogleSearch.index()] = 1;
    assert_eq!(
        charge(RATIO, &components("m"), 1.0, 500_000, only),
        Ok(17_500)
    );
}

#[test]
fn a_tool_without_its_price_costs_the_dearest_configured() {
    let mut u = usage(0, 0);
    u.tool_calls[Tool::OpenAiWebSearch.index()] = 2;
    // openai:web_search has no price here: the dearest (gemini, $0.035) applies.
    assert_eq!(charge(RATIO, &components("m"), 1.0, 500_000, u), Ok(35_000));
}

#[test]
fn per_request_calls_are_billed_when_the_answer_reports_none() {
    let mut c = components("m");
    c.per_request[Tool::AnthropicWebSearch.index()] = 1;
    assert_eq!(charge(RATIO, &c, 1.0, 500_000, usage(1000, 100)), Ok(6_750));
    let mut u = usage(1000, 100);
    u.tool_calls[Tool::AnthropicWebSearch.index()] = 2;
    assert_eq!(
        charge(RATIO, &c, 1.0, 500_000, u),
        Ok(11_750),
        "reported calls above the floor count"
    );
}

#[test]
fn the_tier_above_the_reported_prompt_sets_the_ratios() {
    let c = components("long-model");
    // 200,000 is not above the boundary: (200,000 + 1,000 × 4) × 1.25.
    assert_eq!(
        charge(RATIO, &c, 1.0, 500_000, usage(200_000, 1_000)),
        Ok(255_000)
    );
    // 200,001 is: (200,001 + 1,000 × 6) × 2.5, rounded once.
    assert_eq!(
        charge(RATIO, &c, 1.0, 500_000, usage(200_001, 1_000)),
        Ok(515_003)
    );
    assert_eq!(
        effective(RATIO, &c, 300_000),
        ModelPricing::Ratio {
            model: 2.5,
            completion: 6.0,
            cache: 0.5
        },
        "the cache ratio stays"
    );
}

#[test]
fn arithmetic_is_checked() {
    let c = components("audio-model");
    let huge = Usage {
        audio_prompt_tokens: i64::MAX,
        ..usage(i64::MAX, i64::MAX)
    };
    assert_eq!(
        charge(RATIO, &c, 1.0, 500_000, huge),
        Err(PriceError::Overflow)
    );
    let negative = Usage {
        audio_prompt_tokens: -1,
        ..usage(10, 10)
    };
    assert_eq!(
        charge(RATIO, &c, 1.0, 500_000, negative),
        Err(PriceError::NegativeTokens)
    );
    let mut calls = usage(0, 0);
    calls.tool_calls[Tool::AnthropicWebSearch.index()] = i64::MAX;
    assert_eq!(
        charge(RATIO, &c, 1.0, 500_000, calls),
        Err(PriceError::Overflow)
    );
    assert_eq!(
        charge(RATIO, &c, f64::NAN, 500_000, usage(1, 1)),
        Err(PriceError::InvalidRatio)
    );
    // Audio counts above the totals are capped at them.
    let over = Usage {
        audio_prompt_tokens: 50,
        audio_completion_tokens: 50,
        ..usage(10, 10)
    };
    assert_eq!(
        charge(RATIO, &c, 1.0, 500_000, over),
        Ok(((10.0 * 16.0 + 10.0 * 32.0) * 1.25_f64).round() as i64)
    );
    // A priced request that used a token costs at least 1 unit.
    let tiny = ModelPricing::Ratio {
        model: 0.0001,
        completion: 1.0,
        cache: 1.0,
    };
    assert_eq!(charge(tiny, &c, 1.0, 500_000, usage(1, 0)), Ok(1));
}

#[test]
fn per_call_prices_ignore_components() {
    let per_call = ModelPricing::PerCall { price: 0.04 };
    let mut u = usage(10, 10);
    u.tool_calls[Tool::AnthropicWebSearch.index()] = 5;
    assert_eq!(
        charge(per_call, &components("m"), 1.0, 500_000, u),
        Ok(20_000)
    );
}

fn needs(body: serde_json::Value) -> Needs {
    Needs::of_body(&body, &HeaderMap::new())
}

#[test]
fn needs_are_read_from_every_client_format() {
    let chat_audio = needs(json!({"messages": [{"role": "user", "content": [
        {"type": "text", "text": "hi"},
        {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}]}]}));
    assert!(chat_audio.audio_in && !chat_audio.audio_out);
    assert!(needs(json!({"modalities": ["text", "audio"], "messages": []})).audio_out);
    let gemini = needs(json!({"contents": [{"parts": [
        {"inlineData": {"mimeType": "audio/mp3", "data": "AAAA"}}]}],
        "generationConfig": {"responseModalities": ["AUDIO"]}}));
    assert!(gemini.audio_in && gemini.audio_out);
    let image = needs(json!({"contents": [{"parts": [
        {"inline_data": {"mime_type": "image/png", "data": "AAAA"}}]}]}));
    assert_eq!(image, Needs::default());
    let anthropic = needs(json!({"tools": [
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
        {"name": "get_weather", "input_schema": {}}]}));
    assert_eq!(anthropic.tools, [false, true, false]);
    let responses = needs(json!({"tools": [{"type": "web_search_preview"}]}));
    assert_eq!(responses.tools, [true, false, false]);
    let gemini_search = needs(json!({"tools": [{"google_search": {}}]}));
    assert_eq!(gemini_search.tools, [false, false, true]);
    let chat_search = needs(json!({"web_search_options": {}}));
    assert_eq!(chat_search.per_request, [true, false, false]);
    let mut headers = HeaderMap::new();
    headers.insert(
        "anthropic-beta",
        HeaderValue::from_static("interleaved-thinking-2025-05-14, context-1m-2025-08-07"),
    );
    assert!(Needs::of_body(&json!({}), &headers).long_context);
}

fn refused(needs: Needs, model: &str, estimate: i64) -> String {
    match resolve(needs, model, RATIO, estimate, &table()) {
        Err(RelayError::BadRequest(message)) => message,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_component_without_a_price_is_refused_naming_it() {
    let audio_in = Needs {
        audio_in: true,
        ..Needs::default()
    };
    assert!(refused(audio_in, "text-model", 10).contains("audio input (AudioRatio)"));
    assert!(resolve(audio_in, "audio-model", RATIO, 10, &table()).is_ok());
    let mut tool = Needs::default();
    tool.tools[Tool::OpenAiWebSearch.index()] = true;
    assert!(refused(tool, "m", 10).contains("openai:web_search"));
    let long = Needs {
        long_context: true,
        ..Needs::default()
    };
    assert!(refused(long, "claude-x", 10).contains("context-1m"));
    assert!(resolve(long, "long-model", RATIO, 10, &table()).is_ok());
    let untiered = ComponentTable::new("{}", "{}", "{}", r#"{"gemini-2.5-pro": []}"#);
    let message = match resolve(
        Needs::default(),
        "gemini-2.5-pro",
        RATIO,
        250_000,
        &untiered,
    ) {
        Err(RelayError::BadRequest(m)) => m,
        other => panic!("expected a refusal, got {other:?}"),
    };
    assert!(
        message.contains("200000") && message.contains("ModelPriceTiers"),
        "{message}"
    );
    let per_call = ModelPricing::PerCall { price: 0.1 };
    assert!(resolve(audio_in, "text-model", per_call, 10, &table()).is_ok());
}
