//! [`Shape`]: a field of several possible JSON shapes (string, list, object, scalar, `null`,
//! absent) read shallowly, for fields such as a message's `content` or `tool_choice`.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::Obj;

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
