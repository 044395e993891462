//! What the task upstreams answer when asked about their tasks, and how each answer becomes a
//! [`TaskUpdate`]. Pure: no I/O, unit-tested below.
//!
//! - Midjourney-proxy (novicezk/midjourney-proxy, its API doc "任务查询"):
//!   `POST {base}/mj/task/list-by-condition` with `{"ids": [...]}` and the `mj-api-secret`
//!   header answers an array of tasks: `id`, `action`, `status` (NOT_START, SUBMITTED, MODAL,
//!   IN_PROGRESS, FAILURE, SUCCESS, CANCEL), `progress` ("45%"), `imageUrl`, `failReason`,
//!   `promptEn`, `description`, `submitTime` / `startTime` / `finishTime` (milliseconds),
//!   `buttons`, `properties`.
//! - Suno (the Suno-API protocol the incumbent's adaptor speaks): `POST {base}/suno/fetch` with
//!   `{"ids": [...]}` and a Bearer key answers `{"code": "success", "message", "data": [{task_id,
//!   action, status (submitted, queueing, processing, success, failed), fail_reason,
//!   submit_time, start_time, finish_time, data: songs | lyrics}]}`; a song has `audio_url`,
//!   `image_url`, `title`.
//! - OpenAI videos (API reference, "Retrieve video"): `GET {base}/v1/videos/{id}` with a Bearer
//!   key answers the Video object: `id`, `status` (queued, in_progress, completed, failed),
//!   `progress` (integer percent), `seconds`, `completed_at`, `error {code, message}`.

use serde::Deserialize;
use serde_json::Value;
use tollgate_storage::tasks::{
    FAILURE, IN_PROGRESS, MODAL, NOT_START, QUEUED, SUBMITTED, SUCCESS, TaskUpdate, UNKNOWN,
};

/// One task of a Midjourney-proxy `list-by-condition` answer.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MjTask {
    /// The upstream task id.
    pub id: String,
    /// Status.
    pub status: Option<String>,
    /// Progress ("45%").
    pub progress: Option<String>,
    /// Result image.
    pub image_url: Option<String>,
    /// Why it failed.
    pub fail_reason: Option<String>,
    /// Translated prompt.
    pub prompt_en: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Milliseconds.
    pub start_time: Option<i64>,
    /// Milliseconds.
    pub finish_time: Option<i64>,
    /// Buttons (kept as JSON text).
    pub buttons: Option<Value>,
    /// Properties (kept as JSON text).
    pub properties: Option<Value>,
}

impl MjTask {
    /// The update this answer makes.
    pub fn update(self) -> TaskUpdate {
        let status = self.status.as_deref().map(|s| match s {
            NOT_START | SUBMITTED | MODAL | IN_PROGRESS | FAILURE | SUCCESS => s.to_owned(),
            "CANCEL" => FAILURE.to_owned(),
            _ => UNKNOWN.to_owned(),
        });
        let cancelled = self.status.as_deref() == Some("CANCEL");
        TaskUpdate {
            status,
            progress: self.progress,
            image_url: self.image_url.filter(|u| !u.is_empty()),
            fail_reason: self
                .fail_reason
                .filter(|r| !r.is_empty())
                .or_else(|| cancelled.then(|| "cancelled upstream".to_owned())),
            prompt_en: self.prompt_en,
            description: self.description,
            buttons: self.buttons.map(|v| v.to_string()),
            properties: self.properties.map(|v| v.to_string()),
            start_time: self.start_time.map(seconds),
            finish_time: self.finish_time.map(seconds),
            ..TaskUpdate::default()
        }
    }
}

/// A Suno `fetch` answer.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SunoAnswer {
    /// `success` when it worked.
    pub code: String,
    /// The upstream's message.
    pub message: String,
    /// The tasks asked about.
    pub data: Vec<SunoTask>,
}

/// One task of a Suno `fetch` answer.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SunoTask {
    /// The upstream task id.
    pub task_id: String,
    /// Status (lower case).
    pub status: String,
    /// Why it failed.
    pub fail_reason: String,
    /// Seconds (or milliseconds).
    pub start_time: i64,
    /// Seconds (or milliseconds).
    pub finish_time: i64,
    /// Progress, when the upstream gives one.
    pub progress: Option<String>,
    /// Songs (an array) or lyrics (an object).
    pub data: Value,
}

impl SunoTask {
    /// The update this answer makes.
    pub fn update(self) -> TaskUpdate {
        let status = match self.status.to_ascii_lowercase().as_str() {
            "" => String::new(),
            "submitted" | "not_start" => SUBMITTED.to_owned(),
            "queueing" | "queued" => QUEUED.to_owned(),
            "processing" | "streaming" | "in_progress" => IN_PROGRESS.to_owned(),
            "success" | "complete" => SUCCESS.to_owned(),
            "failed" | "failure" | "error" => FAILURE.to_owned(),
            _ => UNKNOWN.to_owned(),
        };
        let song = match &self.data {
            Value::Array(songs) => songs.first(),
            _ => None,
        };
        let url = |key: &str| {
            song.and_then(|s| s.get(key))
                .and_then(Value::as_str)
                .filter(|u| !u.is_empty())
                .map(str::to_owned)
        };
        let progress = if status == SUCCESS {
            Some("100%".to_owned())
        } else {
            self.progress
        };
        TaskUpdate {
            progress,
            image_url: url("image_url"),
            result_url: url("audio_url"),
            data: (!self.data.is_null()).then(|| self.data.to_string()),
            fail_reason: Some(self.fail_reason).filter(|r| !r.is_empty()),
            start_time: Some(seconds(self.start_time)),
            finish_time: Some(seconds(self.finish_time)),
            status: Some(status),
            ..TaskUpdate::default()
        }
    }
}

