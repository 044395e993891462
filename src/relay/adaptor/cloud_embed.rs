//! OpenAI `/v1/embeddings` on Vertex AI and Bedrock channels: the request in the model's own
//! body format, the answer back as OpenAI's list (the route's flow, admission and billing are
//! [`crate::relay::routes::cohere`]'s, which serves every converted embeddings route).
//!
//! - Vertex AI text-embedding models (`gemini-embedding-001`, `text-embedding-005`, …):
//!   `POST …/publishers/google/models/{model}:predict` with `{"instances": [{"content": text}],
//!   "parameters": {"outputDimensionality": n}}`, answered `{"predictions": [{"embeddings":
//!   {"values": […], "statistics": {"token_count": n}}}]}`
//!   (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/text-embeddings-api,
//!   https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/Shared.Types/TextEmbedding).
//!   Billed from the summed `token_count` (`tokenCount` in the proto's JSON).
//! - Bedrock Titan text embeddings (`amazon.titan-embed-text-*`): InvokeModel with
//!   `{"inputText": text}` (V2 also `dimensions`), answered `{"embedding": […],
//!   "inputTextTokenCount": n}`; one text per call, so a list of several inputs is refused
//!   (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-text.html).
//!   Billed from `inputTextTokenCount`.
//! - Bedrock Cohere Embed (`cohere.embed-*`): InvokeModel with `{"texts": […], "input_type": …,
//!   "embedding_types": ["float"]}`, answered `{"embeddings": {"float": [[…]]}, …}`
//!   (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-embed.html). Its
//!   body reports no token count: billed from Tollgate's count of the texts (`estimated`), as
//!   every embeddings route does when the upstream reports none.

use serde_json::{Value, json};
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use crate::relay::adaptor::Credential;

/// How a cloud channel embeds for a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Vertex AI `:predict` of a text-embedding model.
    VertexPredict,
    /// Bedrock InvokeModel of an Amazon Titan text-embedding model.
    Titan,
    /// Bedrock InvokeModel of a Cohere Embed model.
    BedrockCohere,
}

/// Whether channels of `channel_type` embed through this module.
pub fn is_cloud(channel_type: i32) -> bool {
    super::of(channel_type).cloud_embeds()
}

/// How a channel of `channel_type` embeds with `model` (the upstream model); `None`: it cannot
/// (Claude has no embeddings; Bedrock models other than Titan and Cohere Embed are not
/// converted).
pub fn kind(channel_type: i32, model: &str) -> Option<Kind> {
    super::of(channel_type).cloud_embed(model)
}

/// The texts of an OpenAI embeddings request (a string or an array of strings; token arrays
/// cannot be embedded by these models).
fn texts(body: &Value) -> Result<Vec<&str>, String> {
    match &body["input"] {
        Value::String(s) => Ok(vec![s.as_str()]),
        Value::Array(items) if !items.is_empty() => items
            .iter()
            .map(Value::as_str)
            .collect::<Option<_>>()
            .ok_or_else(|| {
                "input: Vertex AI and Bedrock channels embed text only (a string or an array of \
                 strings)"
                    .to_owned()
            }),
        _ => Err("input must be a string or a non-empty array of strings".into()),
    }
}

/// The upstream body of an OpenAI embeddings request `body` for `kind` and `model`; `Err` says
/// what the model cannot take (the client's fault).
pub fn request(kind: Kind, body: &Value, model: &str) -> Result<Value, String> {
    let texts = texts(body)?;
    let dimensions = body["dimensions"].as_i64();
    Ok(match kind {
        Kind::VertexPredict => {
            let instances: Vec<Value> = texts.iter().map(|t| json!({"content": t})).collect();
            let mut request = json!({"instances": instances});
            if let Some(d) = dimensions {
                request["parameters"] = json!({"outputDimensionality": d});
            }
            request
        }
        Kind::Titan => {
            let [text] = texts[..] else {
                return Err(format!(
                    "model {model} embeds one text per request on Bedrock; send one input"
                ));
            };
            let mut request = json!({"inputText": text});
            if let Some(d) = dimensions {
                request["dimensions"] = json!(d);
            }
            request
        }
        Kind::BedrockCohere => {
            let input_type = body["input_type"].as_str().unwrap_or("search_document");
            json!({"texts": texts, "input_type": input_type, "embedding_types": ["float"]})
        }
    })
}

