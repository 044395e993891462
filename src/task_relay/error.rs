//! Errors of the task routes, in each family's shape: Midjourney-proxy clients read
//! `{description, type, code}` (code as midjourney-proxy's ReturnCode: 3 not found,
//! 4 validation error, 9 failure), Suno clients `{code, message, data}`, video clients OpenAI's
//! `{error: {message, type, code}}`. Handlers and the relay's intake answer OpenAI's shape;
//! [`reshape`] rewrites an error answer on a `/mj` or `/suno` path into the family's.

use axum::Json;
use axum::body::Body;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::error::RelayError;

/// The largest error body [`reshape`] reads.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// A task route's refusal.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct TaskError {
    /// HTTP status.
    pub status: StatusCode,
    /// Machine-readable kind (`task_not_found`, `invalid_request`, …).
    pub kind: String,
    /// What went wrong.
    pub message: String,
}

impl TaskError {
    /// A refusal of `status` and `kind`.
    pub fn new(status: StatusCode, kind: &str, message: impl Into<String>) -> TaskError {
        TaskError {
            status,
            kind: kind.to_owned(),
            message: message.into(),
        }
    }

    /// No such task of the caller's (404).
    pub fn not_found(id: &str) -> TaskError {
        TaskError::new(
            StatusCode::NOT_FOUND,
            "task_not_found",
            format!("task {id} not found"),
        )
    }

    /// A request the route cannot take (400).
    pub fn bad_request(message: impl Into<String>) -> TaskError {
        TaskError::new(StatusCode::BAD_REQUEST, "invalid_request", message)
    }

    /// An upstream answer that is not what its wire format says (502).
    pub fn bad_gateway(message: impl Into<String>) -> TaskError {
        TaskError::new(StatusCode::BAD_GATEWAY, "upstream_error", message)
    }

    /// A failure of the gateway (500); the detail is logged, not shown.
    pub fn internal(detail: impl std::fmt::Display) -> TaskError {
        tracing::error!(error = %detail, "task route failed");
        TaskError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error",
            "internal error",
        )
    }
}

impl From<RelayError> for TaskError {
    fn from(e: RelayError) -> TaskError {
        let message = e.to_string();
        let kind = e.code().as_str().to_owned();
        // The status as the relay answers it (an upstream's own error status kept).
        let status = e.into_response().status();
        TaskError {
            status,
            kind,
            message,
        }
    }
}

impl From<tollgate_storage::StorageError> for TaskError {
    fn from(e: tollgate_storage::StorageError) -> TaskError {
        TaskError::internal(e)
    }
}

impl IntoResponse for TaskError {
    fn into_response(self) -> Response {
        let body = json!({
            "error": {"message": self.message, "type": "new_api_error", "code": self.kind}
        });
        (self.status, Json(body)).into_response()
    }
}

/// Which shape a path's errors take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Midjourney-proxy's.
    Mj,
    /// Suno's.
    Suno,
    /// OpenAI's (unchanged).
    OpenAi,
}

/// The shape of errors on `path`.
pub fn shape_of(path: &str) -> Shape {
    let mj = ["/mj/", "/mj-fast/", "/mj-turbo/", "/mj-relax/"];
    if mj.iter().any(|p| path.starts_with(p)) {
        Shape::Mj
    } else if path.starts_with("/suno/") {
        Shape::Suno
    } else {
        Shape::OpenAi
    }
}

/// midjourney-proxy's ReturnCode for an error answered with `status`.
pub fn mj_code(status: StatusCode) -> i64 {
    match status.as_u16() {
        404 => 3,
        400..=499 => 4,
        _ => 9,
    }
}

/// The family-shaped body of an OpenAI-shaped error `body` (`None`: not one).
pub fn reshaped(shape: Shape, status: StatusCode, body: &[u8]) -> Option<Value> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let error = value.get("error")?;
    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
    let kind = error
        .get("code")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .or_else(|| error.get("type").and_then(Value::as_str))
        .unwrap_or("error");
    match shape {
        Shape::Mj => Some(json!({
            "description": message,
            "type": kind,
            "code": mj_code(status),
        })),
        Shape::Suno => Some(json!({"code": kind, "message": message, "data": null})),
        Shape::OpenAi => None,
    }
}

/// Rewrites an error answer on a Midjourney or Suno path into that family's shape.
pub async fn reshape(req: Request, next: Next) -> Response {
    let shape = shape_of(req.uri().path());
    let response = next.run(req).await;
    let status = response.status();
    if shape == Shape::OpenAi || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_ERROR_BODY).await else {
        return (
            status,
            Json(json!({"description": "error", "type": "error", "code": 9})),
        )
            .into_response();
    };
    match reshaped(shape, status, &bytes) {
        Some(value) => {
            let mut out = (status, Json(value)).into_response();
            // Keep what the error counter and Retry-After need.
            std::mem::swap(out.extensions_mut(), &mut parts.extensions);
            if let Some(retry) = parts.headers.get(axum::http::header::RETRY_AFTER) {
                out.headers_mut()
                    .insert(axum::http::header::RETRY_AFTER, retry.clone());
            }
            out
        }
        None => Response::from_parts(parts, Body::from(bytes)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_take_the_family_shape() {
        let body = br#"{"error":{"message":"no such task","type":"new_api_error","code":"task_not_found"}}"#;
        let mj = reshaped(Shape::Mj, StatusCode::NOT_FOUND, body).expect("mj");
        assert_eq!(
            mj,
            json!({"description":"no such task","type":"task_not_found","code":3})
        );
        let mj = reshaped(Shape::Mj, StatusCode::UNAUTHORIZED, body).expect("mj");
        assert_eq!(mj["code"], 4);
        let suno = reshaped(Shape::Suno, StatusCode::NOT_FOUND, body).expect("suno");
        assert_eq!(
            suno,
            json!({"code":"task_not_found","message":"no such task","data":null})
        );
        assert_eq!(shape_of("/mj-fast/mj/submit/imagine"), Shape::Mj);
        assert_eq!(shape_of("/v1/videos"), Shape::OpenAi);
        assert!(reshaped(Shape::Mj, StatusCode::BAD_REQUEST, b"not json").is_none());
    }
}
