//! When the poller gives up on a task (reference §7): pure decisions, unit-tested below.
//!
//! | task                                   | ends as FAILURE and is refunded       |
//! |----------------------------------------|----------------------------------------|
//! | its channel was deleted                | "channel deleted"                      |
//! | any, older than `TaskTimeoutMinutes`   | "timed out after N minutes"            |
//! | Midjourney, under 100 % after 1 hour   | "no result within 1 hour"              |
//! | the upstream reports FAILURE           | the upstream's reason                  |

use tollgate_storage::tasks::{Task, TaskKind};

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

#[cfg(test)]
mod tests {
    use super::*;

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