/// Where `kind` embeds `model` on `channel` (its adaptor's [`super::Adaptor::cloud_embed_url`]).
pub fn url(
    kind: Kind,
    channel: &RoutedChannel,
    credential: &Credential<'_>,
    model: &str,
) -> Option<String> {
    super::of(channel.channel.channel_type).cloud_embed_url(kind, channel, credential, model)
}

/// The vectors of an upstream answer, in input order, and the input tokens it reports.
pub fn answer(kind: Kind, answer: &Value) -> (Vec<Value>, Option<i64>) {
    match kind {
        Kind::VertexPredict => {
            let predictions = answer["predictions"]
                .as_array()
                .map_or(&[][..], Vec::as_slice);
            let vectors = predictions
                .iter()
                .map(|p| p["embeddings"]["values"].clone())
                .collect();
            let tokens = predictions.iter().try_fold(0i64, |sum, p| {
                let statistics = &p["embeddings"]["statistics"];
                let n = statistics["token_count"]
                    .as_i64()
                    .or_else(|| statistics["tokenCount"].as_i64())?;
                Some(sum.saturating_add(n))
            });
            (vectors, tokens.filter(|_| !predictions.is_empty()))
        }
        Kind::Titan => (
            vec![answer["embedding"].clone()],
            answer["inputTextTokenCount"].as_i64(),
        ),
        Kind::BedrockCohere => {
            let float = &answer["embeddings"]["float"];
            // Without embedding_types Cohere answers the plain list (`embeddings_floats`).
            let list = if float.is_array() {
                float
            } else {
                &answer["embeddings"]
            };
            (list.as_array().cloned().unwrap_or_default(), None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_the_transport_and_model() {
        assert_eq!(kind(41, "text-embedding-005"), Some(Kind::VertexPredict));
        assert_eq!(kind(41, "claude-sonnet-4@20250514"), None);
        assert_eq!(kind(33, "amazon.titan-embed-text-v2:0"), Some(Kind::Titan));
        assert_eq!(
            kind(33, "cohere.embed-multilingual-v3"),
            Some(Kind::BedrockCohere)
        );
        assert_eq!(kind(33, "amazon.nova-pro-v1:0"), None);
        assert_eq!(kind(1, "text-embedding-3-small"), None);
    }

    #[test]
    fn requests_in_each_models_format() {
        let many = json!({"input": ["a", "b"], "dimensions": 256});
        assert_eq!(
            request(Kind::VertexPredict, &many, "m"),
            Ok(json!({"instances": [{"content": "a"}, {"content": "b"}],
                "parameters": {"outputDimensionality": 256}}))
        );
        assert_eq!(
            request(Kind::BedrockCohere, &many, "m"),
            Ok(json!({"texts": ["a", "b"], "input_type": "search_document",
                "embedding_types": ["float"]}))
        );
        assert!(request(Kind::Titan, &many, "titan").is_err());
        assert_eq!(
            request(Kind::Titan, &json!({"input": "a", "dimensions": 512}), "t"),
            Ok(json!({"inputText": "a", "dimensions": 512}))
        );
        assert!(request(Kind::VertexPredict, &json!({"input": [[1, 2]]}), "m").is_err());
        assert!(request(Kind::VertexPredict, &json!({"input": []}), "m").is_err());
    }

    #[test]
    fn answers_give_vectors_and_tokens() {
        let vertex = json!({"predictions": [
            {"embeddings": {"values": [0.1], "statistics": {"token_count": 3, "truncated": false}}},
            {"embeddings": {"values": [0.2], "statistics": {"tokenCount": 4}}}]});
        assert_eq!(
            answer(Kind::VertexPredict, &vertex),
            (vec![json!([0.1]), json!([0.2])], Some(7))
        );
        let partial = json!({"predictions": [{"embeddings": {"values": [0.1]}}]});
        assert_eq!(answer(Kind::VertexPredict, &partial).1, None);
        assert_eq!(
            answer(
                Kind::Titan,
                &json!({"embedding": [0.5], "inputTextTokenCount": 9})
            ),
            (vec![json!([0.5])], Some(9))
        );
        assert_eq!(
            answer(
                Kind::BedrockCohere,
                &json!({"embeddings": {"float": [[1.0], [2.0]]}})
            ),
            (vec![json!([1.0]), json!([2.0])], None)
        );
    }
}
