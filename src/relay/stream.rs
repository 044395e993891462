//! Streaming: the upstream's SSE events are piped to the client as they arrive (never buffered
//! whole; the events already received go out together, in one write) while usage is read from
//! them.
//!
//! - Tollgate asks the upstream for a usage chunk (`stream_options.include_usage`); if the client
//!   did not ask for it, that chunk is not forwarded.
//! - Without an upstream usage chunk, completion tokens are counted from the streamed deltas
//!   (usage source "estimated").
//! - If the client disconnects, the body stream is dropped: the upstream response is dropped
//!   with it (closing the upstream connection) and [`Billing`]'s `Drop` bills what was produced
//!   (usage source "partial"). Settlement happens exactly once either way.

use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::{Bytes, BytesMut};
use eventsource_stream::Eventsource;
use futures_util::{FutureExt, StreamExt};
use serde::Deserialize;
use tollgate_actors::quota::Hold;

use super::keepalive::{self, Clock, Next};
use super::price::Usage;
use super::prompt::Prompt;
use super::settle::{SettleCtx, UsageSource};
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

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<ChunkChoice>,
    #[serde(default)]
    usage: Option<UsageJson>,
}

#[derive(Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    delta: Option<Delta>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
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

/// Events already received are sent together up to this many bytes, so a fast upstream's long
/// answer still goes out in pieces rather than gathering in memory.
const FRAME_MAX: usize = 16 * 1024;

/// The upstream's events, parsed as they arrive.
type Events = std::pin::Pin<
    Box<
        dyn futures_util::Stream<
                Item = Result<
                    eventsource_stream::Event,
                    eventsource_stream::EventStreamError<reqwest::Error>,
                >,
            > + Send,
    >,
>;

/// One answer's stream: the upstream's events in, the client's bytes out, the bill kept.
struct Relay {
    events: Events,
    billing: Billing,
    clock: Clock,
    client_wants_usage: bool,
    done: bool,
}

impl Relay {
    /// The next bytes for the client: every event the upstream has already sent, in one frame
    /// (one write to the socket instead of one per event), or a keep-alive ping while the
    /// upstream is quiet. `None` once the answer is over.
    async fn next_frame(&mut self) -> Option<Bytes> {
        if self.done {
            return None;
        }
        let mut out = BytesMut::new();
        loop {
            let next = if out.is_empty() {
                match self.clock.next(&mut self.events).await {
                    Next::Item(next) => next,
                    Next::Ping => return Some(Bytes::from_static(keepalive::COMMENT_PING)),
                    Next::Idle => {
                        tracing::warn!("upstream stream idle for too long; closing");
                        return self.end(false, out);
                    }
                }
            } else if out.len() >= FRAME_MAX {
                return Some(out.freeze());
            } else {
                match self.events.next().now_or_never() {
                    Some(next) => next,
                    None => return Some(out.freeze()),
                }
            };
            let event = match next {
                Some(Ok(event)) => event,
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "upstream stream broke");
                    return self.end(false, out);
                }
                None => return self.end(true, out),
            };
            if self.billing.ctx.first_byte.is_none() {
                self.billing.ctx.first_byte = Some(Instant::now());
            }
            if event.data.trim() == "[DONE]" {
                out.extend_from_slice(b"data: [DONE]\n\n");
                return self.end(true, out);
            }
            if self.observe(&event.data) {
                out.extend_from_slice(b"data: ");
                out.extend_from_slice(event.data.as_bytes());
                out.extend_from_slice(b"\n\n");
            }
        }
    }

    /// Reads usage and text from one event's data; whether the event goes to the client (the
    /// usage-only chunk Tollgate asked for on its own does not).
    fn observe(&mut self, data: &str) -> bool {
        let Ok(chunk) = serde_json::from_str::<Chunk>(data) else {
            return true;
        };
        for choice in &chunk.choices {
            if let Some(text) = choice.delta.as_ref().and_then(|d| d.content.as_deref()) {
                self.billing.completion_text.push_str(text);
            }
        }
        match &chunk.usage {
            Some(usage) => {
                self.billing.usage = Some(Usage::from(usage));
                self.client_wants_usage || !chunk.choices.is_empty()
            }
            None => true,
        }
    }

    /// Settles and sends what is left (`None` when nothing is).
    fn end(&mut self, complete: bool, out: BytesMut) -> Option<Bytes> {
        self.done = true;
        self.billing.finish(complete);
        (!out.is_empty()).then(|| out.freeze())
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
        events: Box::pin(upstream.bytes_stream().eventsource()),
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
