//! Tencent Hunyuan's transport: the key `AppId|SecretId|SecretKey` (the incumbent's format; the
//! AppId is not part of the signature), a POST of the `ChatCompletions` action to the
//! endpoint's root with the `X-TC-*` headers, signed with TencentCloud API 3.0's
//! TC3-HMAC-SHA256 ([`authorization`]; the tests reproduce the worked example of "Signature
//! v3" byte for byte — the same page in every TencentCloud product's API documentation, e.g.
//! <https://tencentcloud.com/document/api/266/34114>).
//!
//! The signature covers the `content-type` and `host` headers and the body's SHA-256; its
//! scope is the UTC date of `X-TC-Timestamp`, the service (`hunyuan`) and `tc3_request`. The
//! host signed is the one of the URL the request goes to (a channel's base URL replaces the
//! default endpoint, as for every type).

use axum::body::Bytes;
use axum::http::HeaderValue;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use tollgate_actors::channel_pool::routing_table::RoutedChannel;

use super::native::{self, Native};
use super::{Adaptor, AuthFailure, Authorizing, Credential};
use crate::channel_types::effective_base_url;
use crate::error::RelayError;
use crate::relay::wire::{Wire, hunyuan};
use crate::upstream::HttpClients;

/// Hunyuan's adaptor: OpenAI chat bodies in, converted and signed into `ChatCompletions` at the
/// endpoint's root ([`Native::Hunyuan`] converts the answers back); chat is its only route.
pub struct Hunyuan;

impl Adaptor for Hunyuan {
    fn name(&self) -> &'static str {
        "hunyuan"
    }

    fn own_api(&self) -> bool {
        true
    }

    /// The `ChatCompletions` action is posted to the endpoint's root.
    fn own_chat_url(&self, channel: &RoutedChannel, _model: &str) -> Option<String> {
        let c = &channel.channel;
        Some(format!(
            "{}/",
            effective_base_url(c.channel_type, &c.base_url)
        ))
    }

    fn authorize<'k, 'f>(
        &self,
        _http: &'f HttpClients,
        _channel: &'f RoutedChannel,
        key: &'k str,
    ) -> Authorizing<'k, 'f>
    where
        'k: 'f,
    {
        Authorizing::Ready(
            TencentKey::parse(key)
                .map(|_| Credential::Key(key))
                .map_err(|message| AuthFailure {
                    status: Some(401),
                    message,
                }),
        )
    }

    /// Hunyuan's vision models read image URLs themselves.
    fn bytes_only(&self, _wire: Wire) -> bool {
        false
    }

    fn builds_own_requests(&self) -> bool {
        true
    }

    fn request(
        &self,
        http: &HttpClients,
        channel: &RoutedChannel,
        _wire: Wire,
        url: String,
        key: &Credential<'_>,
        _headers: &[(&'static str, HeaderValue)],
        body: Bytes,
    ) -> Result<reqwest::RequestBuilder, RelayError> {
        let c = &channel.channel;
        let client = http.for_proxy(&c.proxy).map_err(RelayError::Unreachable)?;
        let url = http.url(&url).map_err(RelayError::Unreachable)?;
        let key = TencentKey::parse(key.text()).map_err(|m| RelayError::Upstream {
            status: 401,
            message: m,
        })?;
        let (head, hub) = native::read(&body)?;
        hunyuan::check(&hub).map_err(|e| RelayError::BadRequest(e.0))?;
        let request = hunyuan::request_from_hub(&hub, head.model.or_empty(), head.stream);
        let payload = native::to_body(&request)?;
        let mut req = client.post(url.clone());
        for (name, value) in headers(&key, &url, &payload, crate::clock::now_unix()) {
            req = req.header(name, value);
        }
        Ok(req.body(payload))
    }

    fn native(&self) -> Option<Native> {
        Some(Native::Hunyuan)
    }
}

/// The service name in the credential scope.
pub const SERVICE: &str = "hunyuan";

/// The content type sent and signed.
pub const CONTENT_TYPE: &str = "application/json";

/// A Tencent Cloud key line, split. Holds a secret: it has no `Debug`.
pub struct TencentKey<'a> {
    /// The SecretId (`AKID…`), named in the credential.
    pub secret_id: &'a str,
    /// The SecretKey, which signs.
    pub secret_key: &'a str,
}

