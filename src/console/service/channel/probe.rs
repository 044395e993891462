//! Talking to a channel's upstream: the channel test (a real minimal completion), the model
//! list, the proxy check, and [`ChannelProber`], which the pool's auto-enable re-test uses.
//!
//! Keys travel only in request headers (never in URLs), and every upstream text that is kept
//! or shown is scrubbed of the channel's key lines first. Tests use the channel's first key
//! that is not disabled.
//! What is sent comes from the channel type table (the row's test request, its model-list API)
//! and is built by the relay's adaptor (`crate::relay::adaptor::test_request`, `models_request`):
//! only types the relay serves are tested, and a test that passes means the channel relays.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;
use tollgate_actors::channel_pool::{Outcome, OutcomeSource, ProbeFuture, Prober};
use tollgate_storage::channels::{Channel, other_info};
use tollgate_storage::secret::Secret;

use crate::channel_types::{self, Caps, ChannelType, TestRequest};
use crate::error::{ConsoleError, ErrorCode};
use crate::outbound::proxy::validate_proxy;
use crate::relay::adaptor::{self, TestFailure};
use crate::upstream::HttpClients;

/// How long a channel test may take end to end.
pub const TEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long fetching an upstream's model list may take.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(20);
/// How long the proxy check may take.
pub const PROXY_CHECK_TIMEOUT: Duration = Duration::from_secs(10);
/// The URL fetched through a proxy to check it (plain HTTP, answers 204).
pub const PROXY_CHECK_URL: &str = "http://www.gstatic.com/generate_204";
/// Model tested when neither the request, the channel's test model nor its models name one.
pub const DEFAULT_TEST_MODEL: &str = "gpt-4o-mini";

/// What a channel test found.
#[derive(Debug, Clone)]
pub struct TestReport {
    /// The outcome (fed to the health rules).
    pub outcome: Outcome,
    /// "ok" or the reason it failed (key-free).
    pub message: String,
}

/// What the proxy check found.
#[derive(Debug, Clone, Serialize)]
pub struct ProxyReport {
    /// HTTP status received through the proxy.
    pub status: u16,
    /// Seconds taken.
    pub time: f64,
}

/// Replaces the channel's key lines in `text`.
pub fn scrub(text: &str, key: &Secret) -> String {
    crate::relay::pipeline::redact::redact(text, key.expose().lines())
}

/// The key a test uses, with its 0-based line: the first line not disabled by the health
/// rules, else the first line.
fn test_key(channel: &Channel) -> Option<(usize, String)> {
    let lines = channel.key_lines();
    let index = other_info::usable_keys(&channel.other_info, &lines)
        .first()
        .copied()
        .unwrap_or(0);
    lines.get(index).map(|k| (index, (*k).to_owned()))
}

/// The model a test uses: the requested one, else the test model, else the first model.
pub fn test_model(channel: &Channel, requested: Option<&str>) -> String {
    let pick = requested
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .or_else(|| Some(channel.test_model.trim()).filter(|m| !m.is_empty()))
        .or_else(|| channel.model_list().first().copied())
        .unwrap_or(DEFAULT_TEST_MODEL);
    let mapped = serde_json::from_str::<Value>(&channel.model_mapping)
        .ok()
        .and_then(|m| m.get(pick).and_then(Value::as_str).map(str::to_owned));
    mapped
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| pick.to_owned())
}

/// The table row of `channel_type`, or a refusal naming the unknown type.
fn row(channel_type: i32) -> Result<&'static ChannelType, ConsoleError> {
    channel_types::by_id(channel_type).ok_or_else(|| {
        ConsoleError::with_args(ErrorCode::ChannelTypeUnknown, [channel_type.to_string()])
    })
}

pub(super) fn base_url(channel_type: i32, base_url: &str) -> Result<String, ConsoleError> {
    let base = channel_types::effective_base_url(channel_type, base_url);
    if base.is_empty() {
        return Err(ConsoleError::of(ErrorCode::ChannelNoBaseUrl));
    }
    Ok(base)
}

