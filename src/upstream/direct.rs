//! The relay's upstream requests on hyper-util's client directly, without reqwest's layers.
//!
//! reqwest wraps hyper-util's client in layers whose work this client leaves out: ~14k
//! instructions a relayed request, −7 % (README → Performance). Its redirect layer parses the
//! request's URL with the `url` crate (host and IDNA processing) before sending, its response
//! future parses it again for the response's URL, and on `http://` upstreams the
//! environment-proxy matcher runs twice. A request the adaptors built with reqwest (headers, signature, body) is
//! executed here instead when nothing of those layers applies to it: the channel has no proxy,
//! no proxy variable is set in the environment (reqwest's direct client would honour one), and
//! the body is in memory (so it can be sent again). The connection settings are reqwest's as
//! Tollgate builds it: TCP_NODELAY, the connect timeout, reqwest's TCP keep-alive and user
//! timeout, HTTP/1.1, rustls with ring and the Mozilla roots, a 90 s idle pool.
//!
//! Redirects: an answer reqwest's policy may follow (301, 302, 303, 307, 308) is not returned;
//! the request is sent again through reqwest, whose policy follows it within the origin
//! ([`super::HttpClients`]) — the upstream that answered a redirect did no work for it.

use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderValue, StatusCode, header};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};

/// The environment variables reqwest's direct client reads its proxies from.
const PROXY_VARIABLES: &[&str] = &[
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// Why a direct request got no answer.
#[derive(Debug, thiserror::Error)]
pub enum DirectError {
    /// No connection to the upstream could be made.
    #[error("could not connect to the upstream")]
    Connect,
    /// The request failed after connecting (or could not be turned into one).
    #[error("the upstream request failed")]
    Network,
}

impl DirectError {
    /// Its description and error class, as [`super::no_answer`] gives them.
    pub fn described(&self) -> (String, &'static str) {
        let class = match self {
            DirectError::Connect => "connect",
            DirectError::Network => "network",
        };
        (self.to_string(), class)
    }
}

/// hyper-util's client with Tollgate's connection settings.
#[derive(Clone, Debug)]
pub struct DirectClient {
    client: Client<HttpsConnector<HttpConnector>, reqwest::Body>,
    user_agent: HeaderValue,
}

impl DirectClient {
    /// The client, or `None` when the environment names a proxy (the direct reqwest client
    /// honours it, so every request goes there) or TLS cannot be set up.
    pub fn from_env(connect_timeout: Duration, user_agent: &'static str) -> Option<DirectClient> {
        if names_a_proxy(|name| std::env::var_os(name)) {
            return None;
        }
        DirectClient::new(connect_timeout, user_agent)
    }

    /// The client with the Mozilla roots, whatever the environment says.
    pub fn new(connect_timeout: Duration, user_agent: &'static str) -> Option<DirectClient> {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        DirectClient::with_roots(connect_timeout, user_agent, roots)
    }

    /// The client trusting `roots` (the Mozilla roots, or a test's own authority).
    fn with_roots(
        connect_timeout: Duration,
        user_agent: &'static str,
        roots: rustls::RootCertStore,
    ) -> Option<DirectClient> {
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .ok()?
        .with_root_certificates(roots)
        .with_no_client_auth();
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(connect_timeout));
        http.set_keepalive(Some(Duration::from_secs(15)));
        http.set_keepalive_interval(Some(Duration::from_secs(15)));
        http.set_keepalive_retries(Some(3));
        #[cfg(any(target_os = "android", target_os = "fuchsia", target_os = "linux"))]
        http.set_tcp_user_timeout(Some(Duration::from_secs(30)));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(Duration::from_secs(90))
            .build(https);
        Some(DirectClient {
            client,
            user_agent: HeaderValue::from_static(user_agent),
        })
    }

    /// Sends `req`; `Ok(None)` when the answer is a redirect reqwest's policy may follow (the
    /// caller sends the request again through reqwest).
    pub async fn send(
        &self,
        req: reqwest::Request,
    ) -> Result<Option<reqwest::Response>, DirectError> {
        let mut req: axum::http::Request<reqwest::Body> =
            req.try_into().map_err(|_| DirectError::Network)?;
        // reqwest's own defaults, which a request it sends itself carries.
        let headers = req.headers_mut();
        headers
            .entry(header::USER_AGENT)
            .or_insert_with(|| self.user_agent.clone());
        headers
            .entry(header::ACCEPT)
            .or_insert(HeaderValue::from_static("*/*"));
        let resp = self.client.request(req).await.map_err(|e| {
            if e.is_connect() {
                DirectError::Connect
            } else {
                DirectError::Network
            }
        })?;
        if is_followed_redirect(resp.status()) {
            return Ok(None);
        }
        Ok(Some(reqwest::Response::from(resp.map(reqwest::Body::wrap))))
    }
}

/// Whether an environment (`lookup` of a variable) names a proxy reqwest's direct client
/// would use.
fn names_a_proxy(lookup: impl Fn(&str) -> Option<std::ffi::OsString>) -> bool {
    PROXY_VARIABLES
        .iter()
        .any(|name| lookup(name).is_some_and(|v| !v.is_empty()))
}

