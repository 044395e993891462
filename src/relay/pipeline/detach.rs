//! Upstream calls that outlive their client. Once admitted, a relay request is forwarded and
//! answered in a task of its own, tracked by [`crate::state::Shared::detached`]: if the client
//! goes away (its connection closes and axum drops the handler), the upstream call is not
//! cancelled — the upstream would bill it all the same — but runs on until it answers or
//! `--relay-timeout-secs` passes, and is settled as `partial` / `client_gone`. A streamed answer
//! whose client left is dropped with its body, which settles through its meter the same way.
//!
//! Cost: one task spawn per relayed request (about a microsecond), and a oneshot channel whose
//! closing tells the task that the client is gone.

use std::future::Future;

use axum::response::Response;
use tokio::sync::oneshot;

use crate::error::RelayError;
use crate::relay::measure::usage::PartialReason;
use crate::relay::pipeline::meter::Ending;
use crate::state::AppState;

/// Whether the client that asked is still waiting for the answer.
#[derive(Debug)]
pub struct Presence(oneshot::Sender<()>);

impl Presence {
    /// The client went away (its handler was dropped).
    pub fn gone(&self) -> bool {
        self.0.is_closed()
    }

    /// How a whole answer read to its end ended for this client: complete, or cut short by the
    /// client's leaving.
    pub fn ending(&self) -> Ending {
        if self.gone() {
            Ending::Cut(PartialReason::ClientGone)
        } else {
            Ending::Complete
        }
    }
}

/// Runs `work` in a tracked task and answers what it answers; if the caller is dropped first,
/// the task runs on (and its [`Presence`] says the client is gone).
pub async fn run<F, Fut>(state: &AppState, work: F) -> Result<Response, RelayError>
where
    F: FnOnce(Presence) -> Fut,
    Fut: Future<Output = Result<Response, RelayError>> + Send + 'static,
{
    let (tx, present) = oneshot::channel::<()>();
    let task = state.detached.spawn(work(Presence(tx)));
    let answer = task.await;
    drop(present);
    answer.unwrap_or_else(|e| Err(RelayError::Internal(format!("the relay task failed: {e}"))))
}
