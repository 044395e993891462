//! The incumbent's drawing and task records become Tollgate's tasks (`tasks.v1`), so the drawing
//! log and the task log show a user's history after the switch.
//!
//! | table | model (file, commit read) | Tollgate [`Task`] |
//! |---|---|---|
//! | `midjourneys` | `Midjourney`, model/midjourney.go @515769c | kind Midjourney: code, user_id, action, `mj_id` → upstream id, prompt, prompt_en, description, submit/start/finish time (milliseconds there, seconds here), image_url, `video_url` → result URL, status, progress, fail_reason, channel_id, quota, `token_id`, buttons, properties; the model name `mj_<action>` |
//! | `tasks` | `Task` (+ `Properties`, `TaskPrivateData`), model/task.go @01d7dcf | platform `suno` → kind Suno, any other (a channel type's number; `1` is OpenAI's videos) → kind Video: task_id, user_id, group, channel_id, quota, action, status, fail_reason, submit/start/finish time, progress, `data`; `properties.input` → prompt, `properties.origin_model_name` → model name; `private_data.result_url`, `.token_id`, `.upstream_task_id` (the id the poller asks the upstream about); `private_data.key` (an upstream key) never |
//!
//! Finished records (SUCCESS, FAILURE) are history: a failed one was refunded by the incumbent,
//! so it is stored as refunded (an admin's refund here would pay it twice). An unfinished one
//! is imported open when Tollgate polls its platform on the channel it ran on (Midjourney on
//! channel types 2 and 5, Suno on 36, OpenAI videos on 1): the poller takes it over, with the
//! same end rules (the Midjourney hour, `TaskTimeoutMinutes`, a refund once on failure). Any
//! other unfinished one is marked FAILURE, *not* refunded, and listed with its cost, so the
//! operator refunds it from the task log (audited) if the upstream never delivered.

use std::collections::HashMap;

use serde_json::Value as Json;
use tollgate_storage::tasks::{FAILURE, SUCCESS, Task, TaskKind};
use tollgate_storage::{ChannelId, TokenId, UserId};

use super::mapping::Notes;
use super::source::{Kind, SourceRow, TableSpec};

use Kind::{Int, Text};

/// `midjourneys` (model/midjourney.go @515769c).
pub const MIDJOURNEYS: TableSpec = TableSpec {
    name: "midjourneys",
    columns: &[
        ("id", Int),
        ("code", Int),
        ("user_id", Int),
        ("action", Text),
        ("mj_id", Text),
        ("prompt", Text),
        ("prompt_en", Text),
        ("description", Text),
        ("submit_time", Int),
        ("start_time", Int),
        ("finish_time", Int),
        ("image_url", Text),
        ("video_url", Text),
        ("status", Text),
        ("progress", Text),
        ("fail_reason", Text),
        ("channel_id", Int),
        ("quota", Int),
        ("token_id", Int),
        ("buttons", Text),
        ("properties", Text),
    ],
    not_carried: &["state", "video_urls", "billing_channel_id"],
};

/// `tasks` (model/task.go @01d7dcf).
pub const TASKS: TableSpec = TableSpec {
    name: "tasks",
    columns: &[
        ("id", Int),
        ("created_at", Int),
        ("updated_at", Int),
        ("task_id", Text),
        ("platform", Text),
        ("user_id", Int),
        ("group", Text),
        ("channel_id", Int),
        ("quota", Int),
        ("action", Text),
        ("status", Text),
        ("fail_reason", Text),
        ("submit_time", Int),
        ("start_time", Int),
        ("finish_time", Int),
        ("progress", Text),
        ("properties", Text),
        ("private_data", Text),
        ("data", Text),
    ],
    not_carried: &[],
};

/// What the task mapping looks up among the imported records.
#[derive(Debug, Default)]
pub struct Known {
    /// Imported users: id → (username, group).
    pub users: HashMap<i64, (String, String)>,
    /// Imported tokens: id → name.
    pub tokens: HashMap<i64, String>,
    /// Imported channels: id → type.
    pub channels: HashMap<i64, i32>,
    /// The import's time (unix seconds).
    pub now: i64,
}

const UNFINISHED_POLLED: &str =
    "unfinished tasks Tollgate polls from now on (the incumbent stops polling once stopped)";
const UNFINISHED_MARKED: &str = "unfinished tasks marked failed and NOT refunded (Tollgate cannot \
     poll them): refund each from the task log if its upstream never delivered";
const NOT_CARRIED: &str = "Midjourney and task records not carried";

/// Midjourney times are milliseconds there; anything past the year 5138 in seconds is.
fn seconds(t: i64) -> i64 {
    if t > 100_000_000_000 { t / 1000 } else { t }
}

