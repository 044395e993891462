//! Google service-account keys made into OAuth2 access tokens, for Vertex AI channels: the
//! signed-JWT grant of "Using OAuth 2.0 for Server to Server Applications"
//! (https://developers.google.com/identity/protocols/oauth2/service-account#authorizingrequests):
//! a JWT signed with the key's RSA private key (RS256; `iss` the key's `client_email`, `scope`,
//! `aud` the key's `token_uri`, `iat`, `exp` at most an hour later) is posted to `token_uri` as
//! `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<JWT>`, which answers
//! `{"access_token", "expires_in", "token_type": "Bearer"}`.
//!
//! [`TokenCache`] keeps each key's token until shortly before it expires and makes concurrent
//! requests share one exchange: the first takes the key's lock and fetches, the others wait on
//! the lock and find the fresh token. Neither keys nor tokens appear in errors or logs.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dashmap::DashMap;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The scope asked for: Vertex AI is under cloud-platform.
pub const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
/// `token_uri` of keys that do not name one.
pub const DEFAULT_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
/// How long an assertion is valid (the grant's maximum).
const ASSERTION_LIFETIME: i64 = 3600;
/// A token is refreshed this long before it expires.
const REFRESH_MARGIN: Duration = Duration::from_secs(300);

/// The fields of a service-account JSON key that the grant uses. Holds the private key: it has
/// no `Debug`.
#[derive(Clone, Deserialize)]
pub struct ServiceAccountKey {
    /// The Google Cloud project.
    pub project_id: String,
    /// The id of the key pair (the JWT's `kid`).
    #[serde(default)]
    pub private_key_id: String,
    /// The RSA private key, PEM.
    pub private_key: String,
    /// The service account (the JWT's `iss`).
    pub client_email: String,
    /// Where the grant is posted (the JWT's `aud`).
    #[serde(default = "default_token_uri")]
    pub token_uri: String,
}

fn default_token_uri() -> String {
    DEFAULT_TOKEN_URI.to_owned()
}

impl ServiceAccountKey {
    /// Parses one service-account JSON key. The error never quotes the key.
    pub fn parse(text: &str) -> Result<ServiceAccountKey, TokenError> {
        let key: ServiceAccountKey = serde_json::from_str(text.trim()).map_err(|_| {
            TokenError::BadKey(
                "the key is not a service-account JSON key (it needs project_id, private_key \
                 and client_email)"
                    .into(),
            )
        })?;
        if key.project_id.is_empty() || key.client_email.is_empty() || key.token_uri.is_empty() {
            return Err(TokenError::BadKey(
                "the service-account key has an empty project_id, client_email or token_uri".into(),
            ));
        }
        Ok(key)
    }

    /// The cache identity of this key: a digest, so the cache holds no second copy of it.
    fn id(&self) -> [u8; 32] {
        let mut hash = Sha256::new();
        for part in [
            &self.client_email,
            &self.private_key_id,
            &self.token_uri,
            &self.private_key,
        ] {
            hash.update(part.as_bytes());
            hash.update([0]);
        }
        hash.finalize().into()
    }
}

/// The claims of the grant's JWT.
#[derive(Serialize)]
struct Claims<'a> {
    iss: &'a str,
    scope: &'a str,
    aud: &'a str,
    iat: i64,
    exp: i64,
}

/// Why no token could be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// The key cannot be used (not a service-account key, or its private key is not RSA PEM).
    #[error("{0}")]
    BadKey(String),
    /// The token endpoint refused the grant (its status and OAuth error).
    #[error("the token endpoint refused the key ({status}): {message}")]
    Rejected {
        /// HTTP status.
        status: u16,
        /// `error` and `error_description` of the answer.
        message: String,
    },
    /// The token endpoint did not answer usably.
    #[error("{0}")]
    Unreachable(String),
}

/// A token and when to stop using it.
struct Cached {
    token: Arc<str>,
    refresh_at: Instant,
}

/// A fresh token from the endpoint.
pub struct Fresh {
    /// The access token.
    pub token: String,
    /// Its lifetime in seconds.
    pub expires_in: u64,
}

/// Access tokens by key, each refreshed [`REFRESH_MARGIN`] before it expires; one exchange in
/// flight per key.
#[derive(Default)]
pub struct TokenCache {
    slots: DashMap<[u8; 32], Arc<tokio::sync::Mutex<Option<Cached>>>>,
}

