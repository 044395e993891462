//! Spark's signing: the key `APPID|APISecret|APIKey` ([`SparkKey`]), the model version and its
//! endpoint ([`version`], [`endpoint`]), and the signed WebSocket URL ([`signed_url`],
//! "WebSocket协议通用鉴权URL生成说明", <https://xfyun.cn/doc/spark/general_url_authentication.html>:
//! HMAC-SHA256 under the APISecret of `host`, `date` and the request line, `authorization`
//! base64 in the query). Pure functions, no I/O.

use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// A Spark key line, split. Holds secrets: it has no `Debug`.
pub struct SparkKey<'a> {
    /// The application (`header.app_id`).
    pub app_id: &'a str,
    /// The APISecret, which signs.
    pub api_secret: &'a str,
    /// The APIKey, named in the authorization.
    pub api_key: &'a str,
}

impl<'a> SparkKey<'a> {
    /// Reads `APPID|APISecret|APIKey`; the message never holds the key.
    pub fn parse(line: &'a str) -> Result<SparkKey<'a>, String> {
        let mut parts = line.trim().split('|').map(str::trim);
        match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some(app_id), Some(api_secret), Some(api_key), None)
                if !app_id.is_empty() && !api_secret.is_empty() && !api_key.is_empty() =>
            {
                Ok(SparkKey {
                    app_id,
                    api_secret,
                    api_key,
                })
            }
            _ => Err("a Spark key is APPID|APISecret|APIKey".into()),
        }
    }
}

/// The model version: a `SparkDesk-vX.Y` model's, else the channel's `other`, else v2.1.
pub fn version(model: &str, other: &str) -> String {
    if let Some(v) = model
        .strip_prefix("SparkDesk-")
        .filter(|v| !v.is_empty() && !v.contains('/'))
    {
        return v.to_owned();
    }
    let other = other.trim();
    if other.is_empty() || other.contains('/') {
        "v2.1".to_owned()
    } else {
        other.to_owned()
    }
}

/// The path and `domain` of a model version, as Spark's documentation lists them (v1.1 Lite,
/// v2.1, v3.1 Pro, v3.5 Max, v4.0 4.0 Ultra, pro-128k and max-32k under `/chat/`); another
/// `vX.Y` goes to `/vX.Y/chat` with the domain `generalvX.Y`.
pub fn endpoint(version: &str) -> (String, String) {
    let domain = match version {
        "v1.1" => "lite",
        "v2.1" => "generalv2",
        "v3.1" => "generalv3",
        "v3.5" => "generalv3.5",
        "v4.0" => "4.0Ultra",
        "pro-128k" | "max-32k" => return (format!("/chat/{version}"), version.to_owned()),
        other => return (format!("/{other}/chat"), format!("general{other}")),
    };
    (format!("/{version}/chat"), domain.to_owned())
}

/// HMAC-SHA256 of `message` under `key`, base64.
pub(super) fn hmac_base64(key: &[u8], message: &[u8]) -> String {
    // HMAC takes keys of any length: `new_from_slice` cannot fail for it.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
        return String::new();
    };
    mac.update(message);
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// The `authorization` query parameter for `host`, `date` and the GET of `path`.
pub fn authorization(key: &SparkKey<'_>, host: &str, date: &str, path: &str) -> String {
    let signed = format!("host: {host}\ndate: {date}\nGET {path} HTTP/1.1");
    let signature = hmac_base64(key.api_secret.as_bytes(), signed.as_bytes());
    let origin = format!(
        "api_key=\"{}\", algorithm=\"hmac-sha256\", headers=\"host date request-line\", signature=\"{signature}\"",
        key.api_key
    );
    base64::engine::general_purpose::STANDARD.encode(origin)
}

/// The signed WebSocket URL of `path` under `base` (an `http(s)` base becomes `ws(s)`) at
/// `date` (RFC 1123, GMT).
pub fn signed_url(
    base: &str,
    path: &str,
    key: &SparkKey<'_>,
    date: &str,
) -> Result<reqwest::Url, String> {
    let base = base.trim_end_matches('/');
    let base = if let Some(rest) = base.strip_prefix("https://") {
        format!("wss://{rest}")
    } else if let Some(rest) = base.strip_prefix("http://") {
        format!("ws://{rest}")
    } else {
        base.to_owned()
    };
    let mut url = reqwest::Url::parse(&format!("{base}{path}"))
        .map_err(|e| format!("the channel's base URL does not make a valid URL: {e}"))?;
    if !matches!(url.scheme(), "ws" | "wss") {
        return Err("a Spark base URL is wss://, ws://, https:// or http://".into());
    }
    let host = match (url.host_str(), url.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_owned(),
        (None, _) => return Err("the channel's base URL has no host".into()),
    };
    let authorization = authorization(key, &host, date, url.path());
    url.query_pairs_mut()
        .append_pair("authorization", &authorization)
        .append_pair("date", date)
        .append_pair("host", &host);
    Ok(url)
}
