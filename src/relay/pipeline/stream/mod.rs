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

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::{Bytes, BytesMut};
use futures_util::{FutureExt, StreamExt};
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use crate::relay::measure::usage::PartialReason;
use crate::relay::pipeline::ending::EndRule;
use crate::relay::pipeline::keepalive::{self, Clock, Next};
use crate::relay::pipeline::meter::{Ending, Meter};
use crate::relay::pipeline::sse::{EventTooLarge, SseReader, event_stream};
use crate::relay::wire::Wire;

use event::{Verdict, observe};

mod event;

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
        self.meter.first_read();
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
    event_stream(Body::from_stream(body))
}