impl<'a> TencentKey<'a> {
    /// Reads `AppId|SecretId|SecretKey`; the message never holds the key.
    pub fn parse(line: &'a str) -> Result<TencentKey<'a>, String> {
        let mut parts = line.trim().split('|').map(str::trim);
        match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some(_app), Some(id), Some(key), None) if !id.is_empty() && !key.is_empty() => {
                Ok(TencentKey {
                    secret_id: id,
                    secret_key: key,
                })
            }
            _ => Err("a Hunyuan key is AppId|SecretId|SecretKey".into()),
        }
    }
}

/// HMAC-SHA256 of `message` under `key`.
fn hmac(key: &[u8], message: &[u8]) -> Vec<u8> {
    // HMAC takes keys of any length: `new_from_slice` cannot fail for it.
    let mut mac = match Hmac::<Sha256>::new_from_slice(key) {
        Ok(mac) => mac,
        Err(_) => return Vec::new(),
    };
    mac.update(message);
    mac.finalize().into_bytes().to_vec()
}

/// Lower-case hex.
fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// What one signature covers.
pub struct Signed<'a> {
    /// The host the request goes to (`hunyuan.tencentcloudapi.com`, or a base URL's).
    pub host: &'a str,
    /// The content type sent.
    pub content_type: &'a str,
    /// The body sent.
    pub payload: &'a [u8],
    /// The service (`hunyuan`).
    pub service: &'a str,
    /// Seconds since the epoch (`X-TC-Timestamp`).
    pub timestamp: i64,
}

/// The UTC date of `timestamp` as `YYYY-MM-DD` (the credential scope's date).
fn utc_date(timestamp: i64) -> String {
    let date = time::OffsetDateTime::from_unix_timestamp(timestamp)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
        .date();
    format!(
        "{:04}-{:02}-{:02}",
        date.year(),
        u8::from(date.month()),
        date.day()
    )
}

/// The `Authorization` header of a POST to `/` signed with TC3-HMAC-SHA256.
pub fn authorization(key: &TencentKey<'_>, signed: &Signed<'_>) -> String {
    let date = utc_date(signed.timestamp);
    let canonical = format!(
        "POST\n/\n\ncontent-type:{}\nhost:{}\n\ncontent-type;host\n{}",
        signed.content_type.trim().to_lowercase(),
        signed.host.trim().to_lowercase(),
        hex(&Sha256::digest(signed.payload))
    );
    let scope = format!("{date}/{}/tc3_request", signed.service);
    let to_sign = format!(
        "TC3-HMAC-SHA256\n{}\n{scope}\n{}",
        signed.timestamp,
        hex(&Sha256::digest(canonical.as_bytes()))
    );
    let secret_date = hmac(format!("TC3{}", key.secret_key).as_bytes(), date.as_bytes());
    let secret_service = hmac(&secret_date, signed.service.as_bytes());
    let secret_signing = hmac(&secret_service, b"tc3_request");
    let signature = hex(&hmac(&secret_signing, to_sign.as_bytes()));
    format!(
        "TC3-HMAC-SHA256 Credential={}/{scope}, SignedHeaders=content-type;host, Signature={signature}",
        key.secret_id
    )
}

