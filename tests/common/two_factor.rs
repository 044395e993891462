//! Two-factor helpers: an authenticator app (computes TOTP codes from the secret a setup
//! returned) and turning two-factor on for an actor.

use reqwest::StatusCode;
use serde_json::{Value, json};
use totp_rs::{Builder, Secret};

use super::{Actor, TestServer, new_client};

/// An authenticator app holding one secret. The server accepts each time step once and only
/// steps later than the last accepted, within one step of now; so the app hands out the
/// current step, then the next one, and at most two codes per 30 seconds (a test needing
/// more uses recovery codes).
pub struct Authenticator {
    /// The base32 secret.
    pub secret: String,
    last: Option<u64>,
}

impl Authenticator {
    /// An app for `secret`.
    pub fn new(secret: &str) -> Authenticator {
        Authenticator {
            secret: secret.to_owned(),
            last: None,
        }
    }

    /// The code of time step `step`.
    pub fn code_at_step(&self, step: u64) -> String {
        Builder::new()
            .with_secret(Secret::try_from_base32(&self.secret).expect("base32 secret"))
            .build()
            .expect("totp")
            .generate(step * 30)
            .to_string()
    }

    /// A code the server has not seen and accepts now.
    pub fn code(&mut self) -> String {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_secs()
            / 30;
        let step = match self.last {
            Some(last) if last >= now => last + 1,
            _ => now,
        };
        assert!(step <= now + 1, "more than two codes in one 30-second step");
        self.last = Some(step);
        self.code_at_step(step)
    }

    /// The code accepted last (a replay).
    pub fn last_code(&self) -> String {
        self.code_at_step(self.last.expect("a code was used"))
    }

    /// A well-formed code of a step far from now (always refused).
    pub fn stale_code(&self) -> String {
        self.code_at_step(1)
    }
}

/// Sets up and turns on two-factor for `actor`; returns the app and the recovery codes.
pub async fn turn_on(actor: &Actor) -> (Authenticator, Vec<String>) {
    let (status, body) = actor
        .post("/api/user/2fa/setup", json!({"password": actor.password}))
        .await;
    assert_eq!(status, StatusCode::OK, "setup: {body}");
    let mut app = Authenticator::new(body["data"]["secret"].as_str().expect("secret"));
    let (status, body) = actor
        .post("/api/user/2fa/enable", json!({"code": app.code()}))
        .await;
    assert_eq!(status, StatusCode::OK, "enable: {body}");
    let codes = body["data"]["backup_codes"]
        .as_array()
        .expect("recovery codes")
        .iter()
        .map(|c| c.as_str().expect("code").to_owned())
        .collect();
    (app, codes)
}

/// Signs in with the password and then `code` in a NEW client; returns it signed in.
pub async fn sign_in(server: &TestServer, username: &str, password: &str, code: &str) -> Actor {
    let client = new_client();
    let (status, body) = server
        .send(
            client
                .post(server.url("/api/user/login"))
                .json(&json!({"username": username, "password": password})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "password step: {body}");
    assert_eq!(body["data"]["require_2fa"], true, "{body}");
    let (status, body) = second_step(server, &client, code).await;
    assert_eq!(status, StatusCode::OK, "code step: {body}");
    Actor {
        client,
        id: body["data"]["id"].as_i64().expect("id"),
        password: password.to_owned(),
        base: server.base.clone(),
    }
}

/// POST /api/user/login/2fa with `code` from `client`.
pub async fn second_step(
    server: &TestServer,
    client: &reqwest::Client,
    code: &str,
) -> (StatusCode, Value) {
    server
        .send(
            client
                .post(server.url("/api/user/login/2fa"))
                .json(&json!({"code": code})),
        )
        .await
}

/// Re-verifies `actor`'s session with `code` (POST /api/verify).
pub async fn verify(actor: &Actor, code: &str) {
    let (status, body) = actor.post("/api/verify", json!({"code": code})).await;
    assert_eq!(status, StatusCode::OK, "verify: {body}");
}

/// `server`'s own client (its cookies) as user `id`: root, signed in by `server.root()`.
pub fn actor_of(server: &TestServer, id: i64) -> Actor {
    Actor {
        client: server.client.clone(),
        id,
        password: super::ROOT_PASS.to_owned(),
        base: server.base.clone(),
    }
}

/// Turns two-factor on for `actor` and verifies its session (for a channel key reveal).
pub async fn turn_on_and_verify(actor: &Actor) -> (Authenticator, Vec<String>) {
    let (mut app, codes) = turn_on(actor).await;
    verify(actor, &app.code()).await;
    (app, codes)
}

/// `client` (its cookies) as user `id`, whose password the harness does not know.
pub fn actor(server: &TestServer, client: &reqwest::Client, id: i64) -> Actor {
    Actor {
        client: client.clone(),
        id,
        password: String::new(),
        base: server.base.clone(),
    }
}
