//! The media fetcher: reads an image or document a client named by URL, for upstreams that
//! take media only as bytes (Gemini's `inline_data`, Bedrock Converse's image bytes, Claude on
//! Bedrock or Vertex). Guarded ([`super::Guard`]: public addresses only, pinned, at most
//! [`MAX_REDIRECTS`] hops each checked), at most `--media-fetch-max-mb` bytes (default
//! [`DEFAULT_MAX_MB`]) and `--media-fetch-timeout` seconds in all (default
//! [`DEFAULT_TIMEOUT_SECS`]).
//!
//! With the ImageReadProxy option set (an http(s) or socks5 proxy URL, the incumbent's
//! behaviour), reads go through that proxy. The proxy resolves the name then, so the check is
//! made on the names' addresses here first (address literals and every name; the proxy's own
//! view of DNS is the operator's to trust); a proxy that fails is an error, never a silent
//! direct read. Through the proxy a redirect is not followed (its target could not be checked
//! the same way): a 3xx is an error naming it.
//!
//! On both paths the answer's `Content-Type` must be one the caller accepts (what the target
//! upstream takes for that part, e.g. PNG, JPEG, GIF or WebP for an image, PDF for a
//! document): an HTML error page or a proxy's banner is never sent upstream as an image.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use reqwest::Url;

use super::{Guard, Refusal, refusal_of};

/// Default size limit of one fetched medium, in MiB.
pub const DEFAULT_MAX_MB: u64 = 20;
/// Default time limit of one fetch (connect, redirects and body), in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;
/// Most redirect hops a media URL may take.
pub const MAX_REDIRECTS: usize = 3;

/// A fetched medium.
#[derive(Debug, Clone)]
pub struct Media {
    /// Its MIME type (the answer's `Content-Type`, else guessed from the path).
    pub mime: String,
    /// The bytes.
    pub bytes: Bytes,
}

/// Why a fetch failed (the message completes "image URL … ").
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The URL or an address it resolves to is not allowed.
    #[error("refused: {0}")]
    Refused(Refusal),
    /// The medium is larger than the limit.
    #[error("too large (more than {0} MiB)")]
    TooLarge(u64),
    /// The fetch took longer than the limit.
    #[error("timed out (after {0} s)")]
    TimedOut(u64),
    /// The server answered with an error status.
    #[error("answered HTTP {0}")]
    Status(u16),
    /// The server answered a redirect, which is not followed through the image read proxy.
    #[error(
        "answered a redirect (HTTP {0}), which is not followed through the image read proxy: \
         give the final URL"
    )]
    Redirected(u16),
    /// The answer's `Content-Type` is not one the upstream takes for the part.
    #[error("answered Content-Type {got}, which the upstream does not take here (only {accepted})")]
    Type {
        /// The answer's type (`none` when it gave none).
        got: String,
        /// The accepted types, comma-separated.
        accepted: String,
    },
    /// The URL does not parse.
    #[error("is not a valid URL")]
    BadUrl,
    /// Connecting or reading failed.
    #[error("could not be read: {0}")]
    Failed(String),
}

/// The media fetcher. Cheap to clone.
#[derive(Clone)]
pub struct MediaFetcher {
    guard: Guard,
    client: reqwest::Client,
    /// (proxy URL, its client), rebuilt when ImageReadProxy changes.
    proxied: Arc<Mutex<Option<(String, reqwest::Client)>>>,
    max_bytes: u64,
    timeout: Duration,
}

impl MediaFetcher {
    /// A fetcher under `guard` with these limits.
    pub fn new(
        guard: Guard,
        max_mb: u64,
        timeout_secs: u64,
    ) -> Result<MediaFetcher, reqwest::Error> {
        let client = guard.client_builder(MAX_REDIRECTS).build()?;
        Ok(MediaFetcher {
            guard,
            client,
            proxied: Arc::default(),
            max_bytes: max_mb.saturating_mul(1024 * 1024),
            timeout: Duration::from_secs(timeout_secs),
        })
    }

    /// The size limit in MiB.
    fn max_mb(&self) -> u64 {
        self.max_bytes / (1024 * 1024)
    }

    /// The client for `proxy` ("" = the guarded direct client).
    fn client_for(&self, proxy: &str) -> Result<reqwest::Client, FetchError> {
        if proxy.is_empty() {
            return Ok(self.client.clone());
        }
        let mut cached = self
            .proxied
            .lock()
            .map_err(|_| FetchError::Failed("the proxy client cache is poisoned".into()))?;
        if let Some((url, client)) = cached.as_ref()
            && url == proxy
        {
            return Ok(client.clone());
        }
        let url = super::proxy::validate_proxy(proxy)
            .map_err(|e| FetchError::Failed(format!("the image read proxy: {e}")))?;
        // The proxy is the operator's and may be on a private network: it is reached with the
        // ordinary resolver; what is checked is the medium's URL (see the module header).
        let client = reqwest::Proxy::all(url)
            .and_then(|p| {
                reqwest::Client::builder()
                    .proxy(p)
                    .redirect(reqwest::redirect::Policy::none())
                    .user_agent(concat!("tollgate/", env!("CARGO_PKG_VERSION")))
                    .build()
            })
            .map_err(|e| FetchError::Failed(format!("the image read proxy: {e}")))?;
        *cached = Some((proxy.to_owned(), client.clone()));
        Ok(client)
    }

