//! The protocol adaptors' path: Anthropic Messages and Gemini clients, OpenAI chat clients whose
//! model is served by Claude, Gemini, Bedrock, Vertex or Responses-only channels. Admission and
//! the attempt loop are the OpenAI path's ([`crate::relay::pipeline::admission`], [`crate::relay::pipeline::attempt`]); this adds
//! the conversion between the client's wire and the channel's.
//!
//! A request whose wire is the channel's own is forwarded as received unless the model name is
//! mapped, the channel has a param_override (a Gemini request's model is in the URL, so its
//! body is never rewritten for a mapping) or the caller's balance lowers the output limit
//! ([`crate::relay::wire::limit`]), and its answer — whole or streamed — reaches the client byte for
//! byte.

use std::time::{Duration, Instant};

use axum::Json;
use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use crate::channel_types::serve::Need;
use crate::error::RelayError;
use crate::relay::adaptor::{self, Credential};
use crate::relay::measure::components::Needs;
use crate::relay::measure::prompt::Prompt;
use crate::relay::measure::prompt_count::{message_texts, prompt_tokens};
use crate::relay::pipeline::admission::{Ask, Body, Price};
use crate::relay::pipeline::attempt::Build;
use crate::relay::pipeline::auth::Caller;
use crate::relay::pipeline::detach::Presence;
use crate::relay::pipeline::keepalive;
use crate::relay::pipeline::pipe::{self, Mode};
use crate::relay::pipeline::spine::{Answer, Plan};
use crate::relay::pipeline::whole::{not_json, read_whole};
use crate::relay::wire::{self, EncodeCtx, Wire};
use crate::state::AppState;

/// A request on its way through an adaptor.
pub struct Job {
    /// The client's wire.
    pub client: Wire,
    /// The client's body as received.
    pub body: Bytes,
    /// The client's body, parsed.
    pub parsed: Value,
    /// The client's request as a hub (OpenAI chat) request.
    pub hub: Value,
    /// The model the client asked for.
    pub model: String,
    /// Streamed answer.
    pub stream: bool,
    /// OpenAI clients: whether the usage chunk was asked for.
    pub include_usage: bool,
    /// Prompt tokens by Tollgate's estimator.
    pub prompt_estimate: i64,
    /// Client headers passed on to channels of the same wire.
    pub headers: HeaderMap,
    /// When the request arrived.
    pub started: Instant,
    /// The body's spend ceiling (taken out of `body` and `parsed`:
    /// [`crate::relay::pipeline::max_cost::take`]).
    pub max_cost: Option<f64>,
}

impl Job {
    /// max_tokens of the request (the larger of max_tokens and max_completion_tokens).
    pub fn max_tokens(&self) -> Option<i64> {
        let a = self.hub["max_tokens"].as_i64();
        let b = self.hub["max_completion_tokens"].as_i64();
        match (a, b) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }
}

impl Plan for Job {
    fn model(&self) -> &str {
        &self.model
    }

    fn ask(&self) -> Ask<'_> {
        Ask {
            model: &self.model,
            prompt_estimate: self
                .prompt_estimate
                .max(crate::relay::measure::estimate::request(
                    &self.hub,
                    crate::relay::measure::estimate::ImageRule::for_model(&self.model),
                )),
            max_tokens: self.max_tokens(),
            answers: self.hub["n"].as_i64().unwrap_or(1),
            calls: 1.0,
            needs: Needs::of_body(&self.parsed, &self.headers),
            body: Body::Writable,
            per_call: false,
        }
    }

    fn texts(&self) -> Vec<&str> {
        self.hub["messages"]
            .as_array()
            .map(|m| message_texts(m))
            .unwrap_or_default()
    }

    fn need(&self) -> Need {
        let route = match self.client {
            Wire::OpenAi => "/v1/chat/completions",
            Wire::Anthropic => "/v1/messages",
            Wire::Gemini => "/v1beta/models/{model}:generateContent",
            Wire::Responses => "/v1/responses",
            // No client speaks these; named for completeness.
            Wire::Converse | Wire::Cohere => "/v1/chat/completions",
        };
        Need::chat(self.stream, route)
    }

    fn stream(&self) -> bool {
        self.stream
    }

    fn max_cost(&self) -> Option<f64> {
        self.max_cost
    }

    fn started(&self) -> Instant {
        self.started
    }

    fn sticky_body(&self) -> Option<&[u8]> {
        Some(&self.body)
    }

    /// Inlines the remote media the channels need as data ([`crate::relay::pipeline::media`]).
    async fn prepare(&mut self, state: &AppState, caller: &Caller) -> Result<(), RelayError> {
        let media = crate::relay::pipeline::media::JobMedia {
            client: self.client,
            model: &self.model,
            caller,
            hub: &mut self.hub,
            parsed: &mut self.parsed,
        };
        crate::relay::pipeline::media::inline_remote(state, media).await
    }

    fn build(
        &self,
        state: &AppState,
        price: &Price,
        channel: &RoutedChannel,
        wire: Wire,
        upstream_model: &str,
        key: &Credential<'_>,
    ) -> Result<Build, RelayError> {
        let wire = wire.upstream(channel, self.client);
        let limit = price.output.tokens.filter(|_| price.output.write);
        let body = match upstream_body(
            self,
            channel,
            wire,
            upstream_model,
            (price.pass_through, limit),
        ) {
            Ok(body) => body,
            Err(Refused::Client(e)) => return Err(e),
            // This channel cannot take the request; another may.
            Err(Refused::Channel(e)) => return Ok(Build::Skip(e)),
        };
        request(state, self, channel, wire, upstream_model, key, body)
    }

    fn prompt(&mut self) -> Prompt {
        Prompt::known(self.prompt_estimate)
    }

    async fn answer(
        self,
        state: &AppState,
        won: Answer,
        presence: &Presence,
    ) -> Result<Response, RelayError> {
        answer(&self, won, state.config.relay_timeout(), presence).await
    }
}

