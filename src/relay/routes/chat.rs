//! The OpenAI-compatible hot path for JSON endpoints: chat completions, completions, embeddings,
//! moderations, image generations, rerank and responses share it; only the upstream path differs.
//!
//! auth (memory) → price (options snapshot) → reserve (quota book) → pick a channel (routing
//! table snapshot) → forward → settle. Retries (RetryTimes) walk down the priority tiers, skip
//! channels already tried, and happen only before any byte reached the client and only for
//! retryable failures (no answer, 401/403/408/429, 5xx). Every upstream outcome is cast to the channel pool.
//!
//! The body is forwarded as received unless it must change (model mapping, the channel's
//! param_override, asking the upstream for a usage chunk, or an output limit the caller's
//! balance lowers: [`crate::relay::wire::limit`]); only then is it re-serialised. Legacy completions
//! never get a limit written (OpenAI's default there is 16, reserved as 16).

use std::time::Instant;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::Uri;
use axum::response::Response;
use serde_json::Value;
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use crate::channel_types::serve::Need;
use crate::error::RelayError;
use crate::relay::adaptor::{Credential, request};
use crate::relay::measure::prompt::Prompt;
use crate::relay::measure::prompt_count::count_prompt_with;
use crate::relay::measure::request_head::ChatHead;
use crate::relay::measure::tokenize::Counter;
use crate::relay::pipeline::admission::{Ask, Body, OutputLimit, Price};
use crate::relay::pipeline::attempt::Build;
use crate::relay::pipeline::auth::Caller;
use crate::relay::pipeline::detach::Presence;
use crate::relay::pipeline::spine::{Answer, Plan, run};
use crate::relay::pipeline::stream;
use crate::relay::pipeline::whole::finish_plain;
use crate::relay::routes::plan::{Family, plan_for};
use crate::relay::wire::Wire;
use crate::state::AppState;

/// The request's prompt tokens: Tollgate's estimate of `texts` (from [`ChatHead::texts`]) now,
/// the exact count of `body` by the model's tokenizer only if settlement needs it.
fn prompt_of(head: &ChatHead, texts: &[&str], body: &Bytes) -> Prompt {
    let estimate = count_prompt_with(Counter::Estimate, texts, head.framed_messages());
    if Counter::is_exact(&head.model) {
        Prompt::deferred(estimate, body, head.model.clone())
    } else {
        Prompt::known(estimate)
    }
}

/// Handles every JSON relay route (chat completions, completions, embeddings, moderations,
/// image generations, rerank, responses): the upstream path is the client's path.
pub async fn relay(
    State(state): State<AppState>,
    uri: Uri,
    caller: Caller,
    body: Bytes,
) -> Result<Response, RelayError> {
    serve(state, caller, body, uri.path()).await
}

/// Relays one JSON request of `caller` on route `path` (the playground comes in here too).
pub(in crate::relay) async fn serve(
    state: AppState,
    caller: Caller,
    body: Bytes,
    path: &str,
) -> Result<Response, RelayError> {
    match plan_for(&state, &caller, path, &body) {
        Family::OpenAi => {}
        Family::Adaptor => {
            if let Some(job) = crate::relay::routes::convert::foreign_chat(&body) {
                return run(&state, caller, job?).await;
            }
        }
        Family::Responses { native } => {
            if let Some(job) = crate::relay::routes::responses::job(&body, native) {
                return run(&state, caller, job?).await;
            }
        }
        Family::Cohere => {
            let plan = crate::relay::routes::cohere::Job::new(body, path)?;
            return run(&state, caller, plan).await;
        }
    }
    let plan = OpenAiPlan::new(body, path)?;
    run(&state, caller, plan).await
}

/// A JSON request on the OpenAI path: `path` is both the client's route and the upstream's
/// (owned: it runs in a task of its own, see [`crate::relay::pipeline::detach`]).
struct OpenAiPlan {
    body: Bytes,
    path: String,
    head: ChatHead,
    /// The prompt count (taken by the meter once the forward won).
    prompt: Prompt,
    started: Instant,
    /// The client asked for the usage chunk of a stream.
    client_wants_usage: bool,
    /// The body's `max_cost` (already taken out of `body`).
    max_cost: Option<f64>,
}

impl OpenAiPlan {
    fn new(body: Bytes, path: &str) -> Result<OpenAiPlan, RelayError> {
        let started = Instant::now();
        let head: ChatHead = serde_json::from_slice(&body).map_err(|e| {
            RelayError::BadRequest(format!("the request body is not valid JSON: {e}"))
        })?;
        // Tollgate's own field never reaches the upstream.
        let max_cost = head
            .max_cost
            .as_ref()
            .map(crate::relay::pipeline::max_cost::from_value)
            .transpose()?;
        let body = if max_cost.is_some() {
            crate::relay::pipeline::max_cost::strip(&body)?
        } else {
            body
        };
        let prompt = prompt_of(&head, &head.texts(), &body);
        let client_wants_usage = head
            .stream_options
            .as_ref()
            .and_then(|o| o.get("include_usage"))
            .and_then(Value::as_bool)
            == Some(true);
        Ok(OpenAiPlan {
            body,
            path: path.to_owned(),
            head,
            prompt,
            started,
            client_wants_usage,
            max_cost,
        })
    }

