//! A stored task as each family's fetch answer shows it:
//!
//! - Midjourney-proxy's task object (its API doc, "任务查询"): `id`, `action`, `prompt`,
//!   `promptEn`, `description`, `submitTime` / `startTime` / `finishTime` in milliseconds,
//!   `imageUrl`, `status`, `progress`, `failReason`, `buttons`, `properties`; with
//!   MjForwardUrlEnabled the image URL is this gateway's `/mj/image/{id}`.
//! - The incumbent's Suno task: `task_id`, `action`, `status`, `fail_reason`, `submit_time`,
//!   `start_time`, `finish_time` (seconds), `progress`, `data` (the songs or lyrics).
//! - OpenAI's Video object (API reference, "Retrieve video"): the upstream's last answer as
//!   stored, else one made of the task (`id`, `object`, `model`, `status` queued /
//!   in_progress / completed / failed, `progress`, `created_at`, `completed_at`, `error`).

use serde_json::{Value, json};
use tollgate_storage::tasks::{FAILURE, IN_PROGRESS, SUCCESS, Task};

/// A JSON text as a value (`default` when empty or unreadable).
fn parsed(text: &str, default: Value) -> Value {
    if text.is_empty() {
        return default;
    }
    serde_json::from_str(text).unwrap_or(default)
}

/// The Midjourney-proxy task object of `task`; `image_url` is the URL to show (the stored one,
/// or this gateway's image route).
pub fn mj(task: &Task, image_url: &str) -> Value {
    let ms = |s: i64| s.saturating_mul(1000);
    json!({
        "id": task.upstream_id,
        "action": task.action,
        "prompt": task.prompt,
        "promptEn": task.prompt_en,
        "description": task.description,
        "state": "",
        "submitTime": ms(task.submit_time),
        "startTime": ms(task.start_time),
        "finishTime": ms(task.finish_time),
        "imageUrl": image_url,
        "status": task.status,
        "progress": task.progress,
        "failReason": task.fail_reason,
        "buttons": parsed(&task.buttons, json!([])),
        "properties": parsed(&task.properties, json!({})),
    })
}

/// The incumbent's Suno task object of `task`.
pub fn suno(task: &Task) -> Value {
    json!({
        "task_id": task.upstream_id,
        "action": task.action,
        "status": task.status,
        "fail_reason": task.fail_reason,
        "submit_time": task.submit_time,
        "start_time": task.start_time,
        "finish_time": task.finish_time,
        "progress": task.progress,
        "data": parsed(&task.data, Value::Null),
    })
}

/// The OpenAI Video object of `task`.
pub fn video(task: &Task) -> Value {
    if let Value::Object(mut stored) = parsed(&task.data, Value::Null) {
        stored.insert("id".into(), json!(task.upstream_id));
        return Value::Object(stored);
    }
    let status = match task.status.as_str() {
        SUCCESS => "completed",
        FAILURE => "failed",
        IN_PROGRESS => "in_progress",
        _ => "queued",
    };
    let mut video = json!({
        "id": task.upstream_id,
        "object": "video",
        "model": task.model_name,
        "status": status,
        "progress": task.progress_percent(),
        "created_at": task.submit_time,
    });
    if task.finish_time > 0 {
        video["completed_at"] = json!(task.finish_time);
    }
    if task.status == FAILURE {
        video["error"] = json!({"code": "failed", "message": task.fail_reason});
    }
    video
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_show_in_each_family_shape() {
        let task = Task {
            upstream_id: "17001".into(),
            action: "IMAGINE".into(),
            status: SUCCESS.into(),
            progress: "100%".into(),
            submit_time: 1_700_000_000,
            buttons: r#"[{"customId":"U1"}]"#.into(),
            ..Task::default()
        };
        let mj = mj(&task, "https://gw/mj/image/x");
        assert_eq!(mj["submitTime"], 1_700_000_000_000i64);
        assert_eq!(mj["imageUrl"], "https://gw/mj/image/x");
        assert_eq!(mj["buttons"][0]["customId"], "U1");
        let video = video(&Task {
            status: FAILURE.into(),
            fail_reason: "blocked".into(),
            ..task.clone()
        });
        assert_eq!(video["status"], "failed");
        assert_eq!(video["error"]["message"], "blocked");
        let suno = suno(&Task {
            data: r#"[{"audio_url":"https://cdn/s.mp3"}]"#.into(),
            ..task
        });
        assert_eq!(suno["data"][0]["audio_url"], "https://cdn/s.mp3");
    }
}
