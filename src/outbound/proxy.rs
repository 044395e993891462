//! Proxy URLs every outbound client accepts: `http://`, `https://`, `socks5://` (names resolved
//! locally) or `socks5h://` (names resolved by the proxy), each optionally with `user:pass@`.

/// Checks that `proxy` is a usable proxy URL; the message says what is wrong.
pub fn validate_proxy(proxy: &str) -> Result<reqwest::Url, String> {
    let url = reqwest::Url::parse(proxy.trim())
        .map_err(|e| format!("the proxy address is not a valid URL: {e}"))?;
    match url.scheme() {
        "http" | "https" | "socks5" | "socks5h" => {}
        other => {
            return Err(format!(
                "unsupported proxy scheme {other}:// (use http, https, socks5 or socks5h)"
            ));
        }
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("the proxy address has no host".into());
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
        assert!(validate_proxy("socks4://x:1").is_err());
        assert!(validate_proxy("not a url").is_err());
        assert!(validate_proxy("ftp://x").is_err());
    }
}
