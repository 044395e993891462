//! Lenient field types for the typed wire formats: a body's field of an unexpected JSON type
//! reads as absent (as indexing a `serde_json::Value` did), never as a refused body. Strings
//! borrow from the parsed value or text where they can ([`Str`]); objects and lists of another
//! type read as empty ([`Obj`], [`List`]); a field whose presence counts is a [`Present`]. A
//! body is read from a parsed value ([`view`]) or straight from its bytes ([`parse`]; a
//! [`Verbatim`] read so is written in a value's key order by [`Sorted`]). Serialisation to an
//! SSE event without an intermediate `Value`: [`sse_typed`].

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Serialize, Serializer};

mod present;
mod sorted;

pub use present::Present;
pub use sorted::Sorted;

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

/// An object field read as `T` (whose fields are lenient too): `T::default()` when absent or
/// not an object.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Obj<T>(pub T);

struct ObjVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de> + Default> Visitor<'de> for ObjVisitor<T> {
    type Value = Obj<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map)).map(Obj)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Obj<T>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Obj(T::default()))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Obj<T>, E> {
        Ok(Obj(T::default()))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Obj<T>, E> {
        Ok(Obj(T::default()))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Obj<T>, E> {
        Ok(Obj(T::default()))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Obj<T>, E> {
        Ok(Obj(T::default()))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Obj<T>, E> {
        Ok(Obj(T::default()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Obj<T>, E> {
        Ok(Obj(T::default()))
    }

    fn visit_none<E: de::Error>(self) -> Result<Obj<T>, E> {
        Ok(Obj(T::default()))
    }
}

impl<'de, T: Deserialize<'de> + Default> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ObjVisitor(PhantomData))
    }
}

impl<T> std::ops::Deref for Obj<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// A list field of `T` objects: empty when absent or not an array (`None` from
/// [`List::present`]); elements that are not objects read as `T::default()`.
#[derive(Debug, Clone, PartialEq)]
pub struct List<T>(pub Option<Vec<T>>);

impl<T> Default for List<T> {
    fn default() -> Self {
        List(None)
    }
}

impl<T> List<T> {
    /// The elements (none when the field was not an array).
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.0.as_deref().unwrap_or_default().iter()
    }

    /// The array, when the field was one.
    pub fn present(&self) -> Option<&[T]> {
        self.0.as_deref()
    }
}

struct ListVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de> + Default> Visitor<'de> for ListVisitor<T> {
    type Value = List<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<List<T>, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(Obj(v)) = seq.next_element::<Obj<T>>()? {
            out.push(v);
        }
        Ok(List(Some(out)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<List<T>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(List(None))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<List<T>, E> {
        Ok(List(None))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<List<T>, E> {
        Ok(List(None))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<List<T>, E> {
        Ok(List(None))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<List<T>, E> {
        Ok(List(None))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<List<T>, E> {
        Ok(List(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<List<T>, E> {
        Ok(List(None))
    }

    fn visit_none<E: de::Error>(self) -> Result<List<T>, E> {
        Ok(List(None))
    }
}

impl<'de, T: Deserialize<'de> + Default> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ListVisitor(PhantomData))
    }
}

/// A field of several possible shapes, read shallowly: a string (borrowed where it can be),
/// a list of `T` objects, a `T` object, a boolean, another scalar, null, or absent.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Shape<'a, T> {
    /// The field is absent.
    #[default]
    Absent,
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A number.
    Num,
    /// A string.
    Str(Cow<'a, str>),
    /// An array (elements that are not objects read as `T::default()`).
    List(Vec<T>),
    /// An object.
    Obj(T),
}

impl<T> Shape<'_, T> {
    /// Whether the field is present and not null.
    pub fn given(&self) -> bool {
        !matches!(self, Shape::Absent | Shape::Null)
    }

    /// The string, if the field is one.
    pub fn str(&self) -> Option<&str> {
        match self {
            Shape::Str(s) => Some(s),
            _ => None,
        }
    }
}

struct ShapeVisitor<'a, T>(PhantomData<(&'a (), T)>);

impl<'de: 'a, 'a, T: Deserialize<'de> + Default> Visitor<'de> for ShapeVisitor<'a, T> {
    type Value = Shape<'a, T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Shape::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Shape::Str(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Shape::Str(Cow::Owned(v)))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Shape::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Shape::Num)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Shape::Num)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Shape::Num)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Shape::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Shape::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(Obj(v)) = seq.next_element::<Obj<T>>()? {
            out.push(v);
        }
        Ok(Shape::List(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map)).map(Shape::Obj)
    }
}

impl<'de: 'a, 'a, T: Deserialize<'de> + Default> Deserialize<'de> for Shape<'a, T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ShapeVisitor(PhantomData))
    }
}

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

/// A JSON value a converter copies verbatim from one body to another (a JSON schema, a
/// sampling number, a text that may not be a string): read without copying its strings and
/// keys, which borrow from the value read; objects keep the order they were read in, which for
/// a `serde_json::Value` is the order of their keys, so it writes the bytes the value would.
/// `Option<Verbatim>` reads `null` as `None`, as `Option<Value>` does.
#[derive(Debug, Clone, PartialEq)]
pub enum Verbatim<'a> {
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A number.
    Num(serde_json::Number),
    /// A string.
    Str(Cow<'a, str>),
    /// An array.
    List(Vec<Verbatim<'a>>),
    /// An object, its entries in the order read.
    Obj(Vec<(Cow<'a, str>, Verbatim<'a>)>),
}

impl Verbatim<'_> {
    /// The string, if the value is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Verbatim::Str(s) => Some(s),
            _ => None,
        }
    }

    /// An object's field (`None` when absent or not an object).
    pub fn get(&self, key: &str) -> Option<&Self> {
        match self {
            Verbatim::Obj(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Whether the value is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Verbatim::Null)
    }

    /// The value as JSON text.
    pub fn to_json(&self) -> String {
        // Serialising to a String cannot fail: keys are strings, numbers finite.
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl Serialize for Verbatim<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Verbatim::Null => s.serialize_unit(),
            Verbatim::Bool(b) => s.serialize_bool(*b),
            Verbatim::Num(n) => n.serialize(s),
            Verbatim::Str(v) => s.serialize_str(v),
            Verbatim::List(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Verbatim::Obj(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(&**k, v)?;
                }
                map.end()
            }
        }
    }
}

struct VerbatimVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for VerbatimVisitor<'a> {
    type Value = Verbatim<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Verbatim::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Verbatim::Str(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Verbatim::Str(Cow::Owned(v)))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Verbatim::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Verbatim::Num(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Verbatim::Num(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        // A parsed JSON number is finite; `Value` too turns anything else into null.
        Ok(serde_json::Number::from_f64(v).map_or(Verbatim::Null, Verbatim::Num))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Verbatim::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Verbatim::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Verbatim::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(v) = seq.next_element::<Verbatim<'a>>()? {
            out.push(v);
        }
        Ok(Verbatim::List(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
        while let Some(Str(key)) = map.next_key::<Str<'a>>()? {
            let value = map.next_value::<Verbatim<'a>>()?;
            out.push((key.unwrap_or_default(), value));
        }
        Ok(Verbatim::Obj(out))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Verbatim<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(VerbatimVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests;
