//! Baidu Qianfan v1 (type 15): ERNIE chat at
//! `{base}/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/{endpoint}?access_token=…`, the access token
//! exchanged for the key `APIKey|SecretKey` (the incumbent's format) with Baidu's OAuth client
//! credentials grant — `POST {base}/oauth/2.0/token?grant_type=client_credentials&client_id=
//! {APIKey}&client_secret={SecretKey}`, which answers `{"access_token", "expires_in"}` (30
//! days) or `{"error", "error_description"}`
//! (https://cloud.baidu.com/doc/WENXINWORKSHOP/s/Ilkkrb0i5). The token is cached per key and
//! base URL until shortly before it expires, one exchange in flight per key (the outbound
//! clients' token cache, which Vertex AI's tokens share under ids of their own).
//!
//! The endpoint is the model's: `completions_pro` for ERNIE-4.0-8K, `completions` for
//! ERNIE-3.5-8K, `ernie_speed` for ERNIE-Speed-8K as Qianfan's pages name them, else the model
//! name in lower case (Qianfan's other endpoints are their models' names: `ernie-lite-8k`, …);
//! a channel's model mapping may name an endpoint directly.

use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderValue, header};
use sha2::{Digest, Sha256};
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use super::native::{self, Native};
use super::{Adaptor, AuthFailure, Authorizing, Credential};
use crate::channel_types::effective_base_url;
use crate::error::RelayError;
use crate::google_auth::{Fresh, TokenError};
use crate::relay::wire::{Wire, baidu};
use crate::upstream::HttpClients;

/// Baidu Qianfan v1's adaptor: OpenAI chat bodies in, converted into ERNIE's and sent with the
/// key's access token ([`Native::Baidu`] converts the answers back); chat is its only route.
pub struct Baidu;

/// The chat endpoint of `model`.
pub fn endpoint(model: &str) -> String {
    match model {
        "ERNIE-4.0-8K" | "ERNIE-4.0" => "completions_pro".into(),
        "ERNIE-3.5-8K" => "completions".into(),
        "ERNIE-Speed-8K" => "ernie_speed".into(),
        other => other.to_lowercase(),
    }
}

/// `{base}/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/{endpoint}` of `model`.
fn chat_url(channel: &RoutedChannel, model: &str) -> String {
    let c = &channel.channel;
    format!(
        "{}/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/{}",
        effective_base_url(c.channel_type, &c.base_url),
        super::segment(&endpoint(model))
    )
}

/// Splits `APIKey|SecretKey`.
pub fn split(line: &str) -> Option<(&str, &str)> {
    let (id, secret) = line.trim().split_once('|')?;
    let (id, secret) = (id.trim(), secret.trim());
    (!id.is_empty() && !secret.is_empty() && !secret.contains('|')).then_some((id, secret))
}

/// The token cache's id of `key` at `base` (Vertex AI's ids are hashes of service-account
/// keys, never of this prefix).
fn cache_id(base: &str, key: &str) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(b"baidu-qianfan-v1\0");
    hash.update(base.as_bytes());
    hash.update(b"\0");
    hash.update(key.trim().as_bytes());
    hash.finalize().into()
}

/// The token endpoint's answer (an error has `error` and no `access_token`).
#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct Grant {
    access_token: String,
    expires_in: u64,
    error: String,
    error_description: String,
}

/// Exchanges `api_key` and `secret` for an access token at `base`.
async fn exchange(
    client: reqwest::Client,
    base: String,
    api_key: &str,
    secret: &str,
) -> Result<Fresh, TokenError> {
    let url = format!("{base}/oauth/2.0/token");
    let send = client
        .post(&url)
        .query(&[
            ("grant_type", "client_credentials"),
            ("client_id", api_key),
            ("client_secret", secret),
        ])
        .header(header::CONTENT_TYPE, "application/json")
        .send();
    let resp = tokio::time::timeout(Duration::from_secs(30), send)
        .await
        .map_err(|_| TokenError::Unreachable("the token endpoint did not answer in time".into()))?
        .map_err(|_| TokenError::Unreachable("the token request failed".into()))?;
    let status = resp.status().as_u16();
    let grant: Grant = resp
        .json()
        .await
        .map_err(|_| TokenError::Unreachable("the token endpoint's answer is not JSON".into()))?;
    if grant.access_token.is_empty() {
        let message = format!("{} {}", grant.error, grant.error_description)
            .trim()
            .to_owned();
        return Err(TokenError::Rejected {
            // Baidu refuses an unknown key or a wrong secret with `invalid_client`.
            status: if status < 300 { 401 } else { status },
            message: if message.is_empty() {
                format!("HTTP {status}")
            } else {
                message
            },
        });
    }
    Ok(Fresh {
        token: grant.access_token,
        expires_in: grant.expires_in,
    })
}

