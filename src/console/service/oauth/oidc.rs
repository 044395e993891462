//! Generic OpenID Connect (authorization-code flow with PKCE): discovery from the
//! `oidc.well_known` option, the token request, the ID token verified against the provider's
//! key set (signature, `iss`, `aud`, `exp`, `nonce`), and the userinfo endpoint. The identity
//! is the issuer and the subject together.

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tollgate_actors::options::OptionsSnapshot;
use tollgate_storage::users::Provider;

use super::fetch;
use super::link::Identity;
use super::state::Pending;
use crate::error::{ConsoleError, ErrorCode};
use crate::state::AppState;

/// Name used in messages.
const NAME: &str = "OIDC provider";

/// Signature algorithms accepted on ID tokens: asymmetric only (an HMAC "signature" keyed with
/// the client secret, or `none`, proves nothing about the issuer's keys).
const ACCEPTED: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Clock skew allowed on `exp`, `nbf` and `iat`, in seconds.
const LEEWAY_SECS: u64 = 60;

/// The parts of the discovery document used here.
#[derive(Debug, Clone, Deserialize)]
struct Discovery {
    issuer: String,
    #[serde(default)]
    authorization_endpoint: String,
    #[serde(default)]
    token_endpoint: String,
    #[serde(default)]
    userinfo_endpoint: String,
    jwks_uri: String,
    #[serde(default)]
    token_endpoint_auth_methods_supported: Vec<String>,
}

/// The provider as configured: options first, the discovery document for the rest.
#[derive(Debug, Clone)]
pub struct OidcProvider {
    client_id: String,
    client_secret: String,
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    userinfo_endpoint: String,
    jwks_uri: String,
    /// Send the client credentials in the form body rather than HTTP Basic.
    secret_in_body: bool,
}

/// Reads the options and the discovery document.
pub async fn provider(state: &AppState) -> Result<OidcProvider, ConsoleError> {
    let options = state.options.current();
    if !options.flag("oidc.enabled") {
        return Err(ConsoleError::of(ErrorCode::OidcDisabled));
    }
    let well_known = options.text("oidc.well_known").trim().to_owned();
    if well_known.is_empty() || options.text("oidc.client_id").is_empty() {
        return Err(ConsoleError::of(ErrorCode::OidcNotConfigured));
    }
    let discovery: Discovery = fetch::json(
        state.http.direct().get(&well_known),
        NAME,
        "discovery document",
    )
    .await?;
    Ok(from_parts(&options, discovery))
}

/// The endpoints a discovery document names, for the settings form's "fetch" button (the
/// browser cannot read the document itself for lack of CORS). Missing ones are empty.
#[derive(Debug, Default, Deserialize, Serialize)]
pub struct Endpoints {
    /// `authorization_endpoint`.
    #[serde(default)]
    pub authorization_endpoint: String,
    /// `token_endpoint`.
    #[serde(default)]
    pub token_endpoint: String,
    /// `userinfo_endpoint`.
    #[serde(default, rename(serialize = "user_info_endpoint"))]
    pub userinfo_endpoint: String,
}

/// Reads the discovery document at `well_known` (an http(s) URL) and returns its endpoints.
pub async fn discover(state: &AppState, well_known: &str) -> Result<Endpoints, ConsoleError> {
    let url = well_known.trim();
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(ConsoleError::of(ErrorCode::WellKnownNotHttp));
    }
    fetch::json(state.http.direct().get(url), NAME, "discovery document").await
}

fn from_parts(options: &OptionsSnapshot, d: Discovery) -> OidcProvider {
    let pick = |key: &str, found: String| {
        let set = options.text(key).trim();
        if set.is_empty() {
            found
        } else {
            set.to_owned()
        }
    };
    let methods = &d.token_endpoint_auth_methods_supported;
    OidcProvider {
        client_id: options.text("oidc.client_id").to_owned(),
        client_secret: options.text("oidc.client_secret").to_owned(),
        authorization_endpoint: pick("oidc.authorization_endpoint", d.authorization_endpoint),
        token_endpoint: pick("oidc.token_endpoint", d.token_endpoint),
        userinfo_endpoint: pick("oidc.user_info_endpoint", d.userinfo_endpoint),
        // client_secret_basic is the default (OpenID Connect Discovery §3); the body is used
        // only when the provider says it takes only that.
        secret_in_body: !methods.is_empty()
            && !methods.iter().any(|m| m == "client_secret_basic")
            && methods.iter().any(|m| m == "client_secret_post"),
        issuer: d.issuer,
        jwks_uri: d.jwks_uri,
    }
}

