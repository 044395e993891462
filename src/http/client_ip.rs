//! The client's address and the per-address limiter of the abuse-prone routes (sign-in,
//! registration, verification mail, password reset, third-party sign-in).
//!
//! The address is the TCP peer, unless the peer is one of the operator's `--trusted-proxies`:
//! then it is read from `X-Forwarded-For` (walked from the right, skipping trusted hops, so a
//! client cannot choose it by sending the header itself) or else `X-Real-IP`. Anyone can send
//! those headers, so they are believed only from a trusted proxy. The same address is what the
//! limiter counts, what token `allow_ips` checks and what logs record.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::HeaderMap;
use axum::http::request::Parts;
use governor::clock::{Clock, DefaultClock};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use ipnet::IpNet;

use crate::error::ConsoleError;
use crate::state::AppState;

/// Window over which `--critical-rate-limit` requests are allowed.
const CRITICAL_WINDOW: Duration = Duration::from_secs(20 * 60);

/// The limiter forgets addresses whose budget is full again every this many checks, so its
/// map holds only the addresses seen within about one window.
const PRUNE_EVERY: u64 = 1024;

/// The networks whose forwarding headers are believed (`--trusted-proxies`).
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// Trusts `nets`.
    pub fn new(nets: Vec<IpNet>) -> TrustedProxies {
        TrustedProxies(nets)
    }

    fn trusts(&self, ip: IpAddr) -> bool {
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The client's address for a connection from `peer` carrying `headers`.
    pub fn client_addr(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = peer.to_canonical();
        if !self.trusts(peer) {
            return peer;
        }
        let forwarded: Vec<&str> = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .collect();
        if !forwarded.is_empty() {
            // Right to left: each hop appended the address it saw. The first one not ours is
            // the client; anything left of it was written by the client and proves nothing.
            let mut client = peer;
            for hop in forwarded.iter().rev() {
                let Some(ip) = parse_hop(hop) else {
                    break;
                };
                client = ip;
                if !self.trusts(ip) {
                    break;
                }
            }
            return client;
        }
        headers
            .get("x-real-ip")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_hop(v.trim()))
            .unwrap_or(peer)
    }
}

/// One address of a forwarding header: `1.2.3.4`, `1.2.3.4:5678`, `2001:db8::1` or
/// `[2001:db8::1]:443`.
fn parse_hop(hop: &str) -> Option<IpAddr> {
    if let Ok(ip) = hop.parse::<IpAddr>() {
        return Some(ip.to_canonical());
    }
    hop.parse::<SocketAddr>()
        .ok()
        .map(|a| a.ip().to_canonical())
}

/// What the limiter counts for an address: IPv4 as is, IPv6 by its /64 (one subscriber's
/// network, which they can draw any number of addresses from).
pub fn limiter_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(Ipv6Addr::from(bits))
        }
        v4 => v4,
    }
}

type Keyed<C> =
    RateLimiter<IpAddr, DefaultKeyedStateStore<IpAddr>, C, NoOpMiddleware<<C as Clock>::Instant>>;

/// Per-address limiter of the abuse-prone routes (a keyed GCRA from `governor`); one instance
/// is shared by every route it protects.
pub struct CriticalLimiter<C: Clock = DefaultClock> {
    /// Buckets per client address (IPv6 per /64).
    limiter: Arc<Keyed<C>>,
    /// Checks so far (prunes every [`PRUNE_EVERY`]).
    checks: Arc<AtomicU64>,
}

impl<C: Clock> Clone for CriticalLimiter<C> {
    fn clone(&self) -> Self {
        CriticalLimiter {
            limiter: Arc::clone(&self.limiter),
            checks: Arc::clone(&self.checks),
        }
    }
}

impl CriticalLimiter {
    /// Allows `per_window` requests per address per 20 minutes (at least 1).
    pub fn new(per_window: u32) -> Self {
        CriticalLimiter::with_clock(per_window, DefaultClock::default())
    }
}

