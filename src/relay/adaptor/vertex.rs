//! Google Vertex AI (type 41): publisher models under a project and a location, authenticated
//! with an OAuth2 access token made from the channel's service-account JSON key
//! ([`crate::google_auth`]); the project is the key's, the location the channel's `other`
//! (`global` when empty). A key line that is not JSON is an express-mode API key: Google's
//! models at `https://aiplatform.googleapis.com/v1/publishers/google/models/{model}:{method}`
//! with no project or location, the key in `x-goog-api-key`
//! (https://cloud.google.com/vertex-ai/generative-ai/docs/start/express-mode/vertex-ai-express-mode-api-reference);
//! express mode has no partner models, so Claude needs a service account.
//!
//! - Host: `https://{location}-aiplatform.googleapis.com`, or `https://aiplatform.googleapis.com`
//!   for `global`; the channel's base URL replaces it when set.
//! - Gemini models: `POST {host}/v1/projects/{project}/locations/{location}/publishers/google/
//!   models/{model}:generateContent` (or `:streamGenerateContent?alt=sse`) with Gemini's body
//!   (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference).
//! - Claude models: `…/publishers/anthropic/models/{model}:rawPredict` (or `:streamRawPredict`)
//!   with Anthropic's Messages body, `anthropic_version: "vertex-2023-10-16"` in it and no
//!   `model` (https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/use-claude).

use serde_json::Value;
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use super::{AuthFailure, Authorizing, Credential, cloud_embed, count};
use crate::google_auth::{ServiceAccountKey, TokenError};
use crate::relay::wire::Wire;
use crate::upstream::HttpClients;

/// The `anthropic_version` Claude on Vertex AI takes in the body.
pub const ANTHROPIC_VERSION: &str = "vertex-2023-10-16";
/// The location of a channel whose `other` is empty.
pub const DEFAULT_LOCATION: &str = "global";

/// The body format of `model`: Anthropic's for Claude, Gemini's for everything else.
pub fn wire(model: &str) -> Wire {
    if is_claude(model) {
        Wire::Anthropic
    } else {
        Wire::Gemini
    }
}

fn is_claude(model: &str) -> bool {
    model.starts_with("claude")
}

/// The channel's location.
pub fn location(other: &str) -> &str {
    match other.trim() {
        "" => DEFAULT_LOCATION,
        l => l,
    }
}

/// The access token of service-account key `key` (cached; one exchange in flight per key),
/// with the key's project.
pub async fn authorize<'a>(
    http: &HttpClients,
    channel: &RoutedChannel,
    key: &'a str,
) -> Result<Credential<'a>, AuthFailure> {
    if is_api_key(key) {
        // Express mode: the API key itself, sent as `x-goog-api-key`.
        return Ok(Credential::Key(key.trim()));
    }
    let parsed = ServiceAccountKey::parse(key).map_err(failure)?;
    let client = http
        .for_proxy(&channel.channel.proxy)
        .map_err(|message| AuthFailure {
            status: None,
            message,
        })?;
    let token = http
        .google_tokens()
        .token(&client, &parsed)
        .await
        .map_err(failure)?;
    Ok(Credential::Google {
        token,
        project: parsed.project_id,
    })
}

/// A token failure as the relay reports it: a refused grant is the key's fault (the endpoint's
/// status, 401 when it answered a 400 `invalid_grant`), an unusable key a 401, no answer a
/// network failure.
fn failure(e: TokenError) -> AuthFailure {
    let status = match &e {
        TokenError::BadKey(_) => Some(401),
        TokenError::Rejected { status, .. } if *status < 500 => Some(401),
        TokenError::Rejected { status, .. } => Some(*status),
        TokenError::Unreachable(_) => None,
    };
    AuthFailure {
        status,
        message: format!("Vertex AI credentials: {e}"),
    }
}

/// The host a channel's calls go to: its base URL when set, else the location's endpoint
/// (`aiplatform.googleapis.com` for `global` and for express mode, which has no locations).
fn host(channel: &RoutedChannel, express: bool) -> String {
    let c = &channel.channel;
    let own = c.base_url.trim().trim_end_matches('/');
    let location = location(&c.other);
    if !own.is_empty() {
        own.to_owned()
    } else if express || location == "global" {
        "https://aiplatform.googleapis.com".to_owned()
    } else {
        format!(
            "https://{}-aiplatform.googleapis.com",
            super::segment(location)
        )
    }
}

