//! AWS event streams (`application/vnd.amazon.eventstream`, Bedrock's streamed answers) turned
//! into server-sent events, so the one stream pipe ([`crate::relay::pipeline::pipe`]) reads them like any
//! other upstream's. Frames are decoded by the maintained `aws-smithy-eventstream` crate
//! (prelude and message CRCs checked); each message becomes one event:
//!
//! - `:message-type: event`, `:event-type: chunk` (InvokeModelWithResponseStream): the payload
//!   is `{"bytes": "<base64>"}`, the bytes one Anthropic stream event, which goes out as
//!   `event: {type}` / `data: {event}` — Anthropic's own SSE framing
//!   (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModelWithResponseStream.html).
//! - `:message-type: event` of any other type (ConverseStream: `messageStart`,
//!   `contentBlockDelta`, `metadata`, …): `event: {event-type}` / `data: {payload}`
//!   (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html).
//! - `:message-type: exception` (or `error`): an Anthropic-shaped `error` event naming the
//!   exception, which both decoders report as the upstream's in-band error.

use aws_smithy_eventstream::frame::{DecodedFrame, MessageFrameDecoder};
use aws_smithy_types::event_stream::{HeaderValue, Message};
use base64::Engine;
use bytes::{Bytes, BytesMut};
use futures_util::{Stream, StreamExt};
use serde_json::{Value, json};

/// Turns event-stream bytes into SSE bytes, message by message.
#[derive(Default)]
pub struct Reframer {
    decoder: MessageFrameDecoder,
    buffer: BytesMut,
}

impl Reframer {
    /// Takes one read; returns the SSE bytes of the messages it completes. Fails on a frame that
    /// is not a valid event-stream message.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Bytes, String> {
        self.buffer.extend_from_slice(chunk);
        let mut out = Vec::new();
        loop {
            match self.decoder.decode_frame(&mut self.buffer) {
                Ok(DecodedFrame::Complete(message)) => event(&message, &mut out),
                Ok(DecodedFrame::Incomplete) => break,
                Err(e) => return Err(format!("the upstream event stream is malformed: {e}")),
            }
        }
        Ok(Bytes::from(out))
    }
}

/// A header's text value.
fn text<'a>(message: &'a Message, name: &str) -> Option<&'a str> {
    message
        .headers()
        .iter()
        .find(|h| h.name().as_str() == name)
        .and_then(|h| match h.value() {
            HeaderValue::String(s) => Some(s.as_str()),
            _ => None,
        })
}

/// Appends one SSE event whose data is `data` as sent when it is one line of text, else its
/// JSON re-serialised on one line.
fn sse(out: &mut Vec<u8>, name: &str, data: &[u8]) {
    let one_line = std::str::from_utf8(data)
        .ok()
        .filter(|d| !d.contains(['\n', '\r']));
    match one_line {
        Some(data) => {
            out.extend_from_slice(b"event: ");
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b"\ndata: ");
            out.extend_from_slice(data.as_bytes());
            out.extend_from_slice(b"\n\n");
        }
        None => {
            let value: Value = serde_json::from_slice(data).unwrap_or(Value::Null);
            crate::relay::wire::sse(out, name, &value);
        }
    }
}

