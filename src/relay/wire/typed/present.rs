//! Fields whose presence counts, as `value.get(field)` told absent from `null`: [`Present`]
//! (any value read leniently as an object) and [`Raw`] (any value verbatim).

use serde::{Deserialize, Deserializer};

use super::{Obj, Verbatim};

/// A field that is `None` when absent and otherwise `T` read as [`Obj`] reads it (`null`, a
/// scalar or a list read as `T::default()`): what `value.get(field).map(|v| view(v))` gave.
/// Needs `#[serde(default)]` on the field or its struct.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Present<T>(pub Option<T>);

impl<T> Default for Present<T> {
    fn default() -> Self {
        Present(None)
    }
}

impl<'de, T: Deserialize<'de> + Default> Deserialize<'de> for Present<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Obj::<T>::deserialize(d).map(|o| Present(Some(o.0)))
    }
}

/// A field copied as indexing a `Value` copies it: absent and `null` are told apart (e.g. an
/// Anthropic tool is kept when its `input_schema` is present, even `null`).
#[derive(Debug, Default)]
pub enum Raw<'a> {
    /// The field is absent.
    #[default]
    Absent,
    /// The field, `null` included.
    Given(Verbatim<'a>),
}

impl<'de: 'a, 'a> Deserialize<'de> for Raw<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Verbatim::deserialize(d).map(Raw::Given)
    }
}