/// The access token of `key` for `channel`, from the cache or the token endpoint.
async fn authorize<'k>(
    http: &HttpClients,
    channel: &RoutedChannel,
    key: &'k str,
) -> Result<Credential<'k>, AuthFailure> {
    let (api_key, secret) = split(key).ok_or_else(|| AuthFailure {
        status: Some(401),
        message: "a Baidu Qianfan key is APIKey|SecretKey".into(),
    })?;
    let c = &channel.channel;
    let base = effective_base_url(c.channel_type, &c.base_url);
    let client = http.for_proxy(&c.proxy).map_err(|message| AuthFailure {
        status: None,
        message,
    })?;
    let id = cache_id(&base, key);
    let token = http
        .google_tokens()
        .get_or_fetch(id, || exchange(client, base, api_key, secret))
        .await
        .map_err(|e| AuthFailure {
            status: match &e {
                TokenError::Rejected { status, .. } if *status < 500 => Some(401),
                TokenError::Rejected { status, .. } => Some(*status),
                TokenError::BadKey(_) => Some(401),
                TokenError::Unreachable(_) => None,
            },
            message: format!("Baidu Qianfan access token: {e}"),
        })?;
    Ok(Credential::Token(token))
}

/// Baidu's codes for an access token refused before it expired: invalid or no longer valid
/// (110), expired (111) — the key itself may be fine, so the token is exchanged anew.
const TOKEN_REFUSED: [&str; 2] = ["110", "111"];

/// Whether the OpenAI-shaped error `body` is [`TOKEN_REFUSED`].
fn token_refused(body: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(body).is_ok_and(|v| {
        v["error"]["code"]
            .as_str()
            .is_some_and(|code| TOKEN_REFUSED.contains(&code))
    })
}

impl Adaptor for Baidu {
    fn name(&self) -> &'static str {
        "baidu"
    }

    fn own_api(&self) -> bool {
        true
    }

    fn own_chat_url(&self, channel: &RoutedChannel, model: &str) -> Option<String> {
        Some(chat_url(channel, model))
    }

    fn authorize<'k, 'f>(
        &self,
        http: &'f HttpClients,
        channel: &'f RoutedChannel,
        key: &'k str,
    ) -> Authorizing<'k, 'f>
    where
        'k: 'f,
    {
        Authorizing::Fetch(Box::pin(authorize(http, channel, key)))
    }

    fn builds_own_requests(&self) -> bool {
        true
    }

    fn request(
        &self,
        http: &HttpClients,
        channel: &RoutedChannel,
        _wire: Wire,
        url: String,
        key: &Credential<'_>,
        _headers: &[(&'static str, HeaderValue)],
        body: Bytes,
    ) -> Result<reqwest::RequestBuilder, RelayError> {
        let Credential::Token(token) = key else {
            return Err(RelayError::Internal(
                "a Baidu Qianfan request needs its access token".into(),
            ));
        };
        let c = &channel.channel;
        let client = http.for_proxy(&c.proxy).map_err(RelayError::Unreachable)?;
        let mut url = http.url(&url).map_err(RelayError::Unreachable)?;
        url.query_pairs_mut().append_pair("access_token", token);
        let (head, hub) = native::read(&body)?;
        baidu::check(&hub).map_err(|e| RelayError::BadRequest(e.0))?;
        let payload = native::to_body(&baidu::request_from_hub(&hub, head.stream))?;
        Ok(client
            .post(url)
            .header(header::CONTENT_TYPE, "application/json")
            .body(payload))
    }

    fn native(&self) -> Option<Native> {
        Some(Native::Baidu)
    }

    /// A token Baidu refused (110, 111) is dropped from the cache: the next request exchanges
    /// the key again instead of sending the same token (or condemning the key).
    fn refused(
        &self,
        http: &HttpClients,
        channel: &RoutedChannel,
        key: &str,
        credential: &Credential<'_>,
        body: &str,
    ) {
        if let Credential::Token(token) = credential
            && token_refused(body)
        {
            let c = &channel.channel;
            let base = effective_base_url(c.channel_type, &c.base_url);
            http.google_tokens().forget(cache_id(&base, key), token);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_api_key_and_secret_key() {
        assert_eq!(split(" ak | sk "), Some(("ak", "sk")));
        for bad in ["ak", "ak|", "|sk", "a|b|c", ""] {
            assert_eq!(split(bad), None, "{bad}");
        }
    }

    #[test]
    fn endpoints_are_the_models() {
        assert_eq!(endpoint("ERNIE-4.0-8K"), "completions_pro");
        assert_eq!(endpoint("ERNIE-3.5-8K"), "completions");
        assert_eq!(endpoint("ERNIE-Speed-8K"), "ernie_speed");
        assert_eq!(endpoint("ERNIE-Lite-8K"), "ernie-lite-8k");
    }

    #[test]
    fn only_the_token_codes_drop_the_token() {
        assert!(token_refused(r#"{"error":{"code":"110","message":"m"}}"#));
        assert!(token_refused(r#"{"error":{"code":"111"}}"#));
        assert!(!token_refused(r#"{"error":{"code":"17"}}"#));
        assert!(!token_refused("not json"));
    }

    #[test]
    fn cache_ids_differ_by_key_and_base() {
        assert_ne!(cache_id("https://a", "k|s"), cache_id("https://b", "k|s"));
        assert_ne!(cache_id("https://a", "k|s"), cache_id("https://a", "k|t"));
    }
}
