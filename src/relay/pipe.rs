//! Streams of the protocol adaptors: the upstream's SSE bytes are either passed through
//! unchanged (same wire on both sides; the bytes the client gets are the upstream's, byte for
//! byte) or converted event by event ([`Encode`]); in both cases the events ([`SseReader`]) go
//! through a [`Decode`], which reads usage and text from them as they pass, and the one
//! [`Meter`] (shared with the OpenAI path) settles exactly once: at the end of the stream, or
//! from `Drop` when the client goes away (usage source "partial").

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use super::keepalive::{Clock, Next};
use super::meter::{Ending, Meter};
use super::sse::{Event, SseReader};
use super::usage::PartialReason;
use super::wire::{Decode, Encode, Piece};

/// Takes note of one piece of the answer in the meter.
fn observe(meter: &mut Meter, piece: &Piece) {
    match piece {
        Piece::Text(t) | Piece::Thinking(t) => meter.output(t),
        Piece::ToolArgs { json, .. } => meter.output(json),
        Piece::ToolStart { name, .. } => meter.output(name),
        Piece::Usage(u) => meter.reported(*u),
        Piece::Start { .. } | Piece::Stop(_) | Piece::Error(_) => {}
    }
}

fn first_byte(meter: &mut Meter) {
    let ctx = meter.ctx_mut();
    if ctx.first_byte.is_none() {
        ctx.first_byte = Some(Instant::now());
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
}

impl Sink {
    /// Takes one upstream event.
    fn event(&mut self, event: Event<'_>, out: &mut Vec<u8>) {
        let pieces = self.decoder.event(event.name, event.data);
        if !pieces.is_empty() {
            self.meter.mark_answered();
        }
        for mut piece in pieces {
            observe(&mut self.meter, &piece);
            if let Mode::Convert(encoder) = &mut self.mode {
                if let Piece::Error(message) = &mut piece {
                    *message = super::redact::redact(message, self.channel.channel.key_lines());
                }
                encoder.piece(&piece, out);
            }
        }
    }
}

struct Pipe {
    sink: Sink,
    reader: SseReader,
    ended: bool,
}

impl Pipe {
    /// Handles upstream bytes; returns what to send to the client. An event grown too large
    /// ends the answer (billed as partial).
    fn bytes(&mut self, chunk: &[u8]) -> Vec<u8> {
        first_byte(&mut self.sink.meter);
        let mut out = Vec::new();
        if matches!(self.sink.mode, Mode::PassThrough) {
            out.extend_from_slice(chunk);
        }
        let sink = &mut self.sink;
        if let Err(e) = self.reader.feed(chunk, |e, _| sink.event(e, &mut out)) {
            tracing::warn!(error = %e, "upstream stream refused");
            self.reader = SseReader::default();
            out.extend(self.end(Ending::Cut(PartialReason::OversizedEvent)));
        }
        out
    }

    /// The upstream stream ended, so (a complete end with nothing well-formed in it is a
    /// non-JSON answer).
    fn end(&mut self, ending: Ending) -> Vec<u8> {
        let mut out = Vec::new();
        if self.ended {
            return out;
        }
        self.ended = true;
        let sink = &mut self.sink;
        self.reader.finish(|e, _| sink.event(e, &mut out));
        if let Mode::Convert(encoder) = &mut self.sink.mode {
            encoder.end(&mut out);
        }
        let ending = match ending {
            Ending::Complete => self.sink.meter.stream_end(),
            cut @ Ending::Cut(_) => cut,
        };
        self.sink.meter.finish(ending);
        out
    }
}

/// Pipes an upstream SSE answer (its bytes, as [`super::adaptor::chunks`] gives them) to the
/// client.
pub fn respond(
    chunks: futures_util::stream::BoxStream<'static, Result<Bytes, String>>,
    decoder: Box<dyn Decode>,
    mode: Mode,
    meter: Meter,
    channel: Arc<RoutedChannel>,
    idle: Duration,
    ping: Option<(Duration, &'static [u8])>,
) -> Response {
    let pipe = Pipe {
        sink: Sink {
            decoder,
            mode,
            meter,
            channel,
        },
        reader: SseReader::default(),
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
                        let mut out = pipe.bytes(&chunk);
                        if pipe.sink.decoder.done() {
                            out.extend(pipe.end(Ending::Complete));
                        }
                        out
                    }
                    Next::Item(None) => pipe.end(Ending::Complete),
                    Next::Item(Some(Err(e))) => {
                        tracing::warn!(error = %e, "upstream stream broke");
                        pipe.end(Ending::Cut(PartialReason::UpstreamCut))
                    }
                    Next::Idle => {
                        tracing::warn!("upstream stream idle for too long; closing");
                        pipe.end(Ending::Cut(PartialReason::IdleTimeout))
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
