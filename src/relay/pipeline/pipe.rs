//! Streams of the protocol adaptors: the upstream's SSE bytes are either passed through
//! unchanged (same wire on both sides; the bytes the client gets are the upstream's, byte for
//! byte) or converted event by event ([`Encode`]); in both cases the events ([`SseReader`]) go
//! through a [`Decode`], which reads usage and text from them as they pass, and the one
//! [`Meter`] (shared with the OpenAI path) settles exactly once: at the end of the stream, or
//! from `Drop` when the client goes away (usage source "partial").
//!
//! A meter past its mid-stream ceiling ([`Meter::capped`]) ends the answer at once: the events
//! after the one that passed it are neither forwarded nor read, the client gets its format's
//! terminal events ([`crate::relay::pipeline::ceiling`]; a converting pipe's encoder ends with a `length` stop),
//! the upstream's connection is dropped with the body, and the bill is `partial` / `capped`.
//!
//! An in-band error event never carries the channel's key to the client: passed through, an
//! error event whose text shows part of a key is re-framed with that text masked (the only
//! event whose bytes change; the others go out as whole events, byte for byte); converted, the
//! error piece is masked before it is encoded.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use crate::relay::measure::usage::PartialReason;
use crate::relay::pipeline::ending::{self, EndRule};
use crate::relay::pipeline::keepalive::{Clock, Next};
use crate::relay::pipeline::meter::{Ending, Meter};
use crate::relay::pipeline::sse::{Event, SseReader, event_stream};
use crate::relay::wire::{Decode, Encode, Piece};

/// Takes note of one piece of the answer in the meter.
fn observe(meter: &mut Meter, piece: &Piece) {
    match piece {
        Piece::Text(t) | Piece::Thinking(t) => meter.output(t),
        Piece::ToolArgs { json, .. } => meter.output(json),
        Piece::ToolStart { name, .. } => meter.output(name),
        Piece::Usage(u) => meter.reported(*u),
        // Signatures are opaque checks, not text the model wrote (the upstream's usage, when it
        // reports one, counts the thinking they sign).
        Piece::Start { .. }
        | Piece::Stop(_)
        | Piece::Error(_)
        | Piece::ThinkingSignature(_)
        | Piece::RedactedThinking(_)
        | Piece::ToolSignature { .. } => {}
    }
}

/// Whether the client's bytes are the upstream's or re-encoded.
pub enum Mode {
    /// Forward the upstream's bytes unchanged.
    PassThrough,
    /// Re-encode every piece in the client's format.
    Convert(Box<dyn Encode>),
}

/// Where the upstream's events go: decoded into pieces, which the meter notes and a
/// converting pipe encodes.
struct Sink {
    decoder: Box<dyn Decode>,
    mode: Mode,
    meter: Meter,
    /// The channel that answers (its keys are masked in in-band errors re-encoded).
    channel: Arc<RoutedChannel>,
    /// The upstream format's ending rule.
    rule: EndRule,
    /// Whether an in-band error went to the client already (a cut adds none after it).
    errored: bool,
}

impl Sink {
    /// Takes one upstream event. Passing through, returns the event re-framed when it is an
    /// error whose text had to be masked (`None`: its own bytes go out).
    fn event(&mut self, event: Event<'_>, out: &mut Vec<u8>) -> Option<Bytes> {
        let pieces = self.decoder.event(event.name, event.data);
        if !pieces.is_empty() {
            self.meter.mark_answered();
        }
        let mut masked = None;
        for mut piece in pieces {
            observe(&mut self.meter, &piece);
            match &piece {
                Piece::Stop(_) => self.rule.finish(),
                Piece::Usage(_) => self.rule.usage(),
                Piece::Error(_) => self.errored = true,
                _ => {}
            }
            match &mut self.mode {
                Mode::Convert(encoder) => {
                    if let Piece::Error(message) = &mut piece {
                        *message = crate::relay::pipeline::redact::redact(
                            message,
                            self.channel.channel.key_lines(),
                        );
                    }
                    encoder.piece(&piece, out);
                }
                // Rare: only error events pay for the check.
                Mode::PassThrough if matches!(piece, Piece::Error(_)) => {
                    let clean = crate::relay::pipeline::redact::redact(
                        event.data,
                        self.channel.channel.key_lines(),
                    );
                    if clean != event.data {
                        masked = Some(crate::relay::pipeline::sse::frame(event.name, &clean));
                    }
                }
                Mode::PassThrough => {}
            }
        }
        if self.decoder.done() {
            self.rule.marker();
        }
        masked
    }

    fn passes_through(&self) -> bool {
        matches!(self.mode, Mode::PassThrough)
    }
}

struct Pipe {
    sink: Sink,
    reader: SseReader,
    /// Passing through: the upstream's bytes of the event being read (it started in an
    /// earlier read), held until the event is whole.
    held: Vec<u8>,
    ended: bool,
}

