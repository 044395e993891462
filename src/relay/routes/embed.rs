//! Gemini embeddings: `POST /v1beta/models/{model}:embedContent` (`{"content": …}` →
//! `{"embedding": {"values": […]}}`) and `:batchEmbedContents` (`{"requests": [{"model",
//! "content", …}]}` → `{"embeddings": [{"values": […]}]}`).
//!
//! Vertex AI channels get the texts as `:predict` instances (text-embedding models; the answer
//! back in Gemini's shape, billed from Vertex's token counts).
//! Gemini channels get the body as received (with a mapped model the URL changes and so does
//! each batch request's `model`). OpenAI-compatible channels get `POST /v1/embeddings` with the
//! text parts of each content joined by newlines as `input` (one string, or one per batch
//! request) and `outputDimensionality` as `dimensions`; their vectors come back in Gemini's
//! shape. Claude channels cannot embed and are skipped. Billed like OpenAI embeddings: prompt
//! tokens only, through the same admission (price, reservation) and settlement as every adaptor
//! request. The prompt tokens are the upstream's (`usageMetadata.promptTokenCount`, or OpenAI's
//! `usage.prompt_tokens`) when reported, else Tollgate's count of the text parts (the log says
//! `estimated`). The answer is read by the whole-answer reader ([`crate::relay::pipeline::whole::read_whole`])
//! into the one meter: one cut off, later than the relay timeout or not JSON is billed
//! `partial` at the counted prompt and answered 502. The request is forwarded in a task of its
//! own ([`crate::relay::pipeline::detach`]): a client that leaves does not cancel it, and it is billed
//! `partial` / `client_gone`.

use std::time::Instant;

use axum::Json;
use axum::body::Bytes;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use crate::channel_types::serve::{Need, Serve};
use crate::error::RelayError;
use crate::relay::adaptor::{self, Credential, post, vertex};
use crate::relay::measure::price::Usage;
use crate::relay::measure::prompt::Prompt;
use crate::relay::measure::prompt_count::each_text;
use crate::relay::measure::tokenize::Counter;
use crate::relay::pipeline::admission::{Ask, Price};
use crate::relay::pipeline::attempt::Build;
use crate::relay::pipeline::auth::Caller;
use crate::relay::pipeline::detach::Presence;
use crate::relay::pipeline::spine::{Answer, Plan};
use crate::relay::pipeline::whole::{not_json, read_whole};
use crate::relay::wire::Wire;
use crate::state::AppState;

/// Every text part of an embed request (all of a batch).
fn texts(body: &Value, batch: bool) -> Result<Vec<&str>, RelayError> {
    fn add<'a>(texts: &mut Vec<&'a str>, content: &'a Value) {
        each_text(&content["parts"], &mut |text| texts.push(text));
    }
    let mut texts = Vec::new();
    if batch {
        let Some(requests) = body["requests"].as_array().filter(|r| !r.is_empty()) else {
            return Err(RelayError::BadRequest(
                "requests must be a non-empty array".into(),
            ));
        };
        requests.iter().for_each(|r| add(&mut texts, &r["content"]));
    } else {
        if !body["content"].is_object() {
            return Err(RelayError::BadRequest("content is required".into()));
        }
        add(&mut texts, &body["content"]);
    }
    Ok(texts)
}

/// Tokens of `texts` by the counter of `model`.
fn count(model: &str, texts: &[&str]) -> i64 {
    let counter = Counter::for_model(model);
    texts
        .iter()
        .fold(0i64, |sum, text| sum.saturating_add(counter.count(text)))
}

/// The text of a Gemini content: its text parts joined by newlines.
fn content_text(content: &Value) -> String {
    let mut parts = Vec::new();
    each_text(&content["parts"], &mut |text| parts.push(text));
    parts.join("\n")
}

