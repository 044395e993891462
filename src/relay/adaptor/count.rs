//! Token count requests (see `crate::relay::routes::count`): what each transport sends when an
//! Anthropic client's `POST /v1/messages/count_tokens` or a Gemini client's `:countTokens` is
//! forwarded to a channel, and how its answer becomes the client's.
//! - Anthropic clients: Claude channels (`/v1/messages/count_tokens`, answer as is); Claude on
//!   Vertex AI (the `count-tokens` model's `rawPredict`, the model in the body); Bedrock
//!   (`CountTokens`, with the InvokeModel body for Claude or the Converse messages for other
//!   models, `{"inputTokens": N}` answered as `{"input_tokens": N}`).
//! - Gemini clients: Gemini channels (`:countTokens`, answer as is); Gemini on Vertex AI
//!   (`:countTokens` under the project, or express mode's, with the request's `contents`,
//!   `systemInstruction` and `tools`).
//!
//! The direct transport's counts are [`direct`]; Vertex AI's and Bedrock's are in their files.

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue};
use serde_json::Value;
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use super::{Credential, gemini_method_url};
use crate::relay::wire::Wire;

/// How an upstream's count becomes the client's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reshape {
    /// The upstream speaks the client's format: its answer as it is.
    AsIs,
    /// `{"input_tokens": N}` (Anthropic's shape) from the count field.
    InputTokens,
    /// Gemini's `CountTokensResponse` fields of a Vertex answer (`totalTokens`,
    /// `cachedContentTokenCount`, `promptTokensDetails`, `cacheTokensDetails`).
    Gemini,
}

/// One count request to an upstream.
pub struct CountCall {
    /// Where.
    pub url: String,
    /// The JSON body.
    pub body: Bytes,
    /// Headers besides the transport's auth.
    pub headers: Vec<(&'static str, HeaderValue)>,
    /// The answer's count field.
    pub field: &'static str,
    /// How the answer becomes the client's.
    pub reshape: Reshape,
    /// Whether a 400 saying the request is invalid is the client's fault (Bedrock's are never:
    /// its `ValidationException` also means "this model cannot count").
    pub client_faults: bool,
}

impl CountCall {
    pub(super) fn new(
        url: String,
        body: Bytes,
        field: &'static str,
        reshape: Reshape,
    ) -> CountCall {
        CountCall {
            url,
            body,
            headers: Vec::new(),
            field,
            reshape,
            client_faults: true,
        }
    }
}

/// A client's count request.
pub enum Asked<'a> {
    /// An Anthropic client's `count_tokens`.
    Anthropic {
        /// The model it names.
        model: &'a str,
        /// Its body as sent.
        body: &'a Bytes,
        /// Its body, parsed.
        parsed: &'a Value,
        /// Its messages as a hub (OpenAI chat) request.
        hub: &'a Value,
        /// Its headers (`anthropic-version`, `anthropic-beta`).
        headers: &'a HeaderMap,
    },
    /// A Gemini client's `:countTokens`.
    Gemini {
        /// The model of the route.
        model: &'a str,
        /// Its body as sent.
        body: &'a Bytes,
        /// Its body, parsed.
        parsed: &'a Value,
    },
}

/// An Anthropic body with `model` = `name` (the body as sent when it already names it).
pub(super) fn with_model(body: &Bytes, parsed: &Value, model: &str, name: &str) -> Bytes {
    if name == model {
        body.clone()
    } else {
        let mut value = parsed.clone();
        value["model"] = Value::String(name.to_owned());
        Bytes::from(value.to_string())
    }
}

/// The direct transport's counts: Anthropic's `/v1/messages/count_tokens`, the Gemini API's
/// `:countTokens`.
pub fn direct(
    channel: &RoutedChannel,
    wire: Wire,
    upstream_model: &str,
    asked: &Asked<'_>,
) -> Option<CountCall> {
    let c = &channel.channel;
    match (asked, wire) {
        (
            Asked::Anthropic {
                model,
                body,
                parsed,
                headers,
                ..
            },
            Wire::Anthropic,
        ) => {
            let base = crate::channel_types::effective_base_url(c.channel_type, &c.base_url);
            let mut call = CountCall::new(
                format!("{base}/v1/messages/count_tokens"),
                with_model(body, parsed, model, upstream_model),
                "input_tokens",
                Reshape::AsIs,
            );
            call.headers = super::anthropic_headers(c.channel_type, Some(headers));
            Some(call)
        }
        (
            Asked::Gemini {
                model,
                body,
                parsed,
            },
            Wire::Gemini,
        ) => {
            let body = match parsed.get("generateContentRequest") {
                Some(Value::Object(_)) if upstream_model != *model => {
                    let mut value = (*parsed).clone();
                    value["generateContentRequest"]["model"] =
                        Value::String(format!("models/{upstream_model}"));
                    Bytes::from(value.to_string())
                }
                _ => (*body).clone(),
            };
            Some(CountCall::new(
                gemini_method_url(channel, upstream_model, "countTokens"),
                body,
                "totalTokens",
                Reshape::AsIs,
            ))
        }
        _ => None,
    }
}

/// The count request of `asked` for `channel` (taking `wire` for `upstream_model`); `None`: the
/// channel cannot count for this client.
pub fn call(
    channel: &RoutedChannel,
    wire: Wire,
    credential: &Credential<'_>,
    upstream_model: &str,
    asked: &Asked<'_>,
) -> Option<CountCall> {
    super::of(channel.channel.channel_type).count(channel, wire, credential, upstream_model, asked)
}