impl OidcProvider {
    /// Where the browser is sent to sign in.
    pub fn authorize_url(&self, pending: &Pending) -> Result<String, ConsoleError> {
        let mut url = reqwest::Url::parse(&self.authorization_endpoint)
            .map_err(|_| ConsoleError::of(ErrorCode::OidcAuthorizationEndpointInvalid))?;
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.client_id)
            .append_pair("redirect_uri", &pending.redirect_uri)
            .append_pair("scope", "openid profile email")
            .append_pair("state", &pending.state)
            .append_pair("nonce", &pending.nonce)
            .append_pair("code_challenge", &pending.code_challenge())
            .append_pair("code_challenge_method", "S256");
        Ok(url.into())
    }

    /// Exchanges `code` and returns the verified identity.
    pub async fn identity(
        &self,
        state: &AppState,
        pending: &Pending,
        code: &str,
    ) -> Result<Identity, ConsoleError> {
        let http = state.http.direct();
        let mut form = vec![
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", pending.redirect_uri.as_str()),
            ("code_verifier", pending.verifier.as_str()),
        ];
        let mut req = http.post(&self.token_endpoint);
        if self.secret_in_body {
            form.push(("client_id", &self.client_id));
            form.push(("client_secret", &self.client_secret));
        } else {
            form.push(("client_id", &self.client_id));
            req = req.basic_auth(
                form_encode(&self.client_id),
                Some(form_encode(&self.client_secret)),
            );
        }
        let tokens: TokenAnswer = fetch::json(req.form(&form), NAME, "token request").await?;
        let id_token = tokens
            .id_token
            .ok_or_else(|| ConsoleError::with_args(ErrorCode::OidcNoIdToken, [NAME.to_string()]))?;
        let jwks: JwkSet = fetch::json(http.get(&self.jwks_uri), NAME, "key set (JWKS)").await?;
        let claims = self.verify(&id_token, &jwks, &pending.nonce)?;
        let mut info = claims.clone();
        if !self.userinfo_endpoint.is_empty() {
            let answer: Value = fetch::json(
                http.get(&self.userinfo_endpoint)
                    .bearer_auth(&tokens.access_token),
                NAME,
                "userinfo request",
            )
            .await?;
            // The userinfo `sub` must be the ID token's (OpenID Connect Core §5.3.2).
            if answer.get("sub").and_then(Value::as_str) != Some(claims.sub.as_str()) {
                return Err(ConsoleError::of(ErrorCode::OidcSubjectMismatch));
            }
            info = Claims::from_value(&answer).merged_over(claims.clone());
        }
        Ok(Identity {
            provider: Provider::Oidc,
            external_id: format!("{} {}", self.issuer, claims.sub),
            username: info.preferred_username.unwrap_or_default(),
            display_name: info.name.unwrap_or_default(),
            verified_email: info.email.filter(|_| info.email_verified),
        })
    }

    /// Verifies the ID token: an accepted algorithm, a key of the provider's key set, issuer,
    /// audience, expiry and nonce.
    fn verify(&self, id_token: &str, jwks: &JwkSet, nonce: &str) -> Result<Claims, ConsoleError> {
        let bad =
            |why: &str| ConsoleError::with_args(ErrorCode::OidcIdTokenRefused, [why.to_string()]);
        let header = jsonwebtoken::decode_header(id_token).map_err(|_| bad("malformed"))?;
        if !ACCEPTED.contains(&header.alg) {
            return Err(bad("its signature algorithm is not accepted"));
        }
        let jwk = match &header.kid {
            Some(kid) => jwks.find(kid),
            None if jwks.keys.len() == 1 => jwks.keys.first(),
            None => None,
        }
        .ok_or_else(|| bad("it is not signed with a key of the provider's key set"))?;
        let key = DecodingKey::from_jwk(jwk).map_err(|_| bad("the provider's key is unusable"))?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.client_id]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.leeway = LEEWAY_SECS;
        let data = jsonwebtoken::decode::<Value>(id_token, &key, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind;
            bad(match e.kind() {
                ErrorKind::InvalidSignature => "bad signature",
                ErrorKind::ExpiredSignature => "expired",
                ErrorKind::InvalidIssuer => "wrong issuer",
                ErrorKind::InvalidAudience => "wrong audience",
                ErrorKind::ImmatureSignature => "not valid yet",
                ErrorKind::MissingRequiredClaim(_) => "a required claim is missing",
                _ => "invalid",
            })
        })?;
        let claims = Claims::from_value(&data.claims);
        if data.claims.get("nonce").and_then(Value::as_str) != Some(nonce) {
            return Err(bad("wrong nonce"));
        }
        if claims.sub.is_empty() {
            return Err(bad("no subject"));
        }
        Ok(claims)
    }
}

/// The token endpoint's answer.
#[derive(Deserialize)]
struct TokenAnswer {
    #[serde(default)]
    access_token: String,
    #[serde(default)]
    id_token: Option<String>,
}

/// Standard claims read from the ID token or the userinfo answer.
#[derive(Debug, Clone, Default)]
struct Claims {
    sub: String,
    preferred_username: Option<String>,
    name: Option<String>,
    email: Option<String>,
    email_verified: bool,
}

impl Claims {
    fn from_value(v: &Value) -> Claims {
        let text = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        Claims {
            sub: text("sub").unwrap_or_default(),
            preferred_username: text("preferred_username"),
            name: text("name"),
            email: text("email"),
            // Some providers send the flag as text.
            email_verified: match v.get("email_verified") {
                Some(Value::Bool(b)) => *b,
                Some(Value::String(s)) => s == "true",
                _ => false,
            },
        }
    }

    /// These claims, with `base`'s where these have none. The email and its flag travel
    /// together, so a verified flag never vouches for another address.
    fn merged_over(self, base: Claims) -> Claims {
        let (email, email_verified) = match self.email {
            Some(e) => (Some(e), self.email_verified),
            None => (base.email, base.email_verified),
        };
        Claims {
            sub: base.sub,
            preferred_username: self.preferred_username.or(base.preferred_username),
            name: self.name.or(base.name),
            email,
            email_verified,
        }
    }
}

/// HTTP Basic credentials of OAuth clients are form-encoded first (RFC 6749 §2.3.1).
fn form_encode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}
