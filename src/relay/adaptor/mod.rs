//! Transports: how a request reaches a channel type's upstream — its URL, its authentication (a
//! key header, a Google OAuth2 access token, an AWS SigV4 signature) and the framing of its
//! stream — apart from the body, whose format ([`Wire`]) the converters of [`super::wire`]
//! handle. Azure speaks OpenAI's bodies, Vertex AI Gemini's or (for Claude) Anthropic's, and
//! Bedrock Anthropic's (Claude through InvokeModel) or Converse's.
//!
//! A channel's base URL, when set, replaces the provider's default endpoint for every type (the
//! Azure resource, the Vertex regional host, the Bedrock runtime host): operators' proxies and
//! private endpoints, and the tests' mocks on 127.0.0.1.
//!
//! The interface: [`wire`] (which body format a channel takes for a model), [`authorize`] (the
//! key made usable: a Google token fetched or cached, AWS credentials parsed), [`openai_url`] /
//! [`generate_url`] (where), [`post`] / [`request`] (the authenticated request, signed over its
//! body), [`fix_body`] (what a transport changes in a body: Anthropic's `anthropic_version` in
//! the body instead of `model` on Vertex and Bedrock) and [`framing`] (how its stream is cut into
//! events). Nothing here imports the route handlers.

pub mod azure;
pub mod bedrock;
pub mod cloud_embed;
pub mod eventstream;
pub mod system_prompt;
pub mod vertex;

use axum::body::Bytes;
use axum::http::header;
use serde_json::Value;
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use super::wire::Wire;
use crate::channel_types::{self, Family, effective_base_url};
use crate::error::RelayError;
use crate::state::AppState;
use crate::upstream::HttpClients;

/// How Tollgate reaches a channel type's upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// The provider's own API under the base URL (OpenAI-compatible types, Claude, Gemini), with
    /// the key in the wire's header.
    Direct,
    /// Azure OpenAI: deployment URLs (or the v1 style), the `api-key` header.
    Azure,
    /// Google Vertex AI: regional publisher-model URLs, an OAuth2 token from a service account.
    Vertex,
    /// AWS Bedrock runtime: model URLs, SigV4 (or a Bedrock API key as a bearer token).
    Bedrock,
}

impl Transport {
    /// The transport of a channel type: its adaptor family in the channel type table (an
    /// unknown type, or one without an adaptor, is `Direct`; [`wire`] says it cannot be spoken).
    pub fn of(channel_type: i32) -> Transport {
        match crate::channel_types::family(channel_type) {
            Some(Family::Azure) => Transport::Azure,
            Some(Family::Bedrock) => Transport::Bedrock,
            Some(Family::Vertex) => Transport::Vertex,
            Some(Family::OpenAi | Family::Anthropic | Family::Gemini | Family::Cohere) | None => {
                Transport::Direct
            }
        }
    }
}

/// The body format a channel of `channel_type` takes for `model` (the upstream model name, after
/// the channel's mapping), `None` when the relay cannot speak to the type.
pub fn wire(channel_type: i32, model: &str) -> Option<Wire> {
    match Transport::of(channel_type) {
        Transport::Direct => Wire::of_channel(channel_type),
        Transport::Azure => Some(Wire::OpenAi),
        Transport::Vertex => Some(vertex::wire(model)),
        Transport::Bedrock => Some(bedrock::wire(model)),
    }
}

/// A channel key made usable for one request. Holds secrets: it has no `Debug`.
pub enum Credential<'a> {
    /// The key line, sent as the transport's header.
    Key(&'a str),
    /// A Vertex AI access token, with the project of the service account it was made for.
    Google {
        /// `Authorization: Bearer` token.
        token: std::sync::Arc<str>,
        /// The key's `project_id`.
        project: String,
    },
    /// AWS credentials (SigV4) or a Bedrock API key, with the region.
    Aws(bedrock::AwsKey),
}

impl<'a> Credential<'a> {
    /// The key line as is (transports that send the key itself).
    pub fn key(line: &'a str) -> Credential<'a> {
        Credential::Key(line)
    }

    fn text(&self) -> &str {
        match self {
            Credential::Key(line) => line,
            Credential::Google { token, .. } => token,
            Credential::Aws(_) => "",
        }
    }
}

/// Why a channel key could not be made usable. The message never holds the key or a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthFailure {
    /// The status the relay treats it as: the token endpoint's, or 401 for a malformed key.
    /// `None`: the token endpoint did not answer.
    pub status: Option<u16>,
    /// What went wrong.
    pub message: String,
}