/// `{host}/v1/{model resource}:{action}` for `publisher`'s `model`: under the key's project
/// and the channel's location with a service account, or (express mode, an API key)
/// `publishers/google/models/{model}` with no project or location
/// (https://cloud.google.com/vertex-ai/generative-ai/docs/start/express-mode/vertex-ai-express-mode-api-reference).
fn method_url(
    channel: &RoutedChannel,
    credential: &Credential<'_>,
    publisher: &str,
    model: &str,
    action: &str,
) -> Option<String> {
    match credential {
        Credential::Google { project, .. } => Some(format!(
            "{}/v1/projects/{}/locations/{}/publishers/{publisher}/models/{}:{action}",
            host(channel, false),
            super::segment(project),
            super::segment(location(&channel.channel.other)),
            super::segment(model),
        )),
        // Express mode serves Google's own models only.
        Credential::Key(_) if publisher == "google" => Some(format!(
            "{}/v1/publishers/google/models/{}:{action}",
            host(channel, true),
            super::segment(model),
        )),
        Credential::Key(_) | Credential::Aws(_) | Credential::Token(_) => None,
    }
}

/// The URL of a generation in `wire` for `model`.
pub fn url(
    channel: &RoutedChannel,
    credential: &Credential<'_>,
    wire: Wire,
    model: &str,
    stream: bool,
) -> Option<String> {
    let (publisher, action) = match (wire, stream) {
        (Wire::Gemini, false) => ("google", "generateContent"),
        (Wire::Gemini, true) => ("google", "streamGenerateContent?alt=sse"),
        (Wire::Anthropic, false) => ("anthropic", "rawPredict"),
        (Wire::Anthropic, true) => ("anthropic", "streamRawPredict"),
        _ => return None,
    };
    method_url(channel, credential, publisher, model, action)
}

/// The URL of a token count in `wire` for `model`: Gemini's `:countTokens` on the publisher
/// model (https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.endpoints/countTokens),
/// or for Claude the `count-tokens` model's `rawPredict`, which takes the model in the body
/// (https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/count-tokens).
pub fn count_url(
    channel: &RoutedChannel,
    credential: &Credential<'_>,
    wire: Wire,
    model: &str,
) -> Option<String> {
    match wire {
        Wire::Gemini => method_url(channel, credential, "google", model, "countTokens"),
        Wire::Anthropic => method_url(
            channel,
            credential,
            "anthropic",
            "count-tokens",
            "rawPredict",
        ),
        _ => None,
    }
}

/// The URL of `:predict` on Google's `model` (text-embedding models,
/// https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/text-embeddings-api).
pub fn predict_url(
    channel: &RoutedChannel,
    credential: &Credential<'_>,
    model: &str,
) -> Option<String> {
    method_url(channel, credential, "google", model, "predict")
}

/// The body of a Gemini `:countTokens` on Vertex AI from a Gemini API count request: Vertex
/// takes `contents`, `systemInstruction` and `tools` at the top (the Gemini API also accepts
/// them wrapped in `generateContentRequest`, which Vertex does not know).
pub fn count_body(request: &Value) -> Value {
    let inner = match request.get("generateContentRequest") {
        Some(wrapped @ Value::Object(_)) => wrapped,
        _ => request,
    };
    let mut body = serde_json::Map::new();
    for field in ["contents", "systemInstruction", "tools"] {
        if let Some(value) = inner.get(field).filter(|v| !v.is_null()) {
            body.insert(field.to_owned(), value.clone());
        }
    }
    Value::Object(body)
}

/// Whether `key` (one line of a Vertex channel's key field) is an express-mode API key rather
/// than a service account's JSON key.
pub fn is_api_key(key: &str) -> bool {
    !key.trim_start().starts_with('{')
}

/// An Anthropic Messages body made Vertex's: `anthropic_version` in the body, no `model` (it is
/// in the URL), `stream` as the call is.
pub fn fix_claude_body(body: &mut Value, stream: bool) {
    if let Value::Object(map) = body {
        map.remove("model");
        map.insert(
            "anthropic_version".into(),
            Value::String(ANTHROPIC_VERSION.into()),
        );
        if stream {
            map.insert("stream".into(), Value::Bool(true));
        } else {
            map.remove("stream");
        }
    }
}