/// A drawing record, or `None` when its user was not imported.
pub fn drawing(row: &SourceRow, known: &Known, notes: &mut Notes) -> Option<Task> {
    let user = row.int("user_id");
    let Some((username, group)) = known.users.get(&user) else {
        notes.add(
            NOT_CARRIED,
            format!("drawing {}: user {user} not imported", row.text("mj_id")),
        );
        return None;
    };
    let token = row.int("token_id");
    let action = row.text("action");
    let submit = seconds(row.int("submit_time"));
    let mut task = Task {
        kind: TaskKind::Midjourney,
        platform: "midjourney".into(),
        user_id: UserId(user),
        token_id: known.tokens.contains_key(&token).then_some(TokenId(token)),
        token_name: known.tokens.get(&token).cloned().unwrap_or_default(),
        username: username.clone(),
        group: group.clone(),
        model_name: format!("mj_{}", action.to_lowercase()),
        channel_id: ChannelId(row.int("channel_id")),
        action,
        upstream_id: row.text("mj_id"),
        code: row.int("code") as i32,
        status: row.text("status"),
        progress: row.text("progress"),
        prompt: row.text("prompt"),
        prompt_en: row.text("prompt_en"),
        description: row.text("description"),
        image_url: row.text("image_url"),
        result_url: row.text("video_url"),
        buttons: row.text("buttons"),
        properties: row.text("properties"),
        fail_reason: row.text("fail_reason"),
        quota: row.int("quota").max(0),
        created_at: if submit > 0 { submit } else { known.now },
        submit_time: submit,
        start_time: seconds(row.int("start_time")),
        finish_time: seconds(row.int("finish_time")),
        ..Task::default()
    };
    let channel = known.channels.get(&task.channel_id.0).copied();
    let pollable = match channel {
        None => Err(format!("its channel {} was not imported", task.channel_id)),
        Some(2 | 5) => Ok(()),
        Some(other) => Err(format!("its channel is of type {other}, not Midjourney")),
    };
    finish(&mut task, pollable, known.now, notes);
    Some(task)
}

/// A music or video task, or `None` when its user was not imported.
pub fn task(row: &SourceRow, known: &Known, notes: &mut Notes) -> Option<Task> {
    let user = row.int("user_id");
    let public_id = row.text("task_id");
    let Some((username, _)) = known.users.get(&user) else {
        notes.add(
            NOT_CARRIED,
            format!("task {public_id}: user {user} not imported"),
        );
        return None;
    };
    let platform = row.text("platform");
    let properties: Json = serde_json::from_str(&row.text("properties")).unwrap_or(Json::Null);
    let private: Json = serde_json::from_str(&row.text("private_data")).unwrap_or(Json::Null);
    let text = |v: &Json, k: &str| v.get(k).and_then(Json::as_str).unwrap_or("").to_owned();
    let token = private.get("token_id").and_then(Json::as_i64).unwrap_or(0);
    let action = row.text("action");
    let kind = if platform == "suno" {
        TaskKind::Suno
    } else {
        TaskKind::Video
    };
    let mut model_name = text(&properties, "origin_model_name");
    if model_name.is_empty() && kind == TaskKind::Suno {
        model_name = format!("suno_{}", action.to_lowercase());
    }
    let created = row.int("created_at");
    let mut task = Task {
        kind,
        platform: match platform.as_str() {
            "1" => "openai".to_owned(),
            _ => platform.clone(),
        },
        user_id: UserId(user),
        token_id: known.tokens.contains_key(&token).then_some(TokenId(token)),
        token_name: known.tokens.get(&token).cloned().unwrap_or_default(),
        username: username.clone(),
        group: row.text("group"),
        model_name,
        channel_id: ChannelId(row.int("channel_id")),
        action,
        upstream_id: public_id.clone(),
        code: 1,
        status: row.text("status"),
        progress: row.text("progress"),
        prompt: text(&properties, "input"),
        result_url: text(&private, "result_url"),
        data: row.text("data"),
        fail_reason: row.text("fail_reason"),
        quota: row.int("quota").max(0),
        created_at: if created > 0 { created } else { known.now },
        submit_time: row.int("submit_time"),
        start_time: row.int("start_time"),
        finish_time: row.int("finish_time"),
        updated_at: row.int("updated_at"),
        ..Task::default()
    };
    if task.data.trim() == "null" {
        task.data.clear();
    }
    let upstream = text(&private, "upstream_task_id");
    if !task.is_finished() && !upstream.is_empty() {
        // The poller asks the upstream by its own id; new-api gave clients a public one.
        task.upstream_id = upstream;
        notes.add(
            UNFINISHED_POLLED,
            format!(
                "task {public_id} is listed under its upstream id {}",
                task.upstream_id
            ),
        );
    }
    if text(&private, "billing_source") == "subscription" && !task.is_finished() {
        // Charged to a subscription, not the wallet: a failure must not pay the wallet.
        notes.add(
            UNFINISHED_MARKED,
            format!(
                "task {public_id} (user {user}) was charged to a subscription: its cost {} is \
                 not refunded to the wallet on failure",
                task.quota
            ),
        );
        task.quota = 0;
    }
    let channel = known.channels.get(&task.channel_id.0).copied();
    let pollable = match (kind, platform.as_str(), channel) {
        (_, _, None) => Err(format!("its channel {} was not imported", task.channel_id)),
        (TaskKind::Suno, _, Some(36)) | (TaskKind::Video, "1", Some(1)) => Ok(()),
        (_, p, Some(t)) => Err(format!(
            "Tollgate does not poll platform {p} on channel type {t}"
        )),
    };
    finish(&mut task, pollable, known.now, notes);
    Some(task)
}

