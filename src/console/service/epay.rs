//! The Epay (易支付) protocol, pure: signing and verifying parameter sets, and money as exact
//! cents.
//!
//! Signature: every parameter except `sign` and `sign_type`, and except empty values, sorted by
//! key, joined as `k=v&k=v`, followed directly by the merchant key; the MD5 of that, in
//! lower-case hex. Money travels as decimal text with at most two decimals ("7.30"); it is kept
//! in integer cents so the notified amount can be compared with the order exactly.

use std::collections::BTreeMap;

use md5::{Digest, Md5};
use subtle::ConstantTimeEq;

/// The Epay signature of `params` with the merchant `key`.
pub fn sign(params: &BTreeMap<String, String>, key: &str) -> String {
    let mut text = params
        .iter()
        .filter(|(k, v)| k.as_str() != "sign" && k.as_str() != "sign_type" && !v.is_empty())
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&");
    text.push_str(key);
    format!("{:x}", Md5::digest(text.as_bytes()))
}

/// Whether `params` carry a valid `sign` for `key` (compared in constant time). An empty
/// merchant key never verifies.
pub fn verify(params: &BTreeMap<String, String>, key: &str) -> bool {
    if key.is_empty() {
        return false;
    }
    let Some(given) = params.get("sign") else {
        return false;
    };
    let expected = sign(params, key);
    let given = given.trim().to_ascii_lowercase();
    given.len() == expected.len() && bool::from(given.as_bytes().ct_eq(expected.as_bytes()))
}

/// Parses decimal money text ("7", "7.3", "7.30") into cents; `None` for anything else
/// (negative, more than two significant decimals, not a number, too large).
pub fn parse_cents(text: &str) -> Option<i64> {
    let text = text.trim();
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (kept, rest) = frac.split_at(frac.len().min(2));
    if rest.bytes().any(|b| b != b'0') {
        return None;
    }
    let whole: i64 = whole.parse().ok()?;
    let mut cents: i64 = if kept.is_empty() {
        0
    } else {
        kept.parse().ok()?
    };
    if kept.len() == 1 {
        cents *= 10;
    }
    whole.checked_mul(100)?.checked_add(cents)
}

/// Cents as decimal money text with two decimals ("7.30").
pub fn format_cents(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    format!("{sign}{}.{:02}", abs / 100, abs % 100)
}

/// The money payable for `amount` US$ of quota at `price` (currency per US$) and the group's
/// top-up ratio, rounded to cents; `None` when it does not fit.
pub fn quote_cents(amount: i64, price: f64, group_ratio: f64) -> Option<i64> {
    let cents = (amount as f64 * price * group_ratio * 100.0).round();
    (0.0..9.0e15).contains(&cents).then_some(cents as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn signature_sorts_skips_and_appends_the_key() {
        let p = params(&[
            ("pid", "1001"),
            ("money", "7.30"),
            ("empty", ""),
            ("sign_type", "MD5"),
            ("sign", "ignored"),
        ]);
        // md5("money=7.30&pid=1001secret")
        let expected = format!("{:x}", Md5::digest(b"money=7.30&pid=1001secret"));
        assert_eq!(sign(&p, "secret"), expected);
    }

    #[test]
    fn known_md5_vector() {
        assert_eq!(
            format!("{:x}", Md5::digest(b"abc")),
            "900150983cd24fb0d6963f7d28e17f72"
        );
    }

    #[test]
    fn verification_accepts_only_the_right_key_and_values() {
        let mut p = params(&[("pid", "1"), ("money", "1.00"), ("out_trade_no", "T1")]);
        let s = sign(&p, "k");
        p.insert("sign".into(), s.to_uppercase());
        assert!(verify(&p, "k"), "hex case does not matter");
        assert!(!verify(&p, "other"));
        assert!(!verify(&p, ""), "an empty merchant key never verifies");
        p.insert("money".into(), "100.00".into());
        assert!(!verify(&p, "k"), "a tampered amount breaks the signature");
        p.remove("sign");
        assert!(!verify(&p, "k"));
    }

    #[test]
    fn money_is_exact_cents() {
        assert_eq!(parse_cents("7"), Some(700));
        assert_eq!(parse_cents("7.3"), Some(730));
        assert_eq!(parse_cents("7.30"), Some(730));
        assert_eq!(parse_cents("7.300"), Some(730));
        assert_eq!(parse_cents("0.01"), Some(1));
        for bad in [
            "",
            "-1",
            "7.301",
            "abc",
            "1e3",
            ".5",
            "99999999999999999999",
        ] {
            assert!(parse_cents(bad).is_none(), "{bad} must be refused");
        }
        assert_eq!(parse_cents("7."), Some(700));
        assert_eq!(format_cents(730), "7.30");
        assert_eq!(format_cents(5), "0.05");
        assert_eq!(quote_cents(10, 7.3, 1.0), Some(7300));
        assert_eq!(quote_cents(3, 7.3, 0.9), Some(1971));
        assert_eq!(quote_cents(i64::MAX, 7.3, 1.0), None);
    }
}
