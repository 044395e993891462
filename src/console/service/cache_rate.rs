//! The prompt-cache hit rate per channel (P15 item 4, the dashboard's card): cached prompt tokens
//! over prompt tokens of the requests each channel answered in a time range, from the hour sums
//! the log writer keeps ([`tollgate_storage::prompt_cache`]).

use serde::{Deserialize, Serialize};
use tollgate_storage::prompt_cache::{self, CacheUse};

use super::dashboard;
use crate::error::ConsoleError;
use crate::state::AppState;

/// `?start_timestamp=&end_timestamp=&channel=`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct CacheRateQuery {
    /// From (unix seconds; default 7 days before the end).
    #[serde(default)]
    pub start_timestamp: Option<i64>,
    /// To (unix seconds; default now).
    #[serde(default)]
    pub end_timestamp: Option<i64>,
    /// One channel only.
    #[serde(default)]
    pub channel: Option<i64>,
}

/// One channel's figures over the range.
#[derive(Debug, Serialize)]
pub struct CacheRateView {
    /// The channel.
    pub channel_id: i64,
    /// Its current name (empty when it was deleted).
    pub channel_name: String,
    /// Prompt tokens (cache reads and writes included).
    pub prompt_tokens: i64,
    /// Prompt tokens read from the provider's cache.
    pub cached_tokens: i64,
    /// `cached_tokens / prompt_tokens`, 0 to 1.
    pub hit_rate: f64,
}

impl From<CacheUse> for CacheRateView {
    fn from(u: CacheUse) -> CacheRateView {
        #[expect(
            clippy::cast_precision_loss,
            reason = "a ratio for display: token sums beyond 2^53 lose only low digits"
        )]
        let hit_rate = if u.prompt > 0 {
            (u.cached as f64 / u.prompt as f64).clamp(0.0, 1.0)
        } else {
            0.0
        };
        CacheRateView {
            channel_id: u.channel_id,
            channel_name: u.channel_name,
            prompt_tokens: u.prompt,
            cached_tokens: u.cached,
            hit_rate,
        }
    }
}

/// Per channel with prompt tokens in the range (ascending id), or only `q.channel`.
pub async fn per_channel(
    state: &AppState,
    q: &CacheRateQuery,
) -> Result<Vec<CacheRateView>, ConsoleError> {
    let (start, end) = dashboard::range(q.start_timestamp, q.end_timestamp)?;
    let channel = q.channel.filter(|c| *c > 0);
    let rows = prompt_cache::read_per_channel(&state.store, start, end, channel).await?;
    Ok(rows.into_iter().map(CacheRateView::from).collect())
}
