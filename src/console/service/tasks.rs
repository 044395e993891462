//! The drawing and task lists (spec 02 §2, §3, §7) and an admin's manual refund.
//!
//! Shapes follow the incumbent: a drawing task's times are in **milliseconds** (as
//! Midjourney-proxy reports them and new-api stores them), a music or video task's in seconds.
//! The query's `start_timestamp` / `end_timestamp` are read as seconds, or as milliseconds when
//! they are that large (new-api's drawing page sends milliseconds). Owners see their own tasks
//! without the channel.

use serde::{Deserialize, Serialize};
use serde_json::json;
use tollgate_storage::tasks::query::{self, TaskFilter};
use tollgate_storage::tasks::{self, List, Task};
use tollgate_storage::{StorageError, UserId, audit};

use super::audit::Auditor;
use crate::clock::now_unix;
use crate::error::{ConsoleError, ErrorCode};
use crate::http::page::{Page, PageQuery};
use crate::state::AppState;

/// The list calls' query string (every field may be empty).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct TaskQuery {
    /// Channel id (admins only).
    #[serde(default)]
    pub channel_id: Option<String>,
    /// Upstream id on the drawing list.
    #[serde(default)]
    pub mj_id: Option<String>,
    /// Upstream id on the task list.
    #[serde(default)]
    pub task_id: Option<String>,
    /// From (unix seconds or milliseconds, inclusive).
    #[serde(default)]
    pub start_timestamp: Option<String>,
    /// To (unix seconds or milliseconds, inclusive).
    #[serde(default)]
    pub end_timestamp: Option<String>,
}

/// Who lists: an admin (every task, with channels) or an owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Viewer {
    /// `/api/mj/`, `/api/task/`.
    Admin,
    /// `/api/mj/self/`, `/api/task/self`.
    Owner(UserId),
}

