//! Lenient object fields: an object read as `T` ([`Obj`]) and a list of them ([`List`]); a
//! field of another JSON type reads as `T::default()` or as no list.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

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
