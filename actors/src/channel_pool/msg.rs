//! `ChannelPoolMsg` and the values it carries: [`Outcome`] (cast back by whoever talked to an
//! upstream) and the replies of the calls.

use std::time::Duration;

use ractor::RpcReplyPort;
use serde::Serialize;
use tollgate_storage::ChannelId;

use super::health::Verdict;
use crate::ActorError;

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

/// What a re-test run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RetestSummary {
    /// Auto-disabled channels probed.
    pub tested: usize,
    /// Channels re-enabled.
    pub enabled: usize,
}

/// Messages of the channel pool actor.
#[derive(Debug)]
pub enum ChannelPoolMsg {
    /// Re-read every channel from storage and republish (after any admin write).
    Reload {
        /// Answered once the new table is published.
        reply: Option<RpcReplyPort<Result<(), ActorError>>>,
    },
    /// An outcome of a relayed request, applied to the health rules (cast).
    Report(Outcome),
    /// An admin test's outcome: persist response and test time, apply the health rules.
    RecordTest {
        /// The test's outcome.
        outcome: Outcome,
        /// The verdict, once persisted.
        reply: RpcReplyPort<Result<Verdict, ActorError>>,
    },
    /// Probe every auto-disabled channel and re-enable those that answer (when allowed).
    Retest {
        /// From the timer: skipped unless AutomaticEnableChannelEnabled is on.
        scheduled: bool,
        /// Answered after the probes' outcomes were applied.
        reply: Option<RpcReplyPort<Result<RetestSummary, ActorError>>>,
    },
    /// The probes of a [`ChannelPoolMsg::Retest`] finished (sent by the probing task).
    RetestDone {
        /// One outcome per probed channel.
        outcomes: Vec<Outcome>,
        /// The caller of the run, if any.
        reply: Option<RpcReplyPort<Result<RetestSummary, ActorError>>>,
    },
}
