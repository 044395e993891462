//! The embedded console (web/dist) with SPA fallback, and the JSON 404s for API paths.
//!
//! - `/api/*` that matched no route: console-shaped JSON 404.
//! - `/v1/*`, `/v1beta/*`, `/pg/*` that matched no route: OpenAI-shaped JSON 404.
//! - `/assets/*` that is not a file: plain 404 (a stale bundle must not get index.html).
//! - anything else: the file if it exists, otherwise index.html (client-side routing).
//!
//! In release builds the files are compiled into the binary; debug builds read web/dist from
//! disk, so `npm run build` is picked up without recompiling.

use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use rust_embed::Embed;

use crate::error::{ConsoleError, RelayError};

#[derive(Embed)]
#[folder = "web/dist/"]
#[allow_missing = true]
struct ConsoleAssets;

/// Fallback handler for every path no route matched.
pub async fn fallback(method: Method, uri: Uri) -> Response {
    let path = uri.path();
    if path == "/api" || path.starts_with("/api/") {
        return ConsoleError::NotFound("route").into_response();
    }
    if ["/v1", "/v1beta", "/pg"]
        .iter()
        .any(|p| path == *p || path.starts_with(&format!("{p}/")))
    {
        return RelayError::UnknownRoute {
            method: method.to_string(),
            path: path.to_owned(),
        }
        .into_response();
    }
    if method != Method::GET && method != Method::HEAD {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let file = path.trim_start_matches('/');
    if !file.is_empty() {
        if let Some(asset) = ConsoleAssets::get(file) {
            let immutable = file.starts_with("assets/");
            return file_response(file, asset.data.into_owned(), immutable);
        }
        if file.starts_with("assets/") {
            return StatusCode::NOT_FOUND.into_response();
        }
    }
    match ConsoleAssets::get("index.html") {
        Some(index) => file_response("index.html", index.data.into_owned(), false),
        None => (
            StatusCode::SERVICE_UNAVAILABLE,
            "The console is not built. Run `npm ci && npm run build` in web/ (or use the README's run command).",
        )
            .into_response(),
    }
}

fn file_response(name: &str, body: Vec<u8>, immutable: bool) -> Response {
    let mime = mime_guess::from_path(name).first_or_octet_stream();
    let cache = if immutable {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let mut response = body.into_response();
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(mime.as_ref()) {
        headers.insert(header::CONTENT_TYPE, value);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    response
}
