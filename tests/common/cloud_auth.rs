//! The cloud providers' authentication, checked the way the providers check it, for the mocks:
//!
//! - Google's signed-JWT grant (https://developers.google.com/identity/protocols/oauth2/service-account#httprest):
//!   a service-account key generated per test process (RSA 2048), and the token endpoint's check
//!   of the posted assertion: `grant_type`, the RS256 signature by the key, `iss` the key's
//!   `client_email`, `aud` the key's `token_uri`, `scope`, `exp` in the future and at most an
//!   hour after `iat`.
//! - AWS Signature Version 4 (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html),
//!   written out here independently of the crate Tollgate signs with: the canonical request
//!   rebuilt from the request as received (path segments encoded again, signed headers, payload
//!   hash), the string to sign, the derived signing key, the signature compared; the date within
//!   15 minutes of now; a session token signed when one is expected.
#![allow(
    dead_code,
    reason = "each test binary uses a different subset of the helpers"
)]
#![expect(
    clippy::expect_used,
    reason = "a broken test helper must fail the test loudly"
)]

use std::sync::OnceLock;

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rsa::{KeyPair, KeySize};
use aws_lc_rs::signature::KeyPair as _;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use serde::Deserialize;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::mock_cloud::Recorded;

/// A service-account key of the mock Google project.
pub struct GoogleKey {
    /// The PKCS#8 private key, PEM.
    pub private_pem: String,
    /// The public key, PKCS#1 DER (to verify signatures).
    pub public_der: Vec<u8>,
}

/// The process's test service-account key (generated once: RSA key generation is slow).
pub fn google_key() -> &'static GoogleKey {
    static KEY: OnceLock<GoogleKey> = OnceLock::new();
    KEY.get_or_init(|| {
        let pair = KeyPair::generate(KeySize::Rsa2048).expect("RSA key");
        let der = pair.as_der().expect("PKCS#8");
        let b64 = STANDARD.encode(der.as_ref());
        let mut pem = String::from("-----BEGIN PRIVATE KEY-----\n");
        for line in b64.as_bytes().chunks(64) {
            pem.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
            pem.push('\n');
        }
        pem.push_str("-----END PRIVATE KEY-----\n");
        GoogleKey {
            private_pem: pem,
            public_der: pair.public_key().as_ref().to_vec(),
        }
    })
}

/// The service account of the tests.
pub const CLIENT_EMAIL: &str = "tollgate-test@my-project.iam.gserviceaccount.com";
/// The project of the tests' key.
pub const PROJECT: &str = "my-project";

/// A service-account JSON key (one line) whose `token_uri` is `token_uri`, with the fields of
/// the key file Google issues.
pub fn service_account_json(token_uri: &str) -> String {
    json!({
        "type": "service_account",
        "project_id": PROJECT,
        "private_key_id": "0123456789abcdef",
        "private_key": google_key().private_pem,
        "client_email": CLIENT_EMAIL,
        "client_id": "1234567890",
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": token_uri,
    })
    .to_string()
}

/// The claims a grant's assertion must carry.
#[derive(Debug, Deserialize)]
pub struct GrantClaims {
    /// Issuer.
    pub iss: String,
    /// Scope.
    pub scope: String,
    /// Audience.
    pub aud: String,
    /// Issued at.
    pub iat: i64,
    /// Expiry.
    pub exp: i64,
}

/// Checks a token request (the form body posted to `token_uri`) as Google's token endpoint
/// does; `Err` is the OAuth error to answer.
pub fn verify_grant(body: &[u8], token_uri: &str) -> Result<GrantClaims, String> {
    let form: Vec<(String, String)> = form_urlencoded::parse(body).into_owned().collect();
    let field = |name: &str| form.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    if field("grant_type").as_deref() != Some("urn:ietf:params:oauth:grant-type:jwt-bearer") {
        return Err("unsupported_grant_type".into());
    }
    let assertion = field("assertion").ok_or("invalid_request")?;
    let key = jsonwebtoken::DecodingKey::from_rsa_der(&google_key().public_der);
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    validation.set_audience(&[token_uri]);
    validation.set_issuer(&[CLIENT_EMAIL]);
    validation.set_required_spec_claims(&["exp", "iat", "aud", "iss"]);
    validation.leeway = 0;
    let data = jsonwebtoken::decode::<GrantClaims>(&assertion, &key, &validation)
        .map_err(|e| format!("invalid_grant: {e}"))?;
    let claims = data.claims;
    if claims.exp - claims.iat > 3600 || claims.exp <= claims.iat {
        return Err("invalid_grant: the assertion lives longer than an hour".into());
    }
    if claims.scope != "https://www.googleapis.com/auth/cloud-platform" {
        return Err("invalid_scope".into());
    }
    Ok(claims)
}

type HmacSha256 = Hmac<Sha256>;

