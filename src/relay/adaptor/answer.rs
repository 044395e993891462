//! Answers an adaptor makes itself: a whole upstream answer read within a size cap, a JSON
//! answer rebuilt from bytes, the OpenAI-shaped error answer of a provider's documented code
//! (its status by [`crate::channel_types::errors`]), and the check of the providers that put
//! errors in HTTP 200 answers (MiniMax's `base_resp`), so the attempt loop takes those as the
//! errors they are.

use std::borrow::Cow;
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{StatusCode, header};
use futures_util::StreamExt;
use serde_json::json;

use crate::channel_types::errors::{ErrorKind, classify};

/// The largest whole answer read (a chat answer, not a file).
pub const ANSWER_MAX: usize = 32 << 20;

/// Whether `resp` is a server-sent event stream.
pub fn is_stream(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// Reads `provider`'s whole answer within `timeout` ([`read_capped`]); `Err`: the error answer
/// to give instead (502 when it cannot be read, 504 when it did not arrive in time).
pub async fn read_whole(
    resp: reqwest::Response,
    timeout: Duration,
    provider: &str,
) -> Result<Bytes, reqwest::Response> {
    match tokio::time::timeout(timeout, read_capped(resp)).await {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(message)) => Err(failed(provider, StatusCode::BAD_GATEWAY, &message)),
        Err(_) => Err(failed(
            provider,
            StatusCode::GATEWAY_TIMEOUT,
            "the upstream's answer did not arrive in time",
        )),
    }
}

/// Reads a whole body, refusing one past [`ANSWER_MAX`].
pub async fn read_capped(resp: reqwest::Response) -> Result<Bytes, String> {
    let mut body = Vec::new();
    let mut chunks = resp.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|e| format!("reading the upstream's answer failed: {e}"))?;
        if body.len() + chunk.len() > ANSWER_MAX {
            return Err("the upstream's answer is too large".into());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(body))
}

/// A response of `status` with a JSON `body`.
pub fn json_response(status: StatusCode, body: Bytes) -> reqwest::Response {
    let builder = axum::http::Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json");
    match builder.body(reqwest::Body::from(body)) {
        Ok(resp) => reqwest::Response::from(resp),
        Err(_) => {
            reqwest::Response::from(axum::http::Response::new(reqwest::Body::from(Bytes::new())))
        }
    }
}

/// An OpenAI-shaped error answer for `provider`'s error `code` and `message` on a channel of
/// `channel_type`: the status the type's documented codes give it (a spent balance 403, a
/// refused key 401, a rate limit 429, the client's mistake 400), else `other`. The attempt loop
/// then reads the code from `error.code` as for any provider's answer.
pub fn provider_error(
    channel_type: i32,
    provider: &str,
    code: &str,
    message: &str,
    other: u16,
) -> reqwest::Response {
    let body = json!({"error": {"message": format!("{provider}: {code}: {message}"),
        "type": "upstream_error", "code": code}})
    .to_string();
    let status = match classify(channel_type, &body) {
        Some(ErrorKind::Balance) => 403,
        Some(ErrorKind::Auth) => 401,
        Some(ErrorKind::RateLimit) => 429,
        Some(ErrorKind::Client) => 400,
        None => other,
    };
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    json_response(status, body.into())
}

/// MiniMax's status envelope (https://platform.minimax.io/docs/api-reference/errorcode):
/// `status_code` 0 is success, any other code an error, answered with HTTP 200.
#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct BaseResp<'a> {
    status_code: i64,
    #[serde(borrow)]
    status_msg: Cow<'a, str>,
}

/// What is read of a whole answer to look for `base_resp`.
#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct Envelope<'a> {
    #[serde(borrow)]
    base_resp: Option<BaseResp<'a>>,
}

/// A whole HTTP 200 answer of a type that reports errors in 200 answers
/// ([`crate::channel_types::errors::in_ok_answers`]) read (within `timeout`): an error in it
/// becomes the error answer its documented code means ([`provider_error`]; an undocumented
/// code 502, MiniMax's own failures), anything else goes on as it came. Streams and error
/// statuses are not read here.
pub async fn error_in_ok(
    channel_type: i32,
    provider: &str,
    resp: reqwest::Response,
    timeout: Duration,
) -> reqwest::Response {
    if is_stream(&resp) || !resp.status().is_success() {
        return resp;
    }
    let status = resp.status();
    let bytes = match read_whole(resp, timeout, provider).await {
        Ok(bytes) => bytes,
        Err(failed) => return failed,
    };
    if let Ok(Envelope {
        base_resp: Some(base),
    }) = serde_json::from_slice::<Envelope<'_>>(&bytes)
        && base.status_code != 0
    {
        return provider_error(
            channel_type,
            provider,
            &base.status_code.to_string(),
            &base.status_msg,
            502,
        );
    }
    json_response(status, bytes)
}

/// An OpenAI-shaped error answer of `status` for a failure reading `provider`'s answer.
pub fn failed(provider: &str, status: StatusCode, message: &str) -> reqwest::Response {
    let body = json!({"error": {"message": format!("{provider}: {message}"),
        "type": "upstream_error"}});
    json_response(status, body.to_string().into())
}