/// Makes `key` (a line of the channel's key field) usable for `channel`: the Vertex access token
/// from the cache or the token endpoint (one exchange in flight per key, shared by concurrent
/// requests), the AWS credentials parsed; the line itself for every other type.
pub async fn authorize<'a>(
    http: &HttpClients,
    channel: &RoutedChannel,
    key: &'a str,
) -> Result<Credential<'a>, AuthFailure> {
    match Transport::of(channel.channel.channel_type) {
        Transport::Direct | Transport::Azure => Ok(Credential::Key(key)),
        Transport::Vertex => vertex::authorize(http, channel, key).await,
        Transport::Bedrock => bedrock::AwsKey::parse(key)
            .map(Credential::Aws)
            .map_err(|message| AuthFailure {
                status: Some(401),
                message,
            }),
    }
}

/// The URL of OpenAI route `path` (`/v1/chat/completions`, `/v1/embeddings`, …) on a channel
/// speaking OpenAI's bodies, for `model` (an Azure deployment); `None` when the type does not
/// serve the route.
pub fn openai_url(channel: &RoutedChannel, path: &str, model: &str) -> Option<String> {
    let c = &channel.channel;
    let base = effective_base_url(c.channel_type, &c.base_url);
    match Transport::of(c.channel_type) {
        Transport::Direct => Some(channel_types::openai_url(c.channel_type, &base, path)),
        Transport::Azure => azure::url(&base, &c.other, path, model),
        Transport::Vertex | Transport::Bedrock => None,
    }
}

/// The URL of a generation (chat) in body format `wire` for `model` on `channel`, whole or
/// streamed; `None` when the type does not take that format.
pub fn generate_url(
    channel: &RoutedChannel,
    credential: &Credential<'_>,
    wire: Wire,
    model: &str,
    stream: bool,
) -> Option<String> {
    let c = &channel.channel;
    match Transport::of(c.channel_type) {
        Transport::Vertex => vertex::url(channel, credential, wire, model, stream),
        Transport::Bedrock => bedrock::url(channel, credential, wire, model, stream),
        Transport::Azure => {
            let path = if wire == Wire::Responses {
                "/v1/responses"
            } else {
                "/v1/chat/completions"
            };
            openai_url(channel, path, model)
        }
        Transport::Direct => {
            let base = effective_base_url(c.channel_type, &c.base_url);
            match wire {
                Wire::OpenAi => Some(channel_types::openai_url(
                    c.channel_type,
                    &base,
                    "/v1/chat/completions",
                )),
                Wire::Anthropic => Some(format!("{base}/v1/messages")),
                Wire::Cohere => Some(format!("{base}/v2/chat")),
                Wire::Responses => Some(channel_types::openai_url(
                    c.channel_type,
                    &base,
                    "/v1/responses",
                )),
                Wire::Gemini => {
                    let version = Some(c.other.trim())
                        .filter(|v| !v.is_empty() && !v.contains('/'))
                        .unwrap_or("v1beta");
                    Some(if stream {
                        format!("{base}/{version}/models/{model}:streamGenerateContent?alt=sse")
                    } else {
                        format!("{base}/{version}/models/{model}:generateContent")
                    })
                }
                Wire::Converse => None,
            }
        }
    }
}

/// What a transport changes in a body of format `wire` before it is sent (Vertex and Bedrock
/// take Anthropic's body with `anthropic_version` in it and the model in the URL); `false` when
/// the body is sent as it is.
pub fn fix_body(channel_type: i32, wire: Wire, body: &mut Value, stream: bool) -> bool {
    match (Transport::of(channel_type), wire) {
        (Transport::Vertex, Wire::Anthropic) => {
            vertex::fix_claude_body(body, stream);
            true
        }
        (Transport::Bedrock, Wire::Anthropic) => {
            bedrock::fix_claude_body(body);
            true
        }
        _ => false,
    }
}

/// Whether [`fix_body`] changes bodies of format `wire` on `channel_type`.
pub fn changes_body(channel_type: i32, wire: Wire) -> bool {
    matches!(
        (Transport::of(channel_type), wire),
        (Transport::Vertex | Transport::Bedrock, Wire::Anthropic)
    )
}

