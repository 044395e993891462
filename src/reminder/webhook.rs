//! User webhooks: which URLs the settings accept, and the signed POST of a notice.
//!
//! The body is JSON `{"type", "title", "content", "values", "timestamp"}`; `content` holds
//! `{{value}}` placeholders that `values` fills in order. When the user has a webhook secret
//! the request carries two headers:
//!
//! - `Authorization: Bearer <secret>` (the spec's scheme: the receiver compares the secret);
//! - `X-Webhook-Signature: sha256=<hex>`: HMAC-SHA256 of the raw body bytes keyed with the
//!   secret (lowercase hex), so a receiver can check the body was not altered without the secret
//!   travelling in its own checks. The body's `timestamp` is covered by the signature; receivers
//!   should reject notices older than a few minutes to stop replays.

use std::time::Duration;

use hmac::{Hmac, Mac};
use serde::Serialize;
use sha2::Sha256;

use crate::outbound::{GuardedClient, refusal_of};

/// The signature header.
pub const SIGNATURE_HEADER: &str = "X-Webhook-Signature";

/// How long a webhook receiver may take to answer.
const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// One notice, as posted.
#[derive(Debug, Clone, Serialize)]
pub struct Notice {
    /// What happened, e.g. `quota_exceed`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Short title.
    pub title: String,
    /// Text with `{{value}}` placeholders.
    pub content: String,
    /// The placeholders' values, in order.
    pub values: Vec<String>,
    /// Unix seconds when the notice was made.
    pub timestamp: i64,
}

impl Notice {
    /// `content` with the placeholders filled in.
    pub fn rendered(&self) -> String {
        let mut out = String::with_capacity(self.content.len());
        let mut values = self.values.iter();
        let mut rest = self.content.as_str();
        while let Some(at) = rest.find("{{value}}") {
            out.push_str(&rest[..at]);
            out.push_str(values.next().map_or("", String::as_str));
            rest = &rest[at + "{{value}}".len()..];
        }
        out.push_str(rest);
        out
    }
}

/// Whether the notification settings accept `url`: https with a host; with `allow_loopback`
/// also plain http to 127.0.0.1, [::1] or localhost.
pub fn url_allowed(url: &str, allow_loopback: bool) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return false;
    };
    let Some(host) = parsed.host_str().filter(|h| !h.is_empty()) else {
        return false;
    };
    match parsed.scheme() {
        "https" => true,
        "http" => allow_loopback && matches!(host, "127.0.0.1" | "[::1]" | "localhost"),
        _ => false,
    }
}

/// `sha256=<hex>`: the HMAC-SHA256 of `body` keyed with `secret`.
pub fn signature(secret: &str, body: &[u8]) -> String {
    // HMAC accepts keys of any length, so `new_from_slice` cannot fail here.
    let hex = match Hmac::<Sha256>::new_from_slice(secret.as_bytes()) {
        Ok(mut mac) => {
            mac.update(body);
            mac.finalize()
                .into_bytes()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        }
        Err(_) => String::new(),
    };
    format!("sha256={hex}")
}

/// Posts `notice` to `url`, signed with `secret` when one is set, through the guarded client
/// ([`crate::outbound`]: public addresses only, checked after resolution). Redirects are not
/// followed (a user-supplied URL must not bounce the server elsewhere).
pub async fn post(
    client: &GuardedClient,
    url: &str,
    secret: &str,
    notice: &Notice,
) -> Result<(), String> {
    let body = serde_json::to_vec(notice).map_err(|e| format!("encoding the notice: {e}"))?;
    let mut req = client
        .post(url)
        .map_err(|e| format!("the webhook address is refused: {e}"))?
        .timeout(WEBHOOK_TIMEOUT)
        .header(reqwest::header::CONTENT_TYPE, "application/json");
    if !secret.is_empty() {
        req = req
            .bearer_auth(secret)
            .header(SIGNATURE_HEADER, signature(secret, &body));
    }
    let resp = req
        .body(body)
        .send()
        .await
        .map_err(|e| match refusal_of(&e) {
            Some(refusal) => format!("the webhook address is refused: {refusal}"),
            None => format!("the webhook could not be reached: {}", e.without_url()),
        })?;
    if resp.status().is_success() {
        Ok(())
    } else {
        Err(format!("the webhook answered {}", resp.status()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_unless_loopback_http_is_allowed() {
        assert!(url_allowed("https://hooks.example.com/x", false));
        assert!(!url_allowed("http://hooks.example.com/x", false));
        assert!(!url_allowed("http://127.0.0.1:9/x", false));
        assert!(url_allowed("http://127.0.0.1:9/x", true));
        assert!(url_allowed("http://[::1]:9/x", true));
        assert!(!url_allowed("http://10.0.0.1/x", true));
        assert!(!url_allowed("ftp://example.com", true));
        assert!(!url_allowed("not a url", true));
    }

    #[test]
    fn the_signature_is_the_rfc_4231_hmac() {
        // RFC 4231 test case 2.
        assert_eq!(
            signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn placeholders_are_filled_in_order() {
        let notice = Notice {
            kind: "quota_exceed",
            title: String::new(),
            content: "a {{value}} b {{value}} c {{value}}".into(),
            values: vec!["1".into(), "2".into()],
            timestamp: 0,
        };
        assert_eq!(notice.rendered(), "a 1 b 2 c ");
    }
}