    /// Only text-generating routes produce output tokens to reserve for.
    fn generates(&self) -> bool {
        matches!(
            self.path.as_str(),
            "/v1/chat/completions" | "/v1/completions" | "/v1/responses"
        )
    }
}

impl Plan for OpenAiPlan {
    fn model(&self) -> &str {
        &self.head.model
    }

    fn ask(&self) -> Ask<'_> {
        let head = &self.head;
        let path = self.path.as_str();
        let generates = self.generates();
        let max_tokens = if generates {
            [
                head.max_tokens,
                head.max_completion_tokens,
                head.max_output_tokens,
            ]
            .into_iter()
            .flatten()
            .max()
        } else {
            Some(0)
        };
        // Each answer asked for may be max_tokens long (`best_of` are all generated and billed).
        let answers = if generates {
            head.n.into_iter().chain(head.best_of).max().unwrap_or(1)
        } else {
            1
        };
        let calls = if path == "/v1/images/generations" {
            crate::relay::measure::price::image_calls(
                &head.model,
                head.n,
                head.size.as_deref(),
                head.quality.as_deref(),
            )
        } else {
            1.0
        };
        let body = match path {
            "/v1/chat/completions" | "/v1/responses" => Body::Writable,
            // OpenAI's default max_tokens of legacy completions.
            "/v1/completions" => Body::Fixed { default: Some(16) },
            _ => Body::Plain,
        };
        Ask {
            model: &head.model,
            prompt_estimate: self.prompt.estimate().max(head.reserve_estimate()),
            max_tokens,
            answers,
            calls,
            needs: head.needs(),
            body,
            per_call: false,
        }
    }

    fn texts(&self) -> Vec<&str> {
        self.head.texts()
    }

    fn need(&self) -> Need {
        Need::openai_route(&self.path, self.head.stream)
    }

    fn stream(&self) -> bool {
        self.head.stream
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

    fn build(
        &self,
        state: &AppState,
        price: &Price,
        channel: &RoutedChannel,
        wire: Wire,
        upstream_model: &str,
        key: &Credential<'_>,
    ) -> Result<Build, RelayError> {
        let path = self.path.as_str();
        // Only chat completions and completions know `stream_options.include_usage`.
        let usage_chunk = matches!(path, "/v1/chat/completions" | "/v1/completions");
        let rewrite = Rewrite {
            force_usage: self.head.stream && usage_chunk && !self.client_wants_usage,
            chat: path == "/v1/chat/completions",
            pass_through: price.pass_through,
            limit: price.output,
            responses: path == "/v1/responses",
        };
        if wire != Wire::OpenAi {
            return Ok(Build::Skip(RelayError::NotImplemented(format!(
                "relaying {path} to channel type {}",
                channel.channel.channel_type
            ))));
        }
        let Some(url) = crate::relay::adaptor::openai_url(channel, path, upstream_model) else {
            return Ok(Build::Skip(RelayError::NotImplemented(format!(
                "relaying {path} to channel type {}",
                channel.channel.channel_type
            ))));
        };
        let upstream_body =
            upstream_body(&self.body, upstream_model, &self.head, rewrite, channel)?;
        // Through the transport's `request`, which signs over the body where it signs.
        let req = request(&state.http, channel, wire, url, key, &[], upstream_body)?;
        Ok(Build::Send(Box::new(req)))
    }

    fn prompt(&mut self) -> Prompt {
        std::mem::replace(&mut self.prompt, Prompt::known(0))
    }

    async fn answer(
        self,
        state: &AppState,
        won: Answer,
        presence: &Presence,
    ) -> Result<Response, RelayError> {
        let Answer {
            resp,
            routed,
            meter,
            price,
            ..
        } = won;
        let timeout = state.config.relay_timeout();
        if self.head.stream {
            let wire = if self.path == "/v1/responses" {
                Wire::Responses
            } else {
                Wire::OpenAi
            };
            return Ok(stream::respond(
                (resp, wire),
                meter,
                self.client_wants_usage,
                routed,
                timeout,
                price.ping,
            ));
        }
        finish_plain(resp, meter, timeout, presence).await
    }
}

/// What may change in a request body on its way upstream.
#[derive(Debug, Clone, Copy)]
struct Rewrite {
    /// Ask the upstream for a usage chunk.
    force_usage: bool,
    /// A chat completions request (channel system prompts apply).
    chat: bool,
    /// `global.pass_through_request_enabled`: forward every body untouched.
    pass_through: bool,
    /// The output limit admission decided (written when it says so).
    limit: OutputLimit,
    /// A Responses API request (its limit is `max_output_tokens`).
    responses: bool,
}

