//! `ChannelPoolMsg` and the replies of its calls; the [`Outcome`]s it carries live in
//! [`super::outcome`].

use ractor::RpcReplyPort;
use serde::Serialize;
use tollgate_storage::ChannelId;

use super::health::Verdict;
use super::outcome::Outcome;
use crate::ActorError;

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
    /// Re-read only the channels `ids` (a removed one is dropped) and republish: what a
    /// single-channel admin write needs, proportional to the ids, not to the installation.
    ReloadIds {
        /// The channels written.
        ids: Vec<ChannelId>,
        /// Answered once the new table is published.
        reply: RpcReplyPort<Result<(), ActorError>>,
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