/// The message of an upstream error body (OpenAI, Anthropic or Gemini shape), if any.
pub(super) fn upstream_message(body: &str) -> Option<String> {
    let v: Value = serde_json::from_str(body).ok()?;
    let err = v.get("error").unwrap_or(&v);
    err.get("message")
        .and_then(Value::as_str)
        .or_else(|| err.as_str())
        .or_else(|| v.get("detail").and_then(Value::as_str))
        .map(str::to_owned)
}

pub(super) fn transport_error(e: &reqwest::Error, timeout: Duration) -> String {
    if e.is_timeout() {
        format!("the upstream did not answer within {}s", timeout.as_secs())
    } else if e.is_connect() {
        let cause = std::error::Error::source(e).map_or_else(String::new, |s| format!(": {s}"));
        format!("cannot connect to the upstream{cause}")
    } else {
        format!("request failed: {e}")
    }
}

/// Sends a minimal completion (max 1 token) to the channel's upstream and measures it.
/// Errors are about the channel's configuration (no key, unsupported type, bad proxy) and
/// happen before anything is sent.
pub async fn test(
    http: &HttpClients,
    channel: &Channel,
    model: Option<&str>,
) -> Result<TestReport, ConsoleError> {
    let (key_index, key) =
        test_key(channel).ok_or_else(|| ConsoleError::of(ErrorCode::ChannelNoKey))?;
    http.for_proxy(&channel.proxy)
        .map_err(|e| ConsoleError::with_args(ErrorCode::ProxyUnusable, [e]))?;
    let row = row(channel.channel_type)?;
    let unsupported =
        || ConsoleError::with_args(ErrorCode::TestUnsupported, [row.name.to_string()]);
    if row.caps == Caps::NONE || row.test == TestRequest::None {
        return Err(unsupported());
    }
    let model = test_model(channel, model);
    let started = Instant::now();
    // Every type is tested through the relay's own adaptor (its URL, authentication, body fixes,
    // a token fetched, a request signed), so the test sees what the relay will.
    let req = match adaptor::test_request(http, channel, &key, &model, row.test).await {
        Ok(req) => Ok(req),
        Err(TestFailure::Unsupported) => return Err(unsupported()),
        Err(TestFailure::NoBaseUrl) => return Err(ConsoleError::of(ErrorCode::ChannelNoBaseUrl)),
        Err(TestFailure::Failed(message)) => Err(message),
    };
    let outbound =
        req.map(|req| adaptor::outbound(channel.channel_type, Box::new(req), &model, false));
    let sent = match outbound {
        Ok(adaptor::Outbound::Http(req)) => match req.timeout(TEST_TIMEOUT).send().await {
            // A native type's answer read as the relay reads it (its in-body errors).
            Ok(resp) => Ok(crate::relay::adaptor::receive(
                channel.channel_type,
                resp,
                &model,
                TEST_TIMEOUT,
            )
            .await),
            Err(e) => Err(transport_error(&e, TEST_TIMEOUT)),
        },
        // Spark's WebSocket conversation, as the relay has it.
        Ok(adaptor::Outbound::Conversation(talk)) => {
            crate::relay::pipeline::attempt::converse(talk, TEST_TIMEOUT)
                .await
                .map_err(|(message, _)| message)
        }
        Err(message) => Err(message),
    };
    let (status, error) = match sent {
        Err(message) => (None, Some(message)),
        Ok(resp) => {
            let status = resp.status();
            let body = resp.text().await.unwrap_or_default();
            let error = if !status.is_success() {
                Some(
                    upstream_message(&body)
                        .unwrap_or_else(|| format!("bad response status code {}", status.as_u16())),
                )
            } else if serde_json::from_str::<Value>(&body).is_err() {
                Some("the upstream answered with a body that is not JSON".to_owned())
            } else {
                None
            };
            (Some(status.as_u16()), error)
        }
    };
    let error = error.map(|e| scrub(&e, &channel.key));
    let outcome = Outcome {
        channel: channel.id,
        status,
        latency: started.elapsed(),
        error: error.clone(),
        source: OutcomeSource::Test,
        key: Some(key_index),
    };
    Ok(TestReport {
        outcome,
        message: error.unwrap_or_else(|| format!("ok ({model})")),
    })
}

