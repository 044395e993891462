//! Zhipu BigModel (ChatGLM 16, GLM-4V 26): the `id.secret` API key signed into the short-lived
//! JWT the v4 API takes as its bearer token
//! (<https://open.bigmodel.cn/dev/api/http-call/http-auth>): header
//! `{"alg":"HS256","sign_type":"SIGN"}`, payload `{"api_key": id, "exp", "timestamp"}` in
//! milliseconds, HMAC-SHA256 with the secret. The bodies are OpenAI's, under
//! `{base}/api/paas/v4` (the row's prefix in `channel_types::table`).
//!
//! A token is signed for every request (one HMAC, a few microseconds), so no cache or clock
//! state is kept; it lives [`TOKEN_TTL_MS`], far beyond a request's sending.

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::Serialize;
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use super::{Adaptor, AuthFailure, Authorizing, Credential, Direct};
use crate::error::RelayError;
use crate::relay::wire::Wire;
use crate::upstream::HttpClients;

/// How long a signed token is valid, in milliseconds (Zhipu's SDK signs for 3 minutes).
pub const TOKEN_TTL_MS: i64 = 180_000;

/// The payload Zhipu documents, in its field order.
#[derive(Serialize)]
struct Claims<'a> {
    api_key: &'a str,
    exp: i64,
    timestamp: i64,
}

/// Signs the key `id.secret` into a bearer token at `now_ms` (Unix milliseconds). The error
/// never holds any part of the key.
pub fn token(key: &str, now_ms: i64) -> Result<String, String> {
    let (id, secret) = key
        .trim()
        .split_once('.')
        .filter(|(id, secret)| !id.is_empty() && !secret.is_empty() && !secret.contains('.'))
        .ok_or("a Zhipu API key is id.secret (two parts separated by a dot)")?;
    let mut header = Header::new(Algorithm::HS256);
    header.typ = None;
    header.extras.insert("sign_type", "SIGN");
    let claims = Claims {
        api_key: id,
        exp: now_ms.saturating_add(TOKEN_TTL_MS),
        timestamp: now_ms,
    };
    jsonwebtoken::encode(
        &header,
        &claims,
        &EncodingKey::from_secret(secret.as_bytes()),
    )
    .map_err(|e| format!("signing the Zhipu token failed: {e}"))
}

/// The Zhipu adaptor: the direct transport, except that the key is checked when it is made
/// usable (a malformed one fails like a refused key, before anything is sent) and goes upstream
/// as a freshly signed token.
pub struct Zhipu;

impl Adaptor for Zhipu {
    fn name(&self) -> &'static str {
        "zhipu"
    }

    fn authorize<'k, 'f>(
        &self,
        _http: &'f HttpClients,
        _channel: &'f RoutedChannel,
        key: &'k str,
    ) -> Authorizing<'k, 'f>
    where
        'k: 'f,
    {
        Authorizing::Ready(
            token(key, 0)
                .map(|_| Credential::Key(key))
                .map_err(|message| AuthFailure {
                    status: Some(401),
                    message,
                }),
        )
    }

    fn authenticate(
        &self,
        req: reqwest::RequestBuilder,
        organization: &str,
        wire: Wire,
        credential: &Credential<'_>,
    ) -> Result<reqwest::RequestBuilder, RelayError> {
        match credential {
            Credential::Key(key) => token(key, now_ms())
                .map(|jwt| req.bearer_auth(jwt))
                .map_err(RelayError::BadRequest),
            other => Direct.authenticate(req, organization, wire, other),
        }
    }
}

/// Unix milliseconds now.
pub fn now_ms() -> i64 {
    i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis()),
    )
    .unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use jsonwebtoken::{DecodingKey, Validation};

    use super::*;

    fn part(token: &str, i: usize) -> serde_json::Value {
        let segment = token.split('.').nth(i).unwrap_or_default();
        let bytes = URL_SAFE_NO_PAD.decode(segment).unwrap_or_default();
        serde_json::from_slice(&bytes).unwrap_or_default()
    }

    #[test]
    fn the_token_has_zhipus_documented_shape() {
        let now = 1_700_000_000_000;
        let token = token("4b0a2c.Secr3tPart", now).unwrap();
        // Header and payload byte for byte as the auth page shows them.
        let segments: Vec<&str> = token.split('.').collect();
        assert_eq!(segments.len(), 3);
        assert_eq!(
            URL_SAFE_NO_PAD.decode(segments[0]).unwrap(),
            br#"{"alg":"HS256","sign_type":"SIGN"}"#
        );
        assert_eq!(
            URL_SAFE_NO_PAD.decode(segments[1]).unwrap(),
            br#"{"api_key":"4b0a2c","exp":1700000180000,"timestamp":1700000000000}"#
        );
        assert_eq!(part(&token, 0)["sign_type"], "SIGN");
        // Signed with the secret: HS256 verifies with it and not with another.
        let mut check = Validation::new(Algorithm::HS256);
        check.validate_exp = false;
        check.required_spec_claims.clear();
        let verify = |secret: &[u8]| {
            jsonwebtoken::decode::<serde_json::Value>(
                &token,
                &DecodingKey::from_secret(secret),
                &check,
            )
        };
        assert_eq!(verify(b"Secr3tPart").unwrap().claims["api_key"], "4b0a2c");
        assert!(verify(b"another").is_err());
    }

    #[test]
    fn a_key_without_a_secret_is_refused_without_showing_it() {
        for bad in ["nodot", ".secretonly", "id.", "a.b.c"] {
            let err = token(bad, 0).unwrap_err();
            assert!(
                !err.contains("secretonly") && !err.contains("nodot"),
                "{err}"
            );
        }
    }
}
