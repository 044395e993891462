//! Coze (type 49): a bot's chat through Coze's chat API v3, `POST {base}/v3/chat`, a personal
//! access token as bearer (https://www.coze.cn/open/docs/developer_guides/chat_v3; api.coze.cn,
//! or api.coze.com for coze.com's bots). The bot is the channel's `other` (the incumbent's
//! field), else the model name. OpenAI chat bodies in, converted by `relay::wire::coze`;
//! [`Native::Coze`] converts the answers back.
//!
//! Coze answers a non-streamed chat at once with the chat's id only, its answer to be polled
//! for; so the relay always asks for the event stream, and when its client did not stream
//! ([`Adaptor::outbound`]'s `stream`), gathers it into one `chat.completion`
//! ([`Native::gather`]) within the attempt's timeout. A client's `conversation_id` body field
//! (beside OpenAI's) continues that Coze conversation. Chat is its only route.

use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderValue, header};
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use super::native::{self, Native};
use super::{Adaptor, Conversation, Credential, Outbound, count};
use crate::channel_types::effective_base_url;
use crate::error::RelayError;
use crate::relay::wire::{Wire, coze};
use crate::upstream::{self, HttpClients};

/// Coze's adaptor.
pub struct Coze;

/// How long a gathered answer's non-stream body may take to read: the attempt's own timeout
/// (`attempt::converse`) bounds the whole conversation first.
const WHOLE_READ: Duration = Duration::from_secs(3600);

/// `{base}/v3/chat`.
fn chat_url(channel: &RoutedChannel) -> String {
    let c = &channel.channel;
    format!(
        "{}/v3/chat",
        effective_base_url(c.channel_type, &c.base_url)
    )
}

/// The bot asked: the channel's `other`, else the (upstream) model name.
fn bot_id<'a>(channel: &'a RoutedChannel, model: &'a str) -> &'a str {
    match channel.channel.other.trim() {
        "" => model,
        bot => bot,
    }
}

impl Adaptor for Coze {
    fn name(&self) -> &'static str {
        "coze"
    }

    fn wire(&self, _channel_type: i32, _model: &str) -> Option<Wire> {
        Some(Wire::OpenAi)
    }

    fn openai_url(
        &self,
        channel: &RoutedChannel,
        _base: &str,
        path: &str,
        _model: &str,
    ) -> Option<String> {
        (path == "/v1/chat/completions").then(|| chat_url(channel))
    }

    fn generate_url(
        &self,
        channel: &RoutedChannel,
        _credential: &Credential<'_>,
        wire: Wire,
        _model: &str,
        _stream: bool,
    ) -> Option<String> {
        (wire == Wire::OpenAi).then(|| chat_url(channel))
    }

    fn gemini_url(&self, _channel: &RoutedChannel, _model: &str, _action: &str) -> Option<String> {
        None
    }

    fn request(
        &self,
        http: &HttpClients,
        channel: &RoutedChannel,
        _wire: Wire,
        url: String,
        key: &Credential<'_>,
        _headers: &[(&'static str, HeaderValue)],
        body: Bytes,
    ) -> Result<reqwest::RequestBuilder, RelayError> {
        let c = &channel.channel;
        let client = http.for_proxy(&c.proxy).map_err(RelayError::Unreachable)?;
        let url = http.url(&url).map_err(RelayError::Unreachable)?;
        let (head, hub) = native::read(&body)?;
        coze::check(&hub).map_err(|e| RelayError::BadRequest(e.0))?;
        let request = coze::request_from_hub(&hub, bot_id(channel, head.model.or_empty()));
        let payload = native::to_body(&request)?;
        let mut req = client
            .post(url)
            .bearer_auth(key.text())
            .header(header::CONTENT_TYPE, "application/json")
            .body(payload);
        if let Some(conversation) = head.conversation_id.non_empty() {
            req = req.query(&[("conversation_id", conversation)]);
        }
        Ok(req)
    }

    fn count(
        &self,
        _channel: &RoutedChannel,
        _wire: Wire,
        _credential: &Credential<'_>,
        _upstream_model: &str,
        _asked: &count::Asked<'_>,
    ) -> Option<count::CountCall> {
        None
    }

    fn outbound(&self, req: Box<reqwest::RequestBuilder>, model: &str, stream: bool) -> Outbound {
        if stream {
            return Outbound::Http(req);
        }
        let model = model.to_owned();
        let talk: Conversation = Box::pin(async move {
            let resp = req.send().await.map_err(upstream::no_answer)?;
            Ok(Native::Coze.gather(resp, &model, WHOLE_READ).await)
        });
        Outbound::Conversation(talk)
    }

    fn native(&self) -> Option<Native> {
        Some(Native::Coze)
    }
}
