//! Reading a relay request's body under its limits: each chunk is charged to the body budget as
//! it arrives ([`crate::relay::pipeline::body_budget`]), the body may not pass `--max-request-body-mb`, and the
//! read has a deadline (`--body-read-timeout-secs`, default 60 s in all, and no slower than
//! [`MIN_RATE`] on average once [`GRACE`] has passed). A read that passes a limit ends at once
//! with a [`BodyFault`], and its charge is given back.
//!
//! The same reader serves bodies read whole by the relay (JSON) and uploads streamed on to the
//! upstream (the audio routes' multipart forms): in both, what is in flight is what was read.

use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, BodyDataStream, Bytes};
use futures_util::{Stream, StreamExt};
use tokio::time::{Instant, Sleep};

use crate::relay::pipeline::body_budget::{Charge, Over};

/// The average rate a body must keep up once [`GRACE`] has passed, in bytes per second.
pub const MIN_RATE: u64 = 64 * 1024;

/// How long a body may arrive at any rate.
pub const GRACE: Duration = Duration::from_secs(10);

/// How long a body may take to arrive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    /// The whole body, at most (`--body-read-timeout-secs`).
    pub total: Duration,
    /// Any rate is accepted this long.
    pub grace: Duration,
    /// Bytes per second the body must average after `grace`.
    pub min_rate: u64,
}

impl ReadLimits {
    /// The documented limits with `total` for the whole body.
    pub fn with_total(total: Duration) -> ReadLimits {
        ReadLimits {
            total,
            grace: GRACE,
            min_rate: MIN_RATE,
        }
    }

    /// When (from the start of the read) a body of which `read` bytes have arrived is cut: at
    /// `total`, or earlier when its average rate falls below `min_rate` after `grace`.
    pub fn deadline(&self, read: u64) -> Duration {
        let at_rate = if self.min_rate == 0 {
            self.total
        } else {
            Duration::from_secs_f64(read as f64 / self.min_rate as f64)
        };
        self.total.min(self.grace.max(at_rate))
    }
}

/// Why a body's read was cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BodyFault {
    /// The body did not arrive in time.
    #[error("the request body did not arrive in time")]
    Timeout,
    /// The body is larger than `--max-request-body-mb`.
    #[error("the request body is too large")]
    TooLarge,
    /// The bodies in flight would pass a budget.
    #[error("the request bodies in flight are over their budget")]
    Over(Over),
    /// The client's connection failed.
    #[error("the client's upload failed")]
    Client,
}

/// Where a streamed body's fault is left for the middleware (a handler only sees a body
/// error, which it answers as it answers any).
pub type FaultCell = Arc<OnceLock<BodyFault>>;

/// A request body read under its limits (see the module doc).
pub struct Metered {
    inner: BodyDataStream,
    charge: Charge,
    limits: ReadLimits,
    max: u64,
    started: Instant,
    timer: Pin<Box<Sleep>>,
    read: u64,
    fault: FaultCell,
    done: bool,
}

impl Metered {
    /// Reads `body` charging `charge`, at most `max` bytes, within `limits`.
    pub fn new(body: Body, charge: Charge, max: u64, limits: ReadLimits) -> Metered {
        let started = Instant::now();
        Metered {
            inner: body.into_data_stream(),
            charge,
            limits,
            max,
            started,
            timer: Box::pin(tokio::time::sleep_until(started + limits.deadline(0))),
            read: 0,
            fault: FaultCell::default(),
            done: false,
        }
    }

    /// Where a fault is recorded.
    pub fn fault_cell(&self) -> FaultCell {
        Arc::clone(&self.fault)
    }

    /// Reads the whole body; returns it with its charge (held until the request is answered).
    pub async fn read_all(mut self) -> Result<(Bytes, Charge), BodyFault> {
        let mut parts: Vec<Bytes> = Vec::new();
        while let Some(chunk) = self.next().await {
            parts.push(chunk?);
        }
        let bytes = match parts.len() {
            0 => Bytes::new(),
            1 => parts.pop().unwrap_or_default(),
            _ => Bytes::from(parts.concat()),
        };
        let Metered { charge, .. } = self;
        Ok((bytes, charge))
    }

