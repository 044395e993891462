//! OpenAI videos (API reference, "Videos"): `POST /v1/videos` creates one (`prompt`, `model`
//! — `sora-2` by default —, `seconds` — "4" by default —, `size`, `input_reference`; JSON or
//! `multipart/form-data`; either is forwarded with the channel's mapped model name — a form part
//! by part, its `model` field replaced) and
//! answers the Video object (`id`, `status` queued / in_progress / completed / failed,
//! `seconds`); `GET /v1/videos/{id}/content` streams the finished file from the channel.
//! OpenAI channels only: Azure's documentation does not show this API.
//!
//! Billed per second: the model's ModelPrice is the price of one second; the reservation holds
//! the request's `seconds` (the API's default 4 when absent), the settlement charges the
//! seconds the upstream's Video object reports.

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tollgate_storage::tasks::{IN_PROGRESS, QUEUED, TaskKind};

use super::error::TaskError;
use super::fetch;
use super::submit::{self, Accepted, Answer, FormPart, Submit, Upstream, Verdict, passthrough};
use crate::relay::pipeline::auth::Caller;
use crate::state::AppState;

/// The API's default model.
pub const DEFAULT_MODEL: &str = "sora-2";
/// The API's default length, in seconds.
pub const DEFAULT_SECONDS: f64 = 4.0;
/// The longest video priced (a bound on the reservation's arithmetic).
pub const MAX_SECONDS: f64 = 600.0;

/// A `seconds` value (a string in the API, a number accepted).
pub fn seconds_of(value: Option<&Value>) -> Option<f64> {
    match value? {
        Value::String(s) => s.trim().parse().ok(),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
    .filter(|s: &f64| s.is_finite() && *s > 0.0)
}

/// What a create request asks: model, seconds, prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    /// The model.
    pub model: String,
    /// Seconds.
    pub seconds: f64,
    /// The prompt.
    pub prompt: String,
}

fn asked_json(body: &Value) -> Asked {
    Asked {
        model: body
            .get("model")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
            .unwrap_or(DEFAULT_MODEL)
            .to_owned(),
        seconds: seconds_of(body.get("seconds")).unwrap_or(DEFAULT_SECONDS),
        prompt: body
            .get("prompt")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
    }
}

/// A multipart create request: what it asks, and its parts (forwarded again with the
/// channel's model name).
async fn read_form(content_type: &str, bytes: Bytes) -> Result<(Asked, Vec<FormPart>), TaskError> {
    let bad = |e: multer::Error| TaskError::bad_request(format!("the form cannot be read: {e}"));
    let boundary = multer::parse_boundary(content_type).map_err(bad)?;
    let stream = futures_util::stream::once(async move { Ok::<_, std::io::Error>(bytes) });
    let mut form = multer::Multipart::new(stream, boundary);
    let mut fields = serde_json::Map::new();
    let mut parts = Vec::new();
    while let Some(field) = form.next_field().await.map_err(bad)? {
        let name = field.name().unwrap_or_default().to_owned();
        let file_name = field.file_name().map(str::to_owned);
        let content_type = field.content_type().map(ToString::to_string);
        let bytes = field.bytes().await.map_err(bad)?;
        if matches!(name.as_str(), "model" | "seconds" | "prompt") && file_name.is_none() {
            fields.insert(
                name.clone(),
                Value::String(String::from_utf8_lossy(&bytes).into_owned()),
            );
        }
        parts.push(FormPart {
            name,
            file_name,
            content_type,
            bytes,
        });
    }
    Ok((asked_json(&Value::Object(fields)), parts))
}

/// Reads a create answer (the Video object).
pub fn judge(answer: &Answer, _submit: &Submit) -> Verdict {
    let Ok(value) = serde_json::from_slice::<Value>(&answer.body) else {
        return Verdict::Refused;
    };
    let Some(id) = value
        .get("id")
        .and_then(Value::as_str)
        .filter(|i| !i.is_empty())
    else {
        return Verdict::Refused;
    };
    let status = match value.get("status").and_then(Value::as_str) {
        Some("in_progress") => IN_PROGRESS,
        _ => QUEUED,
    };
    Verdict::Accepted(Accepted {
        upstream_id: id.to_owned(),
        code: 1,
        status: status.to_owned(),
        calls: seconds_of(value.get("seconds")).map(|s| s.min(MAX_SECONDS)),
        properties: String::new(),
        data: String::from_utf8_lossy(&answer.body).into_owned(),
    })
}

