//! The Midjourney-proxy submit routes (novicezk/midjourney-proxy's API: `/mj/submit/*`,
//! `/mj/insight-face/swap`; the answer `{code, description, result, properties}`, code 1
//! submitted, 21 existed / waiting for a modal, 22 queued, others refused) and
//! `/mj/task/{id}/image-seed`, which asks the task's channel.
//!
//! Shaping a submit, as the incumbent's switches say (reference §7.1):
//! - MjNotifyEnabled off: `notifyHook` is removed (upstream callbacks are not relayed);
//! - MjAccountFilterEnabled off: `accountFilter` is removed;
//! - MjModeClearEnabled on: `--fast`, `--relax` and `--turbo` are removed from the prompt;
//! - an action on an earlier task (change, simple-change, action, modal, a video — whose task
//!   is its `taskId`, else the last part of its `customId`, else it is refused) names a task
//!   that must be the caller's (else 404) and, with MjActionCheckSuccessEnabled, one that
//!   succeeded (else 400); it goes to that task's channel and no other.
//!
//! Codes 21 and 22 count as accepted and are answered as 1 (the incumbent's behaviour); the
//! stored code keeps the upstream's. The speed-mode prefix is kept on the upstream path.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tollgate_actors::options::OptionsSnapshot;
use tollgate_storage::tasks::{SUBMITTED, SUCCESS, Task, TaskKind};

use super::error::TaskError;
use super::fetch;
use super::submit::{self, Accepted, Answer, Submit, Upstream, Verdict, passthrough};
use crate::relay::pipeline::auth::Caller;
use crate::state::AppState;

/// What a submit asks for: the task's action and the earlier task it acts on, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    /// IMAGINE, UPSCALE, VARIATION, …
    pub action: String,
    /// The earlier task's upstream id.
    pub origin: Option<String>,
}

/// The route after `/mj/` (`submit/imagine`, `insight-face/swap`), the prefix dropped.
pub fn endpoint(path: &str) -> &str {
    path.find("/mj/").map_or(path, |at| &path[at + 4..])
}

fn text(body: &Value, key: &str) -> Option<String> {
    match body.get(key)? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The action of a button's `customId` (`MJ::JOB::upsample::1::…`, `MJ::Outpaint::…`).
pub fn action_of_custom_id(custom_id: &str) -> Option<&'static str> {
    let id = custom_id.to_ascii_lowercase();
    let table: [(&str, &str); 10] = [
        ("mj::job::upsample", "UPSCALE"),
        ("mj::job::variation", "VARIATION"),
        ("mj::job::reroll", "REROLL"),
        ("mj::job::high_variation", "HIGH_VARIATION"),
        ("mj::job::low_variation", "LOW_VARIATION"),
        ("mj::job::pan_", "PAN"),
        ("mj::outpaint", "ZOOM"),
        ("mj::customzoom", "CUSTOM_ZOOM"),
        ("mj::inpaint", "INPAINT"),
        ("mj::job::video", "VIDEO"),
    ];
    table
        .iter()
        .find(|(prefix, _)| id.starts_with(prefix))
        .map(|(_, action)| *action)
}

/// What the submit on `endpoint` with `body` asks for.
pub fn asked(endpoint: &str, body: &Value) -> Result<Asked, TaskError> {
    let simple = |action: &str| Asked {
        action: action.to_owned(),
        origin: None,
    };
    Ok(match endpoint {
        "submit/imagine" => simple("IMAGINE"),
        "submit/describe" => simple("DESCRIBE"),
        "submit/blend" => simple("BLEND"),
        "submit/shorten" => simple("SHORTEN"),
        "submit/upload-discord-images" => simple("UPLOAD"),
        "submit/edits" => simple("EDITS"),
        "insight-face/swap" => simple("SWAP_FACE"),
        // A video animates an earlier task's image: named by `taskId`, or by the last part of
        // its button's `customId` (as the incumbent reads an action's task).
        "submit/video" => Asked {
            action: "VIDEO".into(),
            origin: Some(
                text(body, "taskId")
                    .or_else(|| {
                        text(body, "customId").and_then(|c| {
                            c.rsplit("::")
                                .next()
                                .map(str::trim)
                                .filter(|t| !t.is_empty())
                                .map(str::to_owned)
                        })
                    })
                    .ok_or_else(|| TaskError::bad_request("taskId is required"))?,
            ),
        },
        "submit/change" => {
            let action = text(body, "action")
                .map(|a| a.to_ascii_uppercase())
                .filter(|a| matches!(a.as_str(), "UPSCALE" | "VARIATION" | "REROLL"))
                .ok_or_else(|| {
                    TaskError::bad_request("action must be UPSCALE, VARIATION or REROLL")
                })?;
            Asked {
                action,
                origin: Some(
                    text(body, "taskId")
                        .ok_or_else(|| TaskError::bad_request("taskId is required"))?,
                ),
            }
        }
        "submit/simple-change" => {
            let content = text(body, "content")
                .ok_or_else(|| TaskError::bad_request("content is required"))?;
            let (id, change) = content
                .split_once(char::is_whitespace)
                .ok_or_else(|| TaskError::bad_request("content must be \"<taskId> U1\""))?;
            let action = match change.trim().chars().next().map(|c| c.to_ascii_uppercase()) {
                Some('U') => "UPSCALE",
                Some('V') => "VARIATION",
                Some('R') => "REROLL",
                _ => return Err(TaskError::bad_request("content must be \"<taskId> U1\"")),
            };
            Asked {
                action: action.into(),
                origin: Some(id.trim().to_owned()),
            }
        }
        "submit/action" => {
            let custom = text(body, "customId")
                .ok_or_else(|| TaskError::bad_request("customId is required"))?;
            let action = action_of_custom_id(&custom)
                .ok_or_else(|| TaskError::bad_request(format!("unknown customId {custom}")))?;
            Asked {
                action: action.into(),
                origin: Some(
                    text(body, "taskId")
                        .ok_or_else(|| TaskError::bad_request("taskId is required"))?,
                ),
            }
        }
        "submit/modal" => Asked {
            action: "MODAL".into(),
            origin: Some(
                text(body, "taskId").ok_or_else(|| TaskError::bad_request("taskId is required"))?,
            ),
        },
        other => return Err(TaskError::bad_request(format!("unknown route /mj/{other}"))),
    })
}

