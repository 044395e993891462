//! [`Present`]: a field whose presence counts, as `value.get(field)` told an absent field from
//! one given (`null` included). The one absent-vs-given wrapper of the typed formats: what is
//! given is read as `T` reads it, so `Present<Verbatim>` keeps any value as it came (`null`
//! apart from absent: a tool whose schema is `null` is still a tool) and `Present<Obj<T>>`
//! reads any value as an object (a `usage` that is `null` or a number is a usage without
//! figures, an absent one is none).

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};

use super::{Str, Verbatim};

/// A field that is `None` when absent and `Some` of what was given, read as `T` reads it.
/// Needs `#[serde(default)]` on the field or its struct.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Present<T>(pub Option<T>);

impl<T> Default for Present<T> {
    fn default() -> Self {
        Present(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Present<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(|v| Present(Some(v)))
    }
}

impl<'a> Present<Verbatim<'a>> {
    /// The value when given and not `null` (what an `Option<Verbatim>` field holds).
    pub fn value(&self) -> Option<&Verbatim<'a>> {
        self.0.as_ref().filter(|v| !v.is_null())
    }

    /// The string, if the value is one (what a [`super::Str`] field reads).
    pub fn get(&self) -> Option<&str> {
        self.0.as_ref().and_then(Verbatim::as_str)
    }

    /// The string, or `""`.
    pub fn or_empty(&self) -> &str {
        self.get().unwrap_or_default()
    }

    /// The string when it is not empty.
    pub fn non_empty(&self) -> Option<&str> {
        self.get().filter(|s| !s.is_empty())
    }

    /// The string as a [`Str`] borrowing from this one (`Str(None)` when it is not a string).
    pub fn str(&self) -> Str<'_> {
        Str(self.get().map(Cow::Borrowed))
    }
}
