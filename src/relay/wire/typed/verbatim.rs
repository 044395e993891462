//! [`Verbatim`]: any JSON value a converter copies from one body to another as it came, its
//! strings and keys borrowed from the input and its objects' keys in the order read.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Serialize, Serializer};

use super::Str;

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
