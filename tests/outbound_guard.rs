//! URLs users control, through the public HTTP API: the media a client names by URL for an
//! upstream that takes only bytes (an OpenAI client's `image_url` to a Gemini channel) is read
//! by the guarded fetcher and sent as `inlineData`; a URL that resolves to a loopback address,
//! names one, or redirects to one is refused with a 400 naming the part, before anything is
//! read or sent upstream, and nothing is charged; so are media too large or too slow. With
//! ImageReadProxy set, reads go through that proxy, which follows no redirect. On both paths an
//! answer whose Content-Type is not an image type the upstream takes is refused by name. User
//! webhooks are refused the same way.
//!
//! The resolver is the test's: `media.example` and `hook.example` resolve to 127.0.0.1 (and are
//! refused like any loopback name); `images.test` resolves to 127.0.0.1 and is trusted (the
//! test's allowance for its local image server); `public.example` resolves to a public address
//! (only ever reached through the proxy mock).
#![expect(clippy::expect_used, reason = "test helpers fail the test loudly")]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode as AxumStatus, Uri, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use common::mock_gemini::MockGemini;
use common::mock_upstream::MockUpstream;
use common::relay_fixture::{balances, chat_request, fixture, raw};
use common::{ROOT_PASS, ROOT_USER, TestServer, log_capture};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate::outbound::Overrides;

/// The image every good read returns.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR tollgate test image";

/// The image server: what it was asked for, and its base URL's port.
#[derive(Clone, Default)]
struct Images {
    hits: Arc<Mutex<Vec<String>>>,
    port: Arc<Mutex<u16>>,
}

impl Images {
    fn hits(&self) -> Vec<String> {
        self.hits.lock().expect("lock").clone()
    }
}

/// `/cat.png` an image; `/page.png` an HTML page; `/big.png` 1.5 MiB with a length; `/stream.png` 1.5 MiB streamed
/// without one; `/slow.png` never answers; `/hop-loopback` redirects to 127.0.0.1 by address,
/// `/hop-ok` to `/cat.png` on the trusted name. Absolute-form requests (a proxy's) are served
/// the same and recorded with their full URI.
async fn serve_image(State(images): State<Images>, uri: Uri) -> Response {
    images.hits.lock().expect("lock").push(uri.to_string());
    let port = *images.port.lock().expect("lock");
    match uri.path() {
        "/cat.png" => ([(header::CONTENT_TYPE, "image/png")], PNG).into_response(),
        "/page.png" => (
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            "<html>not an image</html>",
        )
            .into_response(),
        "/big.png" => (
            [(header::CONTENT_TYPE, "image/png")],
            vec![0u8; 1536 * 1024],
        )
            .into_response(),
        "/stream.png" => {
            let chunks = (0..24).map(|_| Ok::<_, std::io::Error>(vec![0u8; 64 * 1024]));
            let mut response = Response::new(Body::from_stream(futures_util::stream::iter(chunks)));
            response
                .headers_mut()
                .insert(header::CONTENT_TYPE, "image/png".parse().expect("header"));
            response
        }
        "/slow.png" => std::future::pending().await,
        "/hop-loopback" => (
            AxumStatus::FOUND,
            [(header::LOCATION, format!("http://127.0.0.1:{port}/cat.png"))],
        )
            .into_response(),
        "/hop-ok" => (
            AxumStatus::FOUND,
            [(
                header::LOCATION,
                format!("http://images.test:{port}/cat.png"),
            )],
        )
            .into_response(),
        _ => AxumStatus::NOT_FOUND.into_response(),
    }
}

async fn image_server() -> (Images, u16) {
    let images = Images::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    *images.port.lock().expect("lock") = port;
    let app = Router::new()
        .fallback(serve_image)
        .with_state(images.clone());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (images, port)
}

fn overrides() -> Overrides {
    let loopback = vec!["127.0.0.1".parse().expect("ip")];
    Overrides {
        hosts: [
            ("media.example".to_owned(), loopback.clone()),
            ("hook.example".to_owned(), loopback.clone()),
            ("images.test".to_owned(), loopback),
            (
                "public.example".to_owned(),
                vec!["93.184.215.14".parse().expect("ip")],
            ),
        ]
        .into_iter()
        .collect(),
        trusted: vec!["images.test".to_owned()],
    }
}

async fn start() -> TestServer {
    let dir = tempfile::tempdir().expect("tempdir");
    TestServer::start_with(dir, |c| {
        c.outbound_overrides = Arc::new(overrides());
        c.media_fetch_max_mb = 1;
        c.media_fetch_timeout_secs = 2;
    })
    .await
}

