//! Streaming: the upstream's SSE events are piped to the client one by one (never buffered
//! whole) while usage is read from them.
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
use bytes::Bytes;
use eventsource_stream::Eventsource;
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
    let events = upstream.bytes_stream().eventsource();
    let billing = Billing {
        ctx,
        hold: Some(hold),
        prompt,
        usage: None,
        completion_text: String::new(),
    };
    let state = (Box::pin(events), billing, Clock::new(idle, ping), false);
    let body = futures_util::stream::unfold(
        state,
        move |(mut events, mut billing, mut clock, done)| async move {
            if done {
                return None;
            }
            loop {
                let next = match clock.next(&mut events).await {
                    Next::Item(next) => next,
                    Next::Ping => {
                        let ping = Bytes::from_static(keepalive::COMMENT_PING);
                        return Some((Ok(ping), (events, billing, clock, false)));
                    }
                    Next::Idle => {
                        tracing::warn!("upstream stream idle for too long; closing");
                        billing.finish(false);
                        return None;
                    }
                };
                let event = match next {
                    Some(Ok(event)) => event,
                    Some(Err(e)) => {
                        tracing::warn!(error = %e, "upstream stream broke");
                        billing.finish(false);
                        return None;
                    }
                    None => {
                        billing.finish(true);
                        return None;
                    }
                };
                if billing.ctx.first_byte.is_none() {
                    billing.ctx.first_byte = Some(Instant::now());
                }
                if event.data.trim() == "[DONE]" {
                    billing.finish(true);
                    return Some((
                        Ok::<_, std::io::Error>(Bytes::from_static(b"data: [DONE]\n\n")),
                        (events, billing, clock, true),
                    ));
                }
                let mut forward = true;
                if let Ok(chunk) = serde_json::from_str::<Chunk>(&event.data) {
                    for choice in &chunk.choices {
                        if let Some(text) = choice.delta.as_ref().and_then(|d| d.content.as_deref())
                        {
                            billing.completion_text.push_str(text);
                        }
                    }
                    if let Some(usage) = &chunk.usage {
                        billing.usage = Some(Usage::from(usage));
                        forward = client_wants_usage || !chunk.choices.is_empty();
                    }
                }
                if forward {
                    let bytes = Bytes::from(format!("data: {}\n\n", event.data));
                    return Some((Ok(bytes), (events, billing, clock, false)));
                }
            }
        },
    );
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
