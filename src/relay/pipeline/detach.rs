//! Upstream calls that outlive their client. Once admitted, a relay request is forwarded and
//! answered in a task of its own, tracked by [`crate::state::Shared::detached`]: if the client
//! goes away (its connection closes and axum drops the handler), the upstream call is not
//! cancelled — the upstream would bill it all the same — but runs on until it answers or
//! `--relay-timeout-secs` passes, and is settled as `partial` / `client_gone`. A streamed answer
//! whose client left is dropped with its body, which settles through its meter the same way.
//!
//! Cost: none beyond a oneshot channel (whose closing tells the work that the client is gone)
//! and one allocation for the work's future, while the client stays: the work runs inside the
//! handler's own task, and only a handler dropped before the work ends hands the rest of it to a
//! task of its own. (A task per request cost its spawn, a copy of the ~10 KB future into the
//! task, a wake-up of another worker to run it and one of the handler when it ended.) Either way
//! the work counts in the tracker until it ends, and a panic in it answers 500 as a failed task
//! did.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::response::Response;
use tokio::sync::oneshot;
use tokio_util::task::task_tracker::TrackedFuture;

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

/// Runs `work` (tracked) and answers what it answers; if the caller is dropped first, the rest
/// of it runs on in a task of its own (and its [`Presence`] says the client is gone).
pub async fn run<F, Fut>(state: &AppState, work: F) -> Result<Response, RelayError>
where
    F: FnOnce(Presence) -> Fut,
    Fut: Future<Output = Result<Response, RelayError>> + Send + 'static,
{
    let (tx, present) = oneshot::channel::<()>();
    Detachable {
        work: Some(Box::pin(state.detached.track_future(work(Presence(tx))))),
        present: Some(present),
        runtime: tokio::runtime::Handle::current(),
    }
    .await
}

/// The work of [`run`], polled by the handler until the handler is dropped.
struct Detachable<Fut>
where
    Fut: Future<Output = Result<Response, RelayError>> + Send + 'static,
{
    /// `None` once it ended (or was handed to a task).
    work: Option<Pin<Box<TrackedFuture<Fut>>>>,
    /// Dropped when the client is gone: the work's [`Presence`] sees its channel closed.
    present: Option<oneshot::Receiver<()>>,
    /// Where the rest of the work goes when the handler is dropped.
    runtime: tokio::runtime::Handle,
}

impl<Fut> Future for Detachable<Fut>
where
    Fut: Future<Output = Result<Response, RelayError>> + Send + 'static,
{
    type Output = Result<Response, RelayError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(work) = self.work.as_mut() else {
            return Poll::Ready(Err(RelayError::Internal(
                "the relay work was polled after it ended".into(),
            )));
        };
        // As a task would: a panic ends this work (answered 500), not the connection.
        let polled = std::panic::catch_unwind(AssertUnwindSafe(|| work.as_mut().poll(cx)));
        match polled {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(answer)) => {
                self.work = None;
                Poll::Ready(answer)
            }
            Err(_) => {
                self.work = None;
                Poll::Ready(Err(RelayError::Internal(
                    "the relay task failed: it panicked".into(),
                )))
            }
        }
    }
}

impl<Fut> Drop for Detachable<Fut>
where
    Fut: Future<Output = Result<Response, RelayError>> + Send + 'static,
{
    fn drop(&mut self) {
        if let Some(work) = self.work.take() {
            // The client left before the answer: the upstream call runs on (and bills) alone.
            drop(self.present.take());
            drop(self.runtime.spawn(work));
        }
    }
}