fn gemini_channel(mock: &MockGemini) -> Value {
    json!({"name": "gemini", "type": 24, "key": "gemini-upstream-key",
        "base_url": mock.base, "models": "gemini-test", "group": "default"})
}

fn with_image(model: &str, url: &str) -> Value {
    json!({"model": model, "messages": [{"role": "user", "content": [
        {"type": "text", "text": "what is in this image?"},
        {"type": "image_url", "image_url": {"url": url}}]}]})
}

#[tokio::test]
async fn an_image_url_for_a_gemini_channel_is_read_and_sent_as_inline_data() {
    let (images, port) = image_server().await;
    let mock = MockGemini::start().await;
    let server = start().await;
    let (_, _, key) = fixture(&server, &[gemini_channel(&mock)], 1_000_000, 500_000).await;
    for path in ["cat.png", "hop-ok"] {
        let url = format!("http://images.test:{port}/{path}");
        let (status, _, text) = raw(chat_request(
            &server,
            &key,
            &with_image("gemini-test", &url),
        ))
        .await;
        assert_eq!(status, StatusCode::OK, "{path}: {text}");
        let sent = mock.last_body().expect("the upstream got the request");
        let parts = &sent["contents"][0]["parts"];
        assert_eq!(parts[0]["text"], "what is in this image?");
        assert_eq!(parts[1]["inlineData"]["mimeType"], "image/png", "{sent}");
        assert_eq!(
            parts[1]["inlineData"]["data"],
            base64::engine::general_purpose::STANDARD.encode(PNG),
            "the image's bytes, not its URL"
        );
    }
    assert!(images.hits().contains(&"/hop-ok".to_owned()));
}

#[tokio::test]
async fn image_urls_reaching_local_addresses_are_refused_with_a_400_naming_the_part() {
    let (images, port) = image_server().await;
    let mock = MockGemini::start().await;
    let server = start().await;
    let (_, payer, key) = fixture(&server, &[gemini_channel(&mock)], 1_000_000, 500_000).await;
    let cases = [
        (
            format!("http://media.example:{port}/cat.png"),
            "refused: media.example resolves to a loopback address",
        ),
        (
            format!("http://127.0.0.1:{port}/cat.png"),
            "refused: 127.0.0.1 is a loopback address",
        ),
        (
            format!("http://[::ffff:127.0.0.1]:{port}/cat.png"),
            "refused:",
        ),
        (
            "http://169.254.169.254/latest/meta-data/".to_owned(),
            "refused: 169.254.169.254 is a cloud metadata address",
        ),
        (
            "http://0.0.0.0:9/x.png".to_owned(),
            "refused: 0.0.0.0 is an unspecified address",
        ),
        (
            format!("http://images.test:{port}/hop-loopback"),
            "refused: 127.0.0.1 is a loopback address",
        ),
        (
            format!("http://images.test:{port}/big.png"),
            "too large (more than 1 MiB)",
        ),
        (
            format!("http://images.test:{port}/stream.png"),
            "too large (more than 1 MiB)",
        ),
        (
            format!("http://images.test:{port}/slow.png"),
            "timed out (after 2 s)",
        ),
    ];
    for (url, why) in &cases {
        let (status, _, text) =
            raw(chat_request(&server, &key, &with_image("gemini-test", url))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{url}: {text}");
        let body: Value = serde_json::from_str(&text).expect("json");
        let message = body["error"]["message"].as_str().expect("message");
        assert!(
            message.starts_with(&format!("messages[0].content[1]: image URL {url} ")),
            "{message}"
        );
        assert!(message.contains(why), "{url}: {message}");
        assert!(!text.contains("gemini-upstream-key"));
    }
    assert_eq!(mock.calls(), 0, "nothing went upstream");
    let hits = images.hits();
    assert!(
        !hits.iter().any(|h| h == "/cat.png"),
        "the refused names never reached the image server: {hits:?}"
    );
    assert_eq!(
        hits.iter()
            .filter(|h| h.as_str() == "/hop-loopback")
            .count(),
        1,
        "the redirect was read, its target refused"
    );
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000, "nothing is charged");
    assert!(logs.is_empty());
}

