//! The client's address, and the extractor of the abuse-prone routes that spends one request of
//! the address's budget ([`crate::http::critical_limiter`]).
//!
//! The address is the TCP peer, unless the peer is one of the operator's `--trusted-proxies`
//! ([`crate::http::trusted_proxies`]): then the forwarding headers name it. The same address is
//! what the limiter counts, what token `allow_ips` checks and what logs record.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;

use crate::error::ConsoleError;
use crate::state::AppState;

/// The client's address (see the module docs).
#[derive(Debug, Clone, Copy)]
pub struct ClientIp(pub IpAddr);

impl ClientIp {
    /// The client's address of a request's parts.
    pub fn of(parts: &Parts, state: &AppState) -> Option<IpAddr> {
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(addr)| addr.ip())?;
        Some(state.trusted_proxies.client_addr(peer, &parts.headers))
    }
}

impl FromRequestParts<AppState> for ClientIp {
    type Rejection = ConsoleError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        ClientIp::of(parts, state)
            .map(ClientIp)
            .ok_or_else(|| ConsoleError::Internal("no peer address on the connection".into()))
    }
}

/// A request to an abuse-prone route that passed the per-address limit; carries the address.
#[derive(Debug, Clone, Copy)]
pub struct Limited(pub IpAddr);

impl FromRequestParts<AppState> for Limited {
    type Rejection = ConsoleError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let ClientIp(ip) = ClientIp::from_request_parts(parts, state).await?;
        state.critical_limiter.check(ip)?;
        Ok(Limited(ip))
    }
}
