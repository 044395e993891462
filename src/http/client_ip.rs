//! The client's IP address and the per-IP limiter of the abuse-prone routes (sign-in,
//! registration, verification mail, password reset).
//!
//! The address is the TCP peer. Tollgate does not trust `X-Forwarded-For` (anyone can send it);
//! behind a reverse proxy every client shares the proxy's budget, so raise
//! `--critical-rate-limit` there.

use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::error::ConsoleError;
use crate::state::AppState;

/// Window over which `--critical-rate-limit` requests are allowed.
const CRITICAL_WINDOW: Duration = Duration::from_secs(20 * 60);

/// Per-IP limiter for the abuse-prone routes (a keyed GCRA from `governor`).
#[derive(Clone)]
pub struct CriticalLimiter {
    /// Buckets per client IP.
    limiter: Arc<DefaultKeyedRateLimiter<IpAddr>>,
}

impl CriticalLimiter {
    /// Allows `per_window` requests per IP per 20 minutes (at least 1).
    pub fn new(per_window: u32) -> Self {
        let burst = NonZeroU32::new(per_window).unwrap_or(NonZeroU32::MIN);
        let period = CRITICAL_WINDOW / burst.get();
        let quota = Quota::with_period(period)
            .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
            .allow_burst(burst);
        CriticalLimiter {
            limiter: Arc::new(RateLimiter::keyed(quota)),
        }
    }

    /// Takes one request from `ip`'s budget.
    pub fn check(&self, ip: IpAddr) -> Result<(), ConsoleError> {
        self.limiter
            .check_key(&ip)
            .map_err(|_| ConsoleError::TooManyRequests)
    }
}

/// The TCP peer's address.
#[derive(Debug, Clone, Copy)]
pub struct ClientIp(pub IpAddr);

impl<S: Send + Sync> FromRequestParts<S> for ClientIp {
    type Rejection = ConsoleError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(addr)| ClientIp(addr.ip()))
            .ok_or_else(|| ConsoleError::Internal("no peer address on the connection".into()))
    }
}

/// A request to an abuse-prone route that passed the per-IP limit; carries the IP.
#[derive(Debug, Clone, Copy)]
pub struct Limited(pub IpAddr);

impl FromRequestParts<AppState> for Limited {
    type Rejection = ConsoleError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let ClientIp(ip) = ClientIp::from_request_parts(parts, state).await?;
        state.critical_limiter.check(ip)?;
        Ok(Limited(ip))
    }
}
