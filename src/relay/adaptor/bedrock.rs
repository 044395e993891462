//! AWS Bedrock runtime (type 33): model URLs on `https://bedrock-runtime.{region}.amazonaws.com`
//! (the channel's base URL replaces the host when set), signed with SigV4 by the maintained
//! `aws-sigv4` crate (service `bedrock`, the key's region, an optional session token) or, with a
//! Bedrock API key, sent with `Authorization: Bearer`.
//!
//! - Claude (a model id naming `anthropic.`, cross-region inference profiles such as
//!   `us.anthropic.…` included): `POST /model/{modelId}/invoke` and
//!   `/model/{modelId}/invoke-with-response-stream` with Anthropic's Messages body,
//!   `anthropic_version: "bedrock-2023-05-31"` in it and no `model` or `stream`
//!   (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html,
//!   https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html).
//! - Every other model: `POST /model/{modelId}/converse` and `/model/{modelId}/converse-stream`
//!   with the Converse body ([`crate::relay::wire::converse`];
//!   https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html).
//! - Streams are `application/vnd.amazon.eventstream` ([`super::eventstream`]).
//!
//! Keys: `AK|SK|region` or `AK|SK|region|session token` (SigV4), or `APIKey|region` (a Bedrock
//! API key, https://docs.aws.amazon.com/bedrock/latest/userguide/api-keys-use.html).

use std::time::SystemTime;

use axum::body::Bytes;
use axum::http::header;
use serde_json::Value;
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use super::{AuthFailure, Authorizing, Credential, Framing, cloud_embed, count};
use crate::error::RelayError;
use crate::relay::wire::Wire;
use crate::upstream::HttpClients;

/// The `anthropic_version` Claude on Bedrock takes in the body.
pub const ANTHROPIC_VERSION: &str = "bedrock-2023-05-31";
/// The SigV4 service name of the Bedrock runtime.
const SERVICE: &str = "bedrock";

/// The body format of `model`: Anthropic's (InvokeModel) for Claude, Converse's otherwise.
pub fn wire(model: &str) -> Wire {
    if model.contains("anthropic.") || model.starts_with("claude") {
        Wire::Anthropic
    } else {
        Wire::Converse
    }
}

/// One Bedrock credential line. Holds secrets: it has no `Debug`.
pub struct AwsKey {
    access_key: String,
    secret_key: String,
    session_token: Option<String>,
    /// A Bedrock API key (sent as a bearer token instead of signing).
    api_key: Option<String>,
    region: String,
}

impl AwsKey {
    /// Parses `AK|SK|region[|session token]` or `APIKey|region`. The error never quotes the key.
    pub fn parse(line: &str) -> Result<AwsKey, String> {
        let parts: Vec<&str> = line.trim().split('|').map(str::trim).collect();
        let bad = || {
            "the AWS key must be `AK|SK|region`, `AK|SK|region|session token` or `APIKey|region`"
                .to_owned()
        };
        if parts.iter().any(|p| p.is_empty()) {
            return Err(bad());
        }
        match parts[..] {
            [api_key, region] => Ok(AwsKey {
                access_key: String::new(),
                secret_key: String::new(),
                session_token: None,
                api_key: Some(api_key.to_owned()),
                region: region.to_owned(),
            }),
            [ak, sk, region] | [ak, sk, region, _] => Ok(AwsKey {
                access_key: ak.to_owned(),
                secret_key: sk.to_owned(),
                session_token: parts.get(3).map(|t| (*t).to_owned()),
                api_key: None,
                region: region.to_owned(),
            }),
            _ => Err(bad()),
        }
    }

    /// The Bedrock API key, when the line is one.
    pub fn bearer(&self) -> Option<&str> {
        self.api_key.as_deref()
    }

    /// The region.
    pub fn region(&self) -> &str {
        &self.region
    }
}

/// The runtime host of `key`'s region, or the channel's base URL when set.
fn host(channel: &RoutedChannel, key: &AwsKey) -> String {
    let own = channel.channel.base_url.trim().trim_end_matches('/');
    if own.is_empty() {
        format!(
            "https://bedrock-runtime.{}.amazonaws.com",
            super::segment(key.region())
        )
    } else {
        own.to_owned()
    }
}