fn hmac(key: &[u8], data: &str) -> Vec<u8> {
    let mut mac = HmacSha256::new_from_slice(key).expect("any key length");
    mac.update(data.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// URI-encodes as SigV4 does: everything but unreserved characters.
fn uri_encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Unix seconds of an `x-amz-date` (`YYYYMMDDTHHMMSSZ`).
fn amz_date_unix(text: &str) -> Option<i64> {
    let digits = |from: usize, to: usize| text.get(from..to)?.parse::<i64>().ok();
    if text.len() != 16 || text.as_bytes()[8] != b'T' || !text.ends_with('Z') {
        return None;
    }
    let month = u8::try_from(digits(4, 6)?).ok()?;
    let date = time::Date::from_calendar_date(
        i32::try_from(digits(0, 4)?).ok()?,
        time::Month::try_from(month).ok()?,
        u8::try_from(digits(6, 8)?).ok()?,
    )
    .ok()?;
    let at = time::Time::from_hms(
        u8::try_from(digits(9, 11)?).ok()?,
        u8::try_from(digits(11, 13)?).ok()?,
        u8::try_from(digits(13, 15)?).ok()?,
    )
    .ok()?;
    Some(
        time::PrimitiveDateTime::new(date, at)
            .assume_utc()
            .unix_timestamp(),
    )
}

/// What a SigV4 check expects.
pub struct AwsExpect<'a> {
    /// Access key id.
    pub access_key: &'a str,
    /// Secret key.
    pub secret_key: &'a str,
    /// Region.
    pub region: &'a str,
    /// Service.
    pub service: &'a str,
    /// The session token that must be sent and signed, if any.
    pub session_token: Option<&'a str>,
    /// Unix seconds "now" for the date check (`None`: skip it, for the published vectors).
    pub now: Option<i64>,
}

/// Checks a request's SigV4 signature the way AWS does; `Err` says what AWS would refuse.
pub fn verify_sigv4(req: &Recorded, expect: &AwsExpect<'_>) -> Result<(), String> {
    let auth = req
        .header("authorization")
        .ok_or("MissingAuthenticationToken")?;
    let rest = auth
        .strip_prefix("AWS4-HMAC-SHA256 ")
        .ok_or("IncompleteSignature: algorithm")?;
    let mut credential = None;
    let mut signed_headers = None;
    let mut signature = None;
    for part in rest.split(',') {
        let part = part.trim();
        if let Some(v) = part.strip_prefix("Credential=") {
            credential = Some(v);
        } else if let Some(v) = part.strip_prefix("SignedHeaders=") {
            signed_headers = Some(v);
        } else if let Some(v) = part.strip_prefix("Signature=") {
            signature = Some(v);
        }
    }
    let (credential, signed_headers, signature) = (
        credential.ok_or("IncompleteSignature: Credential")?,
        signed_headers.ok_or("IncompleteSignature: SignedHeaders")?,
        signature.ok_or("IncompleteSignature: Signature")?,
    );
    let scope: Vec<&str> = credential.split('/').collect();
    let [access_key, date, region, service, "aws4_request"] = scope[..] else {
        return Err(format!(
            "IncompleteSignature: credential scope {credential}"
        ));
    };
    if access_key != expect.access_key {
        return Err("UnrecognizedClientException: unknown access key".into());
    }
    if region != expect.region || service != expect.service {
        return Err(format!("SignatureDoesNotMatch: scope {region}/{service}"));
    }
    let amz_date = req
        .header("x-amz-date")
        .ok_or("IncompleteSignature: x-amz-date")?;
    if !amz_date.starts_with(date) {
        return Err("SignatureDoesNotMatch: date scope".into());
    }
    if let Some(now) = expect.now {
        let when = amz_date_unix(&amz_date).ok_or("IncompleteSignature: x-amz-date format")?;
        if (when - now).abs() > 15 * 60 {
            return Err("InvalidSignatureException: Signature expired".into());
        }
    }
    let names: Vec<&str> = signed_headers.split(';').collect();
    if !names.contains(&"host") {
        return Err("SignatureDoesNotMatch: host is not signed".into());
    }
    if let Some(token) = expect.session_token
        && (req.header("x-amz-security-token").as_deref() != Some(token)
            || !names.contains(&"x-amz-security-token"))
    {
        return Err("UnrecognizedClientException: the security token is missing".into());
    }
    let mut canonical_headers = String::new();
    for name in &names {
        let values: Vec<String> = req
            .headers
            .get_all(*name)
            .iter()
            .map(|v| {
                v.to_str()
                    .unwrap_or_default()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        if values.is_empty() {
            return Err(format!(
                "SignatureDoesNotMatch: signed header {name} missing"
            ));
        }
        canonical_headers.push_str(&format!("{name}:{}\n", values.join(",")));
    }
    let canonical_uri: String = if req.path.is_empty() {
        "/".into()
    } else {
        req.path
            .split('/')
            .map(uri_encode)
            .collect::<Vec<_>>()
            .join("/")
    };
    let mut query: Vec<(String, String)> = form_urlencoded::parse(req.query.as_bytes())
        .into_owned()
        .map(|(k, v)| (uri_encode(&k), uri_encode(&v)))
        .collect();
    query.sort();
    let canonical_query = query
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&");
    let canonical = format!(
        "{}\n{canonical_uri}\n{canonical_query}\n{canonical_headers}\n{signed_headers}\n{}",
        req.method,
        hex(&Sha256::digest(&req.body))
    );
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{date}/{region}/{service}/aws4_request\n{}",
        hex(&Sha256::digest(canonical.as_bytes()))
    );
    let k_date = hmac(format!("AWS4{}", expect.secret_key).as_bytes(), date);
    let k_region = hmac(&k_date, region);
    let k_service = hmac(&k_region, service);
    let k_signing = hmac(&k_service, "aws4_request");
    let expected = hex(&hmac(&k_signing, &string_to_sign));
    if expected != signature {
        return Err(
            "SignatureDoesNotMatch: The request signature we calculated does not match \
                    the signature you provided"
                .into(),
        );
    }
    Ok(())
}
