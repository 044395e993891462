//! Asynchronous tasks (spec 02 §3 "Drawing task", "Music task"; reference §7): Midjourney
//! drawings, Suno songs and lyrics, videos. A submit is billed when the upstream accepts it and
//! its task row is written in that same transaction ([`write::insert_charged`]); the poller then
//! claims unfinished tasks with a lease ([`write::claim`]), applies what the upstream reports
//! ([`write::update`]) and refunds a failed task exactly once ([`write::refund`]).
//!
//! - [`keys`]: the filter keys a task is listed under (admin and owner lists, by channel, by
//!   upstream id, by time).
//! - [`query`]: pages of the two lists (drawing tasks, other tasks), lookups by upstream id.
//! - [`write`]: insert, update, lease, refund, and the per-status counters.
//!
//! What does not live here: talking to upstreams (the poller in the server crate) and the
//! in-memory balances (the quota book, told about every refund by its caller).

pub mod keys;
pub mod query;
pub mod write;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::{ChannelId, TokenId, UserId};

pub use write::{
    Refunded, TaskUpdate, claim, insert, insert_charged, recharge, refund, release_leases, update,
};

/// Task status: the upstream has not started it.
pub const NOT_START: &str = "NOT_START";
/// Task status: accepted and queued.
pub const SUBMITTED: &str = "SUBMITTED";
/// Task status: waiting in the upstream's queue (Suno, video).
pub const QUEUED: &str = "QUEUED";
/// Task status: running.
pub const IN_PROGRESS: &str = "IN_PROGRESS";
/// Task status: finished with a result.
pub const SUCCESS: &str = "SUCCESS";
/// Task status: finished without one.
pub const FAILURE: &str = "FAILURE";
/// Task status: a Midjourney window waits for input.
pub const MODAL: &str = "MODAL";
/// Task status: the upstream said something unrecognised.
pub const UNKNOWN: &str = "UNKNOWN";

/// Which family a task belongs to; Midjourney tasks are the drawing list (`/api/mj/`), the
/// others the task list (`/api/task/`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
pub enum TaskKind {
    /// A Midjourney-proxy task (channel types 2 and 5).
    #[default]
    Midjourney,
    /// A Suno task (channel type 36): music or lyrics.
    Suno,
    /// An OpenAI video (`/v1/videos`).
    Video,
}

impl TaskKind {
    /// The list the kind is shown in: `mj` (drawing log) or `t` (music and video tasks).
    pub fn list(self) -> List {
        match self {
            TaskKind::Midjourney => List::Drawing,
            TaskKind::Suno | TaskKind::Video => List::Tasks,
        }
    }
}

/// The two console lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum List {
    /// `/api/mj/`: Midjourney tasks.
    Drawing,
    /// `/api/task/`: Suno and video tasks.
    Tasks,
}

impl List {
    /// The list's key prefix ([`keys`]) and counter name.
    pub fn prefix(self) -> &'static str {
        match self {
            List::Drawing => "mj",
            List::Tasks => "t",
        }
    }
}