/// The URL of a generation in `wire` for `model` (a model id or an inference profile).
pub fn url(
    channel: &RoutedChannel,
    credential: &Credential<'_>,
    wire: Wire,
    model: &str,
    stream: bool,
) -> Option<String> {
    let Credential::Aws(key) = credential else {
        return None;
    };
    let action = match (wire, stream) {
        (Wire::Anthropic, false) => "invoke",
        (Wire::Anthropic, true) => "invoke-with-response-stream",
        (Wire::Converse, false) => "converse",
        (Wire::Converse, true) => "converse-stream",
        _ => return None,
    };
    Some(format!(
        "{}/model/{}/{action}",
        host(channel, key),
        super::segment(model)
    ))
}

/// The URL of `operation` on `model`: `count-tokens` (`CountTokens`,
/// https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CountTokens.html) or
/// `invoke` (`InvokeModel`, for embedding models).
pub fn model_url(
    channel: &RoutedChannel,
    credential: &Credential<'_>,
    model: &str,
    operation: &str,
) -> Option<String> {
    let Credential::Aws(key) = credential else {
        return None;
    };
    Some(format!(
        "{}/model/{}/{operation}",
        host(channel, key),
        super::segment(model)
    ))
}

/// The `CountTokens` body for an InvokeModel request body (`input.invokeModel.body`, a blob:
/// base64 in the JSON protocol; https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModelTokensRequest.html).
pub fn count_invoke_body(invoke_body: &Value) -> Value {
    use base64::Engine;
    let blob = base64::engine::general_purpose::STANDARD.encode(invoke_body.to_string());
    serde_json::json!({"input": {"invokeModel": {"body": blob}}})
}

/// The `CountTokens` body for a Converse request: its `messages` and `system`, the members of
/// `ConverseTokensRequest` (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseTokensRequest.html).
pub fn count_converse_body(converse: &Value) -> Value {
    let mut tokens = serde_json::Map::new();
    for field in ["messages", "system"] {
        if let Some(value) = converse.get(field).filter(|v| !v.is_null()) {
            tokens.insert(field.to_owned(), value.clone());
        }
    }
    serde_json::json!({"input": {"converse": Value::Object(tokens)}})
}

/// An Anthropic Messages body made Bedrock's: `anthropic_version` in the body, no `model` (it is
/// in the URL) and no `stream` (the operation says it).
pub fn fix_claude_body(body: &mut Value) {
    if let Value::Object(map) = body {
        map.remove("model");
        map.remove("stream");
        map.insert(
            "anthropic_version".into(),
            Value::String(ANTHROPIC_VERSION.into()),
        );
    }
}

/// Puts an Anthropic client's `anthropic-beta` header (comma-separated) into a Bedrock Claude
/// body as `anthropic_beta`, the list Bedrock takes in the body instead of the header.
pub fn add_betas(body: &mut Value, header: &str) {
    let betas: Vec<Value> = header
        .split(',')
        .map(str::trim)
        .filter(|b| !b.is_empty())
        .map(|b| Value::String(b.to_owned()))
        .collect();
    if let Value::Object(map) = body
        && !betas.is_empty()
    {
        map.insert("anthropic_beta".into(), Value::Array(betas));
    }
}

/// A POST of the JSON `body` to `url`, signed with SigV4 for `key`.
pub fn signed(
    http: &HttpClients,
    channel: &RoutedChannel,
    key: &AwsKey,
    url: &str,
    body: Bytes,
) -> Result<reqwest::RequestBuilder, RelayError> {
    let client = http
        .for_proxy(&channel.channel.proxy)
        .map_err(RelayError::Unreachable)?;
    let parsed = http.url(url).map_err(RelayError::Unreachable)?;
    let headers = sign(
        key,
        "POST",
        &parsed,
        &[("content-type", "application/json")],
        &body,
        SystemTime::now(),
    )
    .map_err(RelayError::Internal)?;
    let mut req = client
        .post(parsed)
        .header(header::CONTENT_TYPE, "application/json")
        .body(body);
    for (name, value) in headers {
        req = req.header(name, value);
    }
    Ok(req)
}

/// `host[:port]` of `url`, as the Host header carries it.
fn authority(url: &reqwest::Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }
}

/// The headers SigV4 adds to a request (`authorization`, `x-amz-date`, and
/// `x-amz-security-token` with a session token) for `key` at `time`. `headers` are the request's
/// own headers to sign besides `host`.
pub fn sign(
    key: &AwsKey,
    method: &str,
    url: &reqwest::Url,
    headers: &[(&str, &str)],
    body: &[u8],
    time: SystemTime,
) -> Result<Vec<(String, String)>, String> {
    sign_for(SERVICE, key, method, url, headers, body, time)
}

