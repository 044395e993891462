//! The limiter's time: Unix milliseconds read through an injected clock ([`MillisClock`]),
//! the wall clock in production ([`system_millis`]), a cell in tests.

use std::sync::Arc;

/// Reads the time in Unix milliseconds (injected in tests).
pub type MillisClock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// The wall clock in Unix milliseconds.
pub fn system_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
