//! The Midjourney-proxy key header (reference §1.3): clients of Midjourney-proxy send their key
//! in `mj-api-secret`. When `Authorization` is empty or the literal `midjourney-proxy` (with or
//! without `Bearer`), that header's value becomes the key, before the relay's intake reads it.

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;

/// The header Midjourney-proxy clients send their key in.
pub const MJ_SECRET: &str = "mj-api-secret";

/// Sets `Authorization` from `mj-api-secret` when it says nothing else.
pub async fn mj_secret(mut req: Request, next: Next) -> Response {
    if let Some(value) = key_from_secret(req.headers()) {
        req.headers_mut().insert(header::AUTHORIZATION, value);
    }
    next.run(req).await
}

/// The `Authorization` value to use instead of the request's, when it is empty or the literal
/// `midjourney-proxy` and `mj-api-secret` carries a key.
pub fn key_from_secret(headers: &HeaderMap) -> Option<HeaderValue> {
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .trim();
    let bare = match given.split_once(char::is_whitespace) {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("bearer") => rest.trim(),
        _ => given,
    };
    if !(bare.is_empty() || bare.eq_ignore_ascii_case("bearer") || bare == "midjourney-proxy") {
        return None;
    }
    let secret = headers.get(MJ_SECRET)?.to_str().ok()?.trim();
    if secret.is_empty() {
        return None;
    }
    HeaderValue::from_str(&format!("Bearer {secret}")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).expect("ascii"));
        }
        h
    }

    #[test]
    fn the_secret_is_used_only_when_authorization_says_nothing() {
        let value =
            |h: &HeaderMap| key_from_secret(h).map(|v| v.to_str().expect("ascii").to_owned());
        assert_eq!(
            value(&headers(&[("mj-api-secret", "sk-abc")])).as_deref(),
            Some("Bearer sk-abc")
        );
        assert_eq!(
            value(&headers(&[
                ("authorization", "midjourney-proxy"),
                ("mj-api-secret", "sk-abc")
            ]))
            .as_deref(),
            Some("Bearer sk-abc")
        );
        assert_eq!(
            value(&headers(&[
                ("authorization", "Bearer midjourney-proxy"),
                ("mj-api-secret", "sk-abc")
            ]))
            .as_deref(),
            Some("Bearer sk-abc")
        );
        assert_eq!(
            value(&headers(&[
                ("authorization", "Bearer sk-other"),
                ("mj-api-secret", "sk-abc")
            ])),
            None
        );
        assert_eq!(value(&headers(&[("mj-api-secret", " ")])), None);
    }
}
