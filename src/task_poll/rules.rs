//! When the poller gives up on a task (reference §7): pure decisions, unit-tested below.
//!
//! | task                                   | ends as FAILURE and is refunded       |
//! |----------------------------------------|----------------------------------------|
//! | its channel was deleted                | "channel deleted"                      |
//! | any, older than `TaskTimeoutMinutes`   | "timed out after N minutes"            |
//! | Midjourney, under 100 % after 1 hour   | "no result within 1 hour"              |
//! | the upstream reports FAILURE           | the upstream's reason                  |
//!
//! A video billed per second is charged at submit for the seconds asked (stored in the task's
//! `properties` as `{"seconds": n}`); when it finishes at another length, its charge is
//! corrected to the finished duration ([`rebill`]).

use serde_json::Value;
use tollgate_storage::tasks::{SUCCESS, Task, TaskKind, TaskUpdate};

use crate::task_relay::video::{MAX_SECONDS, seconds_of};

/// How long a Midjourney task may run before it must be at 100 %, in seconds (the incumbent's
/// rule).
pub const MJ_DEADLINE_SECS: i64 = 3_600;

/// The default of `TaskTimeoutMinutes`: any task older than this is failed.
pub const DEFAULT_TIMEOUT_MINUTES: i64 = 1_440;

/// Why a task is given up on without asking its upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GiveUp {
    /// The channel it was submitted to no longer exists.
    ChannelDeleted,
    /// Older than `TaskTimeoutMinutes`.
    TimedOut(i64),
    /// A Midjourney task short of 100 % after [`MJ_DEADLINE_SECS`].
    MjDeadline,
}

impl GiveUp {
    /// The failure reason stored on the task and in its refund's log row.
    pub fn reason(&self) -> String {
        match self {
            GiveUp::ChannelDeleted => "channel deleted".to_owned(),
            GiveUp::TimedOut(minutes) => format!("timed out after {minutes} minutes"),
            GiveUp::MjDeadline => "no result within 1 hour".to_owned(),
        }
    }
}

/// Whether `task` is given up on at `now` (unix seconds); `timeout_minutes` is the option
/// (values below 1 read as the default).
pub fn give_up(
    task: &Task,
    channel_exists: bool,
    now: i64,
    timeout_minutes: i64,
) -> Option<GiveUp> {
    if !channel_exists {
        return Some(GiveUp::ChannelDeleted);
    }
    let minutes = if timeout_minutes < 1 {
        DEFAULT_TIMEOUT_MINUTES
    } else {
        timeout_minutes
    };
    let started = if task.submit_time > 0 {
        task.submit_time
    } else {
        task.created_at
    };
    let age = now.saturating_sub(started);
    if age > minutes.saturating_mul(60) {
        return Some(GiveUp::TimedOut(minutes));
    }
    if task.kind == TaskKind::Midjourney && age > MJ_DEADLINE_SECS && task.progress_percent() < 100
    {
        return Some(GiveUp::MjDeadline);
    }
    None
}

/// A finished video's charge corrected to its duration.
#[derive(Debug, Clone, PartialEq)]
pub struct Rebill {
    /// The task's charge for the finished duration.
    pub quota: i64,
    /// The seconds billed, as the task's `properties` keep them.
    pub properties: String,
    /// The finished duration, in seconds.
    pub seconds: f64,
}

/// The seconds a stored JSON text (a video's `properties` or Video object) says.
fn seconds_in(text: &str) -> Option<f64> {
    let value: Value = serde_json::from_str(text).ok()?;
    seconds_of(value.get("seconds"))
}

/// The correction of a video `task` that `update` finishes, when the finished video's
/// reported `seconds` differ from those it was charged for: the charge scaled to the finished
/// duration (the price is per second). `None` for anything else (not a video, not finished,
/// no duration reported or charged, the same duration).
pub fn rebill(task: &Task, update: &TaskUpdate) -> Option<Rebill> {
    if task.kind != TaskKind::Video || update.status.as_deref() != Some(SUCCESS) {
        return None;
    }
    let finished = seconds_in(update.data.as_deref()?)?.min(MAX_SECONDS);
    let charged = seconds_in(&task.properties)?;
    if (finished - charged).abs() < 1e-9 || task.quota <= 0 {
        return None;
    }
    let quota = (task.quota as f64 * finished / charged).round();
    if !quota.is_finite() || quota < 0.0 || quota >= i64::MAX as f64 {
        return None;
    }
    Some(Rebill {
        quota: quota as i64,
        properties: serde_json::json!({ "seconds": finished }).to_string(),
        seconds: finished,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_video_is_rebilled_for_the_seconds_it_finished_at() {
        let task = Task {
            kind: TaskKind::Video,
            quota: 600_000,
            properties: r#"{"seconds":4.0}"#.into(),
            ..Task::default()
        };
        let done = |seconds: &str| TaskUpdate {
            status: Some(SUCCESS.into()),
            data: Some(format!(
                r#"{{"id":"v","status":"completed","seconds":"{seconds}"}}"#
            )),
            ..TaskUpdate::default()
        };
        let longer = rebill(&task, &done("8")).expect("rebilled");
        assert_eq!(longer.quota, 1_200_000);
        assert_eq!(longer.seconds, 8.0);
        assert_eq!(rebill(&task, &done("2")).map(|r| r.quota), Some(300_000));
        assert_eq!(rebill(&task, &done("4")), None, "the same length");
        let running = TaskUpdate {
            status: Some("IN_PROGRESS".into()),
            ..done("8")
        };
        assert_eq!(rebill(&task, &running), None, "not finished");
        let unknown = Task {
            properties: String::new(),
            ..task.clone()
        };
        assert_eq!(
            rebill(&unknown, &done("8")),
            None,
            "charged seconds unknown"
        );
        let mj = Task {
            kind: TaskKind::Midjourney,
            ..task
        };
        assert_eq!(rebill(&mj, &done("8")), None);
    }

    fn task(kind: TaskKind, submit: i64, progress: &str) -> Task {
        Task {
            kind,
            submit_time: submit,
            progress: progress.into(),
            ..Task::default()
        }
    }

    #[test]
    fn deleted_channels_time_limits_and_the_midjourney_hour() {
        let now = 100_000;
        let fresh = task(TaskKind::Midjourney, now - 60, "10%");
        assert_eq!(give_up(&fresh, true, now, 1_440), None);
        assert_eq!(
            give_up(&fresh, false, now, 1_440),
            Some(GiveUp::ChannelDeleted)
        );
        let hour = task(TaskKind::Midjourney, now - 3_601, "99%");
        assert_eq!(give_up(&hour, true, now, 1_440), Some(GiveUp::MjDeadline));
        let suno_hour = task(TaskKind::Suno, now - 3_601, "10%");
        assert_eq!(give_up(&suno_hour, true, now, 1_440), None, "MJ only");
        let day = task(TaskKind::Video, now - 86_401, "");
        assert_eq!(
            give_up(&day, true, now, 1_440),
            Some(GiveUp::TimedOut(1_440))
        );
        assert_eq!(give_up(&day, true, now, 0), Some(GiveUp::TimedOut(1_440)));
        let short = task(TaskKind::Video, now - 61, "");
        assert_eq!(give_up(&short, true, now, 1), Some(GiveUp::TimedOut(1)));
    }
}
