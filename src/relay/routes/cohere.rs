//! `/v1/embeddings` and `/v1/rerank` for models served by Cohere channels (type 34): the OpenAI
//! embeddings request becomes Cohere's `POST /v2/embed` and the Jina/Cohere-style rerank
//! request Cohere's `POST /v2/rerank`; their answers come back in the client's shape. Other
//! OpenAI-compatible channels of the same route get the client's body as the OpenAI path sends
//! it (model mapped) and their answer unchanged; Claude and Gemini channels are skipped.
//!
//! Wire formats from Cohere's API reference (<https://docs.cohere.com/reference/embed>,
//! <https://docs.cohere.com/reference/rerank>, the OpenAPI document behind them).
//!
//! Billing, through the one meter like every route:
//! - embeddings: prompt tokens only, Cohere's `meta.billed_units.input_tokens` (else
//!   `meta.tokens.input_tokens`), else Tollgate's count of the texts (`estimated`);
//! - rerank: Cohere bills search units (`meta.billed_units.search_units`: a query with up to 100
//!   documents is one). A model priced per call (`ModelPrice`) costs its price per search unit
//!   (at least one); a ratio-priced one costs its prompt tokens — `meta.tokens.input_tokens`
//!   when Cohere reports them, else Tollgate's count of the query and documents (`estimated`).

use std::time::Instant;

use axum::Json;
use axum::body::Bytes;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde_json::{Value, json};
use tollgate_actors::channel_pool::routing_table::RoutedChannel;
use tollgate_actors::options::pricing::ModelPricing;

use crate::channel_types::effective_base_url;
use crate::channel_types::serve::Need;
use crate::error::RelayError;
use crate::relay::adaptor::cloud_embed;
use crate::relay::adaptor::post;
use crate::relay::adaptor::{self, Credential};
use crate::relay::measure::prompt::Prompt;
use crate::relay::measure::prompt_count::each_text;
use crate::relay::measure::tokenize::Counter;
use crate::relay::measure::usage::OpenAiUsage;
use crate::relay::pipeline::admission::{Ask, Price};
use crate::relay::pipeline::attempt::Build;
use crate::relay::pipeline::detach::Presence;
use crate::relay::pipeline::spine::{Answer, Plan};
use crate::relay::pipeline::whole::{not_json, read_whole};
use crate::relay::wire::{Wire, cohere};
use crate::state::AppState;

/// The two routes this module serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    Embeddings,
    Rerank,
}

impl Route {
    fn of(path: &str) -> Option<Route> {
        match path {
            "/v1/embeddings" => Some(Route::Embeddings),
            "/v1/rerank" => Some(Route::Rerank),
            _ => None,
        }
    }

    /// Cohere's path for the route.
    fn cohere_path(self) -> &'static str {
        match self {
            Route::Embeddings => "/v2/embed",
            Route::Rerank => "/v2/rerank",
        }
    }
}

/// The texts of a request, for counting and the sensitive-word check.
fn texts(route: Route, body: &Value) -> Vec<&str> {
    let mut texts = Vec::new();
    let mut add = |t| texts.push(t);
    match route {
        Route::Embeddings => each_text(&body["input"], &mut add),
        Route::Rerank => {
            each_text(&body["query"], &mut add);
            each_text(&body["documents"], &mut add);
        }
    }
    texts
}

/// An OpenAI embeddings request as Cohere's `/v2/embed` request; `Err` names what Cohere
/// cannot take. The input type is the client's `input_type` if it sent one (a Cohere field),
/// else `search_document`.
pub fn embed_request(body: &Value, model: &str) -> Result<Value, String> {
    let texts: Vec<&str> = match &body["input"] {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items
            .iter()
            .map(Value::as_str)
            .collect::<Option<_>>()
            .ok_or("input: Cohere channels embed text only (a string or an array of strings)")?,
        _ => return Err("input must be a string or an array of strings".into()),
    };
    let input_type = body["input_type"].as_str().unwrap_or("search_document");
    let mut request = json!({"model": model, "texts": texts, "input_type": input_type,
        "embedding_types": ["float"]});
    if let Some(dimensions) = body["dimensions"].as_i64() {
        request["output_dimension"] = json!(dimensions);
    }
    Ok(request)
}