/// An authenticated upstream POST for `channel` (its proxy, the credential in the transport's
/// header), without a body. Signed transports (Bedrock with AWS credentials) need the body:
/// use [`request`].
pub fn post(
    state: &AppState,
    channel: &RoutedChannel,
    wire: Wire,
    url: String,
    key: &Credential<'_>,
) -> Result<reqwest::RequestBuilder, RelayError> {
    post_with(&state.http, channel, wire, url, key)
}

/// [`post`] with the outbound clients given.
fn post_with(
    http: &HttpClients,
    channel: &RoutedChannel,
    wire: Wire,
    url: String,
    key: &Credential<'_>,
) -> Result<reqwest::RequestBuilder, RelayError> {
    let c = &channel.channel;
    let client = http.for_proxy(&c.proxy).map_err(RelayError::Unreachable)?;
    let url = http.url(&url).map_err(RelayError::Unreachable)?;
    let req = client.post(url);
    Ok(match (Transport::of(c.channel_type), key) {
        (Transport::Azure, key) => req.header("api-key", key.text()),
        (_, Credential::Google { token, .. }) => req.bearer_auth(token),
        (_, Credential::Aws(aws)) => match aws.bearer() {
            Some(api_key) => req.bearer_auth(api_key),
            None => {
                return Err(RelayError::Internal(
                    "an AWS-signed request needs its body".into(),
                ));
            }
        },
        (_, Credential::Key(key)) => match wire {
            Wire::OpenAi | Wire::Converse | Wire::Responses => {
                let req = req.bearer_auth(key);
                if c.openai_organization.is_empty() {
                    req
                } else {
                    req.header("OpenAI-Organization", &c.openai_organization)
                }
            }
            Wire::Anthropic => req.header("x-api-key", *key),
            Wire::Gemini => req.header("x-goog-api-key", *key),
            Wire::Cohere => req.bearer_auth(key),
        },
    })
}

/// An authenticated upstream POST of a JSON `body` (signed over it where the transport signs).
/// `headers` are added before signing.
pub fn request(
    http: &HttpClients,
    channel: &RoutedChannel,
    wire: Wire,
    url: String,
    key: &Credential<'_>,
    headers: &[(&'static str, axum::http::HeaderValue)],
    body: Bytes,
) -> Result<reqwest::RequestBuilder, RelayError> {
    if let Credential::Aws(aws) = key
        && aws.bearer().is_none()
    {
        return bedrock::signed(http, channel, aws, &url, body);
    }
    let mut req = post_with(http, channel, wire, url, key)?
        .header(header::CONTENT_TYPE, "application/json")
        .body(body);
    for (name, value) in headers {
        req = req.header(*name, value);
    }
    Ok(req)
}

/// The channel test's request for a channel of a cloud transport (Azure, Vertex AI, Bedrock): a
/// one-token, non-streamed chat for `model` in the body format the type takes for it, sent like
/// the relay sends it. `None` for the other types (the channel test builds theirs). The error
/// never holds the key.
pub async fn test_request(
    http: &HttpClients,
    channel: &tollgate_storage::channels::Channel,
    key: &str,
    model: &str,
) -> Option<Result<reqwest::RequestBuilder, String>> {
    let transport = Transport::of(channel.channel_type);
    if transport == Transport::Direct {
        return None;
    }
    let routed = RoutedChannel::new(std::sync::Arc::new(channel.clone()), Default::default());
    Some(test_request_of(http, &routed, key, model).await)
}

async fn test_request_of(
    http: &HttpClients,
    channel: &RoutedChannel,
    key: &str,
    model: &str,
) -> Result<reqwest::RequestBuilder, String> {
    let channel_type = channel.channel.channel_type;
    // The model as the relay would send it (an Azure deployment, a Bedrock model id).
    let model = channel.json.mapped_model(model).to_owned();
    let model = model.as_str();
    let wire = wire(channel_type, model).ok_or("the relay cannot speak to this channel type")?;
    let credential = authorize(http, channel, key)
        .await
        .map_err(|failure| failure.message)?;
    let url = generate_url(channel, &credential, wire, model, false)
        .ok_or("the channel type does not serve chat")?;
    let hi = serde_json::json!([{"role": "user", "content": "hi"}]);
    let mut body = match wire {
        Wire::OpenAi | Wire::Cohere => {
            serde_json::json!({"model": model, "messages": hi, "max_tokens": 1})
        }
        Wire::Responses => {
            serde_json::json!({"model": model, "input": "hi", "max_output_tokens": 16})
        }
        Wire::Anthropic => serde_json::json!({"model": model, "messages": hi, "max_tokens": 1}),
        Wire::Gemini => {
            serde_json::json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "generationConfig": {"maxOutputTokens": 1}})
        }
        Wire::Converse => {
            serde_json::json!({"messages": [{"role": "user", "content": [{"text": "hi"}]}],
            "inferenceConfig": {"maxTokens": 1}})
        }
    };
    fix_body(channel_type, wire, &mut body, false);
    request(
        http,
        channel,
        wire,
        url,
        &credential,
        &[],
        Bytes::from(body.to_string()),
    )
    .map_err(|e| e.to_string())
}