/// `POST /v1/videos`.
pub async fn submit(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, TaskError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json");
    let (asked, upstream) = if content_type
        .to_ascii_lowercase()
        .starts_with("multipart/form-data")
    {
        // The boundary as sent: it is case-sensitive.
        let (asked, parts) = read_form(content_type, body).await?;
        (asked, Upstream::Form(parts))
    } else {
        let parsed: Value = serde_json::from_slice(&body).map_err(|e| {
            TaskError::bad_request(format!("the request body is not valid JSON: {e}"))
        })?;
        if !parsed.is_object() {
            return Err(TaskError::bad_request(
                "the request body must be a JSON object",
            ));
        }
        (
            asked_json(&parsed),
            Upstream::Json {
                body: parsed,
                map_model: true,
            },
        )
    };
    if asked.seconds > MAX_SECONDS {
        return Err(TaskError::bad_request(format!(
            "seconds must be at most {MAX_SECONDS}"
        )));
    }
    submit::run(
        &state,
        caller,
        Submit {
            kind: TaskKind::Video,
            platform: "openai",
            model: asked.model,
            action: "GENERATE".to_owned(),
            prompt: asked.prompt,
            calls: asked.seconds,
            path: "/v1/videos".to_owned(),
            body: upstream,
            channel: None,
        },
        judge,
        |answer, _| passthrough(answer),
    )
    .await
}

/// Whether an upstream id may go into a path (the characters upstream ids are made of).
pub fn path_safe(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// `GET /v1/videos/{id}/content`: the file, streamed from the task's channel.
pub async fn content(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    uri: Uri,
) -> Result<Response, TaskError> {
    let task = fetch::find(&state, caller.user.id, TaskKind::Video, &id)
        .await?
        .filter(|t| path_safe(&t.upstream_id))
        .ok_or_else(|| TaskError::not_found(&id))?;
    let table = state.channel_pool.table().load_full();
    let channel = table
        .channel(task.channel_id)
        .cloned()
        .ok_or_else(|| TaskError::not_found(&id))?;
    let mut path = format!("/v1/videos/{}/content", task.upstream_id);
    if let Some(query) = uri.query() {
        path = format!("{path}?{query}");
    }
    let call = submit::request(
        &state,
        &channel,
        TaskKind::Video,
        reqwest::Method::GET,
        &path,
    )?;
    let resp = call.send().await.map_err(|e| {
        TaskError::from(crate::error::RelayError::Unreachable(
            e.without_url().to_string(),
        ))
    })?;
    let status = StatusCode::from_u16(resp.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let content_type = resp.headers().get(header::CONTENT_TYPE).cloned();
    if !status.is_success() {
        // An error text may quote the key it was sent: read it whole and mask the keys.
        let answer = submit::read_answer_of(resp, &channel).await?;
        let mut response = (status, Body::from(answer.body)).into_response();
        if let Some(ct) = content_type {
            response.headers_mut().insert(header::CONTENT_TYPE, ct);
        }
        return Ok(response);
    }
    let mut response = (status, Body::from_stream(resp.bytes_stream())).into_response();
    if let Some(ct) = content_type {
        response.headers_mut().insert(header::CONTENT_TYPE, ct);
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_default_and_parse() {
        assert_eq!(asked_json(&serde_json::json!({})).seconds, DEFAULT_SECONDS);
        assert_eq!(asked_json(&serde_json::json!({})).model, DEFAULT_MODEL);
        assert_eq!(seconds_of(Some(&serde_json::json!("8"))), Some(8.0));
        assert_eq!(seconds_of(Some(&serde_json::json!(12))), Some(12.0));
        assert_eq!(seconds_of(Some(&serde_json::json!("-1"))), None);
        assert!(!path_safe("../x"));
    }
}