/// Vertex AI's counts: Claude's `count-tokens` `rawPredict` (the documented body is the
/// Messages request with its `model`), Gemini's `:countTokens`.
fn count_call(
    channel: &RoutedChannel,
    wire: Wire,
    credential: &Credential<'_>,
    upstream_model: &str,
    asked: &count::Asked<'_>,
) -> Option<count::CountCall> {
    match (asked, wire) {
        (
            count::Asked::Anthropic {
                model,
                body,
                parsed,
                ..
            },
            Wire::Anthropic,
        ) => Some(count::CountCall::new(
            count_url(channel, credential, wire, upstream_model)?,
            count::with_model(body, parsed, model, upstream_model),
            "input_tokens",
            count::Reshape::InputTokens,
        )),
        (count::Asked::Gemini { parsed, .. }, Wire::Gemini) => Some(count::CountCall::new(
            count_url(channel, credential, wire, upstream_model)?,
            axum::body::Bytes::from(count_body(parsed).to_string()),
            "totalTokens",
            count::Reshape::Gemini,
        )),
        _ => None,
    }
}

/// The Vertex AI adaptor.
pub struct Vertex;

impl super::Adaptor for Vertex {
    fn name(&self) -> &'static str {
        "vertex"
    }

    fn own_api(&self) -> bool {
        true
    }

    fn wire(&self, _channel_type: i32, model: &str) -> Option<Wire> {
        Some(wire(model))
    }

    fn authorize<'k, 'f>(
        &self,
        http: &'f HttpClients,
        channel: &'f RoutedChannel,
        key: &'k str,
    ) -> Authorizing<'k, 'f>
    where
        'k: 'f,
    {
        Authorizing::Fetch(Box::pin(authorize(http, channel, key)))
    }

    fn generate_url(
        &self,
        channel: &RoutedChannel,
        credential: &Credential<'_>,
        wire: Wire,
        model: &str,
        stream: bool,
    ) -> Option<String> {
        url(channel, credential, wire, model, stream)
    }

    fn fix_body(&self, wire: Wire, body: &mut Value, stream: bool) -> bool {
        if wire == Wire::Anthropic {
            fix_claude_body(body, stream);
        }
        self.changes_body(wire)
    }

    fn changes_body(&self, wire: Wire) -> bool {
        wire == Wire::Anthropic
    }

    fn anthropic_version_header(&self) -> bool {
        false
    }

    fn bytes_only(&self, wire: Wire) -> bool {
        matches!(wire, Wire::Gemini | Wire::Converse | Wire::Anthropic)
    }

    fn count(
        &self,
        channel: &RoutedChannel,
        wire: Wire,
        credential: &Credential<'_>,
        upstream_model: &str,
        asked: &count::Asked<'_>,
    ) -> Option<count::CountCall> {
        count_call(channel, wire, credential, upstream_model, asked)
    }

    fn cloud_embeds(&self) -> bool {
        true
    }

    fn cloud_embed(&self, model: &str) -> Option<cloud_embed::Kind> {
        (!is_claude(model)).then_some(cloud_embed::Kind::VertexPredict)
    }

    fn cloud_embed_url(
        &self,
        _kind: cloud_embed::Kind,
        channel: &RoutedChannel,
        credential: &Credential<'_>,
        model: &str,
    ) -> Option<String> {
        predict_url(channel, credential, model)
    }

    fn needs_base_url(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn claude_bodies_carry_the_version_and_no_model() {
        let mut body =
            json!({"model": "claude-x", "max_tokens": 5, "messages": [], "stream": false});
        fix_claude_body(&mut body, true);
        assert_eq!(
            body,
            json!({"anthropic_version": "vertex-2023-10-16", "max_tokens": 5, "messages": [],
                "stream": true})
        );
        fix_claude_body(&mut body, false);
        assert!(body.get("stream").is_none());
    }

    #[test]
    fn publishers_by_model_and_locations() {
        assert_eq!(wire("claude-opus-4@20250514"), Wire::Anthropic);
        assert_eq!(wire("gemini-2.5-flash"), Wire::Gemini);
        assert_eq!(location(""), "global");
        assert_eq!(location(" us-east5 "), "us-east5");
    }
}
