//! Channel types with wire formats of their own (Tencent Hunyuan, Baidu Qianfan v1, …),
//! reached through the hub as if they were OpenAI-compatible upstreams: their adaptor's
//! `Adaptor::request` takes the OpenAI chat body the relay builds for any OpenAI channel (model
//! mapped, system prompt, output limit, overrides applied; read here by [`read`]), converts it
//! to the provider's request and signs it, and this module turns the provider's answer back into OpenAI's ([`Native::answer`]): a whole answer into a
//! `chat.completion`, a stream — event by event, through the provider's [`Decode`] and the
//! OpenAI [`Encode`]r — into `chat.completion.chunk` events ending with the usage chunk and
//! `[DONE]` only when the provider's own end was read, and an error the provider reports in a
//! 200 body into the HTTP status its documented code means, the code in `error.code` where the
//! attempt loop reads every provider's ([`crate::channel_types::errors`]).
//!
//! So every client format (OpenAI chat, Anthropic Messages, Gemini, Responses) reaches these
//! types through the routes and conversions that already serve OpenAI channels, and the one
//! meter reads their usage from the OpenAI usage chunk. What it costs: one more decode and
//! encode per event, on types whose upstreams answer in tens of milliseconds per chunk.

use std::time::Duration;

use axum::body::Bytes;
use axum::http::{StatusCode, header};
use futures_util::StreamExt;
use serde_json::json;

use super::answer::{self, ANSWER_MAX, json_response};
use crate::channel_types::Family;
use crate::error::RelayError;
use crate::relay::pipeline::sse::SseReader;
use crate::relay::wire::{self, Decode, Encode, EncodeCtx, Piece, baidu, coze, dify, hub, hunyuan};

/// A type with a wire format of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Native {
    /// Tencent Hunyuan (`ChatCompletions`, TC3-HMAC-SHA256).
    Hunyuan,
    /// Baidu Qianfan v1 (ERNIE `wenxinworkshop` chat, an OAuth access token).
    Baidu,
    /// A Dify chat app (`chat-messages`).
    Dify,
    /// A Coze bot (chat API v3, always streamed: [`Native::gather`] for whole answers).
    Coze,
}

impl Native {
    /// The native type of `channel_type`, if it is one.
    pub fn of(channel_type: i32) -> Option<Native> {
        match crate::channel_types::family(channel_type)? {
            Family::Hunyuan => Some(Native::Hunyuan),
            Family::Baidu => Some(Native::Baidu),
            Family::Dify => Some(Native::Dify),
            Family::Coze => Some(Native::Coze),
            _ => None,
        }
    }

    /// The channel type.
    pub fn channel_type(self) -> i32 {
        match self {
            Native::Hunyuan => 23,
            Native::Baidu => 15,
            Native::Dify => 37,
            Native::Coze => 49,
        }
    }

