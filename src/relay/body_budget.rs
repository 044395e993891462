//! The memory budget the relay's request bodies share (option RelayBodyBudgetMB): each request
//! in flight holds a share of its announced size until it is answered.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of request bodies in flight on the relay routes. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct BodyBudget {
    /// Sum of the shares currently held.
    in_flight: Arc<AtomicU64>,
}

/// One request's share of the [`BodyBudget`], given back on drop.
pub(crate) struct Share {
    budget: BodyBudget,
    bytes: u64,
}

impl Drop for Share {
    fn drop(&mut self) {
        self.budget
            .in_flight
            .fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

impl BodyBudget {
    /// Takes `bytes` if the total stays within `limit` bytes (0: no limit).
    pub(crate) fn take(&self, bytes: u64, limit: u64) -> Option<Share> {
        let before = self.in_flight.fetch_add(bytes, Ordering::AcqRel);
        let share = Share {
            budget: self.clone(),
            bytes,
        };
        (limit == 0 || before.saturating_add(bytes) <= limit).then_some(share)
    }
}
