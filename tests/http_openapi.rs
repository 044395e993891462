//! `GET /api/openapi.json`: an OpenAPI 3.1 document built from the same declarations as the
//! router, so every served route is in it with who may call it.

mod common;

use common::TestServer;
use reqwest::StatusCode;
use serde_json::Value;
use tollgate::http::api::Access;

/// What the document says about who may call an operation.
fn access_of(op: &Value) -> &'static str {
    let Some(first) = op["security"].as_array().and_then(|s| s.first()) else {
        return "public";
    };
    if first.get("api_key").is_some() {
        return "api_key";
    }
    match first["session"][0].as_str() {
        Some("user") => "user",
        Some("admin") => "admin",
        Some("root") => "root",
        _ => "unknown",
    }
}

#[tokio::test]
async fn the_document_is_openapi_3_1_and_describes_every_declared_route() {
    let server = TestServer::start().await;
    let (status, doc) = server.get("/api/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(doc["openapi"], "3.1.0");
    let declared = tollgate::http::endpoints();
    assert!(
        declared.len() > 100,
        "only {} routes declared",
        declared.len()
    );
    let mut operations = 0;
    for path in doc["paths"]
        .as_object()
        .into_iter()
        .flat_map(|p| p.values())
    {
        operations += path.as_object().map_or(0, |ops| ops.len());
    }
    assert_eq!(
        operations,
        declared.len(),
        "one operation per declared route"
    );
    for endpoint in &declared {
        let path = endpoint.path.replace("{*", "{");
        let op = &doc["paths"][&path][endpoint.method.name()];
        assert!(op.is_object(), "{} {path} missing", endpoint.method.name());
        assert_eq!(access_of(op), endpoint.access.name(), "{path}");
    }
    let this = declared
        .iter()
        .find(|e| e.path == "/api/openapi.json")
        .map(|e| e.access);
    assert_eq!(this, Some(Access::Public));
}

#[tokio::test]
async fn rate_limit_bodies_are_typed_as_the_limits_schema() {
    let server = TestServer::start().await;
    let (status, doc) = server.get("/api/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    for path in [
        "/api/token/{id}/limits",
        "/api/user/{id}/limits",
        "/api/channel/{id}/limits",
    ] {
        let schema =
            &doc["paths"][path]["put"]["requestBody"]["content"]["application/json"]["schema"];
        assert_eq!(
            schema["$ref"], "#/components/schemas/Limits",
            "{path}: {schema}"
        );
    }
    let limits = &doc["components"]["schemas"]["Limits"];
    for field in ["concurrency_limit", "rpm_limit", "tpm_limit", "rpd_limit"] {
        assert_eq!(limits["properties"][field]["type"], "integer", "{limits}");
        assert_eq!(limits["properties"][field]["minimum"], 0.0, "{limits}");
    }
    let key = &limits["properties"]["key_limits"]["items"];
    assert_eq!(key["required"], serde_json::json!(["index"]), "{limits}");
    assert_eq!(
        key["properties"]["rpm_limit"]["type"], "integer",
        "{limits}"
    );
}