    /// The provider's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Native::Hunyuan => "Hunyuan",
            Native::Baidu => "Baidu Qianfan",
            Native::Dify => "Dify",
            Native::Coze => "Coze",
        }
    }

    /// The provider's answer `resp` as an OpenAI one naming `model`: a stream converted event
    /// by event; a whole answer, or an error in a 200 body, read (within `timeout`) and
    /// converted; any other answer as it came.
    pub async fn answer(
        self,
        resp: reqwest::Response,
        model: &str,
        timeout: Duration,
    ) -> reqwest::Response {
        let status = resp.status();
        if answer::is_stream(&resp) && status.is_success() {
            return stream(resp, self.decoder(), model);
        }
        let bytes = match answer::read_whole(resp, timeout, self.name()).await {
            Ok(bytes) => bytes,
            Err(failed) => return failed,
        };
        match self {
            Native::Hunyuan => {
                let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
                    return rebuilt(status, bytes);
                };
                let envelope: hunyuan::Envelope<'_> = wire::typed::view(&value);
                let params = &envelope.response;
                if let Some(e) = &params.error {
                    return error(self, e.code.or_empty(), e.message.or_empty());
                }
                if !status.is_success() {
                    return rebuilt(status, bytes);
                }
                let mut hub = hunyuan::answer_to_hub(params);
                hub["model"] = serde_json::Value::String(model.to_owned());
                json_response(StatusCode::OK, hub.to_string().into())
            }
            Native::Baidu => {
                let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
                    return rebuilt(status, bytes);
                };
                let answer: baidu::Answer<'_> = wire::typed::view(&value);
                if let Some((code, message)) = answer.error() {
                    return error(self, &code.to_string(), message);
                }
                if !status.is_success() {
                    return rebuilt(status, bytes);
                }
                let mut hub = baidu::answer_to_hub(&answer);
                hub["model"] = serde_json::Value::String(model.to_owned());
                json_response(StatusCode::OK, hub.to_string().into())
            }
            Native::Dify => {
                // Dify's errors come with their status and `{code, message}` as they are.
                if !status.is_success() {
                    return rebuilt(status, bytes);
                }
                let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
                    return rebuilt(status, bytes);
                };
                let answer: dify::Event<'_> = wire::typed::view(&value);
                let mut hub = dify::answer_to_hub(&answer);
                hub["model"] = serde_json::Value::String(model.to_owned());
                json_response(StatusCode::OK, hub.to_string().into())
            }
            Native::Coze => {
                // Asked for a stream, Coze answers an error as `{code, msg}` (HTTP 200 or not).
                let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
                    return rebuilt(status, bytes);
                };
                let answer: coze::ErrorIn<'_> = wire::typed::view(&value);
                match answer.error() {
                    Some((code, message)) => error(self, &code.to_string(), message),
                    None if !status.is_success() => rebuilt(status, bytes),
                    None => failed(self, StatusCode::BAD_GATEWAY, "the answer is not a stream"),
                }
            }
        }
    }

    fn decoder(self) -> Box<dyn Decode> {
        match self {
            Native::Hunyuan => Box::new(hunyuan::Decoder::default()),
            Native::Baidu => Box::new(baidu::Decoder::default()),
            Native::Dify => Box::new(dify::Decoder::default()),
            Native::Coze => Box::new(coze::Decoder::default()),
        }
    }

    /// The provider's streamed answer `resp` gathered into one OpenAI `chat.completion` naming
    /// `model`, for a client that did not stream (Coze answers whole chats only through polling,
    /// so the relay asks it for a stream): the text, the usage, the stream's error as the status
    /// its code means; a stream cut before its end is a 502. An answer that is not a stream is
    /// read as [`Native::answer`] reads it, within `timeout`.
    pub async fn gather(
        self,
        resp: reqwest::Response,
        model: &str,
        timeout: Duration,
    ) -> reqwest::Response {
        let streamed = resp
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !streamed || !resp.status().is_success() {
            return self.answer(resp, model, timeout).await;
        }
        let mut decoder = self.decoder();
        let mut reader = SseReader::default();
        let mut pieces = Vec::new();
        let mut answer = Gathered::default();
        let mut chunks = resp.bytes_stream();
        loop {
            let chunk = chunks.next().await;
            let mut on_event = |event: crate::relay::pipeline::sse::Event<'_>, _: usize| {
                pieces.extend(decoder.event(event.name, event.data));
            };
            let ended = match chunk {
                Some(Ok(chunk)) => match reader.feed(&chunk, &mut on_event) {
                    Ok(()) => false,
                    Err(e) => return failed(self, StatusCode::BAD_GATEWAY, &e.to_string()),
                },
                Some(Err(e)) => {
                    let message = format!("reading the upstream's stream failed: {e}");
                    return failed(self, StatusCode::BAD_GATEWAY, &message);
                }
                None => {
                    reader.finish(&mut on_event);
                    true
                }
            };
            if let Some(instead) = answer.take(self, pieces.drain(..)) {
                return instead;
            }
            if decoder.done() {
                return answer.completion(model);
            }
            if ended {
                return failed(self, StatusCode::BAD_GATEWAY, "the answer was cut short");
            }
        }
    }
}

/// A streamed answer gathered so far ([`Native::gather`]).
#[derive(Default)]
struct Gathered {
    id: String,
    text: String,
    usage: crate::relay::measure::price::Usage,
}

impl Gathered {
    /// Adds `pieces`; `Some`: the answer to give instead (the stream's error as the status its
    /// code means, or an answer past [`ANSWER_MAX`]).
    fn take(
        &mut self,
        native: Native,
        pieces: impl Iterator<Item = Piece>,
    ) -> Option<reqwest::Response> {
        for piece in pieces {
            match piece {
                Piece::Start { id, .. } => self.id = id,
                Piece::Text(t) if self.text.len() + t.len() > ANSWER_MAX => {
                    return Some(failed(
                        native,
                        StatusCode::BAD_GATEWAY,
                        "the answer is too large",
                    ));
                }
                Piece::Text(t) => self.text.push_str(&t),
                Piece::Usage(u) => self.usage = u,
                Piece::Error(message) => {
                    let (code, text) = message.split_once(": ").unwrap_or(("", &message));
                    return Some(error(native, code, text));
                }
                _ => {}
            }
        }
        None
    }

    /// The `chat.completion` naming `model`.
    fn completion(&self, model: &str) -> reqwest::Response {
        let usage = &self.usage;
        let body = json!({
            "id": format!("chatcmpl-{}", self.id),
            "object": "chat.completion",
            "created": crate::clock::now_unix(),
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": self.text},
                "finish_reason": "stop"}],
            "usage": {"prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "total_tokens": usage.prompt_tokens.saturating_add(usage.completion_tokens)},
        });
        json_response(StatusCode::OK, body.to_string().into())
    }
}

