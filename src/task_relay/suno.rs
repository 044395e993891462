//! The Suno submit routes, in the protocol of the Suno-API project the incumbent's adaptor
//! speaks (`POST /suno/submit/music` with `prompt`, `mv`, `title`, `tags`, `continue_at`,
//! `continue_clip_id`, `gpt_description_prompt`, `make_instrumental`; `POST
//! /suno/submit/lyrics` with `prompt`; the answer `{code: "success", message, data:
//! "<task id>"}`). Priced as `suno_music` and `suno_lyrics`. A continuation
//! (`continue_clip_id`) names its task in `task_id`, which must be the caller's; it goes to
//! that task's channel.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use serde_json::Value;
use tollgate_storage::tasks::{SUBMITTED, TaskKind};

use super::error::TaskError;
use super::fetch;
use super::submit::{self, Accepted, Answer, Submit, Upstream, Verdict, passthrough};
use crate::relay::pipeline::auth::Caller;
use crate::state::AppState;

/// Reads a Suno submit answer.
pub fn judge(answer: &Answer, _submit: &Submit) -> Verdict {
    let Ok(value) = serde_json::from_slice::<Value>(&answer.body) else {
        return Verdict::Refused;
    };
    let ok = value
        .get("code")
        .and_then(Value::as_str)
        .is_some_and(|c| c.eq_ignore_ascii_case("success"));
    let id = match value.get("data") {
        Some(Value::String(id)) if !id.is_empty() => id.clone(),
        _ => return Verdict::Refused,
    };
    if !ok {
        return Verdict::Refused;
    }
    Verdict::Accepted(Accepted {
        upstream_id: id,
        code: 1,
        status: SUBMITTED.to_owned(),
        ..Accepted::default()
    })
}

/// `POST /suno/submit/{music,lyrics}`.
pub async fn submit(
    State(state): State<AppState>,
    caller: Caller,
    Path(action): Path<String>,
    body: Bytes,
) -> Result<Response, TaskError> {
    let action = match action.as_str() {
        "music" => "MUSIC",
        "lyrics" => "LYRICS",
        other => {
            return Err(TaskError::bad_request(format!(
                "unknown Suno action {other} (music or lyrics)"
            )));
        }
    };
    let parsed: Value = serde_json::from_slice(&body)
        .map_err(|e| TaskError::bad_request(format!("the request body is not valid JSON: {e}")))?;
    if !parsed.is_object() {
        return Err(TaskError::bad_request(
            "the request body must be a JSON object",
        ));
    }
    // A continuation extends a clip of an earlier task: that task (`task_id`, as the
    // incumbent asks) must be the caller's, and the continuation goes to its channel.
    let text = |key: &str| {
        parsed
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    let channel = match text("continue_clip_id") {
        Some(_) => {
            let origin = text("task_id").ok_or_else(|| {
                TaskError::bad_request("task_id is required to continue a clip (continue_clip_id)")
            })?;
            let task = fetch::find(&state, caller.user.id, TaskKind::Suno, origin)
                .await?
                .ok_or_else(|| TaskError::not_found(origin))?;
            Some(task.channel_id)
        }
        None => None,
    };
    let prompt = ["prompt", "gpt_description_prompt"]
        .iter()
        .find_map(|k| {
            parsed
                .get(*k)
                .and_then(Value::as_str)
                .filter(|p| !p.is_empty())
        })
        .unwrap_or_default()
        .to_owned();
    submit::run(
        &state,
        caller,
        Submit {
            kind: TaskKind::Suno,
            platform: "suno",
            model: format!("suno_{}", action.to_ascii_lowercase()),
            action: action.to_owned(),
            prompt,
            calls: 1.0,
            path: format!("/suno/submit/{}", action.to_ascii_lowercase()),
            body: Upstream::Json {
                body: parsed,
                map_model: false,
            },
            channel,
        },
        judge,
        |answer, _| passthrough(answer),
    )
    .await
}
