//! Postcard encoding of records.
//!
//! Tables store records as raw bytes (`&[u8]`) and decode them here, because redb's
//! `Value::from_bytes` cannot fail: a corrupt or foreign record must surface as a
//! [`StorageError::Codec`](crate::StorageError::Codec), never a panic. Postcard is not
//! self-describing, so any change to a record's fields needs a new table version and a
//! migration (see [`crate::migrate`]).

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::Result;

/// Encodes a record.
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    Ok(postcard::to_stdvec(value)?)
}

/// Encodes a record into `buf` (cleared first), keeping its allocation: a writer encoding many
/// records reuses one buffer instead of growing a new vector for each.
pub fn encode_into<T: Serialize>(value: &T, buf: &mut Vec<u8>) -> Result<()> {
    buf.clear();
    *buf = postcard::to_extend(value, std::mem::take(buf))?;
    Ok(())
}

/// Decodes a record; trailing bytes are an error (they mean a layout mismatch).
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    let (value, rest) = postcard::take_from_bytes(bytes)?;
    if rest.is_empty() {
        Ok(value)
    } else {
        Err(postcard::Error::DeserializeBadEncoding.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Rec {
        a: i64,
        b: String,
    }

    #[test]
    fn roundtrip_keeps_the_record() {
        let rec = Rec {
            a: -5,
            b: "x".into(),
        };
        let bytes = encode(&rec).expect("encode");
        assert_eq!(decode::<Rec>(&bytes).expect("decode"), rec);
    }

    #[test]
    fn encoding_into_a_used_buffer_gives_the_same_bytes() {
        let mut buf = vec![9; 40];
        for rec in [
            Rec {
                a: 300,
                b: "long enough to grow".into(),
            },
            Rec {
                a: -1,
                b: "".into(),
            },
        ] {
            encode_into(&rec, &mut buf).expect("encode");
            assert_eq!(buf, encode(&rec).expect("encode"));
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(decode::<Rec>(&[0xff, 0xff, 0xff]).is_err());
        let mut bytes = encode(&Rec {
            a: 1,
            b: "y".into(),
        })
        .expect("encode");
        bytes.push(7);
        assert!(
            decode::<Rec>(&bytes).is_err(),
            "trailing bytes must be rejected"
        );
    }
}