#[tokio::test]
async fn channels_that_read_urls_themselves_get_the_url_and_nothing_is_fetched() {
    let (images, port) = image_server().await;
    let mock = MockUpstream::start().await;
    let server = start().await;
    let channel = json!({"name": "openai", "type": 1, "key": "k", "base_url": mock.base,
        "models": "claude-test", "group": "default"});
    let (_, _, key) = fixture(&server, &[channel], 1_000_000, 500_000).await;
    let url = format!("http://media.example:{port}/cat.png");
    let (status, _, text) = raw(chat_request(
        &server,
        &key,
        &with_image("claude-test", &url),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let sent = mock.last_body().expect("sent");
    assert_eq!(sent["messages"][0]["content"][1]["image_url"]["url"], url);
    assert!(images.hits().is_empty());
}

#[tokio::test]
async fn with_image_read_proxy_set_media_are_read_through_it() {
    let (proxy, proxy_port) = image_server().await;
    let mock = MockGemini::start().await;
    let server = start().await;
    let (_, _, key) = fixture(&server, &[gemini_channel(&mock)], 1_000_000, 500_000).await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    server
        .set_option(
            &root,
            "ImageReadProxy",
            json!(format!("http://127.0.0.1:{proxy_port}")),
        )
        .await;
    let url = "http://public.example/cat.png";
    let (status, _, text) = raw(chat_request(&server, &key, &with_image("gemini-test", url))).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(proxy.hits(), [url], "the proxy was asked for the URL");
    let sent = mock.last_body().expect("sent");
    assert_eq!(
        sent["contents"][0]["parts"][1]["inlineData"]["data"],
        base64::engine::general_purpose::STANDARD.encode(PNG)
    );
    // The proxy does not launder local names.
    let (status, _, text) = raw(chat_request(
        &server,
        &key,
        &with_image("gemini-test", "http://media.example/cat.png"),
    ))
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
    assert!(
        text.contains("media.example resolves to a loopback address"),
        "{text}"
    );
    assert_eq!(proxy.hits().len(), 1);
}

#[tokio::test]
async fn a_webhook_on_a_name_resolving_to_loopback_is_refused() {
    log_capture::install();
    let (images, port) = image_server().await;
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((100, 20, 0)));
    let server = start().await;
    let channel = json!({"name": "openai", "type": 1, "key": "k", "base_url": mock.base,
        "models": "claude-test", "group": "default"});
    let (_, payer, key) = fixture(&server, &[channel], 10_000, 1_000_000).await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    server
        .set_option(&root, "QuotaRemindThreshold", json!("9700"))
        .await;
    let (status, body) = payer
        .put(
            "/api/user/setting",
            json!({"notify_type": "webhook",
                "webhook_url": format!("https://hook.example:{port}/hook")}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _, text) = raw(server
        .client
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(&key)
        .json(&json!({"model": "claude-test", "max_tokens": 20,
                "messages": [{"role": "user", "content": "hi"}]})))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let wanted = "the webhook address is refused: hook.example resolves to a loopback address";
    tokio::time::timeout(Duration::from_secs(10), async {
        while !log_capture::logs().contains(wanted) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the refusal is logged");
    assert!(
        images.hits().is_empty(),
        "no connection reached the receiver"
    );
}

#[tokio::test]
async fn what_is_read_must_be_an_image_type_and_the_proxy_follows_no_redirect() {
    let (images, port) = image_server().await;
    let mock = MockGemini::start().await;
    let server = start().await;
    let (_, _, key) = fixture(&server, &[gemini_channel(&mock)], 1_000_000, 500_000).await;

    // Direct: an HTML answer is not sent to Gemini as an image.
    let url = format!("http://images.test:{port}/page.png");
    let (status, _, text) = raw(chat_request(
        &server,
        &key,
        &with_image("gemini-test", &url),
    ))
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
    assert!(
        text.contains(&format!(
            "messages[0].content[1]: image URL {url} answered Content-Type text/html"
        )),
        "{text}"
    );
    assert!(
        text.contains("image/png, image/jpeg, image/gif, image/webp"),
        "{text}"
    );
    assert!(mock.last_body().is_none(), "nothing sent upstream");

    // Through the proxy: the same, and a redirect is an error naming the part.
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    server
        .set_option(
            &root,
            "ImageReadProxy",
            json!(format!("http://127.0.0.1:{port}")),
        )
        .await;
    let (status, _, text) = raw(chat_request(
        &server,
        &key,
        &with_image("gemini-test", "http://public.example/page.png"),
    ))
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
    assert!(text.contains("answered Content-Type text/html"), "{text}");
    let before = images.hits().len();
    let (status, _, text) = raw(chat_request(
        &server,
        &key,
        &with_image("gemini-test", "http://public.example/hop-ok"),
    ))
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
    assert!(
        text.contains("messages[0].content[1]: image URL http://public.example/hop-ok answered a redirect (HTTP 302)"),
        "{text}"
    );
    assert_eq!(images.hits().len(), before + 1, "the hop was not followed");
    assert!(mock.last_body().is_none(), "nothing sent upstream");

    // A real image still goes through the proxy.
    let (status, _, text) = raw(chat_request(
        &server,
        &key,
        &with_image("gemini-test", "http://public.example/cat.png"),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
}