impl<C: Clock> CriticalLimiter<C> {
    /// [`CriticalLimiter::new`] on `clock`.
    pub fn with_clock(per_window: u32, clock: C) -> Self {
        let burst = NonZeroU32::new(per_window).unwrap_or(NonZeroU32::MIN);
        let period = CRITICAL_WINDOW / burst.get();
        let quota = Quota::with_period(period)
            .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
            .allow_burst(burst);
        CriticalLimiter {
            limiter: Arc::new(RateLimiter::new(
                quota,
                DefaultKeyedStateStore::default(),
                clock,
            )),
            checks: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Takes one request from `ip`'s budget.
    pub fn check(&self, ip: IpAddr) -> Result<(), ConsoleError> {
        if self
            .checks
            .fetch_add(1, Ordering::Relaxed)
            .is_multiple_of(PRUNE_EVERY)
        {
            self.prune();
        }
        self.limiter
            .check_key(&limiter_key(ip))
            .map_err(|_| ConsoleError::TooManyRequests)
    }

    /// Forgets the addresses whose budget is full again.
    pub fn prune(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
    }

    /// Addresses remembered.
    pub fn len(&self) -> usize {
        self.limiter.len()
    }

    /// Whether no address is remembered.
    pub fn is_empty(&self) -> bool {
        self.limiter.is_empty()
    }
}

/// The client's address (see the module docs).
#[derive(Debug, Clone, Copy)]
pub struct ClientIp(pub IpAddr);

impl ClientIp {
    /// The client's address of a request's parts.
    pub fn of(parts: &Parts, state: &AppState) -> Option<IpAddr> {
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(addr)| addr.ip())?;
        Some(state.trusted_proxies.client_addr(peer, &parts.headers))
    }
}

impl FromRequestParts<AppState> for ClientIp {
    type Rejection = ConsoleError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        ClientIp::of(parts, state)
            .map(ClientIp)
            .ok_or_else(|| ConsoleError::Internal("no peer address on the connection".into()))
    }
}

/// A request to an abuse-prone route that passed the per-address limit; carries the address.
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

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;
    use governor::clock::FakeRelativeClock;

    use super::*;
    use crate::config::parse_trusted;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.append(*name, HeaderValue::from_str(value).expect("value"));
        }
        h
    }

    #[test]
    fn forwarding_headers_count_only_from_trusted_proxies() {
        let trusted = TrustedProxies::new(vec![
            parse_trusted("10.0.0.0/8").expect("cidr"),
            parse_trusted("fd00::1").expect("address"),
        ]);
        let spoofed = headers(&[("x-forwarded-for", "1.1.1.1"), ("x-real-ip", "2.2.2.2")]);
        assert_eq!(
            trusted.client_addr(ip("203.0.113.7"), &spoofed),
            ip("203.0.113.7"),
            "an untrusted peer's headers are ignored"
        );
        assert_eq!(
            TrustedProxies::default().client_addr(ip("10.0.0.2"), &spoofed),
            ip("10.0.0.2"),
            "nothing is trusted by default"
        );
        let chain = headers(&[
            ("x-forwarded-for", "6.6.6.6, 198.51.100.9"),
            ("x-forwarded-for", "10.1.1.1"),
        ]);
        assert_eq!(
            trusted.client_addr(ip("10.0.0.2"), &chain),
            ip("198.51.100.9"),
            "the rightmost address no trusted proxy wrote is the client"
        );
        assert_eq!(
            trusted.client_addr(ip("::ffff:10.0.0.2"), &chain),
            ip("198.51.100.9"),
            "an IPv4-mapped peer is its IPv4 address"
        );
        assert_eq!(
            trusted.client_addr(ip("fd00::1"), &headers(&[("x-real-ip", "2001:db8::5")])),
            ip("2001:db8::5")
        );
        assert_eq!(
            trusted.client_addr(
                ip("10.0.0.2"),
                &headers(&[("x-forwarded-for", "[2001:db8::7]:443")])
            ),
            ip("2001:db8::7")
        );
        assert_eq!(
            trusted.client_addr(ip("10.0.0.2"), &headers(&[("x-forwarded-for", "junk")])),
            ip("10.0.0.2"),
            "garbage leaves the peer"
        );
        assert!(parse_trusted("nope").is_err());
    }

    #[test]
    fn ipv6_is_limited_per_64_and_ipv4_per_address() {
        let limiter = CriticalLimiter::with_clock(2, FakeRelativeClock::default());
        assert!(limiter.check(ip("2001:db8:1:2::1")).is_ok());
        assert!(limiter.check(ip("2001:db8:1:2:ffff::9")).is_ok());
        assert!(
            limiter.check(ip("2001:db8:1:2:abcd::1")).is_err(),
            "a new address in the same /64 shares the budget"
        );
        assert!(limiter.check(ip("2001:db8:1:3::1")).is_ok(), "another /64");
        assert!(limiter.check(ip("192.0.2.1")).is_ok());
        assert!(limiter.check(ip("192.0.2.1")).is_ok());
        assert!(limiter.check(ip("192.0.2.1")).is_err());
        assert!(limiter.check(ip("192.0.2.2")).is_ok(), "IPv4 per address");
    }

    #[test]
    fn the_limiter_forgets_addresses_whose_budget_refilled() {
        let clock = FakeRelativeClock::default();
        let limiter = CriticalLimiter::with_clock(3, clock.clone());
        for i in 0..50u8 {
            assert!(limiter.check(IpAddr::from([198, 51, 100, i])).is_ok());
        }
        assert_eq!(limiter.len(), 50);
        limiter.prune();
        assert_eq!(limiter.len(), 50, "budgets still being refilled are kept");
        clock.advance(CRITICAL_WINDOW + Duration::from_secs(1));
        limiter.prune();
        assert!(limiter.is_empty(), "{} kept", limiter.len());
    }
}
