//! What unknown paths answer: JSON 404s for API paths, the console for everything else.

mod common;

use common::TestServer;
use reqwest::StatusCode;

#[tokio::test]
async fn unknown_api_paths_answer_json_404() {
    let server = TestServer::start().await;
    let (status, body) = server.get("/api/no/such/thing").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["success"], false, "{body}");

    let (status, body) = server
        .post("/v1/no-such-route", serde_json::json!({}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"]["type"], "invalid_request_error", "{body}");
    assert_eq!(
        body["error"]["message"],
        "Invalid URL (POST /v1/no-such-route)"
    );

    let resp = server
        .client
        .get(server.url("/assets/missing-1234.js"))
        .send()
        .await
        .expect("sent");
    assert_eq!(
        resp.status(),
        StatusCode::NOT_FOUND,
        "missing assets never get index.html"
    );
}

#[tokio::test]
async fn console_routes_fall_back_to_the_spa() {
    let server = TestServer::start().await;
    let built = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("web/dist/index.html")
        .exists();
    for path in ["/", "/setup", "/token", "/channel/edit/3", "/no/such/page"] {
        let resp = server
            .client
            .get(server.url(path))
            .send()
            .await
            .expect("sent");
        if built {
            assert_eq!(resp.status(), StatusCode::OK, "{path}");
            let ctype = resp.headers()["content-type"]
                .to_str()
                .expect("ascii")
                .to_owned();
            assert!(ctype.starts_with("text/html"), "{path}: {ctype}");
            let html = resp.text().await.expect("body");
            assert!(
                html.contains("<div id=\"root\">"),
                "{path} serves index.html"
            );
        } else {
            assert_eq!(
                resp.status(),
                StatusCode::SERVICE_UNAVAILABLE,
                "{path} without a built console"
            );
        }
    }
}