impl Pipe {
    /// Handles upstream bytes; returns what to send to the client, and whether an event grew
    /// too large (which ends the answer, billed as partial).
    fn bytes(&mut self, chunk: &[u8]) -> (Vec<u8>, bool) {
        self.sink.meter.first_read();
        let mut out = Vec::new();
        let Pipe {
            sink, reader, held, ..
        } = self;
        let pass = sink.passes_through();
        // Where the event being read starts in `chunk` (its earlier bytes are in `held`).
        let mut start = 0;
        let fed = reader.feed(chunk, |e, end| {
            if sink.meter.capped() {
                return;
            }
            let masked = sink.event(e, &mut out);
            if pass {
                match masked {
                    Some(framed) => out.extend_from_slice(&framed),
                    None => {
                        out.extend_from_slice(held);
                        out.extend_from_slice(&chunk[start..end]);
                    }
                }
                held.clear();
            }
            start = end;
        });
        if sink.meter.capped() {
            // What follows the event that passed the ceiling is not the client's.
            held.clear();
            return (out, false);
        }
        if pass {
            held.extend_from_slice(&chunk[start..]);
            if reader.at_boundary() {
                // Whole blocks without data (an upstream's keep-alive comments) go out now.
                out.append(held);
            }
        }
        if let Err(e) = fed {
            tracing::warn!(error = %e, "upstream stream refused");
            self.reader = SseReader::default();
            self.held.clear();
            return (out, true);
        }
        (out, false)
    }

    /// The answer passed its ceiling: the client's terminal events, billed as capped.
    async fn cap(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        if self.ended {
            return out;
        }
        self.ended = true;
        let sink = &mut self.sink;
        match &mut sink.mode {
            Mode::Convert(encoder) => {
                encoder.piece(&Piece::Stop("length".to_owned()), &mut out);
                encoder.end(&mut out);
            }
            Mode::PassThrough => {
                let tokens = sink.meter.output_tokens();
                crate::relay::pipeline::ceiling::terminal(sink.rule.wire(), tokens, &mut out);
            }
        }
        sink.meter.settle(Ending::Cut(PartialReason::Capped)).await;
        out
    }

    /// The upstream stream ended, so (`Ending::Complete`: its body or its end marker; the
    /// format's [`EndRule`] then says whether the answer was complete). Passing through, an
    /// event the upstream left without its blank line goes out as it came (masked if it is an
    /// error showing a key); converting, a complete answer gets the client format's closing
    /// events and a cut one its error event (never a made-up end marker).
    async fn end(&mut self, ending: Ending) -> Vec<u8> {
        let mut out = Vec::new();
        if self.ended {
            return out;
        }
        self.ended = true;
        let sink = &mut self.sink;
        let mut masked = None;
        self.reader.finish(|e, _| {
            if let Some(framed) = sink.event(e, &mut out) {
                masked = Some(framed);
            }
        });
        if sink.passes_through() {
            match masked {
                Some(framed) => out.extend_from_slice(&framed),
                None => out.append(&mut self.held),
            }
            self.held.clear();
        }
        let ending = match ending {
            Ending::Complete => self.sink.rule.at_end(self.sink.meter.answered()),
            cut @ Ending::Cut(_) => cut,
        };
        if let Mode::Convert(encoder) = &mut self.sink.mode {
            match ending {
                Ending::Complete => encoder.end(&mut out),
                Ending::Cut(reason) if !self.sink.errored => {
                    encoder.cut(ending::cut_message(reason), &mut out);
                }
                Ending::Cut(_) => {}
            }
        }
        self.sink.meter.settle(ending).await;
        out
    }
}

/// Pipes an upstream SSE answer (its bytes, as [`crate::relay::adaptor::chunks`] gives them) to the
/// client.
pub fn respond(
    chunks: futures_util::stream::BoxStream<'static, Result<Bytes, String>>,
    decoder: Box<dyn Decode>,
    mode: Mode,
    meter: Meter,
    channel: Arc<RoutedChannel>,
    (upstream, idle): (crate::relay::wire::Wire, Duration),
    ping: Option<(Duration, &'static [u8])>,
) -> Response {
    let pipe = Pipe {
        sink: Sink {
            decoder,
            mode,
            meter,
            channel,
            rule: EndRule::new(upstream),
            errored: false,
        },
        reader: SseReader::default(),
        held: Vec::new(),
        ended: false,
    };
    let ping_bytes = ping.map_or(&[][..], |(_, bytes)| bytes);
    let state = (chunks, pipe, Clock::new(idle, ping.map(|(every, _)| every)));
    let body =
        futures_util::stream::unfold(state, move |(mut chunks, mut pipe, mut clock)| async move {
            loop {
                if pipe.ended {
                    return None;
                }
                let out = match clock.next(&mut chunks).await {
                    // Passed-through bytes may stop mid-event: ping only between events.
                    Next::Ping if pipe.reader.at_boundary() => ping_bytes.to_vec(),
                    Next::Ping => Vec::new(),
                    Next::Item(Some(Ok(chunk))) => {
                        let (mut out, refused) = pipe.bytes(&chunk);
                        if pipe.sink.meter.capped() {
                            out.extend(pipe.cap().await);
                        } else if refused {
                            let cut = Ending::Cut(PartialReason::OversizedEvent);
                            out.extend(pipe.end(cut).await);
                        } else if pipe.sink.rule.over() {
                            out.extend(pipe.end(Ending::Complete).await);
                        }
                        out
                    }
                    Next::Item(None) => pipe.end(Ending::Complete).await,
                    Next::Item(Some(Err(e))) => {
                        tracing::warn!(error = %e, "upstream stream broke");
                        pipe.end(Ending::Cut(PartialReason::UpstreamCut)).await
                    }
                    Next::Idle => {
                        tracing::warn!("upstream stream idle for too long; closing");
                        pipe.end(Ending::Cut(PartialReason::IdleTimeout)).await
                    }
                };
                if !out.is_empty() {
                    return Some((
                        Ok::<_, std::io::Error>(Bytes::from(out)),
                        (chunks, pipe, clock),
                    ));
                }
            }
        });
    event_stream(Body::from_stream(body))
}