/// The signed `ChatCompletions` request of `body` (a Hunyuan request's JSON) to `url`, as the
/// headers to send: `Authorization`, `Content-Type` and the `X-TC-*` action, version and
/// timestamp.
pub fn headers(
    key: &TencentKey<'_>,
    url: &reqwest::Url,
    body: &Bytes,
    timestamp: i64,
) -> Vec<(&'static str, String)> {
    let host = match (url.host_str(), url.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_owned(),
        (None, _) => String::new(),
    };
    let authorization = authorization(
        key,
        &Signed {
            host: &host,
            content_type: CONTENT_TYPE,
            payload: body,
            service: SERVICE,
            timestamp,
        },
    );
    vec![
        ("Authorization", authorization),
        ("Content-Type", CONTENT_TYPE.to_owned()),
        ("X-TC-Action", hunyuan::ACTION.to_owned()),
        ("X-TC-Version", hunyuan::VERSION.to_owned()),
        ("X-TC-Timestamp", timestamp.to_string()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example of "Signature v3" (TencentCloud API 3.0): DescribeInstances on CVM,
    /// SecretKey `Gu5t9xGARNpq86cd98joQYCN3EXAMPLE`, timestamp 1551113065 (UTC 2019-02-25, while
    /// 2019-02-26 in UTC+8 — the date must be UTC's). The payload hash, the canonical request's
    /// hash and the signature are the document's.
    #[test]
    fn the_documented_signature_is_reproduced_byte_for_byte() {
        let payload = r#"{"Limit": 1, "Filters": [{"Values": ["\u672a\u547d\u540d"], "Name": "instance-name"}]}"#;
        assert_eq!(
            hex(&Sha256::digest(payload.as_bytes())),
            "35e9c5b0e3ae67532d3c9f17ead6c90222632e5b1ff7f6e89887f1398934f064"
        );
        let canonical = "POST\n/\n\ncontent-type:application/json; charset=utf-8\nhost:cvm.tencentcloudapi.com\n\ncontent-type;host\n35e9c5b0e3ae67532d3c9f17ead6c90222632e5b1ff7f6e89887f1398934f064";
        assert_eq!(
            hex(&Sha256::digest(canonical.as_bytes())),
            "5ffe6a04c0664d6b969fab9a13bdab201d63ee709638e2749d62a09ca18d7031"
        );
        let key = TencentKey::parse(
            "1300000000|AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE|Gu5t9xGARNpq86cd98joQYCN3EXAMPLE",
        )
        .expect("three parts");
        let header = authorization(
            &key,
            &Signed {
                host: "cvm.tencentcloudapi.com",
                content_type: "application/json; charset=utf-8",
                payload: payload.as_bytes(),
                service: "cvm",
                timestamp: 1_551_113_065,
            },
        );
        assert_eq!(
            header,
            "TC3-HMAC-SHA256 Credential=AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE/2019-02-25/cvm/tc3_request, \
             SignedHeaders=content-type;host, \
             Signature=72e494ea809ad7a8c8f7a4507b9bddcbaa8e581f516e8da2f66e2c5a96525168"
        );
    }

    #[test]
    fn keys_need_three_parts() {
        assert!(TencentKey::parse("app|id|key").is_ok());
        for bad in ["id|key", "app|id|key|more", "app||key", ""] {
            let e = TencentKey::parse(bad).err().unwrap_or_default();
            assert!(e.contains("AppId|SecretId|SecretKey"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_signed_host_is_the_urls() {
        let key = TencentKey::parse("a|id|sk").expect("key");
        let url = reqwest::Url::parse("http://127.0.0.1:8080/").expect("url");
        let h = headers(&key, &url, &Bytes::from_static(b"{}"), 1_700_000_000);
        let names: Vec<&str> = h.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            [
                "Authorization",
                "Content-Type",
                "X-TC-Action",
                "X-TC-Version",
                "X-TC-Timestamp"
            ]
        );
        let expected = authorization(
            &key,
            &Signed {
                host: "127.0.0.1:8080",
                content_type: "application/json",
                payload: b"{}",
                service: "hunyuan",
                timestamp: 1_700_000_000,
            },
        );
        assert_eq!(h[0].1, expected);
        assert!(expected.contains("/2023-11-14/hunyuan/tc3_request"));
    }
}