/// A rerank document as the text Cohere v2 takes (objects by their `text`, else as JSON).
fn document_text(document: &Value) -> String {
    match document {
        Value::String(s) => s.clone(),
        other => other["text"]
            .as_str()
            .map_or_else(|| other.to_string(), str::to_owned),
    }
}

/// A rerank request as Cohere's `/v2/rerank` request.
pub fn rerank_request(body: &Value, model: &str) -> Result<Value, String> {
    let query = body["query"].as_str().ok_or("query must be a string")?;
    let documents: Vec<String> = body["documents"]
        .as_array()
        .ok_or("documents must be an array")?
        .iter()
        .map(document_text)
        .collect();
    let mut request = json!({"model": model, "query": query, "documents": documents});
    for key in ["top_n", "max_tokens_per_doc"] {
        if let Some(n) = body[key].as_i64() {
            request[key] = json!(n);
        }
    }
    Ok(request)
}

/// Cohere's float embeddings as OpenAI's list; `base64` packs each vector's little-endian
/// f32s as OpenAI does for `encoding_format: "base64"`.
pub fn embed_answer(answer: &Value, model: &str, base64: bool, prompt_tokens: i64) -> Value {
    let vectors = answer["embeddings"]["float"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    openai_embeddings(vectors, model, base64, prompt_tokens)
}

/// `vectors` (arrays of floats, in input order) as OpenAI's embeddings list; `base64` packs
/// each vector's little-endian f32s as OpenAI does for `encoding_format: "base64"`.
pub fn openai_embeddings(
    vectors: &[Value],
    model: &str,
    base64: bool,
    prompt_tokens: i64,
) -> Value {
    let data: Vec<Value> = vectors
        .iter()
        .enumerate()
        .map(|(index, vector)| {
            let embedding = if base64 {
                let bytes: Vec<u8> = vector
                    .as_array()
                    .into_iter()
                    .flatten()
                    .flat_map(|v| {
                        #[expect(
                            clippy::cast_possible_truncation,
                            reason = "OpenAI's base64 embeddings are f32"
                        )]
                        let f = v.as_f64().unwrap_or(0.0) as f32;
                        f.to_le_bytes()
                    })
                    .collect();
                json!(base64::engine::general_purpose::STANDARD.encode(bytes))
            } else {
                vector.clone()
            };
            json!({"object": "embedding", "index": index, "embedding": embedding})
        })
        .collect();
    json!({"object": "list", "data": data, "model": model,
        "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens}})
}

/// Cohere's rerank answer in the shape Tollgate's `/v1/rerank` answers (Cohere v1 / Jina):
/// `results` with each `document` when the client asked for `return_documents`, and `usage`.
pub fn rerank_answer(answer: &Value, request: &Value, prompt_tokens: i64) -> Value {
    let documents = request["documents"].as_array();
    let with_documents = request["return_documents"] == true;
    let results: Vec<Value> = answer["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let mut result = json!({"index": r["index"], "relevance_score": r["relevance_score"]});
            let document = r["index"]
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .and_then(|i| documents.and_then(|d| d.get(i)));
            if with_documents && let Some(document) = document {
                result["document"] = json!({"text": document_text(document)});
            }
            result
        })
        .collect();
    let mut out = json!({"id": answer["id"], "results": results,
        "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens}});
    if let Some(meta) = answer.get("meta") {
        out["meta"] = meta.clone();
    }
    out
}

/// Search units Cohere billed for a rerank (at least 1).
fn search_units(answer: &Value) -> f64 {
    answer["meta"]["billed_units"]["search_units"]
        .as_f64()
        .filter(|u| u.is_finite() && *u >= 1.0)
        .unwrap_or(1.0)
}

/// Input tokens Cohere reported in `meta`: for embeddings the billed ones first, for rerank
/// (billed in search units) the model's.
fn reported_tokens(route: Route, meta: &Value) -> Option<i64> {
    let billed = &meta["billed_units"]["input_tokens"];
    let seen = &meta["tokens"]["input_tokens"];
    let n = match route {
        Route::Embeddings => billed.as_f64().or_else(|| seen.as_f64()),
        Route::Rerank => seen.as_f64(),
    }?;
    Some(cohere::usage_of(&json!({"tokens": {"input_tokens": n}})).prompt_tokens)
}

/// An embeddings or rerank request of a route with Cohere (or, for embeddings, cloud)
/// channels ([`crate::relay::routes::plan::Family::Cohere`]).
pub struct Job {
    route: Route,
    path: String,
    body: Bytes,
    parsed: Value,
    model: String,
    estimate: i64,
    started: Instant,
    /// The body's spend ceiling (taken out of `body` and `parsed`).
    max_cost: Option<f64>,
}

impl Job {
    /// The plan of `body` on `path` (`/v1/embeddings` or `/v1/rerank`).
    pub fn new(mut body: Bytes, path: &str) -> Result<Job, RelayError> {
        let started = Instant::now();
        let route = Route::of(path).ok_or_else(|| RelayError::NotImplemented(path.to_owned()))?;
        let mut parsed: Value = serde_json::from_slice(&body).map_err(|e| {
            RelayError::BadRequest(format!("the request body is not valid JSON: {e}"))
        })?;
        let max_cost = crate::relay::pipeline::max_cost::take(&mut parsed, &mut body)?;
        let model = parsed["model"].as_str().unwrap_or_default().to_owned();
        let counter = Counter::for_model(&model);
        let estimate = texts(route, &parsed)
            .iter()
            .fold(0i64, |n, t| n.saturating_add(counter.count(t)));
        Ok(Job {
            route,
            path: path.to_owned(),
            body,
            parsed,
            model,
            estimate,
            started,
            max_cost,
        })
    }

    /// The upstream request for `channel`.
    fn build_for(
        &self,
        state: &AppState,
        price: &Price,
        channel: &RoutedChannel,
        wire: Wire,
        upstream_model: &str,
        key: &Credential<'_>,
    ) -> Result<Build, RelayError> {
        let c = &channel.channel;
        if cloud_embed::is_cloud(c.channel_type) {
            return self.build_cloud(state, channel, wire, upstream_model, key);
        }
        let base = effective_base_url(c.channel_type, &c.base_url);
        let (url, body) = match wire {
            Wire::Cohere => {
                let request = match self.route {
                    Route::Embeddings => embed_request(&self.parsed, upstream_model),
                    Route::Rerank => rerank_request(&self.parsed, upstream_model),
                };
                let request = request.map_err(RelayError::BadRequest)?;
                let body = Bytes::from(request.to_string());
                (format!("{base}{}", self.route.cohere_path()), body)
            }
            Wire::OpenAi => {
                let Some(url) = adaptor::openai_url(channel, &self.path, upstream_model) else {
                    return Ok(Build::Skip(RelayError::NotImplemented(format!(
                        "relaying {} to channel type {}",
                        self.path, c.channel_type
                    ))));
                };
                let body = if upstream_model == self.model || price.pass_through {
                    self.body.clone()
                } else {
                    let mut value = self.parsed.clone();
                    value["model"] = Value::String(upstream_model.to_owned());
                    Bytes::from(value.to_string())
                };
                (url, body)
            }
            Wire::Anthropic | Wire::Gemini | Wire::Converse | Wire::Responses => {
                return Ok(Build::Skip(RelayError::NotImplemented(format!(
                    "relaying {} to channel type {}",
                    self.path, c.channel_type
                ))));
            }
        };
        let req = post(state, channel, wire, url, key)?
            .header(header::CONTENT_TYPE, "application/json")
            .body(body);
        Ok(Build::Send(Box::new(req)))
    }

    /// The upstream request for a Vertex AI or Bedrock channel ([`cloud_embed`]).
    fn build_cloud(
        &self,
        state: &AppState,
        channel: &RoutedChannel,
        wire: Wire,
        upstream_model: &str,
        key: &Credential<'_>,
    ) -> Result<Build, RelayError> {
        let channel_type = channel.channel.channel_type;
        let kind = cloud_embed::kind(channel_type, upstream_model)
            .filter(|_| self.route == Route::Embeddings);
        let url = kind.and_then(|kind| cloud_embed::url(kind, channel, key, upstream_model));
        let (Some(kind), Some(url)) = (kind, url) else {
            return Ok(Build::Skip(RelayError::NotImplemented(format!(
                "relaying {} for model {upstream_model} to channel type {channel_type}",
                self.path
            ))));
        };
        let request = cloud_embed::request(kind, &self.parsed, upstream_model)
            .map_err(RelayError::BadRequest)?;
        let req = adaptor::request(
            &state.http,
            channel,
            wire,
            url,
            key,
            &[],
            Bytes::from(request.to_string()),
        )?;
        Ok(Build::Send(Box::new(req)))
    }
}

impl Plan for Job {
    fn model(&self) -> &str {
        &self.model
    }

    fn ask(&self) -> Ask<'_> {
        Ask::input_only(&self.model, self.estimate)
    }

    fn texts(&self) -> Vec<&str> {
        texts(self.route, &self.parsed)
    }

    fn need(&self) -> Need {
        Need::openai_route(&self.path, false)
    }

    fn max_cost(&self) -> Option<f64> {
        self.max_cost
    }

    fn started(&self) -> Instant {
        self.started
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
        self.build_for(state, price, channel, wire, upstream_model, key)
    }

    fn prompt(&mut self) -> Prompt {
        Prompt::known(self.estimate)
    }

    async fn answer(
        self,
        state: &AppState,
        won: Answer,
        presence: &Presence,
    ) -> Result<Response, RelayError> {
        let Answer {
            resp,
            wire,
            routed,
            mut meter,
            price,
        } = won;
        let channel_type = routed.channel.channel_type;
        let cloud = cloud_embed::kind(channel_type, &meter.ctx().upstream_model)
            .filter(|_| cloud_embed::is_cloud(channel_type));
        let status = resp.status();
        let content_type = resp.headers().get(header::CONTENT_TYPE).cloned();
        let bytes = read_whole(resp, state.config.relay_timeout(), &mut meter).await?;
        let Ok(answer) = serde_json::from_slice::<Value>(&bytes) else {
            return Err(not_json(&mut meter).await);
        };
        if let Some(kind) = cloud {
            let (vectors, reported) = cloud_embed::answer(kind, &answer);
            if let Some(tokens) = reported.filter(|t| *t >= 0) {
                meter.reported(crate::relay::measure::usage::Usage {
                    prompt_tokens: tokens,
                    cache_in_prompt: true,
                    ..crate::relay::measure::usage::Usage::default()
                });
            }
            let billed = meter.settle(presence.ending()).await.unwrap_or_default();
            let converted = openai_embeddings(
                &vectors,
                &self.model,
                self.parsed["encoding_format"] == "base64",
                billed.prompt_tokens,
            );
            return Ok(Json(converted).into_response());
        }
        if wire != Wire::Cohere {
            // An OpenAI-compatible channel's answer goes out as it came.
            if let Some(usage) = answer.get("usage").filter(|u| u.is_object())
                && let Ok(usage) = serde_json::from_value::<OpenAiUsage>(usage.clone())
            {
                meter.reported(crate::relay::measure::usage::Usage::from(&usage));
            }
            meter.settle(presence.ending()).await;
            let mut response = (status, bytes).into_response();
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                content_type.unwrap_or(HeaderValue::from_static("application/json")),
            );
            return Ok(response);
        }
        let reported = reported_tokens(self.route, &answer["meta"]);
        if let Some(tokens) = reported {
            meter.reported(crate::relay::measure::usage::Usage {
                prompt_tokens: tokens,
                cache_in_prompt: true,
                ..crate::relay::measure::usage::Usage::default()
            });
        }
        if self.route == Route::Rerank
            && let ModelPricing::PerCall { price } = price.pricing
        {
            meter.ctx_mut().pricing = ModelPricing::PerCall {
                price: price * search_units(&answer),
            };
        }
        let billed = meter.settle(presence.ending()).await.unwrap_or_default();
        let converted = match self.route {
            Route::Embeddings => embed_answer(
                &answer,
                &self.model,
                self.parsed["encoding_format"] == "base64",
                billed.prompt_tokens,
            ),
            Route::Rerank => rerank_answer(&answer, &self.parsed, billed.prompt_tokens),
        };
        Ok(Json(converted).into_response())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The request of <https://docs.cohere.com/reference/embed>'s example, from OpenAI's shape.
    #[test]
    fn embeddings_request_and_answer() {
        let openai =
            json!({"model": "embed-test", "input": ["hello", "goodbye"], "dimensions": 256});
        assert_eq!(
            embed_request(&openai, "embed-v4.0"),
            Ok(json!({"model": "embed-v4.0", "texts": ["hello", "goodbye"],
                "input_type": "search_document", "embedding_types": ["float"], "output_dimension": 256}))
        );
        let own = json!({"model": "m", "input": "q", "input_type": "search_query"});
        assert_eq!(
            embed_request(&own, "m").map(|r| r["input_type"].clone()),
            Ok(json!("search_query"))
        );
        assert!(embed_request(&json!({"input": [[1, 2]]}), "m").is_err());
        let answer = json!({"id": "da6e531f", "texts": ["hello", "goodbye"],
            "embeddings": {"float": [[0.5, -1.0], [0.25, 2.0]]},
            "meta": {"api_version": {"version": "2"}, "billed_units": {"input_tokens": 2}}});
        assert_eq!(
            embed_answer(&answer, "embed-test", false, 2),
            json!({"object": "list", "model": "embed-test",
                "data": [{"object": "embedding", "index": 0, "embedding": [0.5, -1.0]},
                    {"object": "embedding", "index": 1, "embedding": [0.25, 2.0]}],
                "usage": {"prompt_tokens": 2, "total_tokens": 2}})
        );
        // 0.5f32 = 00 00 00 3f, -1.0f32 = 00 00 80 bf (little-endian).
        let packed = embed_answer(&answer, "embed-test", true, 2);
        assert_eq!(packed["data"][0]["embedding"], "AAAAPwAAgL8=");
        assert_eq!(reported_tokens(Route::Embeddings, &answer["meta"]), Some(2));
    }

    /// The example of <https://docs.cohere.com/reference/rerank>.
    #[test]
    fn rerank_request_and_answer() {
        let request = json!({"model": "rerank-test", "query": "What is the capital of the United States?",
            "top_n": 3, "return_documents": true,
            "documents": ["Carson City is the capital city of the American state of Nevada.",
                {"text": "Washington, D.C. is the capital of the United States."}]});
        assert_eq!(
            rerank_request(&request, "rerank-v3.5"),
            Ok(
                json!({"model": "rerank-v3.5", "query": "What is the capital of the United States?",
                "top_n": 3, "documents": ["Carson City is the capital city of the American state of Nevada.",
                    "Washington, D.C. is the capital of the United States."]})
            )
        );
        let answer = json!({"id": "07734bd2", "results": [
            {"index": 1, "relevance_score": 0.999071}, {"index": 0, "relevance_score": 0.32713068}],
            "meta": {"api_version": {"version": "2", "is_experimental": false},
                "billed_units": {"search_units": 1}}});
        let out = rerank_answer(&answer, &request, 30);
        assert_eq!(
            out["results"][0],
            json!({"index": 1, "relevance_score": 0.999071,
                "document": {"text": "Washington, D.C. is the capital of the United States."}})
        );
        assert_eq!(out["usage"]["prompt_tokens"], 30);
        assert_eq!(out["meta"]["billed_units"]["search_units"], 1);
        assert_eq!(search_units(&answer), 1.0);
        assert_eq!(
            search_units(&json!({"meta": {"billed_units": {"search_units": 3}}})),
            3.0
        );
        assert_eq!(reported_tokens(Route::Rerank, &answer["meta"]), None);
    }
}
