//! Outbound HTTP: one shared `reqwest` client (connection pool, TCP_NODELAY), one cached
//! client per proxy URL, since a reqwest client's proxy is fixed at build time, and the relay's
//! direct client on hyper-util for upstream calls no proxy applies to ([`direct`]).
//!
//! Proxies may be `http://`, `https://`, `socks5://` (names resolved locally) or `socks5h://`
//! (names resolved by the proxy) URLs, each optionally with `user:pass@`.
//!
//! Redirects: these clients carry provider keys (`Authorization`, `x-api-key`,
//! `x-goog-api-key`, `api-key`, AWS signatures), and reqwest drops only `Authorization` when a
//! redirect leaves the host. So a redirect is followed only within the first URL's origin
//! (scheme, host and port), up to [`MAX_REDIRECTS`] hops; any other is not followed and its 3xx
//! answer is the upstream's answer (an upstream error). These clients serve admin-configured
//! URLs only (channel base URLs, which may be private: Ollama on localhost); URLs users control
//! go through [`crate::outbound`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dashmap::DashMap;

use crate::outbound::media::MediaFetcher;
use crate::outbound::proxy::validate_proxy;

mod direct;

pub use direct::{DirectClient, DirectError};

/// How long establishing a TCP connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Shared outbound clients. Cheap to clone.
#[derive(Clone)]
pub struct HttpClients {
    /// The direct client every request without a proxy uses.
    direct: reqwest::Client,
    /// proxy URL → client. A `Mutex` (not a snapshot) because it is touched only when a
    /// channel with a proxy is called, and each access is a map lookup or insert.
    proxied: Arc<Mutex<HashMap<String, reqwest::Client>>>,
    /// Upstream URL text → parsed URL ([`HttpClients::url`]).
    urls: Arc<DashMap<String, reqwest::Url, foldhash::fast::RandomState>>,
    /// Google access tokens of Vertex AI keys (shared by the relay and the channel tests).
    google: Arc<crate::google_auth::TokenCache>,
    /// The guarded reader of media URLs clients name ([`crate::outbound::media`]).
    media: MediaFetcher,
    /// The relay's requests without reqwest's layers ([`direct`]); `None` when the
    /// environment names a proxy.
    fast: Option<DirectClient>,
}

/// Most upstream URLs [`HttpClients::url`] keeps parsed (it starts over when full). One per
/// channel and route, plus one per model for Gemini channels.
const URL_CACHE_MAX: usize = 4096;

/// Most redirect hops followed (each within the first URL's origin).
pub const MAX_REDIRECTS: usize = 10;

/// Whether a redirect from `first` (the request's URL) to `next` may be followed with the
/// request's headers: same scheme, host and port.
fn same_origin(first: &reqwest::Url, next: &reqwest::Url) -> bool {
    first.scheme() == next.scheme()
        && first.host_str() == next.host_str()
        && first.port_or_known_default() == next.port_or_known_default()
}

/// Follows redirects only within the origin of the request's URL.
fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        if attempt.previous().len() > MAX_REDIRECTS {
            return attempt.error("too many redirects");
        }
        match attempt.previous().first() {
            Some(first) if same_origin(first, attempt.url()) => attempt.follow(),
            _ => attempt.stop(),
        }
    })
}

/// An upstream request that got no HTTP answer, as the relay reports it: a description (never
/// reqwest's own text, which may name the URL) and the error class (`connect`, `timeout`,
/// `network`).
pub fn no_answer(e: reqwest::Error) -> (String, &'static str) {
    if e.is_connect() {
        DirectError::Connect.described()
    } else if e.is_timeout() {
        ("the upstream request timed out".to_owned(), "timeout")
    } else {
        DirectError::Network.described()
    }
}

/// The `User-Agent` of upstream requests.
const USER_AGENT: &str = concat!("tollgate/", env!("CARGO_PKG_VERSION"));

fn builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .redirect(redirect_policy())
        .tcp_nodelay(true)
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(USER_AGENT)
}

impl HttpClients {
    /// Builds the shared direct client.
    pub fn new() -> Result<HttpClients, reqwest::Error> {
        Ok(HttpClients {
            direct: builder().build()?,
            proxied: Arc::new(Mutex::new(HashMap::new())),
            urls: Arc::new(DashMap::default()),
            google: Arc::default(),
            media: MediaFetcher::new(
                crate::outbound::Guard::new(Arc::default(), false),
                crate::outbound::media::DEFAULT_MAX_MB,
                crate::outbound::media::DEFAULT_TIMEOUT_SECS,
            )?,
            fast: DirectClient::from_env(CONNECT_TIMEOUT, USER_AGENT),
        })
    }