/// A finished record is history (a failure was refunded there); an unfinished one stays open
/// when `pollable`, else it is marked failed and listed.
fn finish(task: &mut Task, pollable: Result<(), String>, now: i64, notes: &mut Notes) {
    let what = format!(
        "user {}: {} {} ({}, {} quota)",
        task.user_id,
        if task.kind == TaskKind::Midjourney {
            "drawing"
        } else {
            "task"
        },
        task.upstream_id,
        task.platform,
        task.quota
    );
    if task.status == FAILURE {
        task.refunded = task.quota > 0;
        return;
    }
    if task.status == SUCCESS {
        return;
    }
    match pollable {
        Ok(()) => notes.add(UNFINISHED_POLLED, what),
        Err(why) => {
            task.status = FAILURE.to_owned();
            task.fail_reason = format!("unfinished at the import from new-api: {why}");
            task.finish_time = now;
            notes.add(UNFINISHED_MARKED, format!("{what}: {why}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::source::Value;
    use super::*;

    fn known() -> Known {
        Known {
            users: [(2, ("alice".to_owned(), "vip".to_owned()))].into(),
            tokens: [(1, "alice-laptop".to_owned())].into(),
            channels: [(1, 1), (2, 2)].into(),
            now: 1_800_000_000,
        }
    }

    fn t(s: &str) -> Value {
        Value::Text(s.to_owned())
    }

    #[test]
    fn drawings_keep_their_history_and_unfinished_ones_stay_open_on_a_midjourney_channel() {
        let row = SourceRow::new()
            .with("user_id", Value::Int(2))
            .with("mj_id", t("1700"))
            .with("action", t("IMAGINE"))
            .with("status", t("IN_PROGRESS"))
            .with("submit_time", Value::Int(1_760_000_000_123))
            .with("channel_id", Value::Int(2))
            .with("token_id", Value::Int(1))
            .with("quota", Value::Int(50_000));
        let mut notes = Notes::default();
        let open = drawing(&row, &known(), &mut notes).expect("kept");
        assert_eq!(open.submit_time, 1_760_000_000, "milliseconds → seconds");
        assert_eq!(open.model_name, "mj_imagine");
        assert_eq!(open.token_id, Some(TokenId(1)));
        assert!(!open.is_finished());
        let elsewhere = row.clone().with("channel_id", Value::Int(1));
        let marked = drawing(&elsewhere, &known(), &mut notes).expect("kept");
        assert_eq!(marked.status, FAILURE);
        assert!(!marked.refunded, "the operator decides");
        let failed = row.with("status", t("FAILURE"));
        assert!(
            drawing(&failed, &known(), &mut notes)
                .expect("kept")
                .refunded
        );
    }

    #[test]
    fn a_task_never_keeps_the_upstream_key_and_is_polled_by_its_upstream_id() {
        let row = SourceRow::new()
            .with("user_id", Value::Int(2))
            .with("task_id", t("task_pub"))
            .with("platform", t("1"))
            .with("status", t("IN_PROGRESS"))
            .with("channel_id", Value::Int(1))
            .with(
                "private_data",
                t(r#"{"key":"sk-secret","upstream_task_id":"video_1","token_id":1}"#),
            )
            .with(
                "properties",
                t(r#"{"input":"a cat","origin_model_name":"sora-2"}"#),
            );
        let mut notes = Notes::default();
        let task = task(&row, &known(), &mut notes).expect("kept");
        assert_eq!(task.upstream_id, "video_1");
        assert_eq!(task.platform, "openai");
        assert_eq!(task.model_name, "sora-2");
        assert_eq!(task.prompt, "a cat");
        assert!(!format!("{task:?}").contains("sk-secret"));
        let kling = row.with("platform", t("50"));
        let marked = super::task(&kling, &known(), &mut notes).expect("kept");
        assert_eq!(marked.status, FAILURE);
    }
}
