//! The fetch routes: a caller's tasks read from the local task table (never the upstream's),
//! by the upstream's task id. Another user's task is answered like a missing one (404).
//!
//! - `GET /mj/task/{id}/fetch`, `POST /mj/task/list-by-condition {"ids": [...]}`
//! - `GET /suno/fetch/{id}`, `POST /suno/fetch {"ids": [...]}`
//! - `GET /v1/videos/{id}`

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use serde_json::{Value, json};
use tollgate_storage::UserId;
use tollgate_storage::tasks::query::{self, TaskFilter};
use tollgate_storage::tasks::{Task, TaskKind};

use super::error::TaskError;
use super::{image, view};
use crate::relay::pipeline::auth::Caller;
use crate::state::AppState;

/// Most ids one list call may name.
pub const MAX_IDS: usize = 1_000;

/// `user`'s task of `kind` with upstream id `id`, if any.
pub async fn find(
    state: &AppState,
    user: UserId,
    kind: TaskKind,
    id: &str,
) -> Result<Option<Task>, TaskError> {
    if id.is_empty() || id.len() > 256 {
        return Ok(None);
    }
    let filter = TaskFilter {
        user: Some(user),
        upstream_id: Some(id.to_owned()),
        ..TaskFilter::default()
    };
    let (found, _) = state
        .store
        .read(move |rtx| query::page(rtx, kind.list(), &filter, 0, 16))
        .await?;
    Ok(found.into_iter().find(|t| t.kind == kind))
}

/// The ids of a list call's body (`{"ids": [...]}`).
fn ids_of(body: &Bytes) -> Result<Vec<String>, TaskError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| TaskError::bad_request(format!("the request body is not valid JSON: {e}")))?;
    let ids: Vec<String> = value
        .get("ids")
        .and_then(Value::as_array)
        .map(|ids| {
            ids.iter()
                .filter_map(|id| match id {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    if ids.len() > MAX_IDS {
        return Err(TaskError::bad_request(format!(
            "at most {MAX_IDS} ids may be asked about at once"
        )));
    }
    Ok(ids)
}

/// The caller's tasks of `kind` among `ids`, in the order asked (unknown ids left out).
async fn found(
    state: &AppState,
    user: UserId,
    kind: TaskKind,
    ids: Vec<String>,
) -> Result<Vec<Task>, TaskError> {
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(task) = find(state, user, kind, &id).await? {
            out.push(task);
        }
    }
    Ok(out)
}

/// `GET /mj/task/{id}/fetch`.
pub async fn mj_task(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, TaskError> {
    let task = find(&state, caller.user.id, TaskKind::Midjourney, &id)
        .await?
        .ok_or_else(|| TaskError::not_found(&id))?;
    Ok(Json(view::mj(&task, &image::shown_url(&state, &task))))
}

/// `POST /mj/task/list-by-condition`.
pub async fn mj_list(
    State(state): State<AppState>,
    caller: Caller,
    body: Bytes,
) -> Result<Json<Value>, TaskError> {
    let tasks = found(&state, caller.user.id, TaskKind::Midjourney, ids_of(&body)?).await?;
    Ok(Json(Value::Array(
        tasks
            .iter()
            .map(|t| view::mj(t, &image::shown_url(&state, t)))
            .collect(),
    )))
}

/// `GET /suno/fetch/{id}`.
pub async fn suno_task(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, TaskError> {
    let task = find(&state, caller.user.id, TaskKind::Suno, &id)
        .await?
        .ok_or_else(|| TaskError::not_found(&id))?;
    Ok(Json(
        json!({"code": "success", "message": "", "data": view::suno(&task)}),
    ))
}

/// `POST /suno/fetch`.
pub async fn suno_list(
    State(state): State<AppState>,
    caller: Caller,
    body: Bytes,
) -> Result<Json<Value>, TaskError> {
    let tasks = found(&state, caller.user.id, TaskKind::Suno, ids_of(&body)?).await?;
    let data: Vec<Value> = tasks.iter().map(view::suno).collect();
    Ok(Json(
        json!({"code": "success", "message": "", "data": data}),
    ))
}

/// `GET /v1/videos/{id}`.
pub async fn video(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, TaskError> {
    let task = find(&state, caller.user.id, TaskKind::Video, &id)
        .await?
        .ok_or_else(|| TaskError::not_found(&id))?;
    Ok(Json(view::video(&task)))
}
