//! The [`Adaptor`] trait: every way a channel type's transport differs, each method's default
//! being the direct transport ([`Direct`]: the provider's own API under the base URL, the key in
//! the wire's header). See the module header of [`super`] for how a new type plugs in.

use std::future::Future;
use std::pin::Pin;

use axum::body::Bytes;
use axum::http::HeaderValue;
use serde_json::Value;
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use super::{AuthFailure, Credential, Framing, cloud_embed, count, gemini_method_url, json_post};
use crate::channel_types::{self, effective_base_url};
use crate::error::RelayError;
use crate::relay::wire::Wire;
use crate::upstream::HttpClients;

/// The direct transport: every default of [`Adaptor`].
pub struct Direct;

impl Adaptor for Direct {
    fn name(&self) -> &'static str {
        "direct"
    }
}

/// A key made usable, now or after a token exchange.
pub enum Authorizing<'k, 'f> {
    /// Known without asking anyone (the key itself, parsed credentials).
    Ready(Result<Credential<'k>, AuthFailure>),
    /// A token exchange in flight (boxed: only transports that exchange pay for it).
    Fetch(Pin<Box<dyn Future<Output = Result<Credential<'k>, AuthFailure>> + Send + 'f>>),
}

/// A request's answer over a transport that is not one HTTP exchange (Spark's WebSocket
/// conversation), as an HTTP answer; `Err` as [`crate::relay::pipeline::attempt::send`]'s.
pub type Conversation = Pin<
    Box<dyn Future<Output = Result<reqwest::Response, (String, &'static str)>> + Send + 'static>,
>;

/// How a built request goes out ([`Adaptor::outbound`]).
pub enum Outbound {
    /// Sent over HTTP, as built.
    Http(Box<reqwest::RequestBuilder>),
    /// Answered by the adaptor's own transport.
    Conversation(Conversation),
}

/// How a channel type's upstream is reached. The defaults are the direct transport; an adaptor
/// overrides what differs (see the module header).
pub trait Adaptor: Sync {
    /// A short name, for tests and logs.
    fn name(&self) -> &'static str;

    /// The body format a channel of `channel_type` takes for `model` (the upstream name).
    fn wire(&self, channel_type: i32, _model: &str) -> Option<Wire> {
        Wire::of_channel(channel_type)
    }

    /// Makes `key` usable (default: the key line itself).
    fn authorize<'k, 'f>(
        &self,
        _http: &'f HttpClients,
        _channel: &'f RoutedChannel,
        key: &'k str,
    ) -> Authorizing<'k, 'f>
    where
        'k: 'f,
    {
        Authorizing::Ready(Ok(Credential::Key(key)))
    }

    /// Whether the type is reached through its own API only — Bedrock, Vertex AI, and the types
    /// whose adaptor converts OpenAI chat bodies into their own (Hunyuan, Baidu v1, Dify,
    /// Spark): then the defaults give no OpenAI route but the chat of
    /// [`Adaptor::own_chat_url`], no Gemini API method and no token count (default: the direct
    /// transport's routes).
    fn own_api(&self) -> bool {
        false
    }

    /// Where a type reached through its own API ([`Adaptor::own_api`]) takes OpenAI chat bodies
    /// for `model`, which its [`Adaptor::request`] converts; `None`: it takes none.
    fn own_chat_url(&self, _channel: &RoutedChannel, _model: &str) -> Option<String> {
        None
    }

    /// The URL of OpenAI route `path` for `model` at `base` (the channel's effective base URL);
    /// `None` when the type does not serve the route.
    fn openai_url(
        &self,
        channel: &RoutedChannel,
        base: &str,
        path: &str,
        model: &str,
    ) -> Option<String> {
        if self.own_api() {
            return (path == "/v1/chat/completions")
                .then(|| self.own_chat_url(channel, model))
                .flatten();
        }
        Some(channel_types::openai_url(
            channel.channel.channel_type,
            base,
            path,
        ))
    }

    /// The URL of a generation in `wire` for `model`, whole or streamed.
    fn generate_url(
        &self,
        channel: &RoutedChannel,
        _credential: &Credential<'_>,
        wire: Wire,
        model: &str,
        stream: bool,
    ) -> Option<String> {
        if self.own_api() {
            return (wire == Wire::OpenAi)
                .then(|| self.own_chat_url(channel, model))
                .flatten();
        }
        let c = &channel.channel;
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
            Wire::Gemini => Some(if stream {
                gemini_method_url(channel, model, "streamGenerateContent?alt=sse")
            } else {
                gemini_method_url(channel, model, "generateContent")
            }),
            Wire::Converse => None,
        }
    }

    /// The URL of the Gemini API's `action` (`embedContent`, `countTokens`, …) on `model`;
    /// `None` when the type does not have the Gemini API's own methods.
    fn gemini_url(&self, channel: &RoutedChannel, model: &str, action: &str) -> Option<String> {
        (!self.own_api()).then(|| gemini_method_url(channel, model, action))
    }

    /// Changes a body of format `wire` before it is sent; `false` when it is sent as it is.
    fn fix_body(&self, _wire: Wire, _body: &mut Value, _stream: bool) -> bool {
        false
    }

    /// Whether [`Adaptor::fix_body`] changes bodies of format `wire`.
    fn changes_body(&self, _wire: Wire) -> bool {
        false
    }

    /// Puts an Anthropic client's `anthropic-beta` header (`betas`) into an Anthropic body, for
    /// transports that take it there (default: the header is passed on as it is).
    fn anthropic_betas(&self, _body: &mut Value, _betas: &str) {}

    /// Whether Anthropic bodies go with the `anthropic-version` header (the cloud transports
    /// take the version in the body).
    fn anthropic_version_header(&self) -> bool {
        true
    }

    /// Whether media in a body of format `wire` must be inlined as bytes (the upstream does not
    /// fetch URLs).
    fn bytes_only(&self, wire: Wire) -> bool {
        matches!(wire, Wire::Gemini | Wire::Converse)
    }

    /// Whether the type's own [`Adaptor::request`] builds every request it sends, the credential
    /// worked into it — signed over its body (Hunyuan's TC3), a token in its URL (Baidu v1), a
    /// signed WebSocket conversation (Spark) —, so [`Adaptor::authenticate`] refuses to put one
    /// on a request apart (default: no).
    fn builds_own_requests(&self) -> bool {
        false
    }

    /// Puts `credential` on `req` (the channel's OpenAI organization with OpenAI's bodies).
    fn authenticate(
        &self,
        req: reqwest::RequestBuilder,
        organization: &str,
        wire: Wire,
        credential: &Credential<'_>,
    ) -> Result<reqwest::RequestBuilder, RelayError> {
        if self.builds_own_requests() {
            return Err(RelayError::Internal(format!(
                "a {} request is built with its credential by its adaptor's request",
                self.name()
            )));
        }
        Ok(match credential {
            Credential::Google { token, .. } | Credential::Token(token) => req.bearer_auth(token),
            Credential::Aws(aws) => match aws.bearer() {
                Some(api_key) => req.bearer_auth(api_key),
                None => {
                    return Err(RelayError::Internal(
                        "an AWS-signed request needs its body".into(),
                    ));
                }
            },
            Credential::Key(key) => match wire {
                Wire::OpenAi | Wire::Converse | Wire::Responses => {
                    let req = req.bearer_auth(key);
                    if organization.is_empty() {
                        req
                    } else {
                        req.header("OpenAI-Organization", organization)
                    }
                }
                Wire::Anthropic => req.header("x-api-key", *key),
                Wire::Gemini => req.header("x-goog-api-key", *key),
                Wire::Cohere => req.bearer_auth(key),
            },
        })
    }

    /// An authenticated POST of a JSON `body` to `url` with `headers` (default: the body as it
    /// is; a signing transport signs over it).
    #[expect(
        clippy::too_many_arguments,
        reason = "the request and everything it is built from"
    )]
    fn request(
        &self,
        http: &HttpClients,
        channel: &RoutedChannel,
        wire: Wire,
        url: String,
        key: &Credential<'_>,
        headers: &[(&'static str, HeaderValue)],
        body: Bytes,
    ) -> Result<reqwest::RequestBuilder, RelayError> {
        json_post(self, http, channel, wire, url, key, headers, body)
    }

    /// How the upstream's stream is framed.
    fn framing(&self) -> Framing {
        Framing::Sse
    }

    /// The status an upstream error counts as for the channel's health (default: its own).
    fn health_status(&self, status: u16, _headers: &reqwest::header::HeaderMap) -> u16 {
        status
    }

    /// The token count request of `asked` for a channel taking `wire` for `upstream_model`;
    /// `None`: this channel cannot count for the client (Tollgate counts itself).
    fn count(
        &self,
        channel: &RoutedChannel,
        wire: Wire,
        _credential: &Credential<'_>,
        upstream_model: &str,
        asked: &count::Asked<'_>,
    ) -> Option<count::CountCall> {
        if self.own_api() {
            return None;
        }
        count::direct(channel, wire, upstream_model, asked)
    }

    /// Whether OpenAI embeddings requests go through [`cloud_embed`] on this type.
    fn cloud_embeds(&self) -> bool {
        false
    }

    /// How this type embeds with `model` through [`cloud_embed`]; `None`: it cannot.
    fn cloud_embed(&self, _model: &str) -> Option<cloud_embed::Kind> {
        None
    }

    /// Where this type embeds `model` as `kind` (see [`cloud_embed`]).
    fn cloud_embed_url(
        &self,
        _kind: cloud_embed::Kind,
        _channel: &RoutedChannel,
        _credential: &Credential<'_>,
        _model: &str,
    ) -> Option<String> {
        None
    }

    /// Whether the channel test needs a base URL (the cloud transports have default hosts).
    fn needs_base_url(&self) -> bool {
        true
    }

    /// How the request `req` (built by [`Adaptor::request`]) for `model`, whole or `stream`ed,
    /// goes out (default: over HTTP as built; Spark: its WebSocket conversation).
    fn outbound(&self, req: Box<reqwest::RequestBuilder>, _model: &str, _stream: bool) -> Outbound {
        Outbound::Http(req)
    }

    /// Told of the error answer `body` (OpenAI-shaped, the provider's code in `error.code`) to a
    /// request sent with `credential`, made of the key line `key` of `channel` (default:
    /// nothing; Baidu v1 forgets an access token its upstream refused before it expired).
    fn refused(
        &self,
        _http: &HttpClients,
        _channel: &RoutedChannel,
        _key: &str,
        _credential: &Credential<'_>,
        _body: &str,
    ) {
    }

    /// The type's own wire format behind an OpenAI face ([`super::native`]), whose answers
    /// [`super::receive`] turns into OpenAI's (default: none, the answer is read as it comes).
    fn native(&self) -> Option<super::native::Native> {
        None
    }
}
