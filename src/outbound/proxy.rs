//! Proxy URLs every outbound client accepts: `http://`, `https://`, `socks5://` (names resolved
//! locally) or `socks5h://` (names resolved by the proxy), each optionally with `user:pass@`.

/// Why a proxy URL is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProxyError {
    /// Not a URL at all (the parser's reason).
    #[error("the proxy address is not a valid URL: {0}")]
    Url(String),
    /// A scheme no outbound client speaks.
    #[error("unsupported proxy scheme {0}:// (use http, https, socks5 or socks5h)")]
    Scheme(String),
    /// A URL without a host.
    #[error("the proxy address has no host")]
    NoHost,
}

/// Checks that `proxy` is a usable proxy URL; the error says what is wrong.
pub fn validate_proxy(proxy: &str) -> Result<reqwest::Url, ProxyError> {
    let url = reqwest::Url::parse(proxy.trim()).map_err(|e| ProxyError::Url(e.to_string()))?;
    match url.scheme() {
        "http" | "https" | "socks5" | "socks5h" => {}
        other => return Err(ProxyError::Scheme(other.to_owned())),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(ProxyError::NoHost);
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxies_are_validated() {
        assert!(validate_proxy("http://127.0.0.1:3128").is_ok());
        assert!(validate_proxy("https://user:pw@proxy.example:443").is_ok());
        assert!(validate_proxy("socks5://x:1").is_ok());
        assert!(validate_proxy("socks5h://user:pw@x:1080").is_ok());
        assert_eq!(
            validate_proxy("socks4://x:1"),
            Err(ProxyError::Scheme("socks4".into()))
        );
        assert_eq!(validate_proxy("socks5:///"), Err(ProxyError::NoHost));
        assert!(validate_proxy("not a url").is_err());
        assert!(validate_proxy("ftp://x").is_err());
    }
}
