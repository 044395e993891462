//! Streams of the protocol adaptors: the upstream's SSE bytes are either passed through
//! unchanged (same wire on both sides; the bytes the client gets are the upstream's, byte for
//! byte) or converted event by event ([`Encode`]); in both cases the events ([`SseReader`]) go
//! through a [`Decode`], which reads usage and text from them as they pass, and a [`Meter`]
//! settles exactly once: at the end of the stream, or from `Drop` when the client goes away
//! (usage source "partial").

use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use tollgate_actors::quota::Hold;

use super::keepalive::{Clock, Next};
use super::price::Usage;
use super::settle::{SettleCtx, UsageSource};
use super::sse::{Event, SseReader};
use super::tokenize::Counter;
use super::wire::{Decode, Encode, Piece};

/// The request's money while its answer streams; settles exactly once, on completion or drop.
pub struct Meter {
    ctx: SettleCtx,
    hold: Option<Hold>,
    prompt_estimate: i64,
    usage: Option<Usage>,
    /// The answer's text so far (for counting when the upstream reports no usage).
    text: String,
}

impl Meter {
    /// Holds `hold` until the answer ends.
    pub fn new(ctx: SettleCtx, hold: Hold, prompt_estimate: i64) -> Meter {
        Meter {
            ctx,
            hold: Some(hold),
            prompt_estimate,
            usage: None,
            text: String::new(),
        }
    }

    /// Takes note of one piece of the answer.
    pub fn observe(&mut self, piece: &Piece) {
        match piece {
            Piece::Text(t) | Piece::Thinking(t) => self.text.push_str(t),
            Piece::ToolArgs { json, .. } => self.text.push_str(json),
            Piece::ToolStart { name, .. } => self.text.push_str(name),
            Piece::Usage(u) => self.usage = Some(*u),
            Piece::Start { .. } | Piece::Stop(_) | Piece::Error(_) => {}
        }
    }

    /// Settles: the upstream's usage when it reported one, else Tollgate's estimate.
    pub fn finish(&mut self, complete: bool) {
        let Some(hold) = self.hold.take() else { return };
        // Counted only when needed: an exact counter loads its tables on first use.
        let produced = || Counter::for_model(&self.ctx.upstream_model).count(&self.text);
        let (usage, source) = match self.usage {
            Some(usage) => {
                let source = if complete {
                    UsageSource::Upstream
                } else {
                    UsageSource::Partial
                };
                // A prompt the upstream did not report is estimated; an answer cut short is
                // billed at least the text that reached the client.
                let usage = Usage {
                    prompt_tokens: if usage.prompt_tokens == 0 {
                        self.prompt_estimate
                    } else {
                        usage.prompt_tokens
                    },
                    completion_tokens: if usage.completion_tokens == 0 || !complete {
                        usage.completion_tokens.max(produced())
                    } else {
                        usage.completion_tokens
                    },
                    ..usage
                };
                (usage, source)
            }
            None => (
                Usage {
                    prompt_tokens: self.prompt_estimate,
                    completion_tokens: produced(),
                    ..Usage::default()
                },
                if complete {
                    UsageSource::Estimated
                } else {
                    UsageSource::Partial
                },
            ),
        };
        self.ctx.settle(hold, usage, source);
    }

    fn first_byte(&mut self) {
        if self.ctx.first_byte.is_none() {
            self.ctx.first_byte = Some(Instant::now());
        }
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        self.finish(false);
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
}

impl Sink {
    /// Takes one upstream event.
    fn event(&mut self, event: Event<'_>, out: &mut Vec<u8>) {
        for piece in self.decoder.event(event.name, event.data) {
            self.meter.observe(&piece);
            if let Mode::Convert(encoder) = &mut self.mode {
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
        self.sink.meter.first_byte();
        let mut out = Vec::new();
        if matches!(self.sink.mode, Mode::PassThrough) {
            out.extend_from_slice(chunk);
        }
        let sink = &mut self.sink;
        if let Err(e) = self.reader.feed(chunk, |e, _| sink.event(e, &mut out)) {
            tracing::warn!(error = %e, "upstream stream refused");
            self.reader = SseReader::default();
            out.extend(self.end(false));
        }
        out
    }

    /// The upstream stream ended (`complete`: normally).
    fn end(&mut self, complete: bool) -> Vec<u8> {
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
        self.sink.meter.finish(complete);
        out
    }
}

/// Pipes an upstream SSE answer to the client.
pub fn respond(
    upstream: reqwest::Response,
    decoder: Box<dyn Decode>,
    mode: Mode,
    meter: Meter,
    idle: Duration,
    ping: Option<(Duration, &'static [u8])>,
) -> Response {
    let pipe = Pipe {
        sink: Sink {
            decoder,
            mode,
            meter,
        },
        reader: SseReader::default(),
        ended: false,
    };
    let chunks = upstream.bytes_stream();
    let ping_bytes = ping.map_or(&[][..], |(_, bytes)| bytes);
    let state = (
        Box::pin(chunks),
        pipe,
        Clock::new(idle, ping.map(|(every, _)| every)),
    );
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
                            out.extend(pipe.end(true));
                        }
                        out
                    }
                    Next::Item(None) => pipe.end(true),
                    Next::Item(Some(Err(e))) => {
                        tracing::warn!(error = %e, "upstream stream broke");
                        pipe.end(false)
                    }
                    Next::Idle => {
                        tracing::warn!("upstream stream idle for too long; closing");
                        pipe.end(false)
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