/// The status an upstream error counts as for the channel's health: the answer's own, except
/// where a provider refuses a credential with another status (AWS answers an unknown access key
/// or a wrong secret with 403 `UnrecognizedClientException` / `InvalidSignatureException`, which
/// condemn the key as a 401 does).
pub fn health_status(channel_type: i32, status: u16, headers: &reqwest::header::HeaderMap) -> u16 {
    if Transport::of(channel_type) == Transport::Bedrock && status == 403 {
        let kind = headers
            .get("x-amzn-errortype")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let kind = kind.split(':').next().unwrap_or_default();
        if matches!(
            kind,
            "UnrecognizedClientException" | "InvalidSignatureException"
        ) {
            return 401;
        }
    }
    status
}

/// How an upstream's stream is cut into events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// Server-sent events (read as they come).
    Sse,
    /// AWS event stream (`application/vnd.amazon.eventstream`), turned into server-sent events
    /// first ([`eventstream`]).
    AwsEventStream,
}

/// The bytes of an upstream's streamed answer as server-sent events, whatever its framing.
pub fn chunks(
    resp: reqwest::Response,
    framing: Framing,
) -> futures_util::stream::BoxStream<'static, Result<Bytes, String>> {
    use futures_util::StreamExt;
    match framing {
        Framing::Sse => resp
            .bytes_stream()
            .map(|read| read.map_err(|e| e.to_string()))
            .boxed(),
        Framing::AwsEventStream => eventstream::to_sse(resp.bytes_stream()).boxed(),
    }
}

/// The stream framing of `channel_type`.
pub fn framing(channel_type: i32) -> Framing {
    match Transport::of(channel_type) {
        Transport::Bedrock => Framing::AwsEventStream,
        _ => Framing::Sse,
    }
}

/// Percent-encodes one URL path segment (everything but RFC 3986's unreserved characters and
/// `@`, which Vertex model versions use): Bedrock model ids hold `:` and ARNs `/`.
pub fn segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'@') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transports_and_wires_come_from_the_type_table() {
        // The cloud types by their family, every other relayed type directly; a type without an
        // adaptor (Midjourney 2) or an unknown id cannot be spoken to.
        assert_eq!(Transport::of(3), Transport::Azure);
        assert_eq!(Transport::of(33), Transport::Bedrock);
        assert_eq!(Transport::of(41), Transport::Vertex);
        for direct in [1, 14, 17, 24, 34, 43, 45] {
            assert_eq!(Transport::of(direct), Transport::Direct, "type {direct}");
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
        assert_eq!(Transport::of(3), Transport::Azure);
        assert_eq!(Transport::of(33), Transport::Bedrock);
        assert_eq!(Transport::of(41), Transport::Vertex);
        assert_eq!(Transport::of(1), Transport::Direct);
        assert_eq!(wire(3, "gpt-4o"), Some(Wire::OpenAi));
        assert_eq!(wire(41, "claude-sonnet-4@20250514"), Some(Wire::Anthropic));
        assert_eq!(wire(41, "gemini-2.5-pro"), Some(Wire::Gemini));
        assert_eq!(
            wire(33, "us.anthropic.claude-sonnet-4-20250514-v1:0"),
            Some(Wire::Anthropic)
        );
        assert_eq!(wire(33, "amazon.nova-pro-v1:0"), Some(Wire::Converse));
    }
}