/// The model ids the upstream lists, through the type's model-list API (the request is the
/// adaptor's, `crate::relay::adaptor::models`; `data[].id`, or Gemini's `models[].name` without
/// `models/`).
pub async fn fetch_models(
    http: &HttpClients,
    channel_type: i32,
    base_url_text: &str,
    key: &Secret,
    proxy: &str,
) -> Result<Vec<String>, ConsoleError> {
    let row = row(channel_type)?;
    let Some(api) = row.models_api else {
        return Err(ConsoleError::with_args(
            ErrorCode::FetchModelsUnsupported,
            [row.name.to_string()],
        ));
    };
    let base = base_url(channel_type, base_url_text)?;
    let key_line = key
        .expose()
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .ok_or_else(|| ConsoleError::of(ErrorCode::FetchModelsNeedsKey))?;
    let client = http
        .for_proxy(proxy)
        .map_err(|e| ConsoleError::with_args(ErrorCode::ProxyUnusable, [e]))?;
    let req = adaptor::models_request(&client, channel_type, &base, key_line, api)
        .map_err(|e| ConsoleError::Upstream(scrub(&e.to_string(), key)))?;
    let resp = req
        .timeout(FETCH_TIMEOUT)
        .send()
        .await
        .map_err(|e| ConsoleError::Upstream(scrub(&transport_error(&e, FETCH_TIMEOUT), key)))?;
    let status = resp.status();
    let body = resp.text().await.unwrap_or_default();
    if !status.is_success() {
        let why = upstream_message(&body)
            .unwrap_or_else(|| format!("bad response status code {}", status.as_u16()));
        return Err(ConsoleError::with_args(
            ErrorCode::FetchModelsFailed,
            [scrub(&why, key).to_string()],
        ));
    }
    let v: Value =
        serde_json::from_str(&body).map_err(|_| ConsoleError::of(ErrorCode::ModelListNotJson))?;
    let (list, field) = adaptor::models::answer_fields(api);
    let mut ids: Vec<String> = v
        .get(list)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|m| m.get(field).and_then(Value::as_str))
                .map(|id| id.strip_prefix("models/").unwrap_or(id).to_owned())
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids.dedup();
    Ok(ids)
}

/// Fetches [`PROXY_CHECK_URL`] through `proxy`.
pub async fn check_proxy(http: &HttpClients, proxy: &str) -> Result<ProxyReport, ConsoleError> {
    if proxy.trim().is_empty() {
        return Err(ConsoleError::of(ErrorCode::ProxyRequired));
    }
    validate_proxy(proxy).map_err(super::input::proxy_refused)?;
    let client = http
        .for_proxy(proxy)
        .map_err(|e| ConsoleError::with_args(ErrorCode::ProxyUnusable, [e]))?;
    let started = Instant::now();
    let resp = client
        .get(PROXY_CHECK_URL)
        .timeout(PROXY_CHECK_TIMEOUT)
        .send()
        .await
        .map_err(|e| {
            ConsoleError::with_args(
                ErrorCode::ProxyTestFailed,
                [transport_error(&e, PROXY_CHECK_TIMEOUT).to_string()],
            )
        })?;
    let status = resp.status();
    if !(status.is_success() || status.is_redirection()) {
        return Err(ConsoleError::with_args(
            ErrorCode::ProxyTestStatus,
            [status.as_u16().to_string()],
        ));
    }
    Ok(ProxyReport {
        status: status.as_u16(),
        time: started.elapsed().as_secs_f64(),
    })
}

/// The pool's re-test prober: runs [`test`] and turns configuration errors into failures.
pub struct ChannelProber {
    /// Outbound clients.
    pub http: HttpClients,
}

impl Prober for ChannelProber {
    fn probe(&self, channel: Arc<Channel>) -> ProbeFuture<'_> {
        Box::pin(async move {
            match test(&self.http, &channel, None).await {
                Ok(report) => report.outcome,
                Err(e) => Outcome {
                    channel: channel.id,
                    status: None,
                    latency: Duration::ZERO,
                    error: Some(e.to_string()),
                    source: OutcomeSource::Retest,
                    key: None,
                },
            }
        })
    }
}
