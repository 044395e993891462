//! [`Tagged`]: an object's `type` read beside the fields of a view that other objects share
//! (a Responses function tool is a hub function definition with a `type`; a Responses
//! `text.format` a hub JSON schema with one), without the buffer `#[serde(flatten)]` fills:
//! the object's entries go to the view as they are read, all but `type`.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::value::{BorrowedStrDeserializer, StringDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::Str;

/// An object read as its `type` ([`Tagged::kind`]) and `T` (every other field; lenient as
/// `T`'s own fields are). Not an object: `type` absent and `T::default()`, as [`super::Obj`]
/// reads it. A repeated `type` refuses the object, as a derived view refuses a repeated field.
#[derive(Debug, Default)]
pub struct Tagged<'a, T> {
    /// The object's `type`.
    pub kind: Str<'a>,
    /// The object's other fields.
    pub fields: T,
}

impl<T> std::ops::Deref for Tagged<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.fields
    }
}

struct TaggedVisitor<'a, T>(PhantomData<(&'a (), T)>);

impl<'de: 'a, 'a, T: Deserialize<'de> + Default> Visitor<'de> for TaggedVisitor<'a, T> {
    type Value = Tagged<'a, T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let mut kind = None;
        let fields = T::deserialize(de::value::MapAccessDeserializer::new(Untyped {
            map,
            kind: &mut kind,
        }))?;
        Ok(Tagged {
            kind: kind.unwrap_or_default(),
            fields,
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Tagged::default())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Tagged::default())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Tagged::default())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Tagged::default())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Tagged::default())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Tagged::default())
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Tagged::default())
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Tagged::default())
    }
}

impl<'de: 'a, 'a, T: Deserialize<'de> + Default> Deserialize<'de> for Tagged<'a, T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TaggedVisitor(PhantomData))
    }
}

/// An object's entries without its `type`, which is read into `kind` on the way.
struct Untyped<'k, 'a, A> {
    map: A,
    kind: &'k mut Option<Str<'a>>,
}

impl<'de: 'a, 'a, A: MapAccess<'de>> MapAccess<'de> for Untyped<'_, 'a, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        loop {
            // A JSON key is always a string (`Str` of one).
            let Some(Str(key)) = self.map.next_key::<Str<'de>>()? else {
                return Ok(None);
            };
            let key = key.unwrap_or_default();
            if key == "type" {
                if self.kind.is_some() {
                    return Err(de::Error::duplicate_field("type"));
                }
                *self.kind = Some(self.map.next_value::<Str<'a>>()?);
                continue;
            }
            return match key {
                std::borrow::Cow::Borrowed(key) => seed
                    .deserialize(BorrowedStrDeserializer::new(key))
                    .map(Some),
                std::borrow::Cow::Owned(key) => {
                    seed.deserialize(StringDeserializer::new(key)).map(Some)
                }
            };
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}
