//! Adaptors: how a request reaches a channel type's upstream — its URL, its authentication (a
//! key header, a Google OAuth2 access token, an AWS SigV4 signature), what it changes in a body
//! and the framing of its stream — apart from the body, whose format ([`Wire`]) the converters
//! of [`super::wire`] handle. Azure speaks OpenAI's bodies, Vertex AI Gemini's or (for Claude)
//! Anthropic's, and Bedrock Anthropic's (Claude through InvokeModel) or Converse's.
//!
//! A channel's base URL, when set, replaces the provider's default endpoint for every type (the
//! Azure resource, the Vertex regional host, the Bedrock runtime host): operators' proxies and
//! private endpoints, and the tests' mocks on 127.0.0.1.
//!
//! Every transport difference is a method of the [`Adaptor`] trait; its default methods are the
//! direct transport (the provider's own API under the base URL, the key in the wire's header:
//! OpenAI and the compatible providers, Claude, Gemini, Cohere). The rest of the relay and the
//! console call the free functions below, which look the channel type's adaptor up (`of`) and
//! never branch on the type themselves: [`wire`] (which body format a channel takes for a
//! model), [`authorize`] (the key made usable: a Google token fetched or cached, AWS credentials
//! parsed), [`openai_url`] / [`generate_url`] / [`gemini_url`] (where), [`post`] / [`request`]
//! (the authenticated request, signed over its body), [`fix_body`] and [`anthropic_betas`] (what
//! a transport changes in a body), [`anthropic_headers`], [`bytes_only`] (which media must be
//! inlined), [`framing`] (how its stream is cut into events), [`health_status`], the token
//! counts ([`count`]), cloud embeddings ([`cloud_embed`]), and the console's requests: the
//! channel test ([`test_request`]), the model list ([`models_request`]) and balance queries
//! ([`get`]), built by the same code the relay sends with, so a type that relays also passes
//! "test channel". Nothing here imports the route handlers.
//!
//! ## How a new channel type plugs in
//! - It speaks a wire the relay has (OpenAI's, Anthropic's, Gemini's, Cohere's) directly under
//!   its base URL with the key in that wire's header: only its row in `crate::channel_types`
//!   (`family`, `default_base_url`, `openai_prefix` / `openai_paths` for odd paths, `test`,
//!   `models_api`, `balance`). No code here.
//! - It needs its own URLs, authentication, signing, body changes or framing: a new file
//!   `adaptor/<provider>.rs` with a unit struct implementing [`Adaptor`] — override only what
//!   differs from the direct defaults (e.g. [`Adaptor::authorize`] for a token exchange or a
//!   signed token, returning a [`Credential`]; [`Adaptor::authenticate`] for its header;
//!   [`Adaptor::request`] to sign over the body; [`Adaptor::generate_url`]) — plus ONE match arm
//!   in `of` below (by the row's [`Family`]) and its row in `crate::channel_types`. A body format
//!   of its own is a new [`Wire`] with its converters in `wire/`.
//! - Nothing outside `adaptor/` names a transport: a source check
//!   (`relay/pipeline/spine/tests.rs`) fails when a file outside `adaptor/` calls
//!   `Transport::of` or the adaptor lookup.

pub mod answer;
pub mod azure;
pub mod baidu;
pub mod bedrock;
pub mod channel_test;
pub mod cloud_embed;
pub mod cloudflare;
pub mod count;
pub mod coze;
pub mod dify;
pub mod eventstream;
pub mod hunyuan;
pub mod models;
pub mod native;
pub mod qianfan;
mod seam;
pub mod spark;
pub mod system_prompt;
pub mod vertex;
pub mod zhipu;

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, header};
use serde_json::Value;
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use super::wire::{Wire, anthropic};
use crate::channel_types::{self, Family, effective_base_url};
use crate::error::RelayError;
use crate::state::AppState;
use crate::upstream::HttpClients;

pub use channel_test::{TestFailure, test_request};
pub use models::models_request;
pub use seam::{Adaptor, Authorizing, Conversation, Direct, Outbound};

/// The adaptor of a channel type, by its family in the channel type table (an unknown type, or
/// one without an adaptor, is direct; [`wire`] then says it cannot be spoken). The one place a
/// channel type chooses its adaptor: a new adaptor is one arm here.
fn of(channel_type: i32) -> &'static dyn Adaptor {
    match channel_types::family(channel_type) {
        Some(Family::Azure) => &azure::Azure,
        Some(Family::Bedrock) => &bedrock::Bedrock,
        Some(Family::Vertex) => &vertex::Vertex,
        Some(Family::Zhipu) => &zhipu::Zhipu,
        Some(Family::Cloudflare) => &cloudflare::Cloudflare,
        Some(Family::QianfanV2) => &qianfan::QianfanV2,
        Some(Family::Hunyuan) => &hunyuan::Hunyuan,
        Some(Family::Spark) => &spark::Spark,
        Some(Family::Baidu) => &baidu::Baidu,
        Some(Family::Dify) => &dify::Dify,
        Some(Family::Coze) => &coze::Coze,
        Some(Family::OpenAi | Family::Anthropic | Family::Gemini | Family::Cohere) | None => {
            &Direct
        }
    }
}

