//! What an upstream answered, as the relay takes it: whether another channel may do better,
//! the status the client sees, the upstream's message made safe, and the report to the
//! channel pool (health, auto-disable).

use std::time::Instant;

use serde_json::Value;
use tollgate_actors::channel_pool::routing_table::RoutedChannel;
use tollgate_actors::channel_pool::{Outcome, OutcomeSource};
use tollgate_storage::secret::Secret;

use crate::state::AppState;

/// Whether another channel may succeed where this one answered `status`: the channel's own
/// credentials or account (401, 403), a timeout (408), rate limits (429) and server errors.
/// Other 4xx are the client's mistakes and would fail everywhere.
pub(in crate::relay) fn retryable(status: u16) -> bool {
    matches!(status, 401 | 403 | 408 | 429) || status >= 500
}

/// The status the client sees for an upstream error: the channel's `status_code_mapping`
/// (e.g. `{"429": "503"}`) applied to the upstream's.
pub(in crate::relay) fn mapped_status(channel: &RoutedChannel, status: u16) -> u16 {
    channel.json.mapped_status(status)
}

/// The upstream's error message (OpenAI's `error.message`, or a top-level `message` as Cohere
/// and Suno answer, or Midjourney-proxy's `description`), with every recognisable part of
/// the channel's keys masked ([`crate::relay::pipeline::redact`]). This is the one place upstream error text
/// enters Tollgate: the client's error, the error log row and the channel's stored error are
/// all made from it.
pub(in crate::relay) fn upstream_message(
    text: &str,
    status: u16,
    channel: &RoutedChannel,
) -> String {
    // OpenAI, Anthropic, Gemini and Vertex put it in `error.message`; AWS in `message`.
    let parsed: Option<String> = serde_json::from_str::<Value>(text).ok().and_then(|v| {
        v["error"]["message"]
            .as_str()
            .or_else(|| v["message"].as_str())
            .or_else(|| v["Message"].as_str())
            .or_else(|| v["description"].as_str())
            .map(str::to_owned)
    });
    match parsed {
        Some(message) => {
            crate::relay::pipeline::redact::redact(&message, channel.channel.key_lines())
        }
        None => format!("the upstream answered HTTP {status}"),
    }
}

pub(in crate::relay) fn report(
    state: &AppState,
    channel: &RoutedChannel,
    key: Option<(usize, &Secret)>,
    status: Option<u16>,
    sent: Instant,
    error: Option<String>,
) {
    state.channel_pool.report(Outcome {
        channel: channel.id(),
        status,
        latency: sent.elapsed(),
        error,
        source: OutcomeSource::Relay,
        key: key.map(|(index, _)| index),
    });
}
