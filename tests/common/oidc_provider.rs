//! A real OpenID Connect provider on loopback for the sign-in tests: discovery, an
//! authorization endpoint that approves at once (redirecting with a code), a token endpoint
//! that checks the client's credentials, the redirect URI and the PKCE verifier (S256), ID
//! tokens signed by `jsonwebtoken` with an ECDSA P-256 key generated per provider, a JWKS
//! endpoint and userinfo. Knobs make the next ID token wrong in one way (issuer, audience,
//! expiry, nonce, signing key) so the tests can see each refused.
#![expect(
    clippy::expect_used,
    reason = "a broken test provider must fail the test loudly"
)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use axum::Router;
use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::json;
use sha2::{Digest, Sha256};

/// The client registered at the provider.
pub const CLIENT_ID: &str = "tollgate-test";
/// Its secret.
pub const CLIENT_SECRET: &str = "s3cret-oidc";

/// The account the provider signs in next.
#[derive(Debug, Clone)]
pub struct Account {
    /// Subject.
    pub sub: String,
    /// preferred_username.
    pub username: String,
    /// name.
    pub name: String,
    /// email.
    pub email: String,
    /// email_verified.
    pub email_verified: bool,
}

impl Account {
    /// An account with a verified email.
    pub fn new(sub: &str, username: &str, email: &str) -> Account {
        Account {
            sub: sub.into(),
            username: username.into(),
            name: format!("{username} (OIDC)"),
            email: email.into(),
            email_verified: true,
        }
    }
}

/// One way to spoil the next ID token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spoil {
    /// A correct token.
    Nothing,
    /// Signed with another key (same `kid`).
    Signature,
    /// Another `iss`.
    Issuer,
    /// Another `aud`.
    Audience,
    /// Expired an hour ago.
    Expired,
    /// Another `nonce`.
    Nonce,
}

struct Grant {
    nonce: String,
    challenge: String,
    redirect_uri: String,
    account: Account,
}

struct Shared {
    issuer: String,
    key: EncodingKey,
    other_key: EncodingKey,
    jwk: Jwk,
    account: Mutex<Account>,
    spoil: Mutex<Spoil>,
    grants: Mutex<HashMap<String, Grant>>,
    tokens: Mutex<HashMap<String, Account>>,
    /// Every authorization request's query, in order.
    authorizations: Mutex<Vec<HashMap<String, String>>>,
    /// Token requests refused, with why.
    refusals: Mutex<Vec<String>>,
}

/// A running provider.
pub struct OidcProvider {
    /// The issuer, `http://127.0.0.1:<port>`.
    pub issuer: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

fn p256_key() -> EncodingKey {
    let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).expect("generate key");
    let der = pair.to_pkcs8v1().expect("pkcs8");
    EncodingKey::from_ec_der(der.as_ref())
}

impl OidcProvider {
    /// Starts a provider on 127.0.0.1 with a fresh signing key.
    pub async fn start() -> OidcProvider {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let issuer = format!("http://{}", listener.local_addr().expect("addr"));
        let key = p256_key();
        let mut jwk = Jwk::from_encoding_key(&key, Algorithm::ES256).expect("jwk");
        jwk.common.key_id = Some("k1".into());
        let shared = Arc::new(Shared {
            issuer: issuer.clone(),
            key,
            other_key: p256_key(),
            jwk,
            account: Mutex::new(Account::new("sub-1", "alice", "alice@example.com")),
            spoil: Mutex::new(Spoil::Nothing),
            grants: Mutex::new(HashMap::new()),
            tokens: Mutex::new(HashMap::new()),
            authorizations: Mutex::new(Vec::new()),
            refusals: Mutex::new(Vec::new()),
        });
        let app = Router::new()
            .route("/.well-known/openid-configuration", get(discovery))
            .route("/authorize", get(authorize))
            .route("/token", post(token))
            .route("/userinfo", get(userinfo))
            .route("/jwks", get(jwks))
            .with_state(Arc::clone(&shared));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        OidcProvider {
            issuer,
            shared,
            task,
        }
    }

    /// The discovery document's address (the `oidc.well_known` option).
    pub fn well_known(&self) -> String {
        format!("{}/.well-known/openid-configuration", self.issuer)
    }

    /// Signs in `account` from now on.
    pub fn sign_in_as(&self, account: Account) {
        *self.shared.account.lock().expect("lock") = account;
    }

    /// Spoils every ID token from now on in the given way.
    pub fn spoil(&self, spoil: Spoil) {
        *self.shared.spoil.lock().expect("lock") = spoil;
    }

