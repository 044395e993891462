//! Relay calls and redirects, through the public HTTP API: an upstream that answers with a
//! redirect to another address never gets the channel's key sent there (OpenAI's
//! `Authorization`, Anthropic's `x-api-key`, Gemini's `x-goog-api-key`), and the client gets an
//! error, not a 500; a redirect within the upstream's own origin is still followed.
#![expect(clippy::expect_used, reason = "test helpers fail the test loudly")]

mod common;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode as AxumStatus, Uri, header};
use axum::response::{IntoResponse, Response};
use common::mock_scripted::MockScripted;
use common::relay_fixture::{chat_request, fixture, hi, raw};
use common::{Actor, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};

const OPENAI_KEY: &str = "sk-openai-upstream-secret";
const CLAUDE_KEY: &str = "sk-ant-upstream-secret";
const GEMINI_KEY: &str = "gemini-upstream-secret";

/// Where the redirector sends: `elsewhere` (another listener) and its own origin.
#[derive(Clone)]
struct Targets {
    elsewhere: String,
    own: String,
}

/// `/away/…` → 307 to the other listener; `/here/…` → 307 to `/final/…` on this listener;
/// `/final/…` → an OpenAI chat answer.
async fn redirect(State(to): State<Targets>, uri: Uri) -> Response {
    let path = uri.path();
    let location = if let Some(rest) = path.strip_prefix("/away") {
        format!("{}{rest}", to.elsewhere)
    } else if let Some(rest) = path.strip_prefix("/here") {
        format!("{}/final{rest}", to.own)
    } else if path.starts_with("/final") {
        return axum::Json(
            json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1,
            "model": "here-test", "choices": [{"index": 0, "message": {"role": "assistant",
            "content": "followed"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}),
        )
        .into_response();
    } else {
        return AxumStatus::NOT_FOUND.into_response();
    };
    (
        AxumStatus::TEMPORARY_REDIRECT,
        [(header::LOCATION, location)],
    )
        .into_response()
}

/// Starts the redirector; returns its base URL.
async fn redirector(elsewhere: &str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let own = format!("http://{}", listener.local_addr().expect("addr"));
    let app = Router::new().fallback(redirect).with_state(Targets {
        elsewhere: elsewhere.to_owned(),
        own: own.clone(),
    });
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    own
}

fn channel(name: &str, channel_type: i32, key: &str, base_url: &str, model: &str) -> Value {
    json!({"name": name, "type": channel_type, "key": key, "base_url": base_url,
        "models": model, "group": "default"})
}

async fn prices(server: &TestServer, root: &Actor) {
    server
        .set_option(
            root,
            "ModelRatio",
            json!(r#"{"gpt-test": 1, "here-test": 1, "claude-test": 2, "gemini-test": 0.5}"#),
        )
        .await;
}

#[tokio::test]
async fn an_upstream_redirect_elsewhere_never_carries_the_channel_key() {
    let elsewhere = MockScripted::start().await;
    let redir = redirector(&elsewhere.base).await;
    let away = format!("{redir}/away");
    let server = TestServer::start().await;
    let channels = [
        channel("openai", 1, OPENAI_KEY, &away, "gpt-test"),
        channel("claude", 14, CLAUDE_KEY, &away, "claude-test"),
        channel("gemini", 24, GEMINI_KEY, &away, "gemini-test"),
    ];
    let (root, _, key) = fixture(&server, &channels, 1_000_000, 500_000).await;
    prices(&server, &root).await;
    let mut answers = Vec::new();
    for model in ["gpt-test", "claude-test", "gemini-test"] {
        let (status, _, text) = raw(chat_request(&server, &key, &hi(model))).await;
        for secret in [OPENAI_KEY, CLAUDE_KEY, GEMINI_KEY] {
            assert!(
                !text.contains(secret),
                "{model}: the key is not shown: {text}"
            );
        }
        answers.push((model, status, text));
    }
    let calls = elsewhere.calls();
    for call in &calls {
        for (name, value) in &call.headers {
            let value = value.to_str().unwrap_or_default();
            for secret in [OPENAI_KEY, CLAUDE_KEY, GEMINI_KEY] {
                assert!(
                    !value.contains(secret),
                    "{} got the channel key in {name}",
                    call.uri
                );
            }
        }
        assert!(
            !call.uri.contains(GEMINI_KEY),
            "the key in the URL: {}",
            call.uri
        );
    }
    assert!(
        calls.is_empty(),
        "no request follows a redirect to another address: {:?}",
        calls.iter().map(|c| &c.uri).collect::<Vec<_>>()
    );
    for (model, status, text) in answers {
        assert_eq!(status, StatusCode::BAD_GATEWAY, "{model}: {text}");
    }
}

#[tokio::test]
async fn a_redirect_within_the_upstreams_origin_is_followed() {
    let elsewhere = MockScripted::start().await;
    let redir = redirector(&elsewhere.base).await;
    let server = TestServer::start().await;
    let channels = [channel(
        "openai",
        1,
        OPENAI_KEY,
        &format!("{redir}/here"),
        "here-test",
    )];
    let (root, _, key) = fixture(&server, &channels, 1_000_000, 500_000).await;
    prices(&server, &root).await;
    let (status, _, text) = raw(chat_request(&server, &key, &hi("here-test"))).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(text.contains("followed"), "{text}");
    assert!(elsewhere.calls().is_empty());
}