fn text(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

fn number(v: &Option<String>, what: &str) -> Result<Option<i64>, ConsoleError> {
    text(v)
        .map(|s| {
            s.parse::<i64>()
                .map_err(|_| ConsoleError::with_args(ErrorCode::NotAnInteger, [what.to_string()]))
        })
        .transpose()
}

/// Seconds from a timestamp that may be in milliseconds.
fn seconds(t: i64) -> i64 {
    if t > 100_000_000_000 { t / 1000 } else { t }
}

/// The filter of `q` for `viewer` on `list`.
pub fn filter(q: &TaskQuery, list: List, viewer: Viewer) -> Result<TaskFilter, ConsoleError> {
    let upstream = match list {
        List::Drawing => &q.mj_id,
        List::Tasks => &q.task_id,
    };
    let mut f = TaskFilter {
        upstream_id: text(upstream),
        start: number(&q.start_timestamp, "start_timestamp")?
            .filter(|t| *t > 0)
            .map(seconds),
        end: number(&q.end_timestamp, "end_timestamp")?
            .filter(|t| *t > 0)
            .map(seconds),
        ..TaskFilter::default()
    };
    match viewer {
        Viewer::Owner(id) => f.user = Some(id),
        Viewer::Admin => f.channel = number(&q.channel_id, "channel_id")?.filter(|c| *c != 0),
    }
    Ok(f)
}

/// A drawing task as the console and new-api's clients see it.
#[derive(Debug, Serialize)]
pub struct DrawingView {
    /// Local id.
    pub id: i64,
    /// Submit result code (1 submitted, 21 waiting, 22 duplicate, 0 not submitted).
    pub code: i32,
    /// Owner.
    pub user_id: i64,
    /// Owner's username (admins only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// IMAGINE, UPSCALE, …
    pub action: String,
    /// The upstream's task id.
    pub mj_id: String,
    /// Prompt.
    pub prompt: String,
    /// Translated prompt.
    pub prompt_en: String,
    /// Description.
    pub description: String,
    /// Milliseconds the row was written.
    pub created_at: i64,
    /// Milliseconds the upstream accepted it.
    pub submit_time: i64,
    /// Milliseconds it started (0: not yet).
    pub start_time: i64,
    /// Milliseconds it finished (0: not yet).
    pub finish_time: i64,
    /// Result image URL.
    pub image_url: String,
    /// Result video URL (Midjourney video actions).
    pub video_url: String,
    /// Status.
    pub status: String,
    /// Progress ("45%").
    pub progress: String,
    /// Why it failed.
    pub fail_reason: String,
    /// Channel (0 for owners).
    pub channel_id: i64,
    /// Quota charged.
    pub quota: i64,
    /// Its quota was returned.
    pub refunded: bool,
    /// Midjourney buttons (JSON text).
    pub buttons: String,
    /// Midjourney properties (JSON text).
    pub properties: String,
}

/// A music or video task as the console and new-api's clients see it.
#[derive(Debug, Serialize)]
pub struct TaskView {
    /// Local id.
    pub id: i64,
    /// Unix seconds the row was written.
    pub created_at: i64,
    /// Unix seconds of the last change.
    pub updated_at: i64,
    /// The upstream's task id.
    pub task_id: String,
    /// `suno`, `openai`.
    pub platform: String,
    /// Owner.
    pub user_id: i64,
    /// Owner's username (admins only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// Billing group.
    pub group: String,
    /// Channel (0 for owners).
    pub channel_id: i64,
    /// Quota charged.
    pub quota: i64,
    /// Its quota was returned.
    pub refunded: bool,
    /// MUSIC, LYRICS, GENERATE.
    pub action: String,
    /// Status (empty: submitting).
    pub status: String,
    /// Why it failed.
    pub fail_reason: String,
    /// Unix seconds the upstream accepted it.
    pub submit_time: i64,
    /// Unix seconds it started.
    pub start_time: i64,
    /// Unix seconds it finished.
    pub finish_time: i64,
    /// Progress ("45%").
    pub progress: String,
    /// Cover image URL (songs).
    pub image_url: String,
    /// The song's audio or the video.
    pub result_url: String,
    /// The upstream's result payload (JSON text).
    pub data: String,
}

fn ms(t: i64) -> i64 {
    t.saturating_mul(1000)
}

impl DrawingView {
    fn of(t: Task, viewer: Viewer) -> DrawingView {
        let admin = viewer == Viewer::Admin;
        let video = t.result_url.clone();
        DrawingView {
            id: t.id,
            code: t.code,
            user_id: t.user_id.0,
            username: admin.then_some(t.username),
            action: t.action,
            mj_id: t.upstream_id,
            prompt: t.prompt,
            prompt_en: t.prompt_en,
            description: t.description,
            created_at: ms(t.created_at),
            submit_time: ms(t.submit_time),
            start_time: ms(t.start_time),
            finish_time: ms(t.finish_time),
            image_url: t.image_url,
            video_url: video,
            status: t.status,
            progress: t.progress,
            fail_reason: t.fail_reason,
            channel_id: if admin { t.channel_id.0 } else { 0 },
            quota: t.quota,
            refunded: t.refunded,
            buttons: t.buttons,
            properties: t.properties,
        }
    }
}

impl TaskView {
    fn of(t: Task, viewer: Viewer) -> TaskView {
        let admin = viewer == Viewer::Admin;
        TaskView {
            id: t.id,
            created_at: t.created_at,
            updated_at: t.updated_at,
            task_id: t.upstream_id,
            platform: t.platform,
            user_id: t.user_id.0,
            username: admin.then_some(t.username),
            group: t.group,
            channel_id: if admin { t.channel_id.0 } else { 0 },
            quota: t.quota,
            refunded: t.refunded,
            action: t.action,
            status: t.status,
            fail_reason: t.fail_reason,
            submit_time: t.submit_time,
            start_time: t.start_time,
            finish_time: t.finish_time,
            progress: t.progress,
            image_url: t.image_url,
            result_url: t.result_url,
            data: t.data,
        }
    }
}

async fn page_of(
    state: &AppState,
    list: List,
    filter: TaskFilter,
    paging: PageQuery,
) -> Result<(Vec<Task>, u64), ConsoleError> {
    let (offset, limit) = (paging.offset(), paging.size());
    Ok(state
        .store
        .read(move |rtx| query::page(rtx, list, &filter, offset, limit))
        .await?)
}

/// A page of the drawing list.
pub async fn drawing_page(
    state: &AppState,
    q: &TaskQuery,
    paging: PageQuery,
    viewer: Viewer,
) -> Result<Page<DrawingView>, ConsoleError> {
    let f = filter(q, List::Drawing, viewer)?;
    let (items, total) = page_of(state, List::Drawing, f, paging).await?;
    let items = items
        .into_iter()
        .map(|t| DrawingView::of(t, viewer))
        .collect();
    Ok(Page::new(paging, items, total))
}

/// A page of the task list.
pub async fn task_page(
    state: &AppState,
    q: &TaskQuery,
    paging: PageQuery,
    viewer: Viewer,
) -> Result<Page<TaskView>, ConsoleError> {
    let f = filter(q, List::Tasks, viewer)?;
    let (items, total) = page_of(state, List::Tasks, f, paging).await?;
    let items = items.into_iter().map(|t| TaskView::of(t, viewer)).collect();
    Ok(Page::new(paging, items, total))
}

/// What a manual refund did.
#[derive(Debug, Serialize)]
pub struct RefundView {
    /// The task.
    pub id: i64,
    /// Quota returned.
    pub quota: i64,
    /// The task's status after (an unfinished task ends as FAILURE).
    pub status: String,
}

/// An admin refunds task `id` (either list): its quota goes back as a failed task's would, and
/// the audit log records who did it, in the same transaction. Refused for a task refunded
/// before or one that cost nothing.
pub async fn refund(
    state: &AppState,
    id: i64,
    auditor: Auditor,
) -> Result<RefundView, ConsoleError> {
    let owner = state
        .store
        .read(move |rtx| query::get(rtx, id))
        .await?
        .ok_or(ConsoleError::NotFound("task"))?
        .user_id;
    let now = now_unix();
    state
        .quota
        .refund_with(owner, move |wtx| {
            let before = tasks::write::get_rw(wtx, id)?.ok_or(ConsoleError::NotFound("task"))?;
            if before.refunded {
                return Err(ConsoleError::of(ErrorCode::TaskRefundedAlready));
            }
            if before.quota <= 0 {
                return Err(ConsoleError::of(ErrorCode::TaskCostNothing));
            }
            let reason = format!("refunded by {}", auditor.name);
            let refunded = tasks::refund(wtx, id, &reason, now)?;
            let after =
                tasks::write::get_rw(wtx, id)?.ok_or(StorageError::NotFound { what: "task" })?;
            audit::append(
                wtx,
                auditor.entry(
                    "task.refund",
                    format!("task:{id}"),
                    &json!({"status": before.status, "quota": before.quota, "refunded": false,
                            "user_id": before.user_id.0}),
                    &json!({"status": after.status, "refunded": true,
                            "returned": refunded.map_or(0, |r| r.amount)}),
                ),
            )?;
            let view = RefundView {
                id,
                quota: refunded.map_or(0, |r| r.amount),
                status: after.status,
            };
            Ok((view, refunded))
        })
        .await
}
