//! Streaming on the OpenAI path: the upstream's own bytes go to the client as they arrive —
//! whole events only, never re-framed or copied when a read holds whole events (what was read
//! already goes out together, in one write) — while [`SseReader`] finds the events in them
//! and usage is read from each.
//!
//! - Tollgate asks the upstream for a usage chunk (`stream_options.include_usage`); if the client
//!   did not ask for it, that chunk is not forwarded.
//! - Without an upstream usage chunk, completion tokens are counted from the streamed output —
//!   content, reasoning, tool call names and arguments, legacy completions' text, the Responses
//!   API's text and argument deltas (usage source "estimated"); the Responses API's usage comes
//!   in its `response.completed` event.
//! - The upstream's comments (keep-alives such as `: PROCESSING`) go out as soon as they are
//!   whole, so a client waiting on a slow first token still sees the connection alive.
//! - Past the meter's mid-stream ceiling ([`Meter::capped`]) the answer ends after the event
//!   that passed it: the client gets its format's terminal events ([`crate::relay::pipeline::ceiling`]), the
//!   upstream's connection is dropped, and the bill is `partial` / `capped`.
//! - If the client disconnects, the body stream is dropped: the upstream response is dropped
//!   with it (closing the upstream connection) and the [`Meter`]'s `Drop` bills what was
//!   produced (usage source "partial"). Settlement happens exactly once either way.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::{Bytes, BytesMut};
use futures_util::{FutureExt, StreamExt};
use serde::Deserialize;
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use crate::relay::measure::components::OutputItems;
use crate::relay::measure::usage::{OpenAiUsage, PartialReason, Usage};
use crate::relay::pipeline::ending::EndRule;
use crate::relay::pipeline::keepalive::{self, Clock, Next};
use crate::relay::pipeline::meter::{Ending, Meter};
use crate::relay::pipeline::sse::{EventTooLarge, SseReader};
use crate::relay::wire::Wire;

/// The part of a chunk Tollgate reads: borrowed from the event's data, nothing copied but
/// the answer's text. Chat completions chunks (`choices[].delta`, legacy completions'
/// `choices[].text`, the `usage` chunk) and Responses API events (`type`, a text `delta`, the
/// `response` of `response.completed` with its usage) share it. Text fields are read
/// leniently ([`Loose`]): an upstream's odd shape for one of them never hides the usage.
///
/// Read for every event of every stream, so it stays small: the usage and the Responses API's
/// `response` (one event of a stream each) are boxed, and the usual single choice is held
/// without a vector ([`Choices`]).
#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(default, borrow)]
    choices: Choices<'a>,
    #[serde(default)]
    usage: Option<Box<OpenAiUsage>>,
    #[serde(default, rename = "type", borrow)]
    kind: Loose<'a>,
    #[serde(default, borrow)]
    delta: Loose<'a>,
    #[serde(default)]
    response: Option<Box<ResponseUsage>>,
    /// An in-band error (its text is checked for the channel's key before it goes out).
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

/// A chunk's `choices`: the first in place, any others in a vector (allocated only for
/// `n > 1`). Read as a `Vec` reads it (anything but a list, `null` included, fails the chunk).
#[derive(Default)]
struct Choices<'a> {
    first: Option<ChunkChoice<'a>>,
    rest: Vec<ChunkChoice<'a>>,
}

impl<'a> Choices<'a> {
    fn iter(&self) -> impl Iterator<Item = &ChunkChoice<'a>> {
        self.first.iter().chain(&self.rest)
    }

    fn is_empty(&self) -> bool {
        self.first.is_none()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Choices<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Choices<'a>, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Choices<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of choices")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Choices<'de>, A::Error> {
                let mut choices = Choices {
                    first: seq.next_element()?,
                    rest: Vec::new(),
                };
                while let Some(choice) = seq.next_element()? {
                    choices.rest.push(choice);
                }
                Ok(choices)
            }
        }
        d.deserialize_seq(Visit)
    }
}