    fn cut(&mut self, fault: BodyFault) -> Poll<Option<Result<Bytes, BodyFault>>> {
        let _ = self.fault.set(fault);
        self.done = true;
        self.charge.clear();
        Poll::Ready(Some(Err(fault)))
    }
}

impl Stream for Metered {
    type Item = Result<Bytes, BodyFault>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.done {
            return Poll::Ready(None);
        }
        match self.inner.poll_next_unpin(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                let n = u64::try_from(chunk.len()).unwrap_or(u64::MAX);
                let read = self.read.saturating_add(n);
                if read > self.max {
                    return self.cut(BodyFault::TooLarge);
                }
                if let Err(over) = self.charge.add(n) {
                    return self.cut(BodyFault::Over(over));
                }
                self.read = read;
                let deadline = self.started + self.limits.deadline(read);
                self.timer.as_mut().reset(deadline);
                Poll::Ready(Some(Ok(chunk)))
            }
            Poll::Ready(Some(Err(_))) => self.cut(BodyFault::Client),
            Poll::Ready(None) => {
                self.done = true;
                Poll::Ready(None)
            }
            Poll::Pending => match self.timer.as_mut().poll(cx) {
                Poll::Ready(()) => self.cut(BodyFault::Timeout),
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::relay::pipeline::body_budget::{BodyBudget, Limits, ShareKey};
    use tollgate_storage::TokenId;

    #[test]
    fn the_deadline_is_the_total_or_the_minimum_rate_after_the_grace() {
        let limits = ReadLimits::with_total(Duration::from_secs(60));
        assert_eq!(
            limits.deadline(0),
            GRACE,
            "nothing read: cut after the grace"
        );
        assert_eq!(limits.deadline(MIN_RATE * 20), Duration::from_secs(20));
        assert_eq!(
            limits.deadline(MIN_RATE * 1_000),
            Duration::from_secs(60),
            "never past the total"
        );
        let short = ReadLimits::with_total(Duration::from_millis(300));
        assert_eq!(short.deadline(MIN_RATE * 20), Duration::from_millis(300));
    }

    fn metered(body: Body, budget: &BodyBudget, limits: ReadLimits) -> Metered {
        let charge = budget.charge(
            ShareKey::Token(TokenId(1)),
            Limits {
                global: 0,
                per_key: 0,
            },
        );
        Metered::new(body, charge, 1 << 20, limits)
    }

    #[tokio::test(start_paused = true)]
    async fn a_stalled_body_is_cut_at_its_deadline_and_gives_its_share_back() {
        let budget = BodyBudget::default();
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(4);
        let body = Body::from_stream(tokio_stream_of(rx));
        let reader = metered(
            body,
            &budget,
            ReadLimits::with_total(Duration::from_secs(60)),
        );
        let cell = reader.fault_cell();
        tx.send(Ok(Bytes::from_static(b"abc"))).await.expect("sent");
        let read = tokio::spawn(reader.read_all());
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(budget.in_flight(), 3, "charged as it arrived");
        let result = read.await.expect("joined");
        assert_eq!(result.err(), Some(BodyFault::Timeout));
        assert_eq!(cell.get(), Some(&BodyFault::Timeout));
        assert_eq!(budget.in_flight(), 0, "the share is given back");
        drop(tx);
    }

    #[tokio::test]
    async fn a_whole_body_keeps_its_charge_until_answered() {
        let budget = BodyBudget::default();
        let reader = metered(
            Body::from("hello"),
            &budget,
            ReadLimits::with_total(Duration::from_secs(1)),
        );
        let (bytes, charge) = reader.read_all().await.expect("read");
        assert_eq!(&bytes[..], b"hello");
        assert_eq!(budget.in_flight(), 5);
        drop(charge);
        assert_eq!(budget.in_flight(), 0);
    }

    /// A stream of what `rx` receives.
    fn tokio_stream_of<T: Send + 'static>(
        rx: tokio::sync::mpsc::Receiver<T>,
    ) -> impl Stream<Item = T> + Send + 'static {
        futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        })
    }
}