/// A redirect status reqwest's policy may follow.
fn is_followed_redirect(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use hyper::service::service_fn;
    use hyper_util::rt::TokioIo;
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

    /// An https upstream on 127.0.0.1 whose certificate names `localhost`, issued by a fresh
    /// authority (returned as the roots that trust it). It answers `status` with the request's
    /// method, path, `Host`, `User-Agent` and body.
    async fn tls_upstream(status: StatusCode) -> (u16, rustls::RootCertStore) {
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("ca params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca_key = KeyPair::generate().expect("ca key");
        let ca = ca_params.self_signed(&ca_key).expect("ca");
        let issuer = Issuer::new(ca_params, ca_key);
        let key = KeyPair::generate().expect("key");
        let cert = CertificateParams::new(vec!["localhost".to_owned()])
            .expect("params")
            .signed_by(&key, &issuer)
            .expect("certificate");
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let server = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone()], key)
        .expect("server config");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("address").port();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let echo = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        echo(req, status)
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tls), echo)
                        .await;
                });
            }
        });
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ca.der().clone()).expect("root");
        (port, roots)
    }

    async fn echo(
        req: hyper::Request<hyper::body::Incoming>,
        status: StatusCode,
    ) -> Result<hyper::Response<String>, hyper::Error> {
        let header = |name| {
            req.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("-")
                .to_owned()
        };
        let line = format!(
            "{} {} host={} ua={} ",
            req.method(),
            req.uri().path(),
            header(header::HOST),
            header(header::USER_AGENT)
        );
        let body = req.into_body().collect().await?.to_bytes();
        let mut resp = hyper::Response::new(line + &String::from_utf8_lossy(&body));
        *resp.status_mut() = status;
        Ok(resp)
    }

    /// A client trusting `roots`.
    fn trusting(roots: rustls::RootCertStore) -> DirectClient {
        DirectClient::with_roots(Duration::from_secs(5), "tollgate-test", roots).expect("client")
    }

    /// What the client sends to the upstream on `port`: `Ok(None)` for a redirect.
    async fn answer(
        client: &DirectClient,
        port: u16,
    ) -> Result<Option<reqwest::Response>, DirectError> {
        client.send(post(port)).await
    }

    fn post(port: u16) -> reqwest::Request {
        reqwest::Client::new()
            .post(format!("https://localhost:{port}/v1/chat/completions"))
            .body("{\"model\":\"m\"}")
            .build()
            .expect("request")
    }

    #[tokio::test]
    async fn an_https_upstream_is_reached_over_tls_with_the_request_intact() {
        let (port, roots) = tls_upstream(StatusCode::OK).await;
        let client = trusting(roots);
        for _ in 0..2 {
            let resp = answer(&client, port)
                .await
                .expect("sent")
                .expect("no redirect");
            assert_eq!(resp.status(), StatusCode::OK);
            assert_eq!(
                resp.text().await.expect("body"),
                format!(
                    "POST /v1/chat/completions host=localhost:{port} ua=tollgate-test {{\"model\":\"m\"}}"
                )
            );
        }
    }

    #[tokio::test]
    async fn a_certificate_no_root_vouches_for_is_refused_before_sending() {
        let (port, roots) = tls_upstream(StatusCode::OK).await;
        let resp = answer(&trusting(roots), port).await.expect("sent");
        assert_eq!(
            resp.map(|r| r.status()),
            Some(StatusCode::OK),
            "the upstream is up"
        );
        let client = DirectClient::new(Duration::from_secs(5), "tollgate-test").expect("client");
        let err = answer(&client, port)
            .await
            .expect_err("untrusted certificate");
        assert!(matches!(err, DirectError::Connect), "{err:?}");
        assert_eq!(
            err.described(),
            ("could not connect to the upstream".to_owned(), "connect"),
            "reported as reqwest's connect failures are"
        );
    }

    #[tokio::test]
    async fn a_followable_redirect_is_handed_back_for_reqwest_to_follow() {
        let (port, roots) = tls_upstream(StatusCode::TEMPORARY_REDIRECT).await;
        let resp = answer(&trusting(roots), port).await.expect("sent");
        assert!(resp.is_none(), "handed back");
    }

    #[test]
    fn any_proxy_variable_that_is_set_keeps_the_requests_on_reqwest() {
        assert!(!names_a_proxy(|_| None));
        assert!(!names_a_proxy(|_| Some("".into())), "empty is unset");
        for name in PROXY_VARIABLES {
            let set = |n: &str| (n == *name).then(|| "http://127.0.0.1:3128".into());
            assert!(names_a_proxy(set), "{name}");
        }
    }

    #[test]
    fn only_the_redirects_reqwest_follows_are_sent_again() {
        for code in [301, 302, 303, 307, 308] {
            assert!(is_followed_redirect(
                StatusCode::from_u16(code).expect("status")
            ));
        }
        for code in [200, 300, 304, 400, 502] {
            assert!(!is_followed_redirect(
                StatusCode::from_u16(code).expect("status")
            ));
        }
    }
}