/// [`sign`] for any service (the published test suite signs service `service`).
fn sign_for(
    service: &str,
    key: &AwsKey,
    method: &str,
    url: &reqwest::Url,
    headers: &[(&str, &str)],
    body: &[u8],
    time: SystemTime,
) -> Result<Vec<(String, String)>, String> {
    use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings};
    use aws_sigv4::sign::v4;

    let identity = aws_credential_types::Credentials::new(
        key.access_key.clone(),
        key.secret_key.clone(),
        key.session_token.clone(),
        None,
        "tollgate-channel",
    )
    .into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(&key.region)
        .name(service)
        .time(time)
        .settings(SigningSettings::default())
        .build()
        .map_err(|e| format!("SigV4 parameters: {e}"))?
        .into();
    let host = authority(url);
    let all = std::iter::once(("host", host.as_str())).chain(headers.iter().copied());
    let signable = SignableRequest::new(method, url.as_str(), all, SignableBody::Bytes(body))
        .map_err(|e| format!("SigV4 request: {e}"))?;
    let (instructions, _) = aws_sigv4::http_request::sign(signable, &params)
        .map_err(|e| format!("SigV4 signing: {e}"))?
        .into_parts();
    Ok(instructions
        .headers()
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect())
}

/// Bedrock's `CountTokens`, over the InvokeModel body for Claude or the Converse messages.
fn count_call(
    channel: &RoutedChannel,
    wire: Wire,
    credential: &Credential<'_>,
    upstream_model: &str,
    asked: &count::Asked<'_>,
) -> Option<count::CountCall> {
    let count::Asked::Anthropic {
        parsed,
        hub,
        headers,
        ..
    } = asked
    else {
        return None;
    };
    let body = match wire {
        Wire::Anthropic => {
            // The InvokeModel body Tollgate would send for this conversation.
            let mut invoke = (*parsed).clone();
            fix_claude_body(&mut invoke);
            if let Some(betas) = headers.get("anthropic-beta").and_then(|v| v.to_str().ok()) {
                add_betas(&mut invoke, betas);
            }
            // `max_tokens` is required in an InvokeModel Claude body (a count request has none;
            // https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html).
            if invoke.get("max_tokens").is_none() {
                invoke["max_tokens"] = serde_json::json!(1);
            }
            count_invoke_body(&invoke)
        }
        Wire::Converse => {
            let converse = crate::relay::wire::converse::request_from_hub(hub).ok()?;
            count_converse_body(&converse)
        }
        _ => return None,
    };
    let mut call = count::CountCall::new(
        model_url(channel, credential, upstream_model, "count-tokens")?,
        Bytes::from(body.to_string()),
        "inputTokens",
        count::Reshape::InputTokens,
    );
    call.client_faults = false;
    Some(call)
}

/// The Bedrock runtime adaptor.
pub struct Bedrock;

