//! The per-address limiter of the abuse-prone routes (sign-in, registration, verification
//! mail, password reset, third-party sign-in, two-factor codes): a keyed GCRA that counts IPv6
//! by /64 and forgets addresses whose budget refilled.

use std::net::{IpAddr, Ipv6Addr};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

use crate::error::ConsoleError;

/// Window over which `--critical-rate-limit` requests are allowed.
const CRITICAL_WINDOW: Duration = Duration::from_secs(20 * 60);

/// The limiter forgets addresses whose budget is full again every this many checks, so its
/// map holds only the addresses seen within about one window.
const PRUNE_EVERY: u64 = 1024;

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

#[cfg(test)]
mod tests {
    use governor::clock::FakeRelativeClock;

    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
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
