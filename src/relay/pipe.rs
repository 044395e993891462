//! Streams of the protocol adaptors: the upstream's SSE bytes are either passed through
//! unchanged (same wire on both sides; the bytes the client gets are the upstream's, byte for
//! byte) or converted event by event ([`Encode`]); in both cases a [`Decode`] reads usage and
//! text from the events as they pass, and a [`Meter`] settles exactly once: at the end of the
//! stream, or from `Drop` when the client goes away (usage source "partial").

use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use tollgate_actors::quota::Hold;

use super::keepalive::{Clock, Next};
use super::price::Usage;
use super::settle::{SettleCtx, UsageSource};
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

/// An incremental SSE parser: bytes in, `(event, data)` pairs out.
#[derive(Debug, Default)]
pub struct SseParser {
    line: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
}

impl SseParser {
    /// Feeds bytes; returns the events they complete.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<(String, String)> {
        let mut events = Vec::new();
        for &b in bytes {
            if b == b'\n' {
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                self.line_done(&line, &mut events);
            } else {
                self.line.push(b);
            }
        }
        events
    }

    fn line_done(&mut self, line: &[u8], events: &mut Vec<(String, String)>) {
        if line.is_empty() {
            if self.has_data {
                events.push((
                    std::mem::take(&mut self.event),
                    std::mem::take(&mut self.data),
                ));
            }
            self.event.clear();
            self.has_data = false;
            return;
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_ref(), ""),
        };
        match field {
            "event" => value.clone_into(&mut self.event),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
    }

    /// Whether the bytes fed so far end at an event boundary (nothing pending), so bytes of
    /// our own may be inserted without splitting an upstream event.
    pub fn at_boundary(&self) -> bool {
        self.line.is_empty() && !self.has_data && self.event.is_empty()
    }

    /// The event left when the stream ends without a final blank line.
    pub fn flush(&mut self) -> Option<(String, String)> {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            let mut events = Vec::new();
            self.line_done(&line, &mut events);
        }
        self.has_data.then(|| {
            self.has_data = false;
            (
                std::mem::take(&mut self.event),
                std::mem::take(&mut self.data),
            )
        })
    }
}

/// Whether the client's bytes are the upstream's or re-encoded.
pub enum Mode {
    /// Forward the upstream's bytes unchanged.
    PassThrough,
    /// Re-encode every piece in the client's format.
    Convert(Box<dyn Encode>),
}

struct Pipe {
    decoder: Box<dyn Decode>,
    mode: Mode,
    meter: Meter,
    parser: SseParser,
    ended: bool,
}

impl Pipe {
    /// Handles upstream bytes; returns what to send to the client.
    fn bytes(&mut self, chunk: &[u8]) -> Vec<u8> {
        self.meter.first_byte();
        let mut out = Vec::new();
        if matches!(self.mode, Mode::PassThrough) {
            out.extend_from_slice(chunk);
        }
        for (event, data) in self.parser.feed(chunk) {
            self.event(&event, &data, &mut out);
        }
        out
    }

    fn event(&mut self, event: &str, data: &str, out: &mut Vec<u8>) {
        for piece in self.decoder.event(event, data) {
            self.meter.observe(&piece);
            if let Mode::Convert(encoder) = &mut self.mode {
                encoder.piece(&piece, out);
            }
        }
    }

    /// The upstream stream ended (`complete`: normally).
    fn end(&mut self, complete: bool) -> Vec<u8> {
        let mut out = Vec::new();
        if self.ended {
            return out;
        }
        self.ended = true;
        if let Some((event, data)) = self.parser.flush() {
            self.event(&event, &data, &mut out);
        }
        if let Mode::Convert(encoder) = &mut self.mode {
            encoder.end(&mut out);
        }
        self.meter.finish(complete);
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
        decoder,
        mode,
        meter,
        parser: SseParser::default(),
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
                    Next::Ping if pipe.parser.at_boundary() => ping_bytes.to_vec(),
                    Next::Ping => Vec::new(),
                    Next::Item(Some(Ok(chunk))) => {
                        let mut out = pipe.bytes(&chunk);
                        if pipe.decoder.done() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parser_handles_split_events_names_and_crlf() {
        let mut p = SseParser::default();
        assert!(p.feed(b"event: message_start\r\ndata: {\"a\"").is_empty());
        let events = p.feed(b":1}\r\n\r\n: comment\n\ndata: x\ndata: y\n\n");
        assert_eq!(
            events,
            vec![
                ("message_start".to_owned(), "{\"a\":1}".to_owned()),
                (String::new(), "x\ny".to_owned())
            ]
        );
        p.feed(b"data: tail");
        assert_eq!(p.flush(), Some((String::new(), "tail".to_owned())));
    }
}