    /// The direct client for a channel whose proxy is `proxy` ("" = none): `None` for a
    /// proxied channel, or when the environment names a proxy ([`direct`]).
    pub fn direct_for(&self, proxy: &str) -> Option<&DirectClient> {
        self.fast.as_ref().filter(|_| proxy.trim().is_empty())
    }

    /// These clients with `media` as the media fetcher.
    #[must_use]
    pub fn with_media(mut self, media: MediaFetcher) -> HttpClients {
        self.media = media;
        self
    }

    /// The guarded reader of the media URLs clients name.
    pub fn media(&self) -> &MediaFetcher {
        &self.media
    }

    /// `url` parsed. Parsing runs IDNA processing of the host, a measurable share of a relayed
    /// request's CPU, and a channel's URLs are the same on every request: they are parsed once.
    pub fn url(&self, url: &str) -> Result<reqwest::Url, String> {
        if let Some(parsed) = self.urls.get(url) {
            return Ok(parsed.clone());
        }
        let parsed = reqwest::Url::parse(url)
            .map_err(|e| format!("the channel's base URL does not make a valid URL: {e}"))?;
        if self.urls.len() >= URL_CACHE_MAX {
            self.urls.clear();
        }
        self.urls.insert(url.to_owned(), parsed.clone());
        Ok(parsed)
    }

    /// The Google access tokens of service-account keys.
    pub fn google_tokens(&self) -> &crate::google_auth::TokenCache {
        &self.google
    }

    /// The shared direct client.
    pub fn direct(&self) -> &reqwest::Client {
        &self.direct
    }

    /// The client for `proxy` ("" = direct), built once per proxy URL.
    pub fn for_proxy(&self, proxy: &str) -> Result<reqwest::Client, String> {
        let proxy = proxy.trim();
        if proxy.is_empty() {
            return Ok(self.direct.clone());
        }
        let url = validate_proxy(proxy).map_err(|e| e.to_string())?;
        let mut cache = self
            .proxied
            .lock()
            .map_err(|_| "the proxy client cache is poisoned".to_owned())?;
        if let Some(client) = cache.get(proxy) {
            return Ok(client.clone());
        }
        let client = reqwest::Proxy::all(url)
            .and_then(|p| builder().proxy(p).build())
            .map_err(|e| format!("cannot use this proxy: {e}"))?;
        cache.insert(proxy.to_owned(), client.clone());
        Ok(client)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_urls_are_parsed_once_and_bad_ones_refused() {
        let clients = HttpClients::new().unwrap_or_else(|e| panic!("client: {e}"));
        let url = clients
            .url("https://bücher.example/v1/chat/completions")
            .unwrap_or_else(|e| panic!("url: {e}"));
        assert_eq!(url.host_str(), Some("xn--bcher-kva.example"));
        assert_eq!(url.path(), "/v1/chat/completions");
        assert_eq!(clients.urls.len(), 1);
        let again = clients
            .url("https://bücher.example/v1/chat/completions")
            .unwrap_or_else(|e| panic!("url: {e}"));
        assert_eq!(again, url);
        assert_eq!(clients.urls.len(), 1, "served from the cache");
        assert!(clients.url("not a url/v1/chat/completions").is_err());
        assert_eq!(clients.urls.len(), 1, "failures are not cached");
    }

    #[test]
    fn redirects_are_followed_only_within_the_origin() {
        let url = |u: &str| reqwest::Url::parse(u).expect("url");
        let first = url("https://api.example.com/v1/chat/completions");
        assert!(same_origin(&first, &url("https://api.example.com/v2/x")));
        assert!(same_origin(
            &first,
            &url("https://api.example.com:443/v2/x")
        ));
        assert!(!same_origin(
            &first,
            &url("http://api.example.com/v1/chat/completions")
        ));
        assert!(!same_origin(
            &first,
            &url("https://api.example.com:8443/v1")
        ));
        assert!(!same_origin(&first, &url("https://evil.example/v1")));
        assert!(!same_origin(&first, &url("https://example.com/v1")));
        let local = url("http://127.0.0.1:11434/v1/chat/completions");
        assert!(!same_origin(
            &local,
            &url("http://127.0.0.1:9/v1/chat/completions")
        ));
    }

    #[test]
    fn proxied_clients_are_cached() {
        let clients = HttpClients::new().expect("client");
        assert!(clients.for_proxy("").is_ok());
        assert!(clients.for_proxy("http://127.0.0.1:9").is_ok());
        assert_eq!(clients.proxied.lock().expect("lock").len(), 1);
        assert!(clients.for_proxy("http://127.0.0.1:9").is_ok());
        assert_eq!(clients.proxied.lock().expect("lock").len(), 1, "cached");
    }
}
