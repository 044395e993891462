//! Lenient scalar fields: a string ([`Str`], borrowed from the input where it can be) and an
//! integer ([`Int`]) that read as absent when the field holds another JSON type.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Serialize, Serializer};

/// A string field: `None` when absent or of another type; borrowed when the input allows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Str<'a>(pub Option<Cow<'a, str>>);

impl<'a> Str<'a> {
    /// The string, if the field was one.
    pub fn get(&self) -> Option<&str> {
        self.0.as_deref()
    }

    /// The string, or `""`.
    pub fn or_empty(&self) -> &str {
        self.get().unwrap_or_default()
    }

    /// The string when it is not empty.
    pub fn non_empty(&self) -> Option<&str> {
        self.get().filter(|s| !s.is_empty())
    }
}

impl Serialize for Str<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Some(v) => s.serialize_str(v),
            None => s.serialize_unit(),
        }
    }
}

struct StrVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for StrVisitor<'a> {
    type Value = Str<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Str(Some(Cow::Borrowed(v))))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Str(Some(Cow::Owned(v.to_owned()))))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Str(Some(Cow::Owned(v))))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Str(None))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Str(None))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Str(None))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Str(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Str(None))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Str(None))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Str(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Str(None))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrVisitor(PhantomData))
    }
}

/// An integer field: `None` when absent or not an integer (`as_i64` / `as_u64` of a value).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Int(pub Option<i64>);

struct IntVisitor;

impl<'de> Visitor<'de> for IntVisitor {
    type Value = Int;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Int, E> {
        Ok(Int(Some(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Int, E> {
        Ok(Int(i64::try_from(v).ok()))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Int, E> {
        Ok(Int(None))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Int, E> {
        Ok(Int(None))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Int, E> {
        Ok(Int(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Int, E> {
        Ok(Int(None))
    }

    fn visit_none<E: de::Error>(self) -> Result<Int, E> {
        Ok(Int(None))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Int, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Int(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Int, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Int(None))
    }
}

impl<'de> Deserialize<'de> for Int {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(IntVisitor)
    }
}
