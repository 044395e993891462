//! GET /api/pricing (public) and POST /api/option/rest_model_ratio through the HTTP API.

mod common;

use common::{Actor, ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};

#[expect(
    clippy::expect_used,
    reason = "test helper: a failed call fails the test"
)]
fn row<'a>(pricing: &'a Value, model: &str) -> &'a Value {
    pricing["data"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["model_name"] == model)
        .expect("the model is listed")
}

#[expect(
    clippy::expect_used,
    reason = "test helper: a failed call fails the test"
)]
async fn add_channel(root: &Actor, name: &str, models: &str, group: &str) -> i64 {
    let (status, body) = root
        .post(
            "/api/channel/",
            json!({"name": name, "type": 1, "key": "sk-upstream", "base_url": "http://127.0.0.1:9",
                   "models": models, "group": group}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, list) = root.get("/api/channel/?p=1&page_size=100").await;
    list["data"]["items"]
        .as_array()
        .expect("channels")
        .iter()
        .find(|c| c["name"] == name)
        .and_then(|c| c["id"].as_i64())
        .expect("channel id")
}

#[tokio::test]
async fn pricing_lists_every_served_model_with_its_billing() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let guest = Actor::guest(&server);
    let (status, empty) = guest.get("/api/pricing").await;
    assert_eq!(status, StatusCode::OK, "public: {empty}");
    assert_eq!(empty["success"], true);
    assert_eq!(empty["data"], json!([]), "no channel, no model");
    assert_eq!(empty["group_ratio"]["default"], 1.0);
    assert_eq!(
        empty["usable_group"],
        json!({"default": "默认分组", "vip": "vip分组"}),
        "guests see UserUsableGroups"
    );

    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    add_channel(&root, "a", "gpt-4o,dall-e-3,my-unpriced", "default,vip").await;
    add_channel(&root, "b", "claude-sonnet-4-20250514", "svip").await;
    let hidden = add_channel(&root, "c", "hidden-model", "default").await;
    let (status, _) = root
        .put("/api/channel/", json!({"id": hidden, "status": 2}))
        .await;
    assert_eq!(status, StatusCode::OK);
    server
        .set_option(
            &root,
            "ModelDescriptions",
            json!(r#"{"gpt-4o": "OpenAI's flagship"}"#),
        )
        .await;
    server
        .set_option(
            &root,
            "GroupRatio",
            json!(r#"{"default": 1, "vip": 0.8, "svip": 0.5}"#),
        )
        .await;

    let (_, pricing) = guest.get("/api/pricing").await;
    let names: Vec<&str> = pricing["data"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["model_name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "claude-sonnet-4-20250514",
            "dall-e-3",
            "gpt-4o",
            "my-unpriced"
        ],
        "served by an enabled channel, sorted"
    );
    let gpt = row(&pricing, "gpt-4o");
    assert_eq!(gpt["quota_type"], 0);
    assert_eq!(gpt["model_ratio"], 1.25);
    assert_eq!(gpt["completion_ratio"], 4.0);
    assert_eq!(gpt["model_price"], 0.0);
    assert_eq!(gpt["enable_groups"], json!(["default", "vip"]));
    assert_eq!(gpt["model_description"], "OpenAI's flagship");
    assert_eq!(gpt["price_set"], true);
    let dalle = row(&pricing, "dall-e-3");
    assert_eq!(dalle["quota_type"], 1);
    assert_eq!(dalle["model_price"], 0.04);
    let claude = row(&pricing, "claude-sonnet-4-20250514");
    assert_eq!(claude["enable_groups"], json!(["svip"]));
    assert_eq!(claude["completion_ratio"], 5.0);
    let unpriced = row(&pricing, "my-unpriced");
    assert_eq!(unpriced["price_set"], false);
    assert_eq!(unpriced["model_ratio"], 0.0);
    assert_eq!(pricing["group_ratio"]["vip"], 0.8);
    assert_eq!(pricing["group_ratio"]["svip"], 0.5);

    // A signed-in user sees the groups they may use (their own included).
    let (status, _) = root
        .post(
            "/api/user/",
            json!({"username": "bob", "password": "password1"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let bob = server.client_for("bob", "password1").await;
    server
        .set_option(&root, "UserUsableGroups", json!(r#"{"vip": "VIP"}"#))
        .await;
    let (_, mine) = bob.get("/api/pricing").await;
    assert_eq!(
        mine["usable_group"],
        json!({"default": "default", "vip": "VIP"})
    );
}

#[tokio::test]
async fn ratio_overrides_apply_and_only_root_restores_the_defaults() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    add_channel(&root, "a", "gpt-4o,dall-e-3", "default").await;
    server
        .set_option(&root, "ModelRatio", json!(r#"{"gpt-4o": 3}"#))
        .await;
    server
        .set_option(&root, "CompletionRatio", json!(r#"{"gpt-4o": 2}"#))
        .await;
    server
        .set_option(
            &root,
            "ModelPrice",
            json!(r#"{"gpt-4o": 0.5, "dall-e-3": 0.08}"#),
        )
        .await;
    let guest = Actor::guest(&server);
    let (_, pricing) = guest.get("/api/pricing").await;
    let gpt = row(&pricing, "gpt-4o");
    assert_eq!(
        (gpt["quota_type"].clone(), gpt["model_price"].clone()),
        (json!(1), json!(0.5)),
        "a price wins over ratios"
    );
    assert_eq!(gpt["model_ratio"], 3.0);
    assert_eq!(row(&pricing, "dall-e-3")["model_price"], 0.08);

    let (status, _) = root
        .post(
            "/api/user/",
            json!({"username": "adm", "password": "password1", "role": 10}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let admin = server.client_for("adm", "password1").await;
    let (status, _) = admin.post("/api/option/rest_model_ratio", json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "root only");
    let (status, _) = guest.post("/api/option/rest_model_ratio", json!({})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    let (status, answer) = root.post("/api/option/rest_model_ratio", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (_, pricing) = guest.get("/api/pricing").await;
    let gpt = row(&pricing, "gpt-4o");
    assert_eq!(gpt["quota_type"], 0);
    assert_eq!(gpt["model_ratio"], 1.25, "built-in default again");
    assert_eq!(gpt["completion_ratio"], 4.0);
    assert_eq!(row(&pricing, "dall-e-3")["model_price"], 0.04);
    let (_, options) = root.get("/api/option/").await;
    for key in ["ModelRatio", "CompletionRatio", "CacheRatio", "ModelPrice"] {
        let value = options["data"]
            .as_array()
            .expect("options")
            .iter()
            .find(|o| o["key"] == key)
            .map(|o| o["value"].clone());
        assert_eq!(value, Some(json!("{}")), "{key} override cleared");
    }
}

/// The component price tables (audio, tool calls, tiers) are whole tables, seeded with published
/// prices: restoring the defaults writes the seeded tables back, so an edited or emptied table
/// does not survive the reset.
#[tokio::test]
async fn restoring_defaults_reseeds_the_component_price_tables() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let (_, options) = root.get("/api/option/").await;
    let keys = [
        "AudioRatio",
        "AudioCompletionRatio",
        "ToolCallPrice",
        "ModelPriceTiers",
    ];
    let seeded: Vec<Value> = keys.iter().map(|k| option(&options, k)).collect();
    for key in keys {
        server.set_option(&root, key, json!("{}")).await;
    }
    let (_, options) = root.get("/api/option/").await;
    for key in keys {
        assert_eq!(
            option(&options, key),
            json!("{}"),
            "{key} emptied by the admin"
        );
    }

    let (status, answer) = root.post("/api/option/rest_model_ratio", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (_, options) = root.get("/api/option/").await;
    for (key, seeded) in keys.iter().zip(&seeded) {
        assert_ne!(
            seeded,
            &json!("{}"),
            "{key} is seeded with published prices"
        );
        assert_eq!(
            &option(&options, key),
            seeded,
            "{key} seeded table restored"
        );
    }
}

#[expect(
    clippy::expect_used,
    reason = "test helper: a missing option fails the test"
)]
fn option(options: &Value, key: &str) -> Value {
    options["data"]
        .as_array()
        .expect("options")
        .iter()
        .find(|o| o["key"] == key)
        .map(|o| o["value"].clone())
        .expect("the option is listed")
}
