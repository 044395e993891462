//! Streaming on the OpenAI path: the upstream's own bytes go to the client as they arrive —
//! whole events only, never re-framed or copied when a read holds whole events (what was read
//! already goes out together, in one write) — while [`SseReader`] finds the events in them
//! and usage is read from each.
//!
//! - Tollgate asks the upstream for a usage chunk (`stream_options.include_usage`); if the client
//!   did not ask for it, that chunk is not forwarded.
//! - Without an upstream usage chunk, completion tokens are counted from the streamed deltas
//!   (usage source "estimated").
//! - The upstream's comments (keep-alives such as `: PROCESSING`) go out as soon as they are
//!   whole, so a client waiting on a slow first token still sees the connection alive.
//! - If the client disconnects, the body stream is dropped: the upstream response is dropped
//!   with it (closing the upstream connection) and [`Billing`]'s `Drop` bills what was produced
//!   (usage source "partial"). Settlement happens exactly once either way.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::{Bytes, BytesMut};
use futures_util::{FutureExt, StreamExt};
use serde::Deserialize;
use tollgate_actors::quota::Hold;

use super::keepalive::{self, Clock, Next};
use super::price::Usage;
use super::prompt::Prompt;
use super::settle::{SettleCtx, UsageSource};
use super::sse::{EventTooLarge, SseReader};
use super::tokenize::Counter;

/// Usage as OpenAI reports it.
#[derive(Debug, Deserialize)]
pub struct UsageJson {
    /// Prompt tokens (`input_tokens` in the Responses API).
    #[serde(default, alias = "input_tokens")]
    pub prompt_tokens: i64,
    /// Completion tokens (`output_tokens` in the Responses API).
    #[serde(default, alias = "output_tokens")]
    pub completion_tokens: i64,
    /// Details (cached tokens).
    #[serde(default)]
    pub prompt_tokens_details: Option<PromptDetails>,
}

/// `usage.prompt_tokens_details`.
#[derive(Debug, Deserialize)]
pub struct PromptDetails {
    /// Cached prompt tokens.
    #[serde(default)]
    pub cached_tokens: i64,
}

impl From<&UsageJson> for Usage {
    fn from(u: &UsageJson) -> Usage {
        Usage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            cached_tokens: u
                .prompt_tokens_details
                .as_ref()
                .map_or(0, |d| d.cached_tokens),
            cache_write_tokens: 0,
        }
    }
}

/// The part of a chunk Tollgate reads: borrowed from the event's data, nothing copied but
/// the answer's text.
#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(default, borrow)]
    choices: Vec<ChunkChoice<'a>>,
    #[serde(default)]
    usage: Option<UsageJson>,
}

#[derive(Deserialize)]
struct ChunkChoice<'a> {
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow)]
    content: Option<Cow<'a, str>>,
}

/// The request's money while its stream runs; settles exactly once, on completion or drop.
struct Billing {
    ctx: SettleCtx,
    hold: Option<Hold>,
    prompt: Prompt,
    usage: Option<Usage>,
    /// The streamed answer text, counted only when the upstream sends no usage.
    completion_text: String,
}

impl Billing {
    fn finish(&mut self, complete: bool) {
        let Some(hold) = self.hold.take() else { return };
        let (usage, source) = match (self.usage, complete) {
            (Some(usage), true) => (usage, UsageSource::Upstream),
            (Some(usage), false) => (usage, UsageSource::Partial),
            (None, complete) => (
                Usage {
                    prompt_tokens: self.prompt.exact(),
                    completion_tokens: Counter::for_model(&self.ctx.upstream_model)
                        .count(&self.completion_text),
                    cached_tokens: 0,
                    cache_write_tokens: 0,
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
}

impl Drop for Billing {
    fn drop(&mut self) {
        self.finish(false);
    }
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
    /// `[DONE]`: forwarded, and the answer is over.
    Done,
}

/// Reads usage and text from one event's data, and decides its fate.
fn observe(billing: &mut Billing, client_wants_usage: bool, data: &str) -> Verdict {
    if data.trim() == "[DONE]" {
        return Verdict::Done;
    }
    let Ok(chunk) = serde_json::from_str::<Chunk<'_>>(data) else {
        return Verdict::Keep;
    };
    for choice in &chunk.choices {
        if let Some(text) = choice.delta.as_ref().and_then(|d| d.content.as_deref()) {
            billing.completion_text.push_str(text);
        }
    }
    match &chunk.usage {
        Some(usage) => {
            billing.usage = Some(Usage::from(usage));
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
    billing: Billing,
    clock: Clock,
    client_wants_usage: bool,
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
                        return self.end(false, out);
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
                    Ok(true) => return self.end(true, out),
                    Err(e) => {
                        // The events before it still go out; the oversized one does not.
                        tracing::warn!(error = %e, "upstream stream refused");
                        self.held = BytesMut::new();
                        return self.end(false, out);
                    }
                },
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "upstream stream broke");
                    return self.end(false, out);
                }
                None => {
                    self.last_event(&mut out);
                    return self.end(true, out);
                }
            }
        }
    }

    /// Takes one upstream read: its whole events go to `out` as slices of it (the start of an
    /// event it ends inside of is held for the next). Whether `[DONE]` was among them; an error
    /// when the event it ends inside of grew too large.
    fn read(&mut self, chunk: Bytes, out: &mut Frame) -> Result<bool, EventTooLarge> {
        if self.billing.ctx.first_byte.is_none() {
            self.billing.ctx.first_byte = Some(Instant::now());
        }
        let Relay {
            reader,
            held,
            billing,
            client_wants_usage,
            ..
        } = self;
        // `start`: where the current event starts in `chunk` (its earlier bytes, if any, are in
        // `held`); `run`: the start of the kept events not yet put in `out`.
        let (mut start, mut run, mut first, mut over) = (0, None, true, false);
        let fed = reader.feed(&chunk, |event, end| {
            if over {
                return;
            }
            let verdict = observe(billing, *client_wants_usage, event.data);
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
                Verdict::Drop => {
                    if let Some(from) = run.take() {
                        out.push(chunk.slice(from..start));
                    }
                }
            }
            start = end;
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
            billing,
            client_wants_usage,
            ..
        } = self;
        reader.finish(|event, _| {
            observe(billing, *client_wants_usage, event.data);
        });
        out.push(self.held.split().freeze());
    }

    /// Settles and sends what is left (`None` when nothing is).
    fn end(&mut self, complete: bool, out: Frame) -> Option<Bytes> {
        self.done = true;
        self.billing.finish(complete);
        out.into_bytes()
    }
}

/// Pipes an upstream SSE answer to the client, billing as it goes.
pub fn respond(
    upstream: reqwest::Response,
    mut ctx: SettleCtx,
    hold: Hold,
    prompt: Prompt,
    client_wants_usage: bool,
    idle: Duration,
    ping: Option<Duration>,
) -> Response {
    ctx.first_byte = None;
    let relay = Relay {
        chunks: Box::pin(upstream.bytes_stream()),
        reader: SseReader::default(),
        held: BytesMut::new(),
        billing: Billing {
            ctx,
            hold: Some(hold),
            prompt,
            usage: None,
            completion_text: String::new(),
        },
        clock: Clock::new(idle, ping),
        client_wants_usage,
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
