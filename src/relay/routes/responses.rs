//! `POST /v1/responses` for models with channels that lack the Responses API: the request is
//! converted to the hub ([`crate::relay::wire::responses`]) and goes through the adaptor pipeline
//! ([`crate::relay::pipeline::attempt`]), whose answer — whole or streamed — comes back as a Responses object or
//! typed events, billed by the same meter. Channels that have the API (OpenAI's own, or any
//! OpenAI-compatible channel with `setting.upstream_api: "responses"`) still get the client's
//! bytes: when every channel of the route has it, the OpenAI path relays the request as before
//! ([`crate::relay::routes::chat`]); in a mixed route the adaptor pipeline passes it through unchanged.
//!
//! A request a chat upstream cannot honour (`previous_response_id`, built-in tools, …) is
//! answered 400 naming the field — unless a channel of the route has the API, which then serves
//! it on the OpenAI path.

use std::time::Instant;

use axum::body::Bytes;
use axum::http::HeaderMap;
use serde_json::Value;

use crate::error::RelayError;
use crate::relay::measure::prompt_count::prompt_tokens;
use crate::relay::routes::convert::Job;
use crate::relay::wire::{self, Wire};

/// A Responses request whose route has a channel without the Responses API
/// ([`crate::relay::routes::plan::Family::Responses`]) as an adaptor [`Job`] (`None`: the OpenAI path relays it
/// as received — a body that is not JSON, or one the hub cannot carry when a channel of the
/// route has the API (`native`)).
pub fn job(body: &Bytes, native: bool) -> Option<Result<Job, RelayError>> {
    let started = Instant::now();
    let mut parsed: Value = serde_json::from_slice(body).ok()?;
    let mut body = body.clone();
    let max_cost = match crate::relay::pipeline::max_cost::take(&mut parsed, &mut body) {
        Ok(max_cost) => max_cost,
        Err(e) => return Some(Err(e)),
    };
    let model = parsed["model"].as_str().unwrap_or_default().to_owned();
    let hub = match wire::responses::request_to_hub(&parsed) {
        Ok(hub) => hub,
        Err(_) if native => return None,
        Err(e) => return Some(Err(RelayError::BadRequest(e.0))),
    };
    let prompt_estimate = hub["messages"]
        .as_array()
        .map_or(0, |m| prompt_tokens(&model, m));
    Some(Ok(Job {
        client: Wire::Responses,
        body,
        stream: parsed["stream"] == true,
        include_usage: true,
        hub,
        parsed,
        model,
        prompt_estimate,
        headers: HeaderMap::new(),
        started,
        max_cost,
    }))
}