/// The priced model of `action` (`mj_imagine`, …; face swap is `swap_face`).
pub fn model_of(action: &str) -> String {
    match action {
        "SWAP_FACE" => "swap_face".to_owned(),
        other => format!("mj_{}", other.to_ascii_lowercase()),
    }
}

/// `prompt` without the speed-mode flags.
pub fn clear_modes(prompt: &str) -> String {
    let kept: Vec<&str> = prompt
        .split_whitespace()
        .filter(|w| !matches!(*w, "--fast" | "--relax" | "--turbo"))
        .collect();
    kept.join(" ")
}

/// Applies the switches to a submit's body.
pub fn shape(body: &mut Value, options: &OptionsSnapshot) {
    let Some(obj) = body.as_object_mut() else {
        return;
    };
    if !options.flag("MjNotifyEnabled") {
        obj.remove("notifyHook");
    }
    if !options.flag("MjAccountFilterEnabled") {
        obj.remove("accountFilter");
    }
    if options.flag("MjModeClearEnabled")
        && let Some(Value::String(prompt)) = obj.get_mut("prompt")
    {
        *prompt = clear_modes(prompt);
    }
}

/// Reads a Midjourney-proxy submit answer to `submit`.
pub fn judge_submit(answer: &Answer, submit: &Submit) -> Verdict {
    judge(answer, &submit.action)
}

/// Reads a Midjourney-proxy submit answer to an `action`.
pub fn judge(answer: &Answer, action: &str) -> Verdict {
    let Ok(value) = serde_json::from_slice::<Value>(&answer.body) else {
        return Verdict::Refused;
    };
    let code = value.get("code").and_then(Value::as_i64).unwrap_or(0);
    if !matches!(code, 1 | 21 | 22) {
        return Verdict::Refused;
    }
    let properties = value
        .get("properties")
        .filter(|p| !p.is_null())
        .map(Value::to_string)
        .unwrap_or_default();
    let (upstream_id, status, data) = match value.get("result") {
        Some(Value::String(s)) if !s.is_empty() => (s.clone(), SUBMITTED, String::new()),
        Some(Value::Number(n)) => (n.to_string(), SUBMITTED, String::new()),
        // An upload answers the images' URLs: a task finished at once.
        Some(urls @ Value::Array(_)) if action == "UPLOAD" => (
            format!("upload-{:016x}", rand::random::<u64>()),
            SUCCESS,
            urls.to_string(),
        ),
        _ => return Verdict::Refused,
    };
    Verdict::Accepted(Accepted {
        upstream_id,
        code: i32::try_from(code).unwrap_or(1),
        status: status.to_owned(),
        calls: None,
        properties,
        data,
    })
}

