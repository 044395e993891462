//! Lenient field types for the typed wire formats: a body's field of an unexpected JSON type
//! reads as absent (as indexing a `serde_json::Value` did), never as a refused body. Strings
//! borrow from the parsed value or text where they can ([`Str`]); objects and lists of another
//! type read as empty ([`Obj`], [`List`]); a field whose presence counts is a [`Present`]. A
//! body is read from a parsed value ([`view`]) or straight from its bytes ([`parse`]; a
//! [`Verbatim`] read so is written in a value's key order by [`Sorted`]). Serialisation to an
//! SSE event without an intermediate `Value`: [`sse_typed`].
//!
//! One file per kind of field: `scalar.rs` ([`Str`], [`Int`]), `obj.rs` ([`Obj`], [`List`]),
//! `shape.rs` ([`Shape`]), `verbatim.rs` ([`Verbatim`]), `present.rs` ([`Present`]: the one
//! absent-vs-given wrapper), `sorted.rs` ([`Sorted`]), `tagged.rs` ([`Tagged`]: an object's `type`
//! beside a shared view's fields); the readers are here.

use serde::{Deserialize, Serialize};

mod obj;
mod present;
mod scalar;
mod shape;
mod sorted;
mod tagged;
mod verbatim;

pub use obj::{List, Obj};
pub use present::Present;
pub use scalar::{Int, Str};
pub use shape::Shape;
pub use sorted::Sorted;
pub use tagged::Tagged;
pub use verbatim::Verbatim;

/// `T` read from a value: `T::default()` when it is not an object (lenient field types make
/// reading an object fail only on a malformed value, which a parsed `Value` never is).
pub fn view<'a, T: Deserialize<'a> + Default>(value: &'a serde_json::Value) -> T {
    Obj::<T>::deserialize(value)
        .map(|o| o.0)
        .unwrap_or_default()
}

/// `T` read straight from a body's bytes, as [`view`] reads it from the body parsed: `None`
/// when the bytes are not JSON, or repeat a field `T` reads (a `Value` keeps the last; the
/// caller then reads the parsed value instead).
pub fn parse<'a, T: Deserialize<'a> + Default>(bytes: &'a [u8]) -> Option<T> {
    serde_json::from_slice::<Obj<T>>(bytes).ok().map(|o| o.0)
}

/// Appends one SSE event whose data is `data` serialised (`event:` line only when `name` is
/// not empty), as [`super::sse`] does for a `Value`.
pub fn sse_typed<T: Serialize>(out: &mut Vec<u8>, name: &str, data: &T) {
    if !name.is_empty() {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(name.as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(b"data: ");
    // Writing to a Vec cannot fail, and these types hold no maps with non-string keys.
    let _ = serde_json::to_writer(&mut *out, data);
    out.extend_from_slice(b"\n\n");
}

#[cfg(test)]
mod tests;
