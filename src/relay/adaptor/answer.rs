//! Answers an adaptor makes itself: a whole upstream answer read within a size cap, a JSON
//! answer rebuilt from bytes, the OpenAI-shaped error answer of a provider's documented code
//! (its status by [`crate::channel_types::errors`]), and the check of the providers that put
//! errors in HTTP 200 answers and streams (MiniMax's `base_resp`), so the attempt loop takes
//! those as the errors they are.

use std::borrow::Cow;
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{StatusCode, header};
use futures_util::{Stream, StreamExt};
use serde_json::json;

use crate::channel_types::errors::{ErrorKind, classify};
use crate::relay::pipeline::sse::SseReader;

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

/// The `(code, message)` of a `base_resp` error in `body`, if it holds one.
fn base_error(body: &[u8]) -> Option<(i64, String)> {
    match serde_json::from_slice::<Envelope<'_>>(body) {
        Ok(Envelope {
            base_resp: Some(base),
        }) if base.status_code != 0 => Some((base.status_code, base.status_msg.into_owned())),
        _ => None,
    }
}

/// An HTTP 200 answer of a type that reports errors in 200 answers
/// ([`crate::channel_types::errors::in_ok_answers`]) checked for one (within `timeout`): a whole
/// answer is read, a stream up to its first event ([`error_in_stream`]); an error there becomes
/// the error answer its documented code means ([`provider_error`]; an undocumented code 502,
/// MiniMax's own failures), anything else goes on as it came. Error statuses are not read here.
pub async fn error_in_ok(
    channel_type: i32,
    provider: &str,
    resp: reqwest::Response,
    timeout: Duration,
) -> reqwest::Response {
    if !resp.status().is_success() {
        return resp;
    }
    if is_stream(&resp) {
        return error_in_stream(channel_type, provider, resp, timeout).await;
    }
    let status = resp.status();
    let bytes = match read_whole(resp, timeout, provider).await {
        Ok(bytes) => bytes,
        Err(failed) => return failed,
    };
    if let Some((code, message)) = base_error(&bytes) {
        return provider_error(channel_type, provider, &code.to_string(), &message, 502);
    }
    json_response(status, bytes)
}

/// A 200 stream whose first event is read (within `timeout`) before anything reaches the
/// client: a `base_resp` error in it is the error answer its code means, as in a whole answer
/// (so the attempt loop can still try the next channel); otherwise the stream goes on from its
/// first byte, the bytes read replayed before the rest. An error in a later event, after the
/// answer began, goes on as it came.
async fn error_in_stream(
    channel_type: i32,
    provider: &str,
    resp: reqwest::Response,
    timeout: Duration,
) -> reqwest::Response {
    let status = resp.status();
    let headers = resp.headers().clone();
    let mut upstream = Box::pin(resp.bytes_stream());
    let mut read = Vec::new();
    let error = tokio::time::timeout(timeout, first_event_error(&mut upstream, &mut read))
        .await
        .ok()
        .flatten();
    if let Some((code, message)) = error {
        return provider_error(channel_type, provider, &code.to_string(), &message, 502);
    }
    let body = reqwest::Body::wrap_stream(futures_util::stream::iter(read).chain(upstream));
    let mut rebuilt = axum::http::Response::new(body);
    *rebuilt.status_mut() = status;
    *rebuilt.headers_mut() = headers;
    reqwest::Response::from(rebuilt)
}

/// Reads `upstream` into `read` until its first event is complete (or a read fails, or the
/// event grows past the reader's limit); that event's `base_resp` error, if it holds one.
async fn first_event_error(
    upstream: &mut (impl Stream<Item = reqwest::Result<Bytes>> + Unpin),
    read: &mut Vec<reqwest::Result<Bytes>>,
) -> Option<(i64, String)> {
    let mut reader = SseReader::default();
    while let Some(chunk) = upstream.next().await {
        let bytes = match &chunk {
            Ok(bytes) => bytes.clone(),
            Err(_) => {
                read.push(chunk);
                return None;
            }
        };
        read.push(chunk);
        let mut first = None;
        let fed = reader.feed(&bytes, |event, _| {
            first.get_or_insert_with(|| base_error(event.data.as_bytes()));
        });
        if fed.is_err() {
            return None;
        }
        if let Some(found) = first {
            return found;
        }
    }
    None
}

/// An OpenAI-shaped error answer of `status` for a failure reading `provider`'s answer.
pub fn failed(provider: &str, status: StatusCode, message: &str) -> reqwest::Response {
    let body = json!({"error": {"message": format!("{provider}: {message}"),
        "type": "upstream_error"}});
    json_response(status, body.to_string().into())
}