/// `POST /mj/submit/*`, `/mj/insight-face/swap` (and under the speed-mode prefixes).
pub async fn submit(
    State(state): State<AppState>,
    caller: Caller,
    uri: Uri,
    body: Bytes,
) -> Result<Response, TaskError> {
    let mut parsed: Value = serde_json::from_slice(&body)
        .map_err(|e| TaskError::bad_request(format!("the request body is not valid JSON: {e}")))?;
    if !parsed.is_object() {
        return Err(TaskError::bad_request(
            "the request body must be a JSON object",
        ));
    }
    let asked = asked(endpoint(uri.path()), &parsed)?;
    let options = state.options.current();
    let mut channel = None;
    if let Some(origin) = &asked.origin {
        let task = fetch::find(&state, caller.user.id, TaskKind::Midjourney, origin)
            .await?
            .ok_or_else(|| TaskError::not_found(origin))?;
        if options.flag("MjActionCheckSuccessEnabled") && task.status != SUCCESS {
            return Err(TaskError::bad_request(format!(
                "task {origin} has not succeeded (its status is {})",
                if task.status.is_empty() {
                    "submitting"
                } else {
                    &task.status
                }
            )));
        }
        channel = Some(task.channel_id);
    }
    shape(&mut parsed, &options);
    drop(options);
    let prompt = text(&parsed, "prompt").unwrap_or_default();
    submit::run(
        &state,
        caller,
        Submit {
            kind: TaskKind::Midjourney,
            platform: "midjourney",
            model: model_of(&asked.action),
            action: asked.action,
            prompt,
            calls: 1.0,
            path: uri.path().to_owned(),
            body: Upstream::Json {
                body: parsed,
                map_model: false,
            },
            channel,
        },
        judge_submit,
        respond,
    )
    .await
}

/// The answer to an accepted submit: the upstream's, codes 21 and 22 answered as 1.
fn respond(answer: Answer, _task: &Task) -> Response {
    let mut value: Value = serde_json::from_slice(&answer.body).unwrap_or_default();
    if let Some(code) = value.get_mut("code")
        && matches!(code.as_i64(), Some(21 | 22))
    {
        *code = Value::from(1);
    }
    (StatusCode::OK, axum::Json(value)).into_response()
}

/// `GET /mj/task/{id}/image-seed`: asks the task's channel (the seed is not stored).
pub async fn image_seed(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    uri: Uri,
) -> Result<Response, TaskError> {
    let task = fetch::find(&state, caller.user.id, TaskKind::Midjourney, &id)
        .await?
        .ok_or_else(|| TaskError::not_found(&id))?;
    let table = state.channel_pool.table().load_full();
    let channel = table
        .channel(task.channel_id)
        .cloned()
        .ok_or_else(|| TaskError::not_found(&id))?;
    let call = submit::request(
        &state,
        &channel,
        TaskKind::Midjourney,
        reqwest::Method::GET,
        uri.path(),
    )?;
    Ok(passthrough(submit::read_answer(call, &channel).await?))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn submits_name_their_action_and_origin() {
        assert_eq!(endpoint("/mj-fast/mj/submit/imagine"), "submit/imagine");
        assert_eq!(
            asked(
                "submit/change",
                &json!({"action":"upscale","taskId":"7","index":1})
            )
            .expect("change"),
            Asked {
                action: "UPSCALE".into(),
                origin: Some("7".into())
            }
        );
        assert_eq!(
            asked("submit/simple-change", &json!({"content":"9 V2"}))
                .expect("simple")
                .action,
            "VARIATION"
        );
        assert_eq!(
            asked(
                "submit/action",
                &json!({"customId":"MJ::JOB::upsample::1::abc","taskId":"9"})
            )
            .expect("action")
            .action,
            "UPSCALE"
        );
        assert!(asked("submit/change", &json!({"action":"ZOOM","taskId":"1"})).is_err());
        let video = |body| asked("submit/video", &body).map(|a| a.origin);
        assert_eq!(
            video(json!({"taskId":"5"})).ok().flatten().as_deref(),
            Some("5")
        );
        assert_eq!(
            video(json!({"customId":"MJ::JOB::video::1::77"}))
                .ok()
                .flatten()
                .as_deref(),
            Some("77")
        );
        assert!(video(json!({"prompt":"a cat"})).is_err(), "no origin");
        assert_eq!(model_of("HIGH_VARIATION"), "mj_high_variation");
        assert_eq!(model_of("SWAP_FACE"), "swap_face");
    }

    #[test]
    fn speed_flags_are_cleared() {
        assert_eq!(clear_modes("a cat --fast --v 6 --relax"), "a cat --v 6");
    }

    #[test]
    fn codes_21_and_22_are_accepted() {
        let answer = |body: &str| Answer {
            status: 200,
            body: Bytes::from(body.to_owned()),
            content_type: None,
        };
        for code in [1, 21, 22] {
            let body = format!(r#"{{"code":{code},"description":"ok","result":"17"}}"#);
            match judge(&answer(&body), "IMAGINE") {
                Verdict::Accepted(a) => {
                    assert_eq!(a.upstream_id, "17");
                    assert_eq!(a.code, code);
                }
                Verdict::Refused => panic!("code {code} refused"),
            }
        }
        assert!(matches!(
            judge(
                &answer(r#"{"code":24,"description":"banned","result":""}"#),
                "IMAGINE"
            ),
            Verdict::Refused
        ));
    }
}
