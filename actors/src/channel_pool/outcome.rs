//! What happened when a channel's upstream was called ([`Outcome`]), cast to the pool by whoever
//! called it: the relay, a channel test, the auto-enable re-test.

use std::time::Duration;

use serde::Serialize;
use tollgate_storage::ChannelId;

/// Who produced an [`Outcome`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum OutcomeSource {
    /// A relayed client request (only upstream failures are reported, never client mistakes).
    Relay,
    /// An admin's channel test (GET /api/channel/test…).
    Test,
    /// The auto-enable re-test of an auto-disabled channel.
    Retest,
}

/// What happened when a channel's upstream was called.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The channel that was called.
    pub channel: ChannelId,
    /// The upstream's HTTP status; `None` when no response arrived (timeout, connect error).
    pub status: Option<u16>,
    /// Wall time of the call.
    pub latency: Duration,
    /// Why it failed, `None` on success. Never contains the key.
    pub error: Option<String>,
    /// Who made the call.
    pub source: OutcomeSource,
    /// The 0-based key line used (a failure that condemns the key disables only this line on
    /// a multi-key channel); `None` when unknown.
    pub key: Option<usize>,
}

impl Outcome {
    /// True when the call succeeded.
    pub fn is_success(&self) -> bool {
        self.error.is_none()
    }
}