/// What a conversion reads of the OpenAI body beside the hub view.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub struct Head<'a> {
    /// The upstream model.
    #[serde(borrow)]
    pub model: wire::typed::Str<'a>,
    /// Streamed.
    pub stream: bool,
    /// The provider conversation a client continues (Dify's `conversation_id`, a field of the
    /// client's body beside OpenAI's).
    #[serde(borrow)]
    pub conversation_id: wire::typed::Str<'a>,
}

/// The OpenAI chat body the relay built (its `model` the upstream's), read for a native
/// type's conversion: its head and its hub view. Not JSON: the client's 400.
pub fn read(body: &Bytes) -> Result<(Head<'_>, hub::Request<'_>), RelayError> {
    let bad = |e: serde_json::Error| {
        RelayError::BadRequest(format!("the request body is not valid JSON: {e}"))
    };
    let head: Head<'_> = serde_json::from_slice(body).map_err(bad)?;
    let hub = hub::Request::from_bytes(body).map_err(bad)?;
    Ok((head, hub))
}

/// A provider request's JSON body.
pub fn to_body<T: serde::Serialize>(request: &T) -> Result<Bytes, RelayError> {
    serde_json::to_vec(request)
        .map(Bytes::from)
        .map_err(|e| RelayError::Internal(e.to_string()))
}

/// An answer rebuilt from its status and bytes (read to look for an error in it).
fn rebuilt(status: StatusCode, bytes: Bytes) -> reqwest::Response {
    json_response(status, bytes)
}

/// An OpenAI-shaped error answer for the provider's error `code` and `message`
/// ([`answer::provider_error`]: the status the type's documented codes give it), else the
/// provider's own rule for its other codes ([`hunyuan::error_status`], [`baidu::error_status`]).
fn error(native: Native, code: &str, message: &str) -> reqwest::Response {
    let other = match native {
        Native::Hunyuan => hunyuan::error_status(code),
        Native::Baidu => baidu::error_status(code),
        // Dify answers its errors with their HTTP status, never in a 200 body.
        Native::Dify => 500,
        Native::Coze => coze::error_status(code),
    };
    answer::provider_error(native.channel_type(), native.name(), code, message, other)
}

/// An OpenAI-shaped error answer of `status` for a failure reading the provider's answer.
fn failed(native: Native, status: StatusCode, message: &str) -> reqwest::Response {
    answer::failed(native.name(), status, message)
}

/// The provider's SSE stream as OpenAI `chat.completion.chunk` events: every event through
/// `decoder` into pieces and through the OpenAI encoder; the usage chunk and `[DONE]` follow
/// only when the decoder saw the provider's end, so a cut stream stays cut for the meter.
fn stream(resp: reqwest::Response, decoder: Box<dyn Decode>, model: &str) -> reqwest::Response {
    struct State {
        upstream: futures_util::stream::BoxStream<'static, reqwest::Result<Bytes>>,
        reader: SseReader,
        decoder: Box<dyn Decode>,
        encoder: Box<dyn Encode>,
        ended: bool,
    }
    fn convert(state: &mut State, chunk: Option<&[u8]>) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        let State {
            reader,
            decoder,
            encoder,
            ..
        } = state;
        let mut on_event = |event: crate::relay::pipeline::sse::Event<'_>, _: usize| {
            for piece in decoder.event(event.name, event.data) {
                encoder.piece(&piece, &mut out);
            }
        };
        match chunk {
            Some(chunk) => reader
                .feed(chunk, &mut on_event)
                .map_err(|e| e.to_string())?,
            None => reader.finish(&mut on_event),
        }
        if chunk.is_none() && decoder.done() {
            encoder.end(&mut out);
        }
        Ok(out)
    }
    let state = State {
        upstream: resp.bytes_stream().boxed(),
        reader: SseReader::default(),
        decoder,
        encoder: wire::encoder(
            wire::Wire::OpenAi,
            EncodeCtx {
                model: model.to_owned(),
                prompt_estimate: 0,
                include_usage: true,
            },
        ),
        ended: false,
    };
    let body = futures_util::stream::unfold(state, |mut state| async move {
        if state.ended {
            return None;
        }
        loop {
            let next = state.upstream.next().await;
            let converted = match &next {
                Some(Ok(chunk)) => convert(&mut state, Some(chunk)),
                Some(Err(e)) => Err(format!("reading the upstream's stream failed: {e}")),
                None => {
                    state.ended = true;
                    convert(&mut state, None)
                }
            };
            match converted {
                Ok(out) if out.is_empty() && !state.ended => continue,
                Ok(out) => return Some((Ok::<Bytes, std::io::Error>(Bytes::from(out)), state)),
                Err(message) => {
                    state.ended = true;
                    return Some((Err(std::io::Error::other(message)), state));
                }
            }
        }
    });
    let resp = axum::http::Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(reqwest::Body::wrap_stream(body));
    match resp {
        Ok(resp) => reqwest::Response::from(resp),
        Err(_) => {
            reqwest::Response::from(axum::http::Response::new(reqwest::Body::from(Bytes::new())))
        }
    }
}

#[cfg(test)]
#[path = "native_tests.rs"]
mod tests;
