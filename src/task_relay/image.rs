//! `GET /mj/image/{id}`: a Midjourney task's image through this gateway (MjForwardUrlEnabled
//! rewrites the image URLs of the fetch answers to it). Public like the incumbent's, but the
//! id is unguessable: the task's number and an HMAC of it under the server's secret, so only
//! those who were shown the URL can read the image. Only the stored URL of an existing task is
//! read (never one a client gives), through the guarded media fetcher (public addresses only,
//! its size and time limits), and only an image type is answered.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use tollgate_storage::tasks::{Task, TaskKind, query};

use super::error::TaskError;
use crate::state::AppState;

/// The image types answered.
pub const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Bytes of the HMAC kept in an image id.
const SIG_BYTES: usize = 16;

fn mac(state: &AppState, task_id: i64) -> Option<Hmac<Sha256>> {
    let mut mac = Hmac::<Sha256>::new_from_slice(state.cookie_key.signing()).ok()?;
    mac.update(format!("mj-image:{task_id}").as_bytes());
    Some(mac)
}

/// The public id of task `task_id`'s image: `{task_id}-{signature}`.
pub fn image_id(state: &AppState, task_id: i64) -> String {
    let sig = mac(state, task_id)
        .map(|m| m.finalize().into_bytes())
        .map(|bytes| URL_SAFE_NO_PAD.encode(&bytes[..SIG_BYTES]))
        .unwrap_or_default();
    format!("{task_id}-{sig}")
}

/// The task number an image id names, when its signature holds.
pub fn verify(state: &AppState, id: &str) -> Option<i64> {
    let (task, sig) = id.split_once('-')?;
    let task_id: i64 = task.parse().ok()?;
    let sig = URL_SAFE_NO_PAD.decode(sig).ok()?;
    if sig.len() != SIG_BYTES {
        return None;
    }
    mac(state, task_id)?.verify_truncated_left(&sig).ok()?;
    Some(task_id)
}

/// The image URL a fetch answer shows for `task`: this gateway's image route when
/// MjForwardUrlEnabled is on (and the task has an image), else the stored URL.
pub fn shown_url(state: &AppState, task: &Task) -> String {
    let options = state.options.current();
    if task.image_url.is_empty() || !options.flag("MjForwardUrlEnabled") {
        return task.image_url.clone();
    }
    let server = options.text("ServerAddress").trim_end_matches('/');
    format!("{server}/mj/image/{}", image_id(state, task.id))
}

/// `GET /mj/image/{id}`.
pub async fn serve(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, TaskError> {
    let task_id = verify(&state, &id).ok_or_else(|| TaskError::not_found(&id))?;
    let task = state
        .store
        .read(move |rtx| query::get(rtx, task_id))
        .await?
        .filter(|t| t.kind == TaskKind::Midjourney && !t.image_url.is_empty())
        .ok_or_else(|| TaskError::not_found(&id))?;
    let media = state
        .http
        .media()
        .fetch(&task.image_url, "", &IMAGE_TYPES)
        .await
        .map_err(|e| TaskError::bad_gateway(format!("the task's image {e}")))?;
    Ok((
        [
            (header::CONTENT_TYPE, media.mime),
            (header::CACHE_CONTROL, "private, max-age=3600".to_owned()),
        ],
        Body::from(media.bytes),
    )
        .into_response())
}