    /// The queries of the authorization requests so far.
    pub fn authorizations(&self) -> Vec<HashMap<String, String>> {
        self.shared.authorizations.lock().expect("lock").clone()
    }

    /// Token requests refused so far, with why.
    pub fn refusals(&self) -> Vec<String> {
        self.shared.refusals.lock().expect("lock").clone()
    }
}

impl Drop for OidcProvider {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn discovery(State(s): State<Arc<Shared>>) -> Response {
    axum::Json(json!({
        "issuer": s.issuer,
        "authorization_endpoint": format!("{}/authorize", s.issuer),
        "token_endpoint": format!("{}/token", s.issuer),
        "userinfo_endpoint": format!("{}/userinfo", s.issuer),
        "jwks_uri": format!("{}/jwks", s.issuer),
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["ES256"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic"],
    }))
    .into_response()
}

/// Approves at once: redirects to `redirect_uri` with a fresh code and the state.
async fn authorize(
    State(s): State<Arc<Shared>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    s.authorizations.lock().expect("lock").push(q.clone());
    let field = |k: &str| q.get(k).cloned().unwrap_or_default();
    if field("client_id") != CLIENT_ID || field("response_type") != "code" {
        return (StatusCode::BAD_REQUEST, "bad client or response type").into_response();
    }
    let code = format!("code-{}", s.grants.lock().expect("lock").len() + 1);
    let account = s.account.lock().expect("lock").clone();
    s.grants.lock().expect("lock").insert(
        code.clone(),
        Grant {
            nonce: field("nonce"),
            challenge: field("code_challenge"),
            redirect_uri: field("redirect_uri"),
            account,
        },
    );
    let mut target = reqwest::Url::parse(&field("redirect_uri")).expect("redirect uri");
    target
        .query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &field("state"));
    Redirect::to(target.as_str()).into_response()
}

fn refuse(s: &Shared, why: &str) -> Response {
    s.refusals.lock().expect("lock").push(why.to_owned());
    (
        StatusCode::BAD_REQUEST,
        axum::Json(json!({"error": "invalid_grant", "error_description": why})),
    )
        .into_response()
}

async fn token(
    State(s): State<Arc<Shared>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let expected = format!(
        "Basic {}",
        STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}"))
    );
    if headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        != Some(&expected)
    {
        return refuse(&s, "client authentication failed");
    }
    let field = |k: &str| form.get(k).cloned().unwrap_or_default();
    if field("grant_type") != "authorization_code" {
        return refuse(&s, "grant type");
    }
    // Codes are single-use.
    let Some(grant) = s.grants.lock().expect("lock").remove(&field("code")) else {
        return refuse(&s, "unknown or used code");
    };
    if grant.redirect_uri != field("redirect_uri") {
        return refuse(&s, "redirect_uri differs from the authorization request");
    }
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(field("code_verifier").as_bytes()));
    if grant.challenge.is_empty() || grant.challenge != challenge {
        return refuse(&s, "PKCE verifier does not match the challenge");
    }
    let spoil = *s.spoil.lock().expect("lock");
    let now = jsonwebtoken::get_current_timestamp() as i64;
    let a = &grant.account;
    let claims = json!({
        "iss": if spoil == Spoil::Issuer { "https://evil.example".to_owned() } else { s.issuer.clone() },
        "aud": if spoil == Spoil::Audience { "someone-else" } else { CLIENT_ID },
        "sub": a.sub,
        "iat": now,
        "exp": if spoil == Spoil::Expired { now - 3600 } else { now + 300 },
        "nonce": if spoil == Spoil::Nonce { "not-the-nonce".to_owned() } else { grant.nonce.clone() },
        "email": a.email,
        "email_verified": a.email_verified,
    });
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("k1".into());
    let key = if spoil == Spoil::Signature {
        &s.other_key
    } else {
        &s.key
    };
    let id_token = jsonwebtoken::encode(&header, &claims, key).expect("sign");
    let access = format!("at-{}", a.sub);
    s.tokens
        .lock()
        .expect("lock")
        .insert(access.clone(), a.clone());
    axum::Json(json!({
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": 300,
        "id_token": id_token,
    }))
    .into_response()
}

async fn userinfo(State(s): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    let Some(a) = s.tokens.lock().expect("lock").get(token).cloned() else {
        return StatusCode::UNAUTHORIZED.into_response();
    };
    axum::Json(json!({
        "sub": a.sub,
        "preferred_username": a.username,
        "name": a.name,
        "email": a.email,
        "email_verified": a.email_verified,
    }))
    .into_response()
}

async fn jwks(State(s): State<Arc<Shared>>) -> Response {
    axum::Json(JwkSet {
        keys: vec![s.jwk.clone()],
    })
    .into_response()
}