/// The OpenAI `/v1/embeddings` request for a Gemini embed request.
fn openai_request(parsed: &Value, upstream_model: &str, batch: bool) -> Value {
    let (input, first) = if batch {
        let requests = parsed["requests"].as_array().map_or(&[][..], Vec::as_slice);
        let texts: Vec<String> = requests
            .iter()
            .map(|r| content_text(&r["content"]))
            .collect();
        (json!(texts), requests.first().unwrap_or(&Value::Null))
    } else {
        (json!(content_text(&parsed["content"])), parsed)
    };
    let mut body = json!({"model": upstream_model, "input": input});
    let dimensions = first
        .get("outputDimensionality")
        .or_else(|| first.get("output_dimensionality"))
        .and_then(Value::as_i64);
    if let Some(dimensions) = dimensions {
        body["dimensions"] = json!(dimensions);
    }
    body
}

/// An OpenAI embeddings answer in Gemini's shape, with its prompt tokens if reported.
fn gemini_answer(openai: &Value, batch: bool) -> (Value, Option<i64>) {
    let mut data: Vec<&Value> = openai["data"]
        .as_array()
        .map_or(Vec::new(), |d| d.iter().collect());
    data.sort_by_key(|d| d["index"].as_i64().unwrap_or(0));
    let vectors: Vec<Value> = data
        .iter()
        .map(|d| json!({"values": d["embedding"]}))
        .collect();
    let answer = if batch {
        json!({"embeddings": vectors})
    } else {
        json!({"embedding": vectors.into_iter().next().unwrap_or(json!({"values": []}))})
    };
    (answer, openai["usage"]["prompt_tokens"].as_i64())
}

/// The Vertex AI `:predict` request of a Gemini embed request (one instance per content, its
/// text parts joined; `taskType` and `title` as the instance's `task_type` and `title`,
/// `outputDimensionality` as a parameter;
/// https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/text-embeddings-api).
fn vertex_request(parsed: &Value, batch: bool) -> Value {
    let requests: Vec<&Value> = if batch {
        parsed["requests"]
            .as_array()
            .map_or(Vec::new(), |r| r.iter().collect())
    } else {
        vec![parsed]
    };
    let instances: Vec<Value> = requests
        .iter()
        .map(|r| {
            let mut instance = json!({"content": content_text(&r["content"])});
            let task = r.get("taskType").or_else(|| r.get("task_type"));
            if let Some(task) = task.filter(|t| t.is_string()) {
                instance["task_type"] = task.clone();
            }
            if let Some(title) = r.get("title").filter(|t| t.is_string()) {
                instance["title"] = title.clone();
            }
            instance
        })
        .collect();
    let mut body = json!({"instances": instances});
    let dimensions = requests.first().and_then(|r| {
        r.get("outputDimensionality")
            .or_else(|| r.get("output_dimensionality"))
            .and_then(Value::as_i64)
    });
    if let Some(dimensions) = dimensions {
        body["parameters"] = json!({"outputDimensionality": dimensions});
    }
    body
}

/// A Vertex AI `:predict` answer in Gemini's embed shape, with the token counts it reports.
fn vertex_answer(answer: &Value, batch: bool) -> (Value, Option<i64>) {
    let (vectors, tokens) = crate::relay::adaptor::cloud_embed::answer(
        crate::relay::adaptor::cloud_embed::Kind::VertexPredict,
        answer,
    );
    let embeddings: Vec<Value> = vectors.into_iter().map(|v| json!({"values": v})).collect();
    let shaped = if batch {
        json!({"embeddings": embeddings})
    } else {
        json!({"embedding": embeddings.into_iter().next().unwrap_or(json!({"values": []}))})
    };
    (shaped, tokens)
}

/// The body for a channel that maps `model` to `upstream_model`.
fn upstream_body(body: &Bytes, parsed: &Value, model: &str, upstream_model: &str) -> Bytes {
    if upstream_model == model || parsed["requests"].as_array().is_none() {
        return body.clone();
    }
    let mut value = parsed.clone();
    if let Some(requests) = value["requests"].as_array_mut() {
        for request in requests {
            if request.get("model").is_some() {
                request["model"] = Value::String(format!("models/{upstream_model}"));
            }
        }
    }
    Bytes::from(value.to_string())
}