#[derive(Deserialize)]
struct ChunkChoice<'a> {
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
    /// Legacy completions.
    #[serde(default, borrow)]
    text: Loose<'a>,
    /// Why the choice stopped (`null` until it does).
    #[serde(default, borrow)]
    finish_reason: Loose<'a>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow)]
    content: Loose<'a>,
    #[serde(default, borrow)]
    reasoning_content: Loose<'a>,
    /// OpenRouter's and vLLM's name for `reasoning_content`.
    #[serde(default, borrow)]
    reasoning: Loose<'a>,
    #[serde(default, borrow)]
    tool_calls: Vec<ToolDelta<'a>>,
}

#[derive(Deserialize)]
struct ToolDelta<'a> {
    #[serde(default, borrow)]
    function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
struct FunctionDelta<'a> {
    #[serde(default, borrow)]
    name: Loose<'a>,
    #[serde(default, borrow)]
    arguments: Loose<'a>,
}

/// The `response` of a Responses API event: its usage and its output items' types (web search
/// calls are billed per call).
#[derive(Deserialize)]
struct ResponseUsage {
    #[serde(default)]
    usage: Option<OpenAiUsage>,
    #[serde(default)]
    output: OutputItems,
}

/// A string field read leniently: its text when it is a string, nothing when it is anything
/// else (skipped without building a value).
#[derive(Default)]
struct Loose<'a>(Option<Cow<'a, str>>);

impl Loose<'_> {
    fn text(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Loose<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Loose<'a>, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Loose<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Loose<'de>, E> {
                Ok(Loose(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E>(self, v: &str) -> Result<Loose<'de>, E> {
                Ok(Loose(Some(Cow::Owned(v.to_owned()))))
            }
            fn visit_string<E>(self, v: String) -> Result<Loose<'de>, E> {
                Ok(Loose(Some(Cow::Owned(v))))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Loose<'de>, E> {
                Ok(Loose(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Loose<'de>, E> {
                Ok(Loose(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Loose<'de>, E> {
                Ok(Loose(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Loose<'de>, E> {
                Ok(Loose(None))
            }
            fn visit_unit<E>(self) -> Result<Loose<'de>, E> {
                Ok(Loose(None))
            }
            fn visit_none<E>(self) -> Result<Loose<'de>, E> {
                Ok(Loose(None))
            }
            fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Loose<'de>, D::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Loose<'de>, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Loose(None))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Loose<'de>, A::Error> {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Loose(None))
            }
        }
        d.deserialize_any(Visit)
    }
}

/// Responses API events whose `delta` is output text (answer, refusal, reasoning, tool call
/// arguments) — not audio or other binary deltas.
fn counts_delta(kind: &str) -> bool {
    kind.starts_with("response.")
        && [
            "output_text.delta",
            "refusal.delta",
            "reasoning_text.delta",
            "reasoning_summary_text.delta",
            "arguments.delta",
            "input.delta",
        ]
        .iter()
        .any(|suffix| kind.ends_with(suffix))
}

/// Reads already received are sent together up to this many bytes, so a fast upstream's long
/// answer still goes out in pieces rather than gathering in memory.
const FRAME_MAX: usize = 16 * 1024;

/// The upstream's body, read by read.
type Chunks = std::pin::Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<Bytes>> + Send>>;

/// The bytes of one write to the client: a slice of one upstream read when that is all there
/// is (no copy), else the pieces copied together.
#[derive(Debug, Default)]
enum Frame {
    #[default]
    Empty,
    One(Bytes),
    Joined(BytesMut),
}

impl Frame {
    fn push(&mut self, bytes: Bytes) {
        if bytes.is_empty() {
            return;
        }
        *self = match std::mem::take(self) {
            Frame::Empty => Frame::One(bytes),
            Frame::One(first) => {
                let mut joined = BytesMut::with_capacity(first.len() + bytes.len());
                joined.extend_from_slice(&first);
                joined.extend_from_slice(&bytes);
                Frame::Joined(joined)
            }
            Frame::Joined(mut joined) => {
                joined.extend_from_slice(&bytes);
                Frame::Joined(joined)
            }
        };
    }

    fn len(&self) -> usize {
        match self {
            Frame::Empty => 0,
            Frame::One(b) => b.len(),
            Frame::Joined(b) => b.len(),
        }
    }

    fn into_bytes(self) -> Option<Bytes> {
        match self {
            Frame::Empty => None,
            Frame::One(b) => Some(b),
            Frame::Joined(b) => Some(b.freeze()),
        }
    }
}

/// What becomes of one upstream event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Forwarded as the upstream sent it.
    Keep,
    /// Held back (the usage-only chunk the client did not ask for).
    Drop,
    /// The format's end marker (`[DONE]`, `response.completed`, ...): forwarded, and the
    /// answer is over.
    Done,
    /// An in-band error: forwarded, with any part of the channel's key masked.
    Error,
}