/// The body to send upstream: the client's bytes unless the model is mapped, the channel
/// has a param_override or a system prompt, or a usage chunk must be requested — and always
/// the client's bytes when pass-through is on (globally or for the channel).
fn upstream_body(
    body: &Bytes,
    upstream_model: &str,
    head: &ChatHead,
    rewrite: Rewrite,
    channel: &RoutedChannel,
) -> Result<Bytes, RelayError> {
    let limit = rewrite.limit.tokens.filter(|_| rewrite.limit.write);
    if rewrite.pass_through || channel.json.pass_through() {
        if let Some(limit) = limit {
            return Err(crate::relay::pipeline::admission::pass_through_refused(
                limit,
            ));
        }
        return Ok(body.clone());
    }
    let overrides = channel.json.param_override();
    let prompt = channel.json.system_prompt().filter(|_| rewrite.chat);
    let force_usage = rewrite.force_usage;
    if upstream_model == head.model
        && !force_usage
        && overrides.is_empty()
        && prompt.is_none()
        && limit.is_none()
    {
        return Ok(body.clone());
    }
    let mut value: Value = serde_json::from_slice(body)
        .map_err(|e| RelayError::BadRequest(format!("the request body is not valid JSON: {e}")))?;
    value["model"] = Value::String(upstream_model.to_owned());
    if force_usage {
        value["stream_options"]["include_usage"] = Value::Bool(true);
    }
    if let Some((prompt, override_client)) = prompt {
        crate::relay::adaptor::system_prompt::apply(
            Wire::OpenAi,
            &mut value,
            prompt,
            override_client,
        );
    }
    if let Some(limit) = limit {
        let wire = if rewrite.responses {
            Wire::Responses
        } else {
            Wire::OpenAi
        };
        crate::relay::wire::limit::write(wire, &mut value, limit, upstream_model)
            .map_err(|e| RelayError::InsufficientUserQuota(e.to_string()))?;
    }
    // The channel's param_override: its top-level keys replace the client's.
    if let Value::Object(map) = &mut value {
        map.extend(overrides.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    let bytes = serde_json::to_vec(&value).map_err(|e| RelayError::Internal(e.to_string()))?;
    Ok(Bytes::from(bytes))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn head(body: serde_json::Value) -> ChatHead {
        serde_json::from_value(body).unwrap_or_else(|e| panic!("head: {e}"))
    }

    fn estimate(body: &serde_json::Value) -> i64 {
        let head = head(body.clone());
        let bytes = Bytes::from(body.to_string());
        prompt_of(&head, &head.texts(), &bytes).estimate()
    }

    fn exact(body: &serde_json::Value) -> i64 {
        let head = head(body.clone());
        let bytes = Bytes::from(body.to_string());
        prompt_of(&head, &head.texts(), &bytes).exact()
    }

    #[test]
    fn prompt_estimate_counts_text_parts_and_framing() {
        let messages = json!([
            {"role": "system", "content": "12345678"},
            {"role": "user", "content": [{"type": "text", "text": "abcd"},
                {"type": "image_url", "image_url": {"url": "data:…"}}]},
        ]);
        // Estimator: 8/4 + 4/4 = 3 tokens, + 2 × 3 + 3 framing; for any model.
        let claude = json!({"model": "claude-x", "messages": messages});
        assert_eq!(estimate(&claude), 12);
        assert_eq!(
            exact(&claude),
            12,
            "the estimator is the exact count of non-OpenAI models"
        );
        let gpt = json!({"model": "gpt-4o", "messages": messages});
        assert_eq!(estimate(&gpt), 12);
        let embed = json!({"model": "text-embedding-3-small", "input": ["abcd", "abcdefgh"]});
        assert_eq!(estimate(&embed), 3);
        assert_eq!(estimate(&json!({"model": "x", "messages": []})), 0);
    }

    #[test]
    fn openai_models_get_the_exact_count_only_on_demand() {
        // o200k: "Hello, world!" is 4 tokens, + 3 + 3 framing. The estimator counts
        // "你好，世界Hello" as 5 CJK characters + 5 / 4 rounded up = 7, + 6 framing.
        let gpt = json!({"model": "gpt-4o",
            "messages": [{"role": "user", "content": "Hello, world!"}]});
        assert_eq!(exact(&gpt), 10);
        let embed = json!({"model": "text-embedding-3-small",
            "input": ["Hello, world!", "Hello, world!"]});
        assert_eq!(exact(&embed), 8);
        let cjk = json!({"model": "gpt-4o",
            "messages": [{"role": "user", "content": "你好，世界Hello"}]});
        assert_eq!(estimate(&cjk), 13);
        assert_ne!(
            exact(&cjk),
            estimate(&cjk),
            "counted with o200k, not estimated"
        );
        assert_eq!(
            exact(&cjk),
            Counter::for_model("gpt-4o").count("你好，世界Hello") + 6
        );
    }
}
