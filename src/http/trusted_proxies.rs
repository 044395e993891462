//! Which peers may name the client (`--trusted-proxies`) and the client address they name.
//!
//! Anyone can send `X-Forwarded-For` or `X-Real-IP`, so they are believed only from a trusted
//! proxy: `X-Forwarded-For` is walked from the right, skipping trusted hops, so a client cannot
//! choose its address by sending the header itself; `X-Real-IP` is the fallback.

use std::net::{IpAddr, SocketAddr};

use axum::http::HeaderMap;
use ipnet::IpNet;

/// The networks whose forwarding headers are believed (`--trusted-proxies`).
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// Trusts `nets`.
    pub fn new(nets: Vec<IpNet>) -> TrustedProxies {
        TrustedProxies(nets)
    }

    fn trusts(&self, ip: IpAddr) -> bool {
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The client's address for a connection from `peer` carrying `headers`.
    pub fn client_addr(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = peer.to_canonical();
        if !self.trusts(peer) {
            return peer;
        }
        let forwarded: Vec<&str> = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .collect();
        if !forwarded.is_empty() {
            // Right to left: each hop appended the address it saw. The first one not ours is
            // the client; anything left of it was written by the client and proves nothing.
            let mut client = peer;
            for hop in forwarded.iter().rev() {
                let Some(ip) = parse_hop(hop) else {
                    break;
                };
                client = ip;
                if !self.trusts(ip) {
                    break;
                }
            }
            return client;
        }
        headers
            .get("x-real-ip")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_hop(v.trim()))
            .unwrap_or(peer)
    }
}

/// One address of a forwarding header: `1.2.3.4`, `1.2.3.4:5678`, `2001:db8::1` or
/// `[2001:db8::1]:443`.
fn parse_hop(hop: &str) -> Option<IpAddr> {
    if let Ok(ip) = hop.parse::<IpAddr>() {
        return Some(ip.to_canonical());
    }
    hop.parse::<SocketAddr>()
        .ok()
        .map(|a| a.ip().to_canonical())
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;
    use crate::config::parse_trusted;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.append(*name, HeaderValue::from_str(value).expect("value"));
        }
        h
    }

    #[test]
    fn forwarding_headers_count_only_from_trusted_proxies() {
        let trusted = TrustedProxies::new(vec![
            parse_trusted("10.0.0.0/8").expect("cidr"),
            parse_trusted("fd00::1").expect("address"),
        ]);
        let spoofed = headers(&[("x-forwarded-for", "1.1.1.1"), ("x-real-ip", "2.2.2.2")]);
        assert_eq!(
            trusted.client_addr(ip("203.0.113.7"), &spoofed),
            ip("203.0.113.7"),
            "an untrusted peer's headers are ignored"
        );
        assert_eq!(
            TrustedProxies::default().client_addr(ip("10.0.0.2"), &spoofed),
            ip("10.0.0.2"),
            "nothing is trusted by default"
        );
        let chain = headers(&[
            ("x-forwarded-for", "6.6.6.6, 198.51.100.9"),
            ("x-forwarded-for", "10.1.1.1"),
        ]);
        assert_eq!(
            trusted.client_addr(ip("10.0.0.2"), &chain),
            ip("198.51.100.9"),
            "the rightmost address no trusted proxy wrote is the client"
        );
        assert_eq!(
            trusted.client_addr(ip("::ffff:10.0.0.2"), &chain),
            ip("198.51.100.9"),
            "an IPv4-mapped peer is its IPv4 address"
        );
        assert_eq!(
            trusted.client_addr(ip("fd00::1"), &headers(&[("x-real-ip", "2001:db8::5")])),
            ip("2001:db8::5")
        );
        assert_eq!(
            trusted.client_addr(
                ip("10.0.0.2"),
                &headers(&[("x-forwarded-for", "[2001:db8::7]:443")])
            ),
            ip("2001:db8::7")
        );
        assert_eq!(
            trusted.client_addr(ip("10.0.0.2"), &headers(&[("x-forwarded-for", "junk")])),
            ip("10.0.0.2"),
            "garbage leaves the peer"
        );
        assert!(parse_trusted("nope").is_err());
    }
}