/// Reads usage and output from one event's data into the meter, its ending signals into
/// `rule`, and decides its fate.
fn observe(meter: &mut Meter, rule: &mut EndRule, client_wants_usage: bool, data: &str) -> Verdict {
    if data.trim() == "[DONE]" {
        rule.marker();
        return Verdict::Done;
    }
    let Ok(chunk) = serde_json::from_str::<Chunk<'_>>(data) else {
        return Verdict::Keep;
    };
    meter.mark_answered();
    if chunk.error.is_some() {
        return Verdict::Error;
    }
    for choice in chunk.choices.iter() {
        if choice.finish_reason.text().is_some() {
            rule.finish();
        }
        if let Some(text) = choice.text.text() {
            meter.output(text);
        }
        let Some(delta) = &choice.delta else { continue };
        for part in [&delta.reasoning_content, &delta.reasoning, &delta.content] {
            if let Some(text) = part.text() {
                meter.output(text);
            }
        }
        for call in delta.tool_calls.iter().filter_map(|c| c.function.as_ref()) {
            for part in [&call.name, &call.arguments] {
                if let Some(text) = part.text() {
                    meter.output(text);
                }
            }
        }
    }
    if let Some(kind) = chunk.kind.text() {
        if counts_delta(kind)
            && let Some(text) = chunk.delta.text()
        {
            meter.output(text);
        }
        if let Some((usage, output)) = chunk
            .response
            .as_ref()
            .and_then(|r| Some((r.usage.as_ref()?, &r.output)))
        {
            let mut usage = Usage::from(usage);
            output.count_into(&mut usage);
            meter.reported(usage);
            rule.usage();
        }
        if matches!(
            kind,
            "response.completed" | "response.incomplete" | "response.failed"
        ) {
            rule.marker();
            return Verdict::Done;
        }
        return Verdict::Keep;
    }
    match &chunk.usage {
        Some(usage) => {
            meter.reported(Usage::from(&**usage));
            rule.usage();
            if client_wants_usage || !chunk.choices.is_empty() {
                Verdict::Keep
            } else {
                Verdict::Drop
            }
        }
        None => Verdict::Keep,
    }
}

/// One answer's stream: the upstream's reads in, the same bytes out (whole events only, less
/// any event held back), the bill kept.
struct Relay {
    chunks: Chunks,
    reader: SseReader,
    /// The start of an event the last read ended inside of: it goes out with the rest of it.
    held: BytesMut,
    meter: Meter,
    /// The format's ending rule (chat and completions, or the Responses API).
    rule: EndRule,
    clock: Clock,
    client_wants_usage: bool,
    /// The channel that answers (its keys are masked in in-band errors).
    channel: Arc<RoutedChannel>,
    done: bool,
}

