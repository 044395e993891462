//! Unit tests of the adaptor lookup and its shared rules.

use super::*;

#[test]
fn transports_and_wires_come_from_the_type_table() {
    // The cloud types by their family, every other relayed type directly; a type without an
    // adaptor (Midjourney 2) or an unknown id cannot be spoken to.
    assert_eq!(name(3), "azure");
    assert_eq!(name(33), "bedrock");
    assert_eq!(name(41), "vertex");
    assert_eq!((name(16), name(26)), ("zhipu", "zhipu"));
    assert_eq!((name(39), name(46)), ("cloudflare", "qianfan_v2"));
    for (id, model) in [(16, "glm-4"), (39, "@cf/x"), (46, "ernie-4.0-8k")] {
        assert_eq!(wire(id, model), Some(Wire::OpenAi), "type {id}");
    }
    for direct in [1, 14, 17, 24, 34, 43, 45] {
        assert_eq!(name(direct), "direct", "type {direct}");
    }
    assert_eq!(wire(2, "m"), None);
    assert_eq!(wire(999, "m"), None);
    assert_eq!(wire(3, "gpt-4o"), Some(Wire::OpenAi));
    assert_eq!(wire(14, "claude"), Some(Wire::Anthropic));
    // Only OpenAI's and Azure's upstreams have the Responses API natively.
    let native: Vec<i32> = crate::channel_types::CHANNEL_TYPES
        .iter()
        .filter(|row| row.native_responses)
        .map(|row| row.id)
        .collect();
    assert_eq!(native, [1, 3]);
}

#[test]
fn segments_keep_unreserved_characters_only() {
    assert_eq!(segment("gpt-4o_mini.v1~x"), "gpt-4o_mini.v1~x");
    assert_eq!(
        segment("anthropic.claude-3-5-sonnet-20241022-v2:0"),
        "anthropic.claude-3-5-sonnet-20241022-v2%3A0"
    );
    assert_eq!(
        segment("claude-sonnet-4@20250514"),
        "claude-sonnet-4@20250514"
    );
    assert_eq!(segment("a/b?c"), "a%2Fb%3Fc");
}

#[test]
fn transports_by_type() {
    assert_eq!(name(1), "direct");
    assert_eq!(wire(3, "gpt-4o"), Some(Wire::OpenAi));
    assert_eq!(wire(41, "claude-sonnet-4@20250514"), Some(Wire::Anthropic));
    assert_eq!(wire(41, "gemini-2.5-pro"), Some(Wire::Gemini));
    assert_eq!(
        wire(33, "us.anthropic.claude-sonnet-4-20250514-v1:0"),
        Some(Wire::Anthropic)
    );
    assert_eq!(wire(33, "amazon.nova-pro-v1:0"), Some(Wire::Converse));
}

#[test]
fn media_is_inlined_where_the_upstream_takes_bytes_only() {
    // Gemini (24) and Vertex's Gemini, Bedrock's Converse and every cloud Claude take bytes;
    // Anthropic's own API, OpenAI's and Azure's fetch URLs.
    assert!(bytes_only(24, Wire::Gemini));
    assert!(bytes_only(41, Wire::Gemini));
    assert!(bytes_only(33, Wire::Converse));
    assert!(bytes_only(33, Wire::Anthropic));
    assert!(bytes_only(41, Wire::Anthropic));
    assert!(!bytes_only(14, Wire::Anthropic));
    assert!(!bytes_only(1, Wire::OpenAi));
    assert!(!bytes_only(3, Wire::OpenAi));
    assert!(!bytes_only(1, Wire::Responses));
}

#[test]
fn anthropic_headers_go_as_headers_only_to_anthropic_itself() {
    let mut client = HeaderMap::new();
    client.insert("anthropic-version", HeaderValue::from_static("2023-01-01"));
    client.insert("anthropic-beta", HeaderValue::from_static("b1"));
    let names = |h: Vec<(&'static str, HeaderValue)>| {
        h.into_iter()
            .map(|(n, v)| format!("{n}={}", v.to_str().unwrap_or_default()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(anthropic_headers(14, Some(&client))),
        ["anthropic-version=2023-01-01", "anthropic-beta=b1"]
    );
    assert_eq!(
        names(anthropic_headers(14, None)),
        [format!("anthropic-version={}", anthropic::DEFAULT_VERSION)]
    );
    assert_eq!(
        names(anthropic_headers(33, Some(&client))),
        ["anthropic-beta=b1"]
    );
    assert!(anthropic_headers(41, None).is_empty());
}

#[tokio::test]
async fn every_type_that_relays_builds_its_channel_test() {
    // One request builder for the relay and the console: a type the relay speaks (a row with
    // capabilities, a test request and a wire) gets a channel test request; the others are
    // refused as unsupported, never a test that passes for a channel that cannot relay.
    use crate::channel_types::{CHANNEL_TYPES, Caps, Family, TestRequest};
    let http = HttpClients::new().expect("clients");
    let mut built = 0;
    for row in CHANNEL_TYPES {
        let mut channel = crate::console::service::channel::input::new_channel(0);
        channel.channel_type = row.id;
        channel.base_url = "http://127.0.0.1:9".into();
        // Bedrock takes AWS credentials; Vertex's non-JSON key is an express-mode API key (no
        // token exchange); every other type the key line as is.
        let (key, model) = match row.family {
            Some(Family::Bedrock) => ("AKIDEXAMPLE|secret|us-east-1", "amazon.nova-pro-v1:0"),
            Some(Family::Vertex) => ("express-api-key", "gemini-2.5-pro"),
            // Zhipu's key is id.secret; Workers AI needs the account id (`other`).
            Some(Family::Zhipu) => ("test-id.test-secret", "glm-4"),
            Some(Family::Cloudflare) => {
                channel.other = "test-account".into();
                ("test-key", "test-model")
            }
            // Hunyuan signs with `AppId|SecretId|SecretKey`.
            Some(Family::Hunyuan) => ("1300000000|AKIDtest|secret", "hunyuan-lite"),
            // Spark signs its URL with `APPID|APISecret|APIKey`.
            Some(Family::Spark) => ("app|secret|key", "SparkDesk-v3.5"),
            // Baidu Qianfan v1 exchanges its key for a token first, over the network: its
            // channel test is tested through HTTP against the mock (tests/relay_baidu.rs).
            Some(Family::Baidu) => continue,
            _ => ("test-key", "test-model"),
        };
        let result = test_request(&http, &channel, key, model, row.test).await;
        let relays = row.caps != Caps::NONE
            && row.test != TestRequest::None
            && wire(row.id, model).is_some();
        if relays {
            assert!(
                result.is_ok(),
                "type {} ({}): {:?}",
                row.id,
                row.name,
                result.err()
            );
            built += 1;
        } else if row.test == TestRequest::None || wire(row.id, model).is_none() {
            assert_eq!(
                result.err(),
                Some(TestFailure::Unsupported),
                "type {} ({})",
                row.id,
                row.name
            );
        }
    }
    assert!(built >= 10, "{built} types built their test");
}