/// One asynchronous task: every field the drawing and task pages and the fetch APIs show,
/// plus what billing, refunds and the poller need.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Task {
    /// Id, assigned on insert.
    pub id: i64,
    /// Family (decides the list and the poller's wire format).
    pub kind: TaskKind,
    /// Platform label shown on the task page (`suno`, `openai`, `midjourney`).
    pub platform: String,
    /// Owner.
    pub user_id: UserId,
    /// Token that paid, if any (a refund returns its quota to it when it has a limit).
    pub token_id: Option<TokenId>,
    /// Token name at submit time (the refund's log row).
    pub token_name: String,
    /// Owner's username at submit time.
    pub username: String,
    /// Billing group at submit time.
    pub group: String,
    /// The priced model name (`mj_imagine`, `suno_music`, `sora-2`): the refund's log row.
    pub model_name: String,
    /// Channel the task was submitted to (polled there).
    pub channel_id: ChannelId,
    /// Action (spec 02 §4: IMAGINE, UPSCALE…; MUSIC, LYRICS; GENERATE for videos).
    pub action: String,
    /// The upstream's task id (`mj_id` on the drawing list, `task_id` on the task list).
    pub upstream_id: String,
    /// Submit result code as the upstream answered it (1, 21, 22; 0 not submitted).
    pub code: i32,
    /// Status ([`SUCCESS`], [`FAILURE`], …; empty while submitting).
    pub status: String,
    /// Progress as a percent string (`"45%"`).
    pub progress: String,
    /// Prompt as submitted.
    pub prompt: String,
    /// Prompt as the upstream translated it (Midjourney).
    pub prompt_en: String,
    /// Upstream's description of the task.
    pub description: String,
    /// Image URL (Midjourney result, or a song's cover).
    pub image_url: String,
    /// Result media URL: the song's audio or the video (the upstream's, never proxied here).
    pub result_url: String,
    /// The upstream's result payload (JSON text: songs, lyrics, video object), bounded.
    pub data: String,
    /// Midjourney buttons (JSON text).
    pub buttons: String,
    /// Midjourney properties (JSON text).
    pub properties: String,
    /// Why it failed.
    pub fail_reason: String,
    /// Quota charged at submit (what a refund returns).
    pub quota: i64,
    /// Unix seconds the row was written.
    pub created_at: i64,
    /// Unix seconds the upstream accepted it.
    pub submit_time: i64,
    /// Unix seconds the upstream started it (0: not yet).
    pub start_time: i64,
    /// Unix seconds it finished (0: not yet).
    pub finish_time: i64,
    /// Unix seconds of the last change.
    pub updated_at: i64,
    /// Its quota was returned (at most once).
    pub refunded: bool,
    /// The node polling it now (empty: nobody).
    pub lease_owner: String,
    /// The lease's end (unix seconds); another node may claim it after.
    pub lease_until: i64,
}

/// Longest free-text field a task keeps (prompt, description, fail reason, URLs), in bytes.
pub const MAX_TEXT_BYTES: usize = 8 * 1024;
/// Longest `data` / `buttons` / `properties` a task keeps; a longer one is replaced by
/// `{"truncated":true}`.
pub const MAX_JSON_BYTES: usize = 64 * 1024;

impl Task {
    /// Whether the task reached an end state (its quota stays charged or was refunded).
    pub fn is_finished(&self) -> bool {
        self.status == SUCCESS || self.status == FAILURE
    }

    /// The progress as a number 0–100 (`"45%"` → 45; unreadable → 0).
    pub fn progress_percent(&self) -> u32 {
        self.progress
            .trim()
            .trim_end_matches('%')
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|p| p.is_finite())
            .map_or(0, |p| p.clamp(0.0, 100.0) as u32)
    }

    /// Holds every stored text to its limit, so an upstream cannot grow the database without
    /// bound through one task.
    pub fn bound(&mut self) {
        for text in [
            &mut self.prompt,
            &mut self.prompt_en,
            &mut self.description,
            &mut self.image_url,
            &mut self.result_url,
            &mut self.fail_reason,
            &mut self.upstream_id,
            &mut self.progress,
            &mut self.action,
            &mut self.status,
            &mut self.model_name,
            &mut self.platform,
        ] {
            cut(text, MAX_TEXT_BYTES);
        }
        for json in [&mut self.data, &mut self.buttons, &mut self.properties] {
            if json.len() > MAX_JSON_BYTES {
                *json = r#"{"truncated":true}"#.to_owned();
            }
        }
    }
}

/// Cuts `text` to at most `max` bytes on a character boundary.
fn cut(text: &mut String, max: usize) {
    if text.len() > max {
        let end = (0..=max)
            .rev()
            .find(|i| text.is_char_boundary(*i))
            .unwrap_or(0);
        text.truncate(end);
    }
}