/// Appends the SSE event of one event-stream message.
fn event(message: &Message, out: &mut Vec<u8>) {
    let kind = text(message, ":message-type").unwrap_or("event");
    if kind != "event" {
        let payload: Value = serde_json::from_slice(message.payload()).unwrap_or(Value::Null);
        let exception = text(message, ":exception-type")
            .or_else(|| text(message, ":error-code"))
            .unwrap_or("exception");
        let detail = payload["message"]
            .as_str()
            .or_else(|| payload["Message"].as_str())
            .or_else(|| text(message, ":error-message"))
            .unwrap_or("the upstream stream failed");
        let error = json!({"type": "error", "error": {"type": exception, "message": detail}});
        crate::relay::wire::sse(out, "error", &error);
        return;
    }
    let name = text(message, ":event-type").unwrap_or_default();
    if name != "chunk" {
        sse(out, name, message.payload());
        return;
    }
    #[derive(serde::Deserialize)]
    struct Chunk<'a> {
        #[serde(borrow)]
        bytes: std::borrow::Cow<'a, str>,
    }
    #[derive(serde::Deserialize)]
    struct Kind<'a> {
        #[serde(borrow, rename = "type")]
        kind: std::borrow::Cow<'a, str>,
    }
    let Some(inner) = serde_json::from_slice::<Chunk<'_>>(message.payload())
        .ok()
        .and_then(|c| {
            base64::engine::general_purpose::STANDARD
                .decode(c.bytes.as_bytes())
                .ok()
        })
    else {
        return;
    };
    let Ok(kind) = serde_json::from_slice::<Kind<'_>>(&inner) else {
        return;
    };
    sse(out, &kind.kind, &inner);
}

/// The SSE byte stream of an event-stream answer.
pub fn to_sse<S, E>(upstream: S) -> impl Stream<Item = Result<Bytes, String>> + Send + 'static
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::fmt::Display,
{
    let mut reframer = Reframer::default();
    upstream.map(move |read| match read {
        Ok(chunk) => reframer.feed(&chunk),
        Err(e) => Err(e.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use aws_smithy_eventstream::frame::write_message_to;
    use aws_smithy_types::event_stream::Header;

    use super::*;

    fn frame(headers: &[(&'static str, &'static str)], payload: &[u8]) -> Vec<u8> {
        let mut message = Message::new(Bytes::copy_from_slice(payload));
        for (name, value) in headers {
            message = message.add_header(Header::new(*name, HeaderValue::String((*value).into())));
        }
        let mut out = Vec::new();
        write_message_to(&message, &mut out).unwrap_or_else(|e| panic!("frame: {e}"));
        out
    }

    #[test]
    fn chunks_become_anthropic_events_and_converse_events_keep_their_names() {
        let inner = br#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#;
        let b64 = base64::engine::general_purpose::STANDARD.encode(inner);
        let chunk = frame(
            &[(":message-type", "event"), (":event-type", "chunk")],
            format!(r#"{{"bytes":"{b64}","p":"abcd"}}"#).as_bytes(),
        );
        let delta = frame(
            &[
                (":message-type", "event"),
                (":event-type", "contentBlockDelta"),
            ],
            br#"{"contentBlockIndex":0,"delta":{"text":"Yo"},"p":"ab"}"#,
        );
        let failure = frame(
            &[
                (":message-type", "exception"),
                (":exception-type", "throttlingException"),
            ],
            br#"{"message":"slow down"}"#,
        );
        let mut all = chunk;
        all.extend(delta);
        all.extend(failure);
        let mut reframer = Reframer::default();
        // Byte by byte: frames split anywhere still come out whole.
        let mut out = Vec::new();
        for b in &all {
            out.extend_from_slice(&reframer.feed(&[*b]).unwrap_or_else(|e| panic!("{e}")));
        }
        let text = String::from_utf8(out).unwrap_or_default();
        let inner = String::from_utf8(inner.to_vec()).unwrap_or_default();
        let expected = format!(
            "event: content_block_delta\ndata: {inner}\n\n\
             event: contentBlockDelta\ndata: {{\"contentBlockIndex\":0,\"delta\":{{\"text\":\"Yo\"}},\"p\":\"ab\"}}\n\n"
        );
        assert!(text.starts_with(&expected), "{text}");
        let error = text[expected.len()..]
            .strip_prefix("event: error\ndata: ")
            .and_then(|rest| rest.strip_suffix("\n\n"))
            .and_then(|data| serde_json::from_str::<Value>(data).ok());
        assert_eq!(
            error,
            Some(
                json!({"type": "error", "error": {"type": "throttlingException",
                "message": "slow down"}})
            )
        );
    }

    #[test]
    fn a_corrupt_frame_fails() {
        let mut bytes = frame(&[(":event-type", "x")], b"{}");
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        assert!(Reframer::default().feed(&bytes).is_err());
    }
}
