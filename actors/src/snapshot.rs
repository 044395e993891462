//! `Published<T>`: one immutable value shared with lock-free readers and replaced whole.

use std::sync::Arc;

use arc_swap::{ArcSwap, Guard};

/// A value published by its owner and read by many tasks without locks.
///
/// Readers see either the old value or the new one, never a mix. Use [`Published::load`] for a
/// short synchronous look; take [`Published::load_full`] when the value must live across
/// `.await`s (a long stream keeps one consistent view for its whole life).
#[derive(Debug)]
pub struct Published<T> {
    /// The current value; written only by the owner through [`Published::publish`].
    inner: Arc<ArcSwap<T>>,
}

impl<T> Clone for Published<T> {
    fn clone(&self) -> Self {
        Published {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T> Published<T> {
    /// Publishes `initial`.
    pub fn new(initial: T) -> Self {
        Published {
            inner: Arc::new(ArcSwap::from_pointee(initial)),
        }
    }

    /// A short-lived guard on the current value.
    pub fn load(&self) -> Guard<Arc<T>> {
        self.inner.load()
    }

    /// An owned handle on the current value.
    pub fn load_full(&self) -> Arc<T> {
        self.inner.load_full()
    }

    /// Replaces the value for every later reader.
    pub fn publish(&self, value: T) {
        self.inner.store(Arc::new(value));
    }
}