/// An OpenAI Video object.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Video {
    /// The upstream video id.
    pub id: String,
    /// queued, in_progress, completed, failed.
    pub status: String,
    /// Percent.
    pub progress: Option<i64>,
    /// Unix seconds.
    pub completed_at: Option<i64>,
    /// Why it failed.
    pub error: Option<VideoError>,
}

/// The error of a failed video.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct VideoError {
    /// Machine-readable code.
    pub code: String,
    /// Human-readable message.
    pub message: String,
}

impl Video {
    /// The update this answer makes (`raw`: the answer as it came, kept as the task's data).
    pub fn update(self, raw: String) -> TaskUpdate {
        let status = match self.status.as_str() {
            "queued" => QUEUED,
            "in_progress" => IN_PROGRESS,
            "completed" => SUCCESS,
            "failed" => FAILURE,
            _ => UNKNOWN,
        };
        let progress = if status == SUCCESS {
            Some(100)
        } else {
            self.progress
        };
        let fail_reason = self.error.map(|e| {
            if e.message.is_empty() {
                e.code
            } else {
                e.message
            }
        });
        TaskUpdate {
            status: Some(status.to_owned()),
            progress: progress.map(|p| format!("{}%", p.clamp(0, 100))),
            result_url: (status == SUCCESS).then(|| format!("/v1/videos/{}/content", self.id)),
            data: Some(raw),
            fail_reason: fail_reason.filter(|r| !r.is_empty()),
            finish_time: self.completed_at,
            ..TaskUpdate::default()
        }
    }
}

/// Unix seconds from an upstream time that may be in milliseconds (anything past the year
/// 5000 in seconds is taken as milliseconds); 0 stays 0.
pub fn seconds(t: i64) -> i64 {
    if t > 100_000_000_000 {
        t / 1000
    } else {
        t.max(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn midjourney_answers_map_to_updates() {
        let task: Vec<MjTask> = serde_json::from_str(
            r#"[{"id":"1","action":"IMAGINE","status":"SUCCESS","progress":"100%",
                "imageUrl":"https://cdn/x.png","failReason":"","submitTime":1700000000000,
                "finishTime":1700000060000,"buttons":[{"customId":"U1"}]}]"#,
        )
        .expect("parse");
        let u = task.into_iter().next().expect("one").update();
        assert_eq!(u.status.as_deref(), Some(SUCCESS));
        assert_eq!(u.image_url.as_deref(), Some("https://cdn/x.png"));
        assert_eq!(u.fail_reason, None);
        assert_eq!(u.finish_time, Some(1_700_000_060));
        assert!(u.buttons.expect("buttons").contains("U1"));
        let cancel = MjTask {
            status: Some("CANCEL".into()),
            ..MjTask::default()
        }
        .update();
        assert_eq!(cancel.status.as_deref(), Some(FAILURE));
        assert!(cancel.fail_reason.is_some());
    }

    #[test]
    fn suno_answers_map_to_updates() {
        let answer: SunoAnswer = serde_json::from_str(
            r#"{"code":"success","message":"","data":[{"task_id":"s1","action":"MUSIC",
                "status":"SUCCESS","fail_reason":"","submit_time":1700000000,
                "finish_time":1700000100,"data":[{"id":"c1","title":"Song",
                "audio_url":"https://cdn/s.mp3","image_url":"https://cdn/s.png"}]}]}"#,
        )
        .expect("parse");
        let u = answer.data.into_iter().next().expect("one").update();
        assert_eq!(u.status.as_deref(), Some(SUCCESS));
        assert_eq!(u.progress.as_deref(), Some("100%"));
        assert_eq!(u.result_url.as_deref(), Some("https://cdn/s.mp3"));
        assert_eq!(u.image_url.as_deref(), Some("https://cdn/s.png"));
        let queued = SunoTask {
            status: "queueing".into(),
            ..SunoTask::default()
        }
        .update();
        assert_eq!(queued.status.as_deref(), Some(QUEUED));
        let odd = SunoTask {
            status: "weird".into(),
            ..SunoTask::default()
        }
        .update();
        assert_eq!(odd.status.as_deref(), Some(UNKNOWN));
    }

    #[test]
    fn video_answers_map_to_updates() {
        let raw = r#"{"id":"video_1","object":"video","status":"failed","progress":30,
            "error":{"code":"moderation","message":"blocked"}}"#;
        let v: Video = serde_json::from_str(raw).expect("parse");
        let u = v.update(raw.into());
        assert_eq!(u.status.as_deref(), Some(FAILURE));
        assert_eq!(u.fail_reason.as_deref(), Some("blocked"));
        assert_eq!(u.progress.as_deref(), Some("30%"));
        let done: Video =
            serde_json::from_str(r#"{"id":"video_2","status":"completed","progress":100}"#)
                .expect("parse");
        let u = done.update(String::new());
        assert_eq!(u.result_url.as_deref(), Some("/v1/videos/video_2/content"));
    }

    #[test]
    fn upstream_times_may_be_milliseconds() {
        assert_eq!(seconds(1_700_000_000_000), 1_700_000_000);
        assert_eq!(seconds(1_700_000_000), 1_700_000_000);
        assert_eq!(seconds(-5), 0);
    }
}
