//! Fault injection shared by the mock upstreams: a scripted answer whose body comes in parts
//! and ends normally, breaks off (the connection is aborted mid-body) or stalls forever, and a
//! call counter tests can wait on (no sleeps).
#![allow(
    dead_code,
    reason = "each test binary uses a different subset of the mocks"
)]

use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use tokio::sync::watch;

/// How a scripted body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// Normally.
    End,
    /// The connection breaks off mid-body.
    Cut,
    /// Nothing more ever comes (the connection stays open).
    Stall,
}

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Script {
    /// HTTP status.
    pub status: u16,
    /// Content type.
    pub content_type: &'static str,
    /// Wait this long before the status line and headers.
    pub first_delay: Duration,
    /// The body's parts, one write each.
    pub parts: Vec<String>,
    /// Wait this long before each part after the first.
    pub gap: Duration,
    /// How the body ends.
    pub tail: Tail,
}

impl Script {
    /// A 200 answer of `parts` with `content_type`, ending normally at once.
    pub fn ok(content_type: &'static str, parts: Vec<String>) -> Script {
        Script {
            status: 200,
            content_type,
            first_delay: Duration::ZERO,
            parts,
            gap: Duration::ZERO,
            tail: Tail::End,
        }
    }

    /// The answer.
    pub async fn respond(self) -> Response {
        if !self.first_delay.is_zero() {
            tokio::time::sleep(self.first_delay).await;
        }
        let Script {
            status,
            content_type,
            parts,
            gap,
            tail,
            ..
        } = self;
        let state = (parts.into_iter(), true);
        let body = futures_util::stream::unfold(state, move |(mut parts, first)| async move {
            if let Some(part) = parts.next() {
                if !first && !gap.is_zero() {
                    tokio::time::sleep(gap).await;
                }
                return Some((Ok::<_, std::io::Error>(part), (parts, false)));
            }
            match tail {
                Tail::End => None,
                Tail::Cut => {
                    // hyper writes the head and the parts before it with the next write; an
                    // error at once would reset the connection before any of them left, which
                    // is a failed call, not a cut body.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    Some((Err(std::io::Error::other("scripted cut")), (parts, false)))
                }
                Tail::Stall => std::future::pending().await,
            }
        });
        let mut response = Response::new(Body::from_stream(body));
        *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
        response
            .headers_mut()
            .insert("content-type", HeaderValue::from_static(content_type));
        response
    }
}

/// Counts calls; tests wait for the n-th.
#[derive(Debug)]
pub struct Calls(watch::Sender<usize>);

impl Default for Calls {
    fn default() -> Calls {
        Calls(watch::Sender::new(0))
    }
}

impl Calls {
    /// One more call.
    pub fn hit(&self) {
        self.0.send_modify(|n| *n += 1);
    }

    /// Calls so far.
    pub fn count(&self) -> usize {
        *self.0.borrow()
    }

    /// Waits until at least `n` calls came.
    pub async fn wait(&self, n: usize) {
        let mut rx = self.0.subscribe();
        let _ = rx.wait_for(|c| *c >= n).await;
    }
}
