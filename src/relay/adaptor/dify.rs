//! Dify (type 37): a Dify chat app's `POST {base}/v1/chat-messages`, the app's API key as
//! bearer (https://docs.dify.ai, the "Chat App API" every app documents). OpenAI chat bodies in,
//! converted into chat-messages (`relay::wire::dify`), blocking for a whole answer and
//! streaming for a stream; [`Native::Dify`] converts the answers back. Chat is its only route.

use axum::body::Bytes;
use axum::http::{HeaderValue, header};
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use super::native::{self, Native};
use super::{Adaptor, Credential};
use crate::channel_types::effective_base_url;
use crate::error::RelayError;
use crate::relay::wire::{Wire, dify};
use crate::upstream::HttpClients;

/// Dify's adaptor.
pub struct Dify;

/// `{base}/v1/chat-messages`.
fn chat_url(channel: &RoutedChannel) -> String {
    let c = &channel.channel;
    format!(
        "{}/v1/chat-messages",
        effective_base_url(c.channel_type, &c.base_url)
    )
}

impl Adaptor for Dify {
    fn name(&self) -> &'static str {
        "dify"
    }

    fn own_api(&self) -> bool {
        true
    }

    fn own_chat_url(&self, channel: &RoutedChannel, _model: &str) -> Option<String> {
        Some(chat_url(channel))
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
        dify::check(&hub).map_err(|e| RelayError::BadRequest(e.0))?;
        let request = dify::request_from_hub(&hub, head.conversation_id.or_empty(), head.stream);
        let payload = native::to_body(&request)?;
        Ok(client
            .post(url)
            .bearer_auth(key.text())
            .header(header::CONTENT_TYPE, "application/json")
            .body(payload))
    }

    fn native(&self) -> Option<Native> {
        Some(Native::Dify)
    }
}