/// Why [`upstream_body`] made no body.
enum Refused {
    /// The request is wrong whatever the channel (answered to the client).
    Client(RelayError),
    /// This channel's format cannot carry the request (another channel may).
    Channel(RelayError),
}

/// The body for `upstream`: the client's bytes when nothing needs to change, or when the
/// wires match and pass-through is on (`pass_through`: the global option, or the channel's) and
/// the channel's transport takes the format as it is (Vertex and Bedrock move Claude's model into
/// the URL and want `anthropic_version` in the body).
fn upstream_body(
    job: &Job,
    channel: &RoutedChannel,
    upstream: Wire,
    upstream_model: &str,
    (pass_through, limit): (bool, Option<i64>),
) -> Result<Bytes, Refused> {
    let channel_type = channel.channel.channel_type;
    let overrides = channel.json.param_override();
    let prompt = channel.json.system_prompt();
    let untouched = overrides.is_empty() && prompt.is_none() && limit.is_none();
    let as_is = !adaptor::changes_body(channel_type, upstream);
    if upstream == job.client && as_is && (pass_through || channel.json.pass_through()) {
        if let Some(limit) = limit {
            return Err(Refused::Client(
                crate::relay::pipeline::admission::pass_through_refused(limit),
            ));
        }
        return Ok(job.body.clone());
    }
    let mut value = if upstream == job.client {
        match upstream {
            Wire::Anthropic if upstream_model == job.model && untouched && as_is => {
                return Ok(job.body.clone());
            }
            Wire::Gemini if untouched => return Ok(job.body.clone()),
            Wire::Responses if upstream_model == job.model && untouched => {
                return Ok(job.body.clone());
            }
            Wire::Responses => {
                let mut value = job.parsed.clone();
                value["model"] = Value::String(upstream_model.to_owned());
                value
            }
            Wire::Anthropic => {
                let mut value = job.parsed.clone();
                value["model"] = Value::String(upstream_model.to_owned());
                value
            }
            Wire::Gemini => job.parsed.clone(),
            Wire::OpenAi | Wire::Converse => {
                wire::openai::request_for_upstream(&job.hub, upstream_model, job.stream)
            }
            // No client speaks Cohere.
            Wire::Cohere => wire::from_hub_request(upstream, &job.hub, upstream_model, job.stream)
                .map_err(|e| Refused::Channel(RelayError::BadRequest(e.0)))?,
        }
    } else {
        wire::from_hub_request(upstream, &job.hub, upstream_model, job.stream)
            .map_err(|e| Refused::Channel(RelayError::BadRequest(e.0)))?
    };
    if let Some((prompt, override_client)) = prompt {
        crate::relay::adaptor::system_prompt::apply(upstream, &mut value, prompt, override_client);
    }
    if let Some(limit) = limit {
        wire::limit::write(upstream, &mut value, limit, upstream_model)
            .map_err(|e| Refused::Client(RelayError::InsufficientUserQuota(e.to_string())))?;
    }
    if let Value::Object(map) = &mut value {
        map.extend(overrides.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    adaptor::fix_body(channel_type, upstream, &mut value, job.stream);
    if upstream == Wire::Anthropic
        && job.client == Wire::Anthropic
        && let Some(betas) = job
            .headers
            .get("anthropic-beta")
            .and_then(|v| v.to_str().ok())
    {
        adaptor::anthropic_betas(channel_type, &mut value, betas);
    }
    serde_json::to_vec(&value)
        .map(Bytes::from)
        .map_err(|e| Refused::Client(RelayError::Internal(e.to_string())))
}

/// The upstream request of `job` for `channel`, or why this channel cannot take it.
fn request(
    state: &AppState,
    job: &Job,
    channel: &RoutedChannel,
    wire: Wire,
    upstream_model: &str,
    key: &Credential<'_>,
    body: Bytes,
) -> Result<Build, RelayError> {
    let Some(url) = adaptor::generate_url(channel, key, wire, upstream_model, job.stream) else {
        return Ok(Build::Skip(RelayError::NotImplemented(format!(
            "relaying this request to channel type {}",
            channel.channel.channel_type
        ))));
    };
    let headers = if wire == Wire::Anthropic {
        let own = job.client == Wire::Anthropic;
        adaptor::anthropic_headers(channel.channel.channel_type, own.then_some(&job.headers))
    } else {
        Vec::new()
    };
    adaptor::request(&state.http, channel, wire, url, key, &headers, body)
        .map(|req| Build::Send(Box::new(req)))
}

/// Answers the client from a successful upstream response, settling the bill.
async fn answer(
    job: &Job,
    won: Answer,
    timeout: Duration,
    presence: &Presence,
) -> Result<Response, RelayError> {
    let upstream = won.wire.upstream(&won.routed, job.client);
    let Answer {
        resp,
        routed,
        mut meter,
        price,
        ..
    } = won;
    let ping = price.ping;
    let same = upstream == job.client;
    if job.stream && same && upstream == Wire::OpenAi {
        // An OpenAI client reaching an OpenAI channel of a mixed route: the OpenAI path's
        // pipe, which forwards every event as the upstream sent it (only the usage chunk the
        // client did not ask for is held back) — no re-encoding, no field lost.
        return Ok(crate::relay::pipeline::stream::respond(
            (resp, Wire::OpenAi),
            meter,
            job.include_usage,
            routed,
            timeout,
            ping,
        ));
    }
    if job.stream {
        let mode = if same && upstream != Wire::OpenAi {
            Mode::PassThrough
        } else {
            Mode::Convert(wire::encoder(
                job.client,
                EncodeCtx {
                    model: job.model.clone(),
                    prompt_estimate: job.prompt_estimate,
                    include_usage: job.include_usage,
                },
            ))
        };
        let ping = ping.map(|every| {
            let bytes = match job.client {
                Wire::Anthropic => keepalive::ANTHROPIC_PING,
                Wire::OpenAi | Wire::Gemini | Wire::Converse | Wire::Cohere | Wire::Responses => {
                    keepalive::COMMENT_PING
                }
            };
            (every, bytes)
        });
        let framing = adaptor::framing(routed.channel.channel_type);
        return Ok(pipe::respond(
            adaptor::chunks(resp, framing),
            wire::decoder(upstream),
            mode,
            meter,
            routed,
            (upstream, timeout),
            ping,
        ));
    }
    let status = resp.status();
    let content_type = resp.headers().get(header::CONTENT_TYPE).cloned();
    let bytes = read_whole(resp, timeout, &mut meter).await?;
    let Some((hub, usage)) = wire::read_answer(upstream, &bytes) else {
        return Err(not_json(&mut meter).await);
    };
    match usage {
        Some(usage) => meter.reported(usage),
        None => meter.output(&wire::hub_answer_text(&hub)),
    }
    let usage = meter.settle(presence.ending()).await.unwrap_or_default();
    let mut hub = hub;
    if hub.get("usage").is_none_or(Value::is_null) {
        hub["usage"] = wire::openai::usage_json(&usage);
    }
    if same {
        let mut response = (status, bytes).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            content_type.unwrap_or(HeaderValue::from_static("application/json")),
        );
        return Ok(response);
    }
    Ok(Json(wire::from_hub_answer(job.client, &hub, &job.model)).into_response())
}

/// An OpenAI chat request whose model has a channel of another wire
/// ([`crate::relay::routes::plan::Family::Adaptor`]), as a [`Job`] (`None`: a body that is not JSON is left to
/// the OpenAI path).
pub fn foreign_chat(body: &Bytes) -> Option<Result<Job, RelayError>> {
    let started = Instant::now();
    let mut parsed: Value = serde_json::from_slice(body).ok()?;
    let mut body = body.clone();
    let max_cost = match crate::relay::pipeline::max_cost::take(&mut parsed, &mut body) {
        Ok(max_cost) => max_cost,
        Err(e) => return Some(Err(e)),
    };
    let model = parsed["model"].as_str()?.to_owned();
    let Some(messages) = parsed["messages"].as_array() else {
        return Some(Err(RelayError::BadRequest(
            "messages must be an array".into(),
        )));
    };
    let prompt_estimate = prompt_tokens(&model, messages);
    Some(Ok(Job {
        client: Wire::OpenAi,
        body,
        stream: parsed["stream"] == true,
        include_usage: parsed["stream_options"]["include_usage"] == true,
        hub: parsed.clone(),
        parsed,
        model,
        prompt_estimate,
        headers: HeaderMap::new(),
        started,
        max_cost,
    }))
}