impl super::Adaptor for Bedrock {
    fn name(&self) -> &'static str {
        "bedrock"
    }

    fn own_api(&self) -> bool {
        true
    }

    fn wire(&self, _channel_type: i32, model: &str) -> Option<Wire> {
        Some(wire(model))
    }

    fn authorize<'k, 'f>(
        &self,
        _http: &'f HttpClients,
        _channel: &'f RoutedChannel,
        key: &'k str,
    ) -> Authorizing<'k, 'f>
    where
        'k: 'f,
    {
        Authorizing::Ready(
            AwsKey::parse(key)
                .map(Credential::Aws)
                .map_err(|message| AuthFailure {
                    status: Some(401),
                    message,
                }),
        )
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

    fn fix_body(&self, wire: Wire, body: &mut Value, _stream: bool) -> bool {
        if wire == Wire::Anthropic {
            fix_claude_body(body);
        }
        self.changes_body(wire)
    }

    fn changes_body(&self, wire: Wire) -> bool {
        wire == Wire::Anthropic
    }

    fn anthropic_betas(&self, body: &mut Value, betas: &str) {
        add_betas(body, betas);
    }

    fn anthropic_version_header(&self) -> bool {
        false
    }

    fn bytes_only(&self, wire: Wire) -> bool {
        matches!(wire, Wire::Gemini | Wire::Converse | Wire::Anthropic)
    }

    fn request(
        &self,
        http: &HttpClients,
        channel: &RoutedChannel,
        wire: Wire,
        url: String,
        key: &Credential<'_>,
        headers: &[(&'static str, axum::http::HeaderValue)],
        body: Bytes,
    ) -> Result<reqwest::RequestBuilder, RelayError> {
        match key {
            Credential::Aws(aws) if aws.bearer().is_none() => {
                signed(http, channel, aws, &url, body)
            }
            _ => super::json_post(self, http, channel, wire, url, key, headers, body),
        }
    }

    fn framing(&self) -> Framing {
        Framing::AwsEventStream
    }

    /// AWS answers an unknown access key or a wrong secret with 403
    /// `UnrecognizedClientException` / `InvalidSignatureException`, which condemn the key as a
    /// 401 does.
    fn health_status(&self, status: u16, headers: &reqwest::header::HeaderMap) -> u16 {
        if status == 403 {
            let kind = headers
                .get("x-amzn-errortype")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            let kind = kind.split(':').next().unwrap_or_default();
            if matches!(
                kind,
                "UnrecognizedClientException" | "InvalidSignatureException"
            ) {
                return 401;
            }
        }
        status
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
        if model.contains("titan-embed") {
            Some(cloud_embed::Kind::Titan)
        } else if model.contains("cohere.embed") {
            Some(cloud_embed::Kind::BedrockCohere)
        } else {
            None
        }
    }

    fn cloud_embed_url(
        &self,
        _kind: cloud_embed::Kind,
        channel: &RoutedChannel,
        credential: &Credential<'_>,
        model: &str,
    ) -> Option<String> {
        model_url(channel, credential, model, "invoke")
    }

    fn needs_base_url(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    /// AWS's SigV4 test suite credentials and time (20150830T123600Z, us-east-1, `service`).
    fn suite_sign(method: &str, url: &str) -> Vec<(String, String)> {
        let key = AwsKey {
            access_key: "AKIDEXAMPLE".into(),
            secret_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
            session_token: None,
            api_key: None,
            region: "us-east-1".into(),
        };
        let url = reqwest::Url::parse(url).unwrap_or_else(|e| panic!("url: {e}"));
        let time = UNIX_EPOCH + Duration::from_secs(1_440_938_160);
        sign_for("service", &key, method, &url, &[], b"", time)
            .unwrap_or_else(|e| panic!("sign: {e}"))
    }

    fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The request building against AWS's published SigV4 test suite (aws-sig-v4-test-suite,
    /// https://docs.aws.amazon.com/general/latest/gr/signature-v4-test-suite.html):
    /// `get-vanilla` and `post-vanilla`.
    #[test]
    fn signing_matches_the_aws_test_suite() {
        let get = suite_sign("GET", "https://example.amazonaws.com/");
        assert_eq!(header(&get, "x-amz-date"), Some("20150830T123600Z"));
        assert_eq!(
            header(&get, "authorization"),
            Some(
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
                 SignedHeaders=host;x-amz-date, \
                 Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
            )
        );
        let post = suite_sign("POST", "https://example.amazonaws.com/");
        assert_eq!(
            header(&post, "authorization"),
            Some(
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
                 SignedHeaders=host;x-amz-date, \
                 Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"
            )
        );
    }

    #[test]
    fn keys_parse_in_every_documented_shape() {
        let sigv4 = AwsKey::parse("AKIA1|secret/2|us-east-1").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((sigv4.region(), sigv4.bearer()), ("us-east-1", None));
        let temp = AwsKey::parse(" AKIA1 | s | eu-west-1 | tok ").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(temp.session_token.as_deref(), Some("tok"));
        let api = AwsKey::parse("ABSKxyz|us-west-2").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((api.region(), api.bearer()), ("us-west-2", Some("ABSKxyz")));
        for bad in ["justakey", "a|b|c|d|e", "a||us-east-1"] {
            let Err(message) = AwsKey::parse(bad) else {
                panic!("{bad} accepted");
            };
            assert!(!message.contains(bad) || bad.len() < 3);
        }
    }

    #[test]
    fn claude_bodies_carry_the_version_and_no_model_or_stream() {
        let mut body = serde_json::json!({"model": "x", "stream": true, "max_tokens": 1});
        fix_claude_body(&mut body);
        assert_eq!(
            body,
            serde_json::json!({"anthropic_version": "bedrock-2023-05-31", "max_tokens": 1})
        );
    }
}
