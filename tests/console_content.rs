//! The public content routes (notice, about, home content) and the home page's JSON blocks
//! (GET /api/option/get*) through the HTTP API.

mod common;

use common::{Actor, ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn guests_read_the_content_the_admin_saved() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let guest = Actor::guest(&server);
    for path in ["/api/notice", "/api/about", "/api/home_page_content"] {
        let (status, body) = guest.get(path).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        assert_eq!(body["data"], "", "{path} is empty until saved");
    }

    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    server
        .set_option(&root, "Notice", json!("**maintenance** at 9"))
        .await;
    server
        .set_option(&root, "About", json!("<p>about us</p>"))
        .await;
    server
        .set_option(&root, "HomePageContent", json!("https://example.com/home"))
        .await;
    assert_eq!(
        guest.get("/api/notice").await.1["data"],
        "**maintenance** at 9"
    );
    assert_eq!(guest.get("/api/about").await.1["data"], "<p>about us</p>");
    assert_eq!(
        guest.get("/api/home_page_content").await.1["data"],
        "https://example.com/home"
    );
}

#[tokio::test]
async fn the_home_blocks_read_as_json_and_refuse_broken_json() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let guest = Actor::guest(&server);
    assert_eq!(
        guest.get("/api/option/getTypingList").await.1["data"],
        json!([])
    );
    assert_eq!(
        guest.get("/api/option/getModelDescriptions").await.1["data"],
        json!({})
    );

    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let links = json!([{"text": "Blog", "item_key": "blog", "url": "https://blog.example.com"}]);
    server
        .set_option(&root, "CustemNavLinks", json!(links.to_string()))
        .await;
    server
        .set_option(&root, "TypingList", json!(r#"["fast","cheap"]"#))
        .await;
    assert_eq!(
        guest.get("/api/option/getCustomNavLinks").await.1["data"],
        links
    );
    assert_eq!(
        guest.get("/api/option/getTypingList").await.1["data"],
        json!(["fast", "cheap"])
    );

    let (status, body) = root
        .put(
            "/api/option/",
            json!({"key": "Advantages", "value": "[{broken"}),
        )
        .await;
    assert_ne!(status, StatusCode::OK, "broken JSON is refused: {body}");
    assert_eq!(
        guest.get("/api/option/getAdvantages").await.1["data"],
        json!([])
    );
}

#[tokio::test]
async fn the_image_proxy_is_for_root() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let (status, _) = Actor::guest(&server)
        .get("/api/option/getImageReadProxy")
        .await;
    assert_ne!(status, StatusCode::OK);
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let (status, body) = root
        .post(
            "/api/user/",
            json!({"username": "clerk", "password": "password1", "role": 10}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let admin = server.client_for("clerk", "password1").await;
    let (status, _) = admin.get("/api/option/getImageReadProxy").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "an admin who is not root");
    server
        .set_option(&root, "ImageReadProxy", json!("http://127.0.0.1:9/fetch"))
        .await;
    let (status, body) = root.get("/api/option/getImageReadProxy").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"], "http://127.0.0.1:9/fetch");
}

#[tokio::test]
async fn a_home_block_of_the_wrong_shape_is_refused_with_where_it_is_wrong() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let guest = Actor::guest(&server);
    for (key, bad, route) in [
        (
            "Advantages",
            r#"[{"title":"Fast","description":"Rust"},{"title":"Cheap"}]"#,
            "/api/option/getAdvantages",
        ),
        ("TypingList", r#"["fast",2]"#, "/api/option/getTypingList"),
        (
            "Providers",
            r#"{"name":"OpenAI"}"#,
            "/api/option/getModelProviders",
        ),
        (
            "CustemNavLinks",
            r#"[{"text":"Blog","url":"https://blog.example.com"}]"#,
            "/api/option/getCustomNavLinks",
        ),
        (
            "ModelDescriptions",
            r#"{"gpt-4o":["not text"]}"#,
            "/api/option/getModelDescriptions",
        ),
    ] {
        let before = guest.get(route).await.1["data"].clone();
        let (status, body) = root
            .put("/api/option/", json!({"key": key, "value": bad}))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{key}: {body}");
        let message = body["message"].as_str().unwrap_or_default();
        assert!(message.contains(key), "{key}: {body}");
        assert!(message.contains("expected shape"), "{key}: {body}");
        assert_eq!(guest.get(route).await.1["data"], before, "{key} kept");
    }
    let (_, body) = root
        .put(
            "/api/option/",
            json!({"key": "Advantages", "value": r#"[{"title":"a"}]"#}),
        )
        .await;
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("[0]: missing field `description`")),
        "{body}"
    );
}