/// A short name of `channel_type`'s adaptor (`direct`, `azure`, `vertex`, `bedrock`, …).
pub fn name(channel_type: i32) -> &'static str {
    of(channel_type).name()
}

/// The body format a channel of `channel_type` takes for `model` (the upstream model name, after
/// the channel's mapping), `None` when the relay cannot speak to the type.
pub fn wire(channel_type: i32, model: &str) -> Option<Wire> {
    of(channel_type).wire(channel_type, model)
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
    /// An access token exchanged for the key (Baidu Qianfan v1's client credentials grant).
    Token(std::sync::Arc<str>),
}

impl<'a> Credential<'a> {
    /// The key line as is (transports that send the key itself).
    pub fn key(line: &'a str) -> Credential<'a> {
        Credential::Key(line)
    }

    fn text(&self) -> &str {
        match self {
            Credential::Key(line) => line,
            Credential::Google { token, .. } | Credential::Token(token) => token,
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
    match of(channel.channel.channel_type).authorize(http, channel, key) {
        Authorizing::Ready(credential) => credential,
        Authorizing::Fetch(fetch) => fetch.await,
    }
}

/// The URL of OpenAI route `path` (`/v1/chat/completions`, `/v1/embeddings`, …) on a channel
/// speaking OpenAI's bodies, for `model` (an Azure deployment); `None` when the type does not
/// serve the route.
pub fn openai_url(channel: &RoutedChannel, path: &str, model: &str) -> Option<String> {
    let c = &channel.channel;
    let base = effective_base_url(c.channel_type, &c.base_url);
    of(c.channel_type).openai_url(channel, &base, path, model)
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
    of(channel.channel.channel_type).generate_url(channel, credential, wire, model, stream)
}

/// The URL of the Gemini API's `action` on `model` (`embedContent`, `batchEmbedContents`,
/// `countTokens`); `None` when the channel's type has no Gemini API of its own.
pub fn gemini_url(channel: &RoutedChannel, model: &str, action: &str) -> Option<String> {
    of(channel.channel.channel_type).gemini_url(channel, model, action)
}

/// `{base}/{version}/models/{model}:{action}` of a Gemini API channel (the version is the
/// channel's `other` when it is one, else `v1beta`).
fn gemini_method_url(channel: &RoutedChannel, model: &str, action: &str) -> String {
    let c = &channel.channel;
    let base = effective_base_url(c.channel_type, &c.base_url);
    let version = Some(c.other.trim())
        .filter(|v| !v.is_empty() && !v.contains('/'))
        .unwrap_or("v1beta");
    format!("{base}/{version}/models/{model}:{action}")
}

/// What a transport changes in a body of format `wire` before it is sent (Vertex and Bedrock
/// take Anthropic's body with `anthropic_version` in it and the model in the URL); `false` when
/// the body is sent as it is.
pub fn fix_body(channel_type: i32, wire: Wire, body: &mut Value, stream: bool) -> bool {
    of(channel_type).fix_body(wire, body, stream)
}

/// Whether [`fix_body`] changes bodies of format `wire` on `channel_type`.
pub fn changes_body(channel_type: i32, wire: Wire) -> bool {
    of(channel_type).changes_body(wire)
}

/// Puts an Anthropic client's `anthropic-beta` header into the Anthropic `body` sent to a
/// channel of `channel_type` when its transport takes the betas in the body (Bedrock).
pub fn anthropic_betas(channel_type: i32, body: &mut Value, betas: &str) {
    of(channel_type).anthropic_betas(body, betas);
}

/// Headers of an Anthropic client passed on with an Anthropic body.
const ANTHROPIC_HEADERS: &[&str] = &["anthropic-version", "anthropic-beta"];

/// The Anthropic headers sent with an Anthropic body to a channel of `channel_type`: the
/// client's `anthropic-version` and `anthropic-beta` (`client`: an Anthropic client's headers,
/// `None` for any other client), the version only where the transport takes it as a header
/// (else it is in the body), and the default version when the client named none.
pub fn anthropic_headers(
    channel_type: i32,
    client: Option<&HeaderMap>,
) -> Vec<(&'static str, HeaderValue)> {
    let version_header = of(channel_type).anthropic_version_header();
    let mut headers = Vec::new();
    for name in ANTHROPIC_HEADERS {
        if let Some(v) = client.and_then(|h| h.get(*name)) {
            if version_header || *name == "anthropic-beta" {
                headers.push((*name, v.clone()));
            }
        } else if *name == "anthropic-version" && version_header {
            headers.push((*name, HeaderValue::from_static(anthropic::DEFAULT_VERSION)));
        }
    }
    headers
}

/// Whether media in a request of format `wire` to a channel of `channel_type` must be sent as
/// bytes (Gemini and Converse take no URLs; Claude on Vertex AI and Bedrock neither).
pub fn bytes_only(channel_type: i32, wire: Wire) -> bool {
    of(channel_type).bytes_only(wire)
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
    post_with(
        of(channel.channel.channel_type),
        &state.http,
        channel,
        wire,
        url,
        key,
    )
}

/// [`post`] with the adaptor and the outbound clients given.
fn post_with<A: Adaptor + ?Sized>(
    adaptor: &A,
    http: &HttpClients,
    channel: &RoutedChannel,
    wire: Wire,
    url: String,
    key: &Credential<'_>,
) -> Result<reqwest::RequestBuilder, RelayError> {
    let c = &channel.channel;
    let client = http.for_proxy(&c.proxy).map_err(RelayError::Unreachable)?;
    let url = http.url(&url).map_err(RelayError::Unreachable)?;
    adaptor.authenticate(client.post(url), &c.openai_organization, wire, key)
}

/// The default [`Adaptor::request`]: an authenticated POST of the JSON `body` with `headers`.
#[expect(
    clippy::too_many_arguments,
    reason = "the request and everything it is built from"
)]
fn json_post<A: Adaptor + ?Sized>(
    adaptor: &A,
    http: &HttpClients,
    channel: &RoutedChannel,
    wire: Wire,
    url: String,
    key: &Credential<'_>,
    headers: &[(&'static str, HeaderValue)],
    body: Bytes,
) -> Result<reqwest::RequestBuilder, RelayError> {
    let mut req = post_with(adaptor, http, channel, wire, url, key)?
        .header(header::CONTENT_TYPE, "application/json")
        .body(body);
    for (name, value) in headers {
        req = req.header(*name, value);
    }
    Ok(req)
}

/// An authenticated upstream POST of a JSON `body` (signed over it where the transport signs).
/// `headers` are added before signing.
pub fn request(
    http: &HttpClients,
    channel: &RoutedChannel,
    wire: Wire,
    url: String,
    key: &Credential<'_>,
    headers: &[(&'static str, HeaderValue)],
    body: Bytes,
) -> Result<reqwest::RequestBuilder, RelayError> {
    of(channel.channel.channel_type).request(http, channel, wire, url, key, headers, body)
}

/// An authenticated GET of `url` with the key line `key` on `client` for a channel of
/// `channel_type` whose upstream speaks `wire` (the console's balance queries and model lists),
/// authenticated as the relay authenticates its requests.
pub fn get(
    client: &reqwest::Client,
    channel_type: i32,
    organization: &str,
    wire: Wire,
    url: &str,
    key: &str,
) -> Result<reqwest::RequestBuilder, RelayError> {
    of(channel_type).authenticate(client.get(url), organization, wire, &Credential::Key(key))
}

/// The status an upstream error counts as for the channel's health: the answer's own, except
/// where a provider refuses a credential with another status (AWS answers an unknown access key
/// or a wrong secret with 403 `UnrecognizedClientException` / `InvalidSignatureException`, which
/// condemn the key as a 401 does).
pub fn health_status(channel_type: i32, status: u16, headers: &reqwest::header::HeaderMap) -> u16 {
    of(channel_type).health_status(status, headers)
}

/// Tells `channel`'s adaptor of the error answer `body` to a request sent with `credential`
/// made of the key line `key` ([`Adaptor::refused`]: Baidu v1 forgets a refused access token).
pub fn refused(
    http: &HttpClients,
    channel: &RoutedChannel,
    key: &str,
    credential: &Credential<'_>,
    body: &str,
) {
    of(channel.channel.channel_type).refused(http, channel, key, credential, body);
}

/// How a request built for a channel of `channel_type` goes out: over HTTP as built, or through
/// the type's own transport ([`Adaptor::outbound`]: Spark's WebSocket conversation).
pub fn outbound(
    channel_type: i32,
    req: Box<reqwest::RequestBuilder>,
    model: &str,
    stream: bool,
) -> Outbound {
    of(channel_type).outbound(req, model, stream)
}

/// An upstream's answer as the relay reads it: the answer itself, except for the types with a
/// wire format of their own behind an OpenAI face ([`Adaptor::native`]), whose answers come out
/// as OpenAI's ([`native::Native::answer`]; `model` is the upstream model they name, `timeout`
/// bounds reading a whole answer), and the types that report errors in HTTP 200 answers
/// (MiniMax's `base_resp`), whose whole 200 answers are read for one ([`answer::error_in_ok`]).
pub async fn receive(
    channel_type: i32,
    resp: reqwest::Response,
    model: &str,
    timeout: std::time::Duration,
) -> reqwest::Response {
    match of(channel_type).native() {
        Some(native) => native.answer(resp, model, timeout).await,
        None if channel_types::errors::in_ok_answers(channel_type) => {
            let provider = channel_types::by_id(channel_type).map_or("upstream", |row| row.name);
            answer::error_in_ok(channel_type, provider, resp, timeout).await
        }
        None => resp,
    }
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
    of(channel_type).framing()
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
mod tests;
