//! Asking a channel about its tasks, in its family's wire format ([`super::wire`]): one batch
//! call per channel for Midjourney-proxy and Suno, one call per task for OpenAI videos. Every
//! call has a time limit and a size limit on the answer; any failure is the channel's (the
//! poller backs off from it).

use std::time::Duration;

use tollgate_storage::channels::Channel;
use tollgate_storage::tasks::{TaskKind, TaskUpdate};

use super::wire::{MjTask, SunoAnswer, Video};
use crate::channel_types;

/// Longest a status call may take.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(15);

/// Largest status answer read, in bytes.
pub const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

/// Why a channel could not be asked.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The channel has no key.
    #[error("the channel has no key")]
    NoKey,
    /// The channel's proxy or URL is unusable.
    #[error("{0}")]
    Setup(String),
    /// The call failed (connection, timeout).
    #[error("status call failed: {0}")]
    Transport(String),
    /// The upstream answered an error status.
    #[error("the upstream answered HTTP {0}")]
    Status(u16),
    /// The answer was not what the wire format says.
    #[error("unreadable answer: {0}")]
    Decode(String),
    /// The answer was larger than [`MAX_ANSWER_BYTES`].
    #[error("the answer is too large")]
    TooLarge,
}

/// Asks `channel` about the tasks with upstream ids `ids` (all of `kind`); returns an update per
/// task the upstream reported, by upstream id. Tasks it did not mention are left out.
pub async fn fetch(
    client: &reqwest::Client,
    channel: &Channel,
    kind: TaskKind,
    ids: &[String],
) -> Result<Vec<(String, TaskUpdate)>, FetchError> {
    let key = channel
        .key_lines()
        .first()
        .map(|k| (*k).to_owned())
        .ok_or(FetchError::NoKey)?;
    let base = channel_types::effective_base_url(channel.channel_type, &channel.base_url);
    if base.is_empty() {
        return Err(FetchError::Setup("the channel has no base URL".into()));
    }
    match kind {
        TaskKind::Midjourney => {
            let call = client
                .post(format!("{base}/mj/task/list-by-condition"))
                .header("mj-api-secret", key)
                .json(&serde_json::json!({ "ids": ids }));
            let body = send(call).await?;
            let tasks: Vec<MjTask> =
                serde_json::from_slice(&body).map_err(|e| FetchError::Decode(e.to_string()))?;
            Ok(tasks
                .into_iter()
                .map(|t| (t.id.clone(), t.update()))
                .collect())
        }
        TaskKind::Suno => {
            let call = client
                .post(format!("{base}/suno/fetch"))
                .bearer_auth(key)
                .json(&serde_json::json!({ "ids": ids }));
            let body = send(call).await?;
            let answer: SunoAnswer =
                serde_json::from_slice(&body).map_err(|e| FetchError::Decode(e.to_string()))?;
            if !answer.code.eq_ignore_ascii_case("success") {
                return Err(FetchError::Decode(format!(
                    "code {}: {}",
                    answer.code, answer.message
                )));
            }
            Ok(answer
                .data
                .into_iter()
                .map(|t| (t.task_id.clone(), t.update()))
                .collect())
        }
        TaskKind::Video => {
            let mut out = Vec::with_capacity(ids.len());
            // Ids go into the path: only the characters upstream ids are made of.
            let safe = |id: &String| {
                !id.is_empty()
                    && id
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            };
            for id in ids.iter().filter(|id| safe(id)) {
                let url = channel_types::openai_url(
                    channel.channel_type,
                    &base,
                    &format!("/v1/videos/{id}"),
                );
                let body = send(client.get(url).bearer_auth(&key)).await?;
                let video: Video =
                    serde_json::from_slice(&body).map_err(|e| FetchError::Decode(e.to_string()))?;
                let raw = String::from_utf8_lossy(&body).into_owned();
                out.push((id.clone(), video.update(raw)));
            }
            Ok(out)
        }
    }
}

/// Sends `call` and reads a successful answer's body, within [`FETCH_TIMEOUT`] and
/// [`MAX_ANSWER_BYTES`].
async fn send(call: reqwest::RequestBuilder) -> Result<Vec<u8>, FetchError> {
    let mut answer = call
        .timeout(FETCH_TIMEOUT)
        .send()
        .await
        .map_err(|e| FetchError::Transport(e.without_url().to_string()))?;
    if !answer.status().is_success() {
        return Err(FetchError::Status(answer.status().as_u16()));
    }
    let mut body = Vec::new();
    while let Some(chunk) = answer
        .chunk()
        .await
        .map_err(|e| FetchError::Transport(e.without_url().to_string()))?
    {
        if body.len().saturating_add(chunk.len()) > MAX_ANSWER_BYTES {
            return Err(FetchError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
