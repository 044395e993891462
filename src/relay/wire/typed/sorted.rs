//! [`Sorted`]: a [`Verbatim`] written as a `serde_json::Value` holding it would write it — each
//! object's keys in name order, a repeated key once with its last value. A `Verbatim` read from
//! a `Value` is in that order already; one read from a body's bytes is in the body's order.

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use super::Verbatim;

/// `Verbatim` serialised in `Value`'s key order (see the module).
#[derive(Debug, Clone, Copy)]
pub struct Sorted<'v, 'a>(pub &'v Verbatim<'a>);

impl Sorted<'_, '_> {
    /// The value as JSON text (what `Value::to_string` wrote).
    pub fn to_json(self) -> String {
        // Serialising to a String cannot fail: keys are strings, numbers finite.
        serde_json::to_string(&self).unwrap_or_default()
    }
}

impl Serialize for Sorted<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Verbatim::List(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&Sorted(item))?;
                }
                seq.end()
            }
            Verbatim::Obj(entries) => {
                let mut order: Vec<_> = entries.iter().collect();
                // Stable: of a repeated key, the last read stays last.
                if !order.windows(2).all(|w| w[0].0 < w[1].0) {
                    order.sort_by(|a, b| a.0.cmp(&b.0));
                }
                let last = |i: usize, key: &str| order.get(i + 1).is_none_or(|next| next.0 != key);
                let len = (order.iter().enumerate())
                    .filter(|(i, (key, _))| last(*i, key))
                    .count();
                let mut map = s.serialize_map(Some(len))?;
                for (i, (key, value)) in order.iter().enumerate() {
                    if last(i, key) {
                        map.serialize_entry(&**key, &Sorted(value))?;
                    }
                }
                map.end()
            }
            other => other.serialize(s),
        }
    }
}