    /// Reads `url`, through `proxy` when it is not empty (the ImageReadProxy option), within
    /// the time limit; the answer's `Content-Type` must be one of `accepts` (MIME essences).
    pub async fn fetch(
        &self,
        url: &str,
        proxy: &str,
        accepts: &[&str],
    ) -> Result<Media, FetchError> {
        let read = self.fetch_unbounded(url, proxy, accepts);
        match tokio::time::timeout(self.timeout, read).await {
            Ok(result) => result,
            Err(_) => Err(FetchError::TimedOut(self.timeout.as_secs())),
        }
    }

    /// [`MediaFetcher::fetch`] without its time limit.
    async fn fetch_unbounded(
        &self,
        url: &str,
        proxy: &str,
        accepts: &[&str],
    ) -> Result<Media, FetchError> {
        let url = Url::parse(url).map_err(|_| FetchError::BadUrl)?;
        self.guard.check_url(&url).map_err(FetchError::Refused)?;
        let proxy = proxy.trim();
        if !proxy.is_empty()
            && let Some(host) = url.host_str()
            && host.parse::<std::net::IpAddr>().is_err()
            && !host.starts_with('[')
            && let Err(e) = self.guard.resolver().lookup(host).await
        {
            return Err(match e.downcast::<Refusal>() {
                Ok(refusal) => FetchError::Refused(*refusal),
                Err(e) => FetchError::Failed(e.to_string()),
            });
        }
        let client = self.client_for(proxy)?;
        self.read(&client, url, accepts).await
    }

    /// GET `url` and read at most the size limit, if its type is one of `accepts`.
    async fn read(
        &self,
        client: &reqwest::Client,
        url: Url,
        accepts: &[&str],
    ) -> Result<Media, FetchError> {
        let mut resp = client.get(url).send().await.map_err(|e| self.failed(&e))?;
        let status = resp.status();
        if status.is_redirection() {
            return Err(FetchError::Redirected(status.as_u16()));
        }
        if !status.is_success() {
            return Err(FetchError::Status(status.as_u16()));
        }
        if resp.content_length().is_some_and(|n| n > self.max_bytes) {
            return Err(FetchError::TooLarge(self.max_mb()));
        }
        let mime = accepted_type(resp.headers(), accepts)?;
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| self.failed(&e))? {
            if (body.len() as u64).saturating_add(chunk.len() as u64) > self.max_bytes {
                return Err(FetchError::TooLarge(self.max_mb()));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Media {
            mime,
            bytes: Bytes::from(body),
        })
    }

    /// A reqwest failure as a [`FetchError`].
    fn failed(&self, e: &reqwest::Error) -> FetchError {
        if let Some(refusal) = refusal_of(e) {
            FetchError::Refused(refusal)
        } else if e.is_timeout() {
            FetchError::TimedOut(self.timeout.as_secs())
        } else {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                text = format!("{text}: {s}");
                source = s.source();
            }
            FetchError::Failed(text)
        }
    }
}

/// The answer's MIME type (its `Content-Type` without parameters, lower case) when it is one of
/// `accepts`.
fn accepted_type(
    headers: &reqwest::header::HeaderMap,
    accepts: &[&str],
) -> Result<String, FetchError> {
    let got = headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<mime_guess::Mime>().ok())
        .map(|m| m.essence_str().to_ascii_lowercase());
    match got {
        Some(mime) if accepts.contains(&mime.as_str()) => Ok(mime),
        other => Err(FetchError::Type {
            got: other.unwrap_or_else(|| "none".to_owned()),
            accepted: accepts.join(", "),
        }),
    }
}

#[cfg(test)]
mod tests {
    use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};

    use super::*;

    fn typed(value: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(value));
        headers
    }

    #[test]
    fn only_an_accepted_content_type_passes() {
        let images = ["image/png", "image/jpeg"];
        assert_eq!(
            accepted_type(&typed("Image/PNG; charset=binary"), &images).ok(),
            Some("image/png".to_owned())
        );
        for refused in [
            typed("text/html"),
            typed("application/octet-stream"),
            HeaderMap::new(),
        ] {
            assert!(matches!(
                accepted_type(&refused, &images),
                Err(FetchError::Type { .. })
            ));
        }
        let Err(e) = accepted_type(&typed("text/html; charset=utf-8"), &images) else {
            unreachable!("refused above");
        };
        assert_eq!(
            e.to_string(),
            "answered Content-Type text/html, which the upstream does not take here (only \
             image/png, image/jpeg)"
        );
    }
}
