//! Phase 1 of the hot path: the API key → token → owner, from the in-memory token index and
//! user directory (no storage read once a user has been seen). Every refusal names its reason.
//! The relay's intake ([`crate::relay::pipeline::body_limit`]) runs it before a body is read and hands the
//! caller on in the request's extensions, where the extractor finds it.

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use tollgate_actors::token_index::TokenEntry;
use tollgate_actors::user_directory::UserFacts;
use tollgate_storage::ChannelId;
use tollgate_storage::users::ROLE_ADMIN;

use crate::clock::now_unix;
use crate::error::RelayError;
use crate::http::client_ip::ClientIp;
use crate::state::AppState;

/// An authenticated relay caller.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The token used.
    pub token: Arc<TokenEntry>,
    /// Its owner.
    pub user: Arc<UserFacts>,
    /// Billing group: the token's, else the user's.
    pub group: String,
    /// A channel pinned with `sk-<key>-<channel id>` (admins only).
    pub pinned: Option<ChannelId>,
    /// Client address.
    pub ip: IpAddr,
    /// A console playground request (`/pg/chat/completions`): the user's session, no API key;
    /// `token` is a stand-in without limits and no token quota is reserved or charged.
    pub playground: bool,
    /// The request's spend ceiling in US dollars from the `X-Max-Cost` header
    /// ([`crate::relay::pipeline::max_cost`]; it wins over the body's `max_cost`).
    pub max_cost: Option<f64>,
}

/// `(key, pinned channel)` from `Authorization: Bearer sk-<key>[-<channel>]` (or `x-api-key`).
pub fn parse_key(headers: &HeaderMap) -> Option<(String, Option<String>)> {
    let raw = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(strip_bearer)
        .or_else(|| headers.get("x-api-key").and_then(|v| v.to_str().ok()))?
        .trim();
    let raw = raw.strip_prefix("sk-").unwrap_or(raw);
    if raw.is_empty() {
        return None;
    }
    match raw.split_once('-') {
        Some((key, channel)) => Some((key.to_owned(), Some(channel.to_owned()))),
        None => Some((raw.to_owned(), None)),
    }
}

/// The credential of an `Authorization` value: what follows the `Bearer` scheme (any case), or
/// the whole value when it has no scheme.
fn strip_bearer(value: &str) -> &str {
    let value = value.trim();
    match value.split_once(char::is_whitespace) {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("bearer") => rest.trim(),
        _ if value.eq_ignore_ascii_case("bearer") => "",
        _ => value,
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = RelayError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        // Already authenticated before the body was read (`crate::relay::pipeline::body_limit`).
        if let Some(caller) = parts.extensions.get::<Caller>() {
            return Ok(caller.clone());
        }
        let (key, pin) = parse_key(&parts.headers).ok_or(RelayError::MissingKey)?;
        let max_cost = crate::relay::pipeline::max_cost::from_header(&parts.headers)?;
        // A key not used lately is read back from storage; an unknown one is refused without a
        // read (the index keeps every stored key's digest).
        let token = state
            .tokens
            .lookup(&key)
            .await
            .map_err(|e| RelayError::Internal(format!("loading the API key: {e}")))?
            .ok_or(RelayError::InvalidKey("invalid API key"))?;
        let now = now_unix();
        if token.status == tollgate_storage::tokens::STATUS_DISABLED {
            return Err(RelayError::InvalidKey("this API key is disabled"));
        }
        if !token.is_usable(now) {
            return Err(RelayError::InvalidKey("this API key has expired"));
        }
        let ip = ClientIp::of(parts, state)
            .ok_or_else(|| RelayError::Internal("no peer address".into()))?;
        if !token.allows_ip(ip) {
            return Err(RelayError::Forbidden(format!(
                "this API key may not be used from {ip}"
            )));
        }
        let user = state
            .users
            .get(token.user_id)
            .await
            .map_err(|e| RelayError::Internal(format!("loading the key's owner: {e}")))?
            .ok_or(RelayError::InvalidKey("invalid API key"))?;
        if !user.active {
            return Err(RelayError::Forbidden(
                "the owner of this API key has been banned".into(),
            ));
        }
        let pinned = match pin {
            None => None,
            Some(_) if user.role < ROLE_ADMIN => {
                return Err(RelayError::Forbidden(
                    "ordinary users cannot pin a channel with sk-<key>-<channel>".into(),
                ));
            }
            Some(id) => Some(ChannelId(id.parse().map_err(|_| {
                RelayError::BadRequest(format!("{id} is not a channel id"))
            })?)),
        };
        // The key's group is checked against what its owner may use now, on every request:
        // a key made while a group was selectable (or before the owner was moved) must not
        // keep billing at that group's ratio.
        let group = if token.group.is_empty() {
            user.group.clone()
        } else if state
            .options
            .current()
            .group_usable(&user.group, &token.group)
        {
            token.group.clone()
        } else {
            return Err(RelayError::Forbidden(format!(
                "this API key's group {} is no longer available to its owner",
                token.group
            )));
        };
        Ok(Caller {
            token,
            user,
            group,
            pinned,
            ip,
            playground: false,
            max_cost,
        })
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(name: &'static str, value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(name, HeaderValue::from_str(value).expect("ascii"));
        h
    }

    #[test]
    fn keys_parse_with_and_without_prefix_and_pin() {
        assert_eq!(
            parse_key(&headers("authorization", "Bearer sk-abc")),
            Some(("abc".into(), None))
        );
        assert_eq!(
            parse_key(&headers("authorization", "sk-abc-12")),
            Some(("abc".into(), Some("12".into())))
        );
        assert_eq!(
            parse_key(&headers("x-api-key", "sk-abc")),
            Some(("abc".into(), None))
        );
        assert_eq!(parse_key(&headers("authorization", "Bearer ")), None);
        assert_eq!(parse_key(&HeaderMap::new()), None);
    }
}
