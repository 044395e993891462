//! A browser for the third-party sign-in tests: its own cookie jar, following the flow by hand
//! (start on Tollgate, approve at the provider without following its redirect, come back to
//! the callback route).
#![expect(
    clippy::expect_used,
    reason = "a broken test browser must fail the test loudly"
)]

use std::collections::HashMap;

use reqwest::StatusCode;
use serde_json::Value;

use super::{TestServer, new_client};

/// A browser session against one Tollgate.
pub struct Browser {
    /// The cookie-keeping client.
    pub client: reqwest::Client,
    /// The signed-in user's id (sent as `New-Api-User`), 0 for a guest.
    pub id: i64,
    base: String,
}

impl Browser {
    /// A guest browser.
    pub fn guest(server: &TestServer) -> Browser {
        Browser {
            client: new_client(),
            id: 0,
            base: server.base.clone(),
        }
    }

    /// A browser signed in with a password.
    pub async fn signed_in(server: &TestServer, username: &str, password: &str) -> Browser {
        let actor = server.client_for(username, password).await;
        Browser {
            client: actor.client,
            id: actor.id,
            base: server.base.clone(),
        }
    }

    /// GET `path` on Tollgate.
    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        let resp = self
            .client
            .get(format!("{}{path}", self.base))
            .header("New-Api-User", self.id.to_string())
            .send()
            .await
            .expect("sent");
        let status = resp.status();
        let text = resp.text().await.expect("body");
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    /// DELETE `path` on Tollgate.
    pub async fn delete(&self, path: &str) -> (StatusCode, Value) {
        let resp = self
            .client
            .delete(format!("{}{path}", self.base))
            .header("New-Api-User", self.id.to_string())
            .send()
            .await
            .expect("sent");
        let status = resp.status();
        let text = resp.text().await.expect("body");
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    /// `GET /api/oauth/state?provider=…&aff=…`: the answer's authorize URL.
    pub async fn start(&self, provider: &str, aff: &str) -> String {
        let (status, body) = self
            .get(&format!("/api/oauth/state?provider={provider}&aff={aff}"))
            .await;
        assert_eq!(status, StatusCode::OK, "state: {body}");
        assert!(
            body["data"].as_str().is_some_and(|s| s.len() >= 32),
            "{body}"
        );
        body["authorize_url"]
            .as_str()
            .expect("authorize_url")
            .to_owned()
    }

    /// The query of the callback the provider redirects to after approving `authorize_url`.
    pub async fn approve(&self, authorize_url: &str) -> HashMap<String, String> {
        let no_redirect = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        let resp = no_redirect
            .get(authorize_url)
            .send()
            .await
            .expect("authorize");
        assert_eq!(
            resp.status(),
            StatusCode::SEE_OTHER,
            "the provider approves"
        );
        let location = resp
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .expect("location");
        let url = reqwest::Url::parse(location).expect("callback url");
        assert!(url.as_str().starts_with(&self.base), "{url}");
        url.query_pairs().into_owned().collect()
    }

    /// The console's callback page calling `GET /api/oauth/{provider}?code&state`.
    pub async fn callback(
        &self,
        provider: &str,
        query: &HashMap<String, String>,
    ) -> (StatusCode, Value) {
        let code = query.get("code").map(String::as_str).unwrap_or_default();
        let state = query.get("state").map(String::as_str).unwrap_or_default();
        let path = format!(
            "/api/oauth/{provider}?code={}&state={}",
            urlencode(code),
            urlencode(state)
        );
        self.get(&path).await
    }

    /// The whole flow; returns the callback's answer (a sign-in that still needs a two-factor
    /// code leaves the browser a guest).
    pub async fn sign_in(&mut self, provider: &str, aff: &str) -> (StatusCode, Value) {
        let url = self.start(provider, aff).await;
        let query = self.approve(&url).await;
        let (status, body) = self.callback(provider, &query).await;
        if status == StatusCode::OK && body["message"] != "bind" && body["data"]["id"].is_i64() {
            self.id = body["data"]["id"].as_i64().expect("id");
        }
        (status, body)
    }
}

/// Percent-encodes a query value.
pub fn urlencode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

impl Browser {
    /// The flow against a mock provider that does not redirect: the callback comes back with
    /// the state of the authorize URL and a fixed code.
    pub async fn sign_in_via(&mut self, provider: &str) -> (StatusCode, Value) {
        let url = self.start(provider, "").await;
        let state = reqwest::Url::parse(&url)
            .expect("url")
            .query_pairs()
            .find(|(k, _)| k == "state")
            .map(|(_, v)| v.into_owned())
            .expect("state");
        let query = [
            ("code".to_owned(), "mock-code".to_owned()),
            ("state".to_owned(), state),
        ]
        .into_iter()
        .collect();
        let (status, body) = self.callback(provider, &query).await;
        if status == StatusCode::OK && body["message"] != "bind" {
            self.id = body["data"]["id"].as_i64().expect("id");
        }
        (status, body)
    }
}