/// Handles `:embedContent` (`batch` false) and `:batchEmbedContents` (`batch` true).
pub async fn gemini(
    state: &AppState,
    caller: Caller,
    model: &str,
    action: &str,
    body: Bytes,
) -> Result<Response, RelayError> {
    let started = Instant::now();
    let batch = action == "batchEmbedContents";
    let parsed: Value = serde_json::from_slice(&body)
        .map_err(|e| RelayError::BadRequest(format!("the request body is not valid JSON: {e}")))?;
    let estimate = count(model, &texts(&parsed, batch)?);
    let embed = GeminiEmbed {
        model: model.to_owned(),
        action: action.to_owned(),
        batch,
        body,
        parsed,
        estimate,
        started,
    };
    crate::relay::pipeline::spine::run(state, caller, embed).await
}

/// A Gemini embedding request (forwarded in a task of its own, see [`crate::relay::pipeline::detach`]: a client
/// that leaves does not cancel the call it is charged for).
struct GeminiEmbed {
    model: String,
    action: String,
    batch: bool,
    body: Bytes,
    parsed: Value,
    estimate: i64,
    started: Instant,
}

impl Plan for GeminiEmbed {
    fn model(&self) -> &str {
        &self.model
    }

    fn ask(&self) -> Ask<'_> {
        Ask::input_only(&self.model, self.estimate)
    }

    fn texts(&self) -> Vec<&str> {
        texts(&self.parsed, self.batch).unwrap_or_default()
    }

    fn need(&self) -> Need {
        Need::new(
            Serve::GeminiEmbeddings,
            "/v1beta/models/{model}:embedContent",
        )
    }

    fn started(&self) -> Instant {
        self.started
    }

    fn build(
        &self,
        state: &AppState,
        _price: &Price,
        channel: &RoutedChannel,
        wire: Wire,
        upstream_model: &str,
        key: &Credential<'_>,
    ) -> Result<Build, RelayError> {
        let vertex =
            crate::relay::adaptor::cloud_embed::kind(channel.channel.channel_type, upstream_model)
                == Some(crate::relay::adaptor::cloud_embed::Kind::VertexPredict);
        let (url, upstream) = match wire {
            Wire::Gemini if vertex => {
                let Some(url) = vertex::predict_url(channel, key, upstream_model) else {
                    return Ok(Build::Skip(RelayError::NotImplemented(
                        "Gemini embeddings through this Vertex AI key".into(),
                    )));
                };
                let request = vertex_request(&self.parsed, self.batch);
                (url, Bytes::from(request.to_string()))
            }
            Wire::Gemini => {
                let Some(url) = adaptor::gemini_url(channel, upstream_model, &self.action) else {
                    return Ok(Build::Skip(RelayError::NotImplemented(
                        "Gemini embeddings through this channel type".into(),
                    )));
                };
                (
                    url,
                    upstream_body(&self.body, &self.parsed, &self.model, upstream_model),
                )
            }
            Wire::OpenAi => {
                let Some(url) =
                    crate::relay::adaptor::openai_url(channel, "/v1/embeddings", upstream_model)
                else {
                    return Ok(Build::Skip(RelayError::NotImplemented(
                        "embeddings through this channel type".into(),
                    )));
                };
                let request = openai_request(&self.parsed, upstream_model, self.batch);
                (url, Bytes::from(request.to_string()))
            }
            Wire::Anthropic | Wire::Converse | Wire::Cohere | Wire::Responses => {
                return Ok(Build::Skip(RelayError::NotImplemented(format!(
                    "Gemini embeddings through channel type {}",
                    channel.channel.channel_type
                ))));
            }
        };
        let req = post(state, channel, wire, url, key)?
            .header(header::CONTENT_TYPE, "application/json")
            .body(upstream);
        Ok(Build::Send(Box::new(req)))
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
            ..
        } = won;
        let from_vertex = crate::relay::adaptor::cloud_embed::kind(
            routed.channel.channel_type,
            &meter.ctx().upstream_model,
        ) == Some(crate::relay::adaptor::cloud_embed::Kind::VertexPredict);
        let status = resp.status();
        let content_type = resp.headers().get(header::CONTENT_TYPE).cloned();
        // Read and billed like every whole answer (`whole`): one cut off, too late or not JSON
        // is billed as partial at the counted prompt (the upstream accepted it) and answered 502.
        let bytes = read_whole(resp, state.config.relay_timeout(), &mut meter).await?;
        let Ok(answer) = serde_json::from_slice::<Value>(&bytes) else {
            return Err(not_json(&mut meter).await);
        };
        let converted = if from_vertex {
            Some(vertex_answer(&answer, self.batch))
        } else {
            (wire == Wire::OpenAi).then(|| gemini_answer(&answer, self.batch))
        };
        let reported = match &converted {
            Some((_, tokens)) => *tokens,
            None => answer["usageMetadata"]["promptTokenCount"].as_i64(),
        };
        if let Some(tokens) = reported.filter(|t| *t >= 0) {
            meter.reported(Usage {
                prompt_tokens: tokens,
                ..Usage::default()
            });
        }
        meter.settle(presence.ending()).await;
        if let Some((converted, _)) = converted {
            return Ok(Json(converted).into_response());
        }
        let mut response = (status, bytes).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            content_type.unwrap_or(HeaderValue::from_static("application/json")),
        );
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_text_part_of_a_batch_counts() {
        let one = json!({"content": {"parts": [{"text": "abcd"}, {"text": "efgh"}]}});
        let one_texts = texts(&one, false).unwrap_or_default();
        assert_eq!(one_texts, ["abcd", "efgh"]);
        assert_eq!(count("gemini-embedding-001", &one_texts), 2);
        let batch = json!({"requests": [
            {"model": "models/m", "content": {"parts": [{"text": "abcd"}]}},
            {"model": "models/m", "content": {"parts": [{"text": "你好"}]}}]});
        let batch_texts = texts(&batch, true).unwrap_or_default();
        assert_eq!(count("gemini-embedding-001", &batch_texts), 3);
        assert!(texts(&json!({"requests": []}), true).is_err());
        assert!(texts(&json!({}), false).is_err());
    }

    #[test]
    fn openai_channels_get_the_texts_and_answer_in_gemini_shape() {
        let batch = json!({"requests": [
            {"model": "models/m", "content": {"parts": [{"text": "a"}, {"text": "b"}]},
             "outputDimensionality": 8},
            {"model": "models/m", "content": {"parts": [{"text": "c"}]}}]});
        assert_eq!(
            openai_request(&batch, "up", true),
            json!({"model": "up", "input": ["a\nb", "c"], "dimensions": 8})
        );
        let one = json!({"content": {"parts": [{"text": "x"}]}});
        assert_eq!(
            openai_request(&one, "up", false),
            json!({"model": "up", "input": "x"})
        );
        let answer = json!({"data": [{"index": 1, "embedding": [2.0]}, {"index": 0, "embedding": [1.0]}],
            "usage": {"prompt_tokens": 9}});
        assert_eq!(
            gemini_answer(&answer, true),
            (
                json!({"embeddings": [{"values": [1.0]}, {"values": [2.0]}]}),
                Some(9)
            )
        );
        assert_eq!(
            gemini_answer(&answer, false).0,
            json!({"embedding": {"values": [1.0]}})
        );
    }

    #[test]
    fn a_mapped_batch_names_the_upstream_model() {
        let raw = r#"{"requests": [{"model": "models/a", "content": {"parts": [{"text": "x"}]}}]}"#;
        let body = Bytes::from(raw);
        let parsed: Value = serde_json::from_str(raw).unwrap_or_default();
        assert_eq!(upstream_body(&body, &parsed, "a", "a"), body, "unchanged");
        let mapped: Value =
            serde_json::from_slice(&upstream_body(&body, &parsed, "a", "b")).unwrap_or_default();
        assert_eq!(mapped["requests"][0]["model"], "models/b");
    }
}
