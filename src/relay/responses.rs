//! `POST /v1/responses` for models with channels that lack the Responses API: the request is
//! converted to the hub ([`super::wire::responses`]) and goes through the adaptor pipeline
//! ([`super::attempt`]), whose answer — whole or streamed — comes back as a Responses object or
//! typed events, billed by the same meter. Channels that have the API (OpenAI's own, or any
//! OpenAI-compatible channel with `setting.upstream_api: "responses"`) still get the client's
//! bytes: when every channel of the route has it, the OpenAI path relays the request as before
//! ([`super::chat`]); in a mixed route the adaptor pipeline passes it through unchanged.
//!
//! A request a chat upstream cannot honour (`previous_response_id`, built-in tools, …) is
//! answered 400 naming the field — unless a channel of the route has the API, which then serves
//! it on the OpenAI path.

use std::time::Instant;

use axum::body::Bytes;
use axum::http::HeaderMap;
use serde_json::Value;
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use super::adaptor;
use super::auth::Caller;
use super::convert::Job;
use super::prompt_count::prompt_tokens;
use super::wire::{self, Wire};
use crate::error::RelayError;
use crate::state::AppState;

/// The `model` of a request body.
#[derive(serde::Deserialize)]
struct ModelName<'a> {
    #[serde(borrow, default)]
    model: std::borrow::Cow<'a, str>,
}

/// Which channels of the caller's route for `model` (or the pinned one) speak the Responses API
/// and which do not: (some have it, some lack it).
fn route_kinds(state: &AppState, caller: &Caller, model: &str) -> (bool, bool) {
    let table = state.channel_pool.table().load();
    let mut kinds = (false, false);
    let mut look =
        |c: &RoutedChannel| match adaptor::wire(c.channel.channel_type, c.json.mapped_model(model))
            .map(|wire| wire.upstream(c, Wire::Responses))
        {
            Some(Wire::Responses) => kinds.0 = true,
            Some(_) => kinds.1 = true,
            None => {}
        };
    if let Some(id) = caller.pinned {
        if let Some(c) = table.channel(id) {
            look(c);
        }
        return kinds;
    }
    if let Some(route) = table.route(&caller.group, model) {
        route
            .tiers
            .iter()
            .flat_map(|t| t.channels.iter())
            .for_each(|c| look(c));
    }
    kinds
}

/// A Responses request as an adaptor [`Job`] when a channel of its route lacks the Responses
/// API (`None`: the OpenAI path relays it as received; a body that is not JSON is left to it).
pub fn job(state: &AppState, caller: &Caller, body: &Bytes) -> Option<Result<Job, RelayError>> {
    let started = Instant::now();
    let head: ModelName<'_> = serde_json::from_slice(body).ok()?;
    let (native, lacking) = route_kinds(state, caller, &head.model);
    if !lacking {
        return None;
    }
    let model = head.model.into_owned();
    let parsed: Value = serde_json::from_slice(body).ok()?;
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
        body: body.clone(),
        stream: parsed["stream"] == true,
        include_usage: true,
        hub,
        parsed,
        model,
        prompt_estimate,
        headers: HeaderMap::new(),
        caller: caller.clone(),
        started,
    }))
}
