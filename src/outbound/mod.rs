//! Outbound requests to URLs users control — reminder webhooks and the media a client names by
//! URL that an upstream needs as bytes — go through guarded clients: http(s) only, and only to
//! public unicast addresses ([`address`]), checked after DNS resolution by the clients' own
//! resolver ([`resolver`]), so the address checked is the address connected to; address
//! literals in URLs and every redirect hop are checked too. Size and time limits bound what
//! one fetch can cost ([`media`]).
//!
//! Admin-configured URLs (channel base URLs — Ollama on localhost is a main use —, OIDC, SMTP,
//! the worker proxy, ImageReadProxy itself) are not guarded: they go through
//! [`crate::upstream::HttpClients`]' ordinary clients.

pub mod address;
pub mod media;
pub mod proxy;
pub mod resolver;

use std::net::IpAddr;
use std::sync::Arc;

use reqwest::Url;
use reqwest::redirect::Policy;

pub use resolver::{GuardedResolver, Overrides, Refusal};

/// The guard of user-controlled URLs: the filtering resolver and the URL check. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Guard {
    resolver: Arc<GuardedResolver>,
}

impl Guard {
    /// A guard with `overrides` (tests), allowing loopback addresses when `allow_loopback`.
    pub fn new(overrides: Arc<Overrides>, allow_loopback: bool) -> Guard {
        Guard {
            resolver: Arc::new(GuardedResolver::new(overrides, allow_loopback)),
        }
    }

    /// The resolver (to check a name without connecting, see [`media`]'s proxy reads).
    pub fn resolver(&self) -> &GuardedResolver {
        &self.resolver
    }

    /// Checks what can be checked of `url` before connecting: http(s), a host, and a host that
    /// is an address literal (which no resolver sees) allowed. Names are checked when resolved.
    pub fn check_url(&self, url: &Url) -> Result<(), Refusal> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Refusal::Scheme);
        }
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or(Refusal::Scheme)?;
        // `Url` has normalised numeric IPv4 forms (`0x7f.1`, `2130706433`) to dotted quads.
        let literal = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = literal.parse::<IpAddr>()
            && let Some(why) = self.resolver.refuses(ip)
        {
            return Err(Refusal::Literal {
                host: host.to_owned(),
                why,
            });
        }
        Ok(())
    }

    /// A client builder whose connections are guarded: the filtering resolver, no proxy from
    /// the environment (a proxy would resolve names itself), and at most `redirects` redirect
    /// hops, each checked like the first URL.
    pub fn client_builder(&self, redirects: usize) -> reqwest::ClientBuilder {
        reqwest::Client::builder()
            .no_proxy()
            .dns_resolver(Arc::clone(&self.resolver))
            .redirect(self.redirect_policy(redirects))
            .user_agent(concat!("tollgate/", env!("CARGO_PKG_VERSION")))
    }

    /// Follows up to `redirects` hops, each to an allowed URL.
    fn redirect_policy(&self, redirects: usize) -> Policy {
        if redirects == 0 {
            return Policy::none();
        }
        let guard = self.clone();
        Policy::custom(move |attempt| {
            if attempt.previous().len() > redirects {
                return attempt.error("too many redirects");
            }
            match guard.check_url(attempt.url()) {
                Ok(()) => attempt.follow(),
                Err(refusal) => attempt.error(refusal),
            }
        })
    }
}

/// A guarded client with its guard: [`GuardedClient::post`] checks the URL, the client's
/// resolver the addresses. User webhooks use one with no redirects. Cheap to clone.
#[derive(Debug, Clone)]
pub struct GuardedClient {
    guard: Guard,
    client: reqwest::Client,
}

impl GuardedClient {
    /// A client under `guard` following at most `redirects` (checked) redirects.
    pub fn new(guard: Guard, redirects: usize) -> Result<GuardedClient, reqwest::Error> {
        let client = guard.client_builder(redirects).build()?;
        Ok(GuardedClient { guard, client })
    }

    /// A POST to `url`, or why it may not be made.
    pub fn post(&self, url: &str) -> Result<reqwest::RequestBuilder, Refusal> {
        let parsed = Url::parse(url).map_err(|_| Refusal::Scheme)?;
        self.guard.check_url(&parsed)?;
        Ok(self.client.post(parsed))
    }
}

/// The [`Refusal`] behind a failed request, if a guard refused it.
pub fn refusal_of(error: &reqwest::Error) -> Option<Refusal> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(refusal) = e.downcast_ref::<Refusal>() {
            return Some(refusal.clone());
        }
        source = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn address_literals_and_schemes_are_checked_before_connecting() {
        let guard = Guard::new(Arc::default(), false);
        assert!(guard.check_url(&url("https://example.com/a.png")).is_ok());
        assert!(guard.check_url(&url("http://93.184.215.14/a.png")).is_ok());
        for refused in [
            "http://127.0.0.1/a.png",
            "http://0x7f.1/a.png",
            "http://2130706433/",
            "http://0.0.0.0:8080/",
            "http://[::1]/",
            "http://[::ffff:169.254.169.254]/latest/meta-data/",
            "http://169.254.169.254/latest/meta-data/",
            "http://[fd00:ec2::254]/",
            "file:///etc/passwd",
            "ftp://example.com/a.png",
            "gopher://example.com/",
        ] {
            assert!(guard.check_url(&url(refused)).is_err(), "{refused}");
        }
        let loopback_ok = Guard::new(Arc::default(), true);
        assert!(
            loopback_ok
                .check_url(&url("http://127.0.0.1:9/hook"))
                .is_ok()
        );
        assert!(loopback_ok.check_url(&url("http://10.0.0.1/hook")).is_err());
    }

    #[tokio::test]
    async fn names_are_checked_after_resolution_unless_a_test_trusts_them() {
        let overrides = Overrides {
            hosts: [
                (
                    "media.example".to_owned(),
                    vec!["127.0.0.1".parse().unwrap_or_else(|_| unreachable!())],
                ),
                (
                    "mixed.example".to_owned(),
                    vec![
                        "8.8.8.8".parse().unwrap_or_else(|_| unreachable!()),
                        "10.0.0.1".parse().unwrap_or_else(|_| unreachable!()),
                    ],
                ),
                (
                    "public.example".to_owned(),
                    vec!["8.8.4.4".parse().unwrap_or_else(|_| unreachable!())],
                ),
                (
                    "mock.test".to_owned(),
                    vec!["127.0.0.1".parse().unwrap_or_else(|_| unreachable!())],
                ),
            ]
            .into_iter()
            .collect(),
            trusted: vec!["mock.test".to_owned()],
        };
        let guard = Guard::new(Arc::new(overrides), false);
        let resolver = guard.resolver();
        let refused = resolver.lookup("media.example").await;
        assert!(
            refused
                .as_ref()
                .is_err_and(|e| e.to_string() == "media.example resolves to a loopback address"),
            "{refused:?}"
        );
        assert!(
            resolver.lookup("MEDIA.example.").await.is_err(),
            "case and the root dot"
        );
        assert!(
            resolver.lookup("mixed.example").await.is_err(),
            "one bad address spoils the name"
        );
        assert!(resolver.lookup("public.example").await.is_ok());
        assert!(
            resolver.lookup("mock.test").await.is_ok(),
            "trusted by the test"
        );
        assert!(
            resolver.lookup("localhost").await.is_err(),
            "the system resolver's answer is checked"
        );
    }
}