impl TokenCache {
    /// The access token of `key`, exchanged through `client` when none is cached or the cached
    /// one is about to expire.
    pub async fn token(
        &self,
        client: &reqwest::Client,
        key: &ServiceAccountKey,
    ) -> Result<Arc<str>, TokenError> {
        self.get_or_fetch(key.id(), || exchange(client, key)).await
    }

    /// The cached token of `id`, else the one `fetch` gets (run by one caller at a time per id;
    /// the others wait and take its result from the cache).
    pub async fn get_or_fetch<F, Fut>(&self, id: [u8; 32], fetch: F) -> Result<Arc<str>, TokenError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Fresh, TokenError>>,
    {
        let slot = Arc::clone(self.slots.entry(id).or_default().value());
        let mut cached = slot.lock().await;
        if let Some(c) = cached.as_ref()
            && Instant::now() < c.refresh_at
        {
            return Ok(Arc::clone(&c.token));
        }
        let fresh = fetch().await?;
        let lifetime = Duration::from_secs(fresh.expires_in);
        // A short-lived token is used for half its life rather than not at all.
        let usable = lifetime.checked_sub(REFRESH_MARGIN).unwrap_or(lifetime / 2);
        let token: Arc<str> = Arc::from(fresh.token);
        *cached = Some(Cached {
            token: Arc::clone(&token),
            refresh_at: Instant::now() + usable,
        });
        Ok(token)
    }

    /// Drops `id`'s cached token when it is `token` (one the upstream refused before it
    /// expired), so the next request exchanges the key again; a token fetched since, or one
    /// being fetched, is kept.
    pub fn forget(&self, id: [u8; 32], token: &str) {
        self.slots.remove_if(&id, |_, slot| {
            slot.try_lock()
                .is_ok_and(|cached| cached.as_ref().is_some_and(|c| &*c.token == token))
        });
    }
}

/// The grant's assertion for `key`, issued at `now` (Unix seconds). RSA signing is done off the
/// async workers by the caller.
pub fn assertion(key: &ServiceAccountKey, now: i64) -> Result<String, TokenError> {
    let encoding = jsonwebtoken::EncodingKey::from_rsa_pem(key.private_key.as_bytes())
        .map_err(|_| TokenError::BadKey("the key's private_key is not an RSA PEM key".into()))?;
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    if !key.private_key_id.is_empty() {
        header.kid = Some(key.private_key_id.clone());
    }
    let claims = Claims {
        iss: &key.client_email,
        scope: SCOPE,
        aud: &key.token_uri,
        iat: now,
        exp: now.saturating_add(ASSERTION_LIFETIME),
    };
    jsonwebtoken::encode(&header, &claims, &encoding)
        .map_err(|_| TokenError::BadKey("the key's private_key cannot sign".into()))
}

/// The token endpoint's answer.
#[derive(Deserialize)]
struct Grant {
    access_token: String,
    #[serde(default)]
    expires_in: u64,
}

/// The token endpoint's error (RFC 6749 §5.2).
#[derive(Deserialize)]
struct GrantError {
    #[serde(default)]
    error: String,
    #[serde(default)]
    error_description: String,
}

