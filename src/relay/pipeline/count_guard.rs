//! What keeps the free token-counting routes (`/v1/messages/count_tokens`, `:countTokens`) from
//! being a way to burn Tollgate's CPU: a per-key rate (option CountTokensRateLimit, per
//! minute; 0 = no limit), a size limit on what is counted, and Tollgate's own counting run on
//! the blocking pool, a few at a time, never on the async workers (a BPE count of a large
//! prompt takes milliseconds).

use std::num::NonZeroU32;
use std::sync::Arc;

use arc_swap::ArcSwapOption;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use tokio::sync::Semaphore;
use tollgate_storage::TokenId;

use crate::error::RelayError;

/// The largest request body a count route accepts (bytes): counting is free, so it is bounded
/// far below the relay's body limit.
pub const MAX_COUNT_BODY: usize = 8 * 1024 * 1024;

/// How many local counts may run at once (the blocking pool is shared with storage).
const COUNTS_AT_ONCE: usize = 2;

/// The per-key limiter of one CountTokensRateLimit value.
struct PerKey {
    /// The option value it was built for.
    per_minute: u32,
    /// Buckets per token id.
    limiter: DefaultKeyedRateLimiter<i64>,
}

/// Admission and execution of token counts. Cheap to clone.
#[derive(Clone)]
pub struct CountGuard {
    /// Rebuilt (and swapped whole) when the option changes; `None` until first use.
    per_key: Arc<ArcSwapOption<PerKey>>,
    /// Local counts running at once.
    slots: Arc<Semaphore>,
}

impl Default for CountGuard {
    fn default() -> Self {
        CountGuard {
            per_key: Arc::new(ArcSwapOption::empty()),
            slots: Arc::new(Semaphore::new(COUNTS_AT_ONCE)),
        }
    }
}

impl CountGuard {
    /// Takes one count from `token`'s budget of `per_minute` (0: unlimited), and refuses a
    /// body over [`MAX_COUNT_BODY`].
    pub fn admit(
        &self,
        token: TokenId,
        per_minute: i64,
        body_len: usize,
    ) -> Result<(), RelayError> {
        if body_len > MAX_COUNT_BODY {
            return Err(RelayError::BadRequest(format!(
                "a token count may cover at most {} MiB",
                MAX_COUNT_BODY / 1024 / 1024
            )));
        }
        let Some(per_minute) = u32::try_from(per_minute).ok().and_then(NonZeroU32::new) else {
            return Ok(());
        };
        let current = self.per_key.load_full();
        let per_key = match current {
            Some(p) if p.per_minute == per_minute.get() => p,
            _ => {
                let fresh = Arc::new(PerKey {
                    per_minute: per_minute.get(),
                    limiter: RateLimiter::keyed(Quota::per_minute(per_minute)),
                });
                self.per_key.store(Some(Arc::clone(&fresh)));
                fresh
            }
        };
        per_key.limiter.check_key(&token.0).map_err(|_| {
            RelayError::RateLimited(format!(
                "token counting is limited to {per_minute} requests per minute per API key"
            ))
        })
    }

    /// Runs `count` on the blocking pool once a slot is free.
    pub async fn run<T: Send + 'static>(
        &self,
        count: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, RelayError> {
        let _slot = self
            .slots
            .acquire()
            .await
            .map_err(|e| RelayError::Internal(format!("counting: {e}")))?;
        tokio::task::spawn_blocking(count)
            .await
            .map_err(|e| RelayError::Internal(format!("counting: {e}")))
    }
}
