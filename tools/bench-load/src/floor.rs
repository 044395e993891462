//! The floor: a minimal pass-through proxy (axum in, reqwest out, pooled connections, the
//! response body streamed back as it arrives) with no auth, no routing and no accounting. What
//! Tollgate costs beyond this is the price of its features.

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use tokio::net::TcpListener;

/// Where requests go.
#[derive(Clone)]
struct Upstream {
    client: reqwest::Client,
    base: String,
}

/// Forwards one POST and streams the answer back.
async fn forward(
    State(up): State<Upstream>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut req = up
        .client
        .post(format!("{}{}", up.base, uri.path()))
        .body(body);
    for name in [header::CONTENT_TYPE, header::AUTHORIZATION] {
        if let Some(value) = headers.get(&name) {
            req = req.header(name, value);
        }
    }
    match req.send().await {
        Ok(resp) => {
            let status = resp.status();
            let content_type = resp.headers().get(header::CONTENT_TYPE).cloned();
            let mut out = Response::new(Body::from_stream(resp.bytes_stream()));
            *out.status_mut() = status;
            if let Some(value) = content_type {
                out.headers_mut().insert(header::CONTENT_TYPE, value);
            }
            out
        }
        Err(_) => StatusCode::BAD_GATEWAY.into_response(),
    }
}

/// Serves on `listener`, forwarding to `base`, until the process is killed.
pub async fn serve(listener: TcpListener, base: String) -> std::io::Result<()> {
    let client = reqwest::Client::builder()
        .tcp_nodelay(true)
        .build()
        .map_err(std::io::Error::other)?;
    let app = Router::new()
        .fallback(forward)
        .with_state(Upstream { client, base });
    axum::serve(listener, app).await
}