impl Relay {
    /// The next bytes for the client: every whole event the upstream has already sent, in one
    /// frame (one write to the socket), or a keep-alive ping while the upstream is quiet (always
    /// between two events: only whole events are forwarded). `None` once the answer is over.
    async fn next_frame(&mut self) -> Option<Bytes> {
        if self.done {
            return None;
        }
        let mut out = Frame::default();
        loop {
            let next = if matches!(out, Frame::Empty) {
                match self.clock.next(&mut self.chunks).await {
                    Next::Item(next) => next,
                    Next::Ping => return Some(Bytes::from_static(keepalive::COMMENT_PING)),
                    Next::Idle => {
                        tracing::warn!("upstream stream idle for too long; closing");
                        return self.end(Ending::Cut(PartialReason::IdleTimeout), out).await;
                    }
                }
            } else if out.len() >= FRAME_MAX {
                return out.into_bytes();
            } else {
                match self.chunks.next().now_or_never() {
                    Some(next) => next,
                    None => return out.into_bytes(),
                }
            };
            match next {
                Some(Ok(chunk)) => match self.read(chunk, &mut out) {
                    Ok(false) => {}
                    Ok(true) if self.meter.capped() => {
                        let mut terminal = Vec::new();
                        let tokens = self.meter.output_tokens();
                        crate::relay::pipeline::ceiling::terminal(
                            self.rule.wire(),
                            tokens,
                            &mut terminal,
                        );
                        out.push(Bytes::from(terminal));
                        return self.end(Ending::Cut(PartialReason::Capped), out).await;
                    }
                    Ok(true) => {
                        let ending = self.rule.at_end(self.meter.answered());
                        return self.end(ending, out).await;
                    }
                    Err(e) => {
                        // The events before it still go out; the oversized one does not.
                        tracing::warn!(error = %e, "upstream stream refused");
                        self.held = BytesMut::new();
                        return self
                            .end(Ending::Cut(PartialReason::OversizedEvent), out)
                            .await;
                    }
                },
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "upstream stream broke");
                    return self.end(Ending::Cut(PartialReason::UpstreamCut), out).await;
                }
                None => {
                    self.last_event(&mut out);
                    let ending = self.rule.at_end(self.meter.answered());
                    return self.end(ending, out).await;
                }
            }
        }
    }

    /// Takes one upstream read: its whole events go to `out` as slices of it (the start of an
    /// event it ends inside of is held for the next). Whether `[DONE]` was among them; an error
    /// when the event it ends inside of grew too large.
    fn read(&mut self, chunk: Bytes, out: &mut Frame) -> Result<bool, EventTooLarge> {
        let ctx = self.meter.ctx_mut();
        if ctx.first_byte.is_none() {
            ctx.first_byte = Some(Instant::now());
        }
        let Relay {
            reader,
            held,
            meter,
            rule,
            client_wants_usage,
            channel,
            ..
        } = self;
        // `start`: where the current event starts in `chunk` (its earlier bytes, if any, are in
        // `held`); `run`: the start of the kept events not yet put in `out`.
        let (mut start, mut run, mut first, mut over) = (0, None, true, false);
        let fed = reader.feed(&chunk, |event, end| {
            if over {
                return;
            }
            let mut verdict = observe(meter, rule, *client_wants_usage, event.data);
            let mut masked = None;
            if verdict == Verdict::Error {
                // Rare: only error events pay for the check (and are re-framed if it masks).
                let clean =
                    crate::relay::pipeline::redact::redact(event.data, channel.channel.key_lines());
                verdict = if clean == event.data {
                    Verdict::Keep
                } else {
                    masked = Some(crate::relay::pipeline::sse::frame(event.name, &clean));
                    Verdict::Drop
                };
            }
            if first {
                first = false;
                if verdict == Verdict::Drop {
                    held.clear();
                } else {
                    out.push(held.split().freeze());
                }
            }
            match verdict {
                Verdict::Keep | Verdict::Done => {
                    run.get_or_insert(start);
                    over = verdict == Verdict::Done;
                }
                Verdict::Drop | Verdict::Error => {
                    if let Some(from) = run.take() {
                        out.push(chunk.slice(from..start));
                    }
                    if let Some(masked) = masked.take() {
                        out.push(masked);
                    }
                }
            }
            start = end;
            // Past the ceiling: nothing after this event is the client's.
            over |= meter.capped();
        });
        if let Some(from) = run {
            out.push(chunk.slice(from..start));
        }
        if over {
            return Ok(true);
        }
        fed?;
        held.extend_from_slice(&chunk[start..]);
        if reader.at_boundary() {
            // What is held is whole blocks without data (an upstream's keep-alive comments):
            // they go out now, not with the next event, so a client's idle timer sees them.
            out.push(held.split().freeze());
        }
        Ok(false)
    }

    /// The upstream ended: an event it left without its blank line is still read for usage,
    /// and its bytes go out as they came.
    fn last_event(&mut self, out: &mut Frame) {
        let Relay {
            reader,
            meter,
            rule,
            client_wants_usage,
            ..
        } = self;
        reader.finish(|event, _| {
            observe(meter, rule, *client_wants_usage, event.data);
        });
        out.push(self.held.split().freeze());
    }

    /// Settles and sends what is left (`None` when nothing is).
    async fn end(&mut self, ending: Ending, out: Frame) -> Option<Bytes> {
        self.done = true;
        self.meter.settle(ending).await;
        out.into_bytes()
    }
}