/// Exchanges a fresh assertion of `key` for a token at the key's `token_uri`.
async fn exchange(client: &reqwest::Client, key: &ServiceAccountKey) -> Result<Fresh, TokenError> {
    let now = crate::clock::now_unix();
    let signer = key.clone();
    let jwt = tokio::task::spawn_blocking(move || assertion(&signer, now))
        .await
        .map_err(|_| TokenError::Unreachable("signing the token request failed".into()))??;
    let body = form_urlencoded::Serializer::new(String::new())
        .append_pair("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer")
        .append_pair("assertion", &jwt)
        .finish();
    let resp = tokio::time::timeout(
        Duration::from_secs(30),
        client
            .post(&key.token_uri)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send(),
    )
    .await
    .map_err(|_| TokenError::Unreachable("the token endpoint did not answer in time".into()))?
    .map_err(|e| {
        TokenError::Unreachable(if e.is_connect() {
            "could not connect to the token endpoint".into()
        } else {
            "the token request failed".into()
        })
    })?;
    let status = resp.status();
    let text = resp
        .text()
        .await
        .map_err(|_| TokenError::Unreachable("the token endpoint's answer was cut off".into()))?;
    if !status.is_success() {
        let message = serde_json::from_str::<GrantError>(&text)
            .ok()
            .map(|e| {
                format!("{} {}", e.error, e.error_description)
                    .trim()
                    .to_owned()
            })
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| format!("HTTP {}", status.as_u16()));
        return Err(TokenError::Rejected {
            status: status.as_u16(),
            message,
        });
    }
    let grant: Grant = serde_json::from_str(&text).map_err(|_| {
        TokenError::Unreachable("the token endpoint's answer has no access_token".into())
    })?;
    Ok(Fresh {
        token: grant.access_token,
        expires_in: grant.expires_in,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn a_refused_token_is_forgotten_and_another_one_is_kept() {
        let cache = TokenCache::default();
        let fetches = AtomicUsize::new(0);
        let fetch = || async {
            let n = fetches.fetch_add(1, Ordering::SeqCst);
            Ok(Fresh {
                token: format!("t{n}"),
                expires_in: 3600,
            })
        };
        assert_eq!(&*cache.get_or_fetch([1; 32], fetch).await.unwrap(), "t0");
        // Another token than the cached one: kept.
        cache.forget([1; 32], "t-old");
        assert_eq!(&*cache.get_or_fetch([1; 32], fetch).await.unwrap(), "t0");
        cache.forget([1; 32], "t0");
        assert_eq!(&*cache.get_or_fetch([1; 32], fetch).await.unwrap(), "t1");
        assert_eq!(fetches.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn concurrent_callers_share_one_fetch_and_the_cache_serves_later_ones() {
        let cache = Arc::new(TokenCache::default());
        let fetches = Arc::new(AtomicUsize::new(0));
        let release = Arc::new(tokio::sync::Notify::new());
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let (cache, fetches, release) = (
                Arc::clone(&cache),
                Arc::clone(&fetches),
                Arc::clone(&release),
            );
            tasks.push(tokio::spawn(async move {
                cache
                    .get_or_fetch([7; 32], || async move {
                        fetches.fetch_add(1, Ordering::SeqCst);
                        release.notified().await;
                        Ok(Fresh {
                            token: "tok-1".into(),
                            expires_in: 3600,
                        })
                    })
                    .await
            }));
        }
        // Wake whichever caller fetches (notify_one stores a permit if it is not waiting yet).
        release.notify_one();
        for task in tasks {
            let token = task.await.unwrap_or_else(|e| panic!("join: {e}"));
            assert_eq!(token.as_deref().ok(), Some("tok-1"));
        }
        assert_eq!(fetches.load(Ordering::SeqCst), 1, "one exchange for all");
        // Another key fetches on its own.
        let other = cache
            .get_or_fetch([8; 32], || async {
                Ok(Fresh {
                    token: "tok-2".into(),
                    expires_in: 3600,
                })
            })
            .await;
        assert_eq!(other.as_deref().ok(), Some("tok-2"));
    }

    #[tokio::test]
    async fn a_token_near_its_expiry_is_fetched_again_and_failures_are_not_cached() {
        let cache = TokenCache::default();
        let short = cache
            .get_or_fetch([1; 32], || async {
                Ok(Fresh {
                    token: "short".into(),
                    expires_in: 0,
                })
            })
            .await;
        assert_eq!(short.as_deref().ok(), Some("short"));
        let failed = cache
            .get_or_fetch([1; 32], || async {
                Err(TokenError::Rejected {
                    status: 400,
                    message: "invalid_grant".into(),
                })
            })
            .await;
        assert!(failed.is_err(), "an expired token is not served");
        let again = cache
            .get_or_fetch([1; 32], || async {
                Ok(Fresh {
                    token: "new".into(),
                    expires_in: 3600,
                })
            })
            .await;
        assert_eq!(again.as_deref().ok(), Some("new"));
    }

    #[test]
    fn keys_parse_without_quoting_them_in_errors() {
        let bad = ServiceAccountKey::parse(r#"{"private_key": 12345678}"#);
        let Err(TokenError::BadKey(message)) = bad else {
            panic!("refused");
        };
        assert!(!message.contains("12345678"));
        let ok = ServiceAccountKey::parse(
            r#"{"type":"service_account","project_id":"p","private_key":"k","client_email":"a@b"}"#,
        );
        assert_eq!(
            ok.map(|k| k.token_uri).ok().as_deref(),
            Some(DEFAULT_TOKEN_URI)
        );
    }
}
