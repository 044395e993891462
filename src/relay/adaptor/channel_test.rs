//! The console's channel test request, built by the channel's adaptor exactly as the relay
//! builds its requests (URL, authentication, body fixes, signing), so a type that relays passes
//! "test channel" and one that does not is refused.

use axum::body::Bytes;
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use super::{anthropic_headers, authorize, of};
use crate::channel_types::{TestRequest, effective_base_url};
use crate::relay::wire::Wire;
use crate::upstream::HttpClients;

/// Why the channel test's request could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestFailure {
    /// The type cannot be tested (the relay does not speak it, or not this test).
    Unsupported,
    /// The channel has no base URL and its type no default.
    NoBaseUrl,
    /// The key could not be made usable, or the request not built (key-free).
    Failed(String),
}

/// The channel test's request: for `test` = chat a one-token, non-streamed chat for `model` in
/// the body format the type takes for it, for embeddings an OpenAI embeddings request of
/// "hello world"; built and sent like the relay's (the same URLs, authentication, body fixes
/// and signing). `model` is the upstream model (the channel test maps it). The error never
/// holds the key.
pub async fn test_request(
    http: &HttpClients,
    channel: &tollgate_storage::channels::Channel,
    key: &str,
    model: &str,
    test: TestRequest,
) -> Result<reqwest::RequestBuilder, TestFailure> {
    let adaptor = of(channel.channel_type);
    let channel_type = channel.channel_type;
    let wire = adaptor
        .wire(channel_type, model)
        .ok_or(TestFailure::Unsupported)?;
    if adaptor.needs_base_url() && effective_base_url(channel_type, &channel.base_url).is_empty() {
        return Err(TestFailure::NoBaseUrl);
    }
    let routed = RoutedChannel::new(std::sync::Arc::new(channel.clone()), Default::default());
    let channel = &routed;
    let credential = authorize(http, channel, key)
        .await
        .map_err(|failure| TestFailure::Failed(failure.message))?;
    let hi = serde_json::json!([{"role": "user", "content": "hi"}]);
    let (url, mut body) = match (test, wire) {
        (TestRequest::Chat, _) => {
            let url = adaptor
                .generate_url(channel, &credential, wire, model, false)
                .ok_or(TestFailure::Unsupported)?;
            let body = match wire {
                Wire::OpenAi | Wire::Cohere | Wire::Anthropic => {
                    serde_json::json!({"model": model, "messages": hi, "max_tokens": 1})
                }
                Wire::Responses => {
                    serde_json::json!({"model": model, "input": "hi", "max_output_tokens": 16})
                }
                Wire::Gemini => {
                    serde_json::json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                    "generationConfig": {"maxOutputTokens": 1}})
                }
                Wire::Converse => {
                    serde_json::json!({"messages": [{"role": "user", "content": [{"text": "hi"}]}],
                    "inferenceConfig": {"maxTokens": 1}})
                }
            };
            (url, body)
        }
        (TestRequest::Embeddings, Wire::OpenAi) => {
            let base = effective_base_url(channel_type, &channel.channel.base_url);
            let url = adaptor
                .openai_url(channel, &base, "/v1/embeddings", model)
                .ok_or(TestFailure::Unsupported)?;
            (
                url,
                serde_json::json!({"model": model, "input": "hello world"}),
            )
        }
        _ => return Err(TestFailure::Unsupported),
    };
    adaptor.fix_body(wire, &mut body, false);
    let headers = if wire == Wire::Anthropic {
        anthropic_headers(channel_type, None)
    } else {
        Vec::new()
    };
    adaptor
        .request(
            http,
            channel,
            wire,
            url,
            &credential,
            &headers,
            Bytes::from(body.to_string()),
        )
        .map_err(|e| TestFailure::Failed(e.to_string()))
}