/// Pipes an upstream SSE answer to the client, billing as it goes in `meter`; `wire` is
/// [`Wire::OpenAi`] (chat completions, completions) or [`Wire::Responses`].
pub fn respond(
    (upstream, wire): (reqwest::Response, Wire),
    mut meter: Meter,
    client_wants_usage: bool,
    channel: Arc<RoutedChannel>,
    idle: Duration,
    ping: Option<Duration>,
) -> Response {
    meter.ctx_mut().first_byte = None;
    let relay = Relay {
        chunks: Box::pin(upstream.bytes_stream()),
        reader: SseReader::default(),
        held: BytesMut::new(),
        meter,
        rule: EndRule::new(wire),
        clock: Clock::new(idle, ping),
        client_wants_usage,
        channel,
        done: false,
    };
    let body = futures_util::stream::unfold(relay, |mut relay| async move {
        let frame = relay.next_frame().await?;
        Some((Ok::<_, std::io::Error>(frame), relay))
    });
    let mut response = Response::new(Body::from_stream(body));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contents(data: &str) -> Option<Vec<String>> {
        let chunk = serde_json::from_str::<Chunk<'_>>(data).ok()?;
        Some(
            chunk
                .choices
                .iter()
                .filter_map(|c| c.delta.as_ref()?.content.text().map(str::to_owned))
                .collect(),
        )
    }

    #[test]
    fn choices_read_as_a_list_whatever_their_number() {
        let one =
            r#"{"id":"x","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}"#;
        assert_eq!(contents(one), Some(vec!["a".to_owned()]));
        let three = r#"{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b\n"}},{"delta":{"content":"c"}}]}"#;
        assert_eq!(
            contents(three),
            Some(vec!["a".to_owned(), "b\n".to_owned(), "c".to_owned()])
        );
        assert_eq!(contents(r#"{"choices":[]}"#), Some(vec![]));
        assert_eq!(contents(r#"{"usage":{"prompt_tokens":1}}"#), Some(vec![]));
        // As a Vec read them: a choices field that is not a list fails the chunk.
        assert_eq!(contents(r#"{"choices":null}"#), None);
        assert_eq!(contents(r#"{"choices":{"delta":{}}}"#), None);
        let usage = serde_json::from_str::<Chunk<'_>>(
            r#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":20}}"#,
        )
        .expect("a usage chunk");
        assert!(usage.choices.is_empty());
        assert_eq!(usage.usage.map(|u| u.completion_tokens), Some(20));
    }
}
