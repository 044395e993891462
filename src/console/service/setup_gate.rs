//! Who may run first-run setup: the one-time setup token, and when it is asked for.
//!
//! Whoever completes setup becomes root, so a fresh install must not be taken over by the first
//! stranger who reaches it. A token is drawn at start-up whenever the server is not set up and
//! printed in its log, which only the operator reads. It is required when
//! - the listener is beyond loopback (anyone on the network reaches it), or
//! - `--trusted-proxies` is set (a reverse proxy in front forwards strangers, and to us they
//!   all come from the proxy's, often loopback, address), or
//! - the request carries `Forwarded`, `X-Forwarded-For` or `X-Real-IP` (a proxy nobody told us
//!   about: on a loopback listener the peer is then the proxy, not the person).
//!
//! Only a loopback listener, no trusted proxies and a request no proxy has touched, i.e. the
//! operator's own machine, sets up without it.

use axum::http::HeaderMap;
use subtle::ConstantTimeEq;

use crate::error::{ConsoleError, ErrorCode};

/// Headers a reverse proxy adds: their presence means the peer is not the person.
const PROXY_HEADERS: [&str; 3] = ["forwarded", "x-forwarded-for", "x-real-ip"];

/// The setup token and the rule deciding when it is needed.
#[derive(Debug, Clone, Default)]
pub struct SetupGate {
    /// The token printed in the log; `None` once set up at start-up.
    token: Option<String>,
    /// Required for every request: a listener beyond loopback, or trusted proxies configured.
    always: bool,
}

impl SetupGate {
    /// A gate with `token` (drawn when the server is not set up), required for every request
    /// when `always`, else only for requests a proxy forwarded.
    pub fn new(token: Option<String>, always: bool) -> SetupGate {
        SetupGate { token, always }
    }

    /// Whether a setup request with `headers` needs the token.
    pub fn required(&self, headers: &HeaderMap) -> bool {
        self.token.is_some()
            && (self.always || PROXY_HEADERS.iter().any(|h| headers.contains_key(*h)))
    }

    /// Refuses a setup request with `headers` whose `given` token is not the one printed in
    /// the log, when [`SetupGate::required`] (compared in constant time).
    pub fn check(&self, headers: &HeaderMap, given: &str) -> Result<(), ConsoleError> {
        let Some(expected) = self.token.as_deref().filter(|_| self.required(headers)) else {
            return Ok(());
        };
        if bool::from(expected.as_bytes().ct_eq(given.trim().as_bytes())) {
            Ok(())
        } else {
            Err(ConsoleError::of(ErrorCode::SetupTokenRequired))
        }
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(name: &'static str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(name, HeaderValue::from_static("for=203.0.113.9"));
        h
    }

    #[test]
    fn loopback_without_proxies_asks_only_forwarded_requests() {
        let gate = SetupGate::new(Some("t0ken".into()), false);
        assert!(!gate.required(&HeaderMap::new()));
        assert!(gate.check(&HeaderMap::new(), "").is_ok());
        for name in ["forwarded", "x-forwarded-for", "x-real-ip"] {
            assert!(gate.required(&headers(name)), "{name}");
            assert!(gate.check(&headers(name), "").is_err(), "{name}");
            assert!(gate.check(&headers(name), " t0ken ").is_ok(), "{name}");
        }
    }

    #[test]
    fn beyond_loopback_or_behind_proxies_always_asks() {
        let gate = SetupGate::new(Some("t0ken".into()), true);
        assert!(gate.required(&HeaderMap::new()));
        assert!(gate.check(&HeaderMap::new(), "wrong").is_err());
        assert!(gate.check(&HeaderMap::new(), "t0ken").is_ok());
    }

    #[test]
    fn a_server_set_up_at_start_has_no_gate() {
        let gate = SetupGate::new(None, true);
        assert!(!gate.required(&headers("x-real-ip")));
        assert!(gate.check(&headers("x-real-ip"), "").is_ok());
    }
}
