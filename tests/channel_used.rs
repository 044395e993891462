//! A channel's used quota (issue P16 item 10): the log writer counts each consume row's quota
//! against its channel in the batch that stores the row, so every channel's used quota, as the
//! console's list and detail show it, equals the sum of its consume rows. And its prompt-cache hit
//! rate (P15 item 4): the same batch adds each row's prompt and cached prompt tokens to its
//! channel's hour, read by GET /api/dashboard/cache_hit_rate.

mod common;

use std::collections::BTreeMap;

use common::TestServer;
use common::mock_anthropic::{AnthropicUsage, MockAnthropic};
use common::mock_upstream::MockUpstream;
use common::relay_fixture::{balances, fixture};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate_storage::logs::LOG_CONSUME;

#[tokio::test]
async fn each_channels_used_quota_is_the_sum_of_its_consume_rows() {
    let mock = MockUpstream::start().await;
    let server = TestServer::start().await;
    let models = ["used-a", "used-b", "used-c", "used-d"];
    let channels: Vec<Value> = models
        .iter()
        .map(|m| {
            json!({"name": format!("ch-{m}"), "type": 1, "key": "upstream-key-1",
                   "base_url": mock.base, "models": m, "group": "default"})
        })
        .collect();
    let (root, payer, key) = fixture(&server, &channels, 100_000_000, 100_000_000).await;
    let payer_id = payer.id;
    server
        .set_option(
            &root,
            "ModelRatio",
            json!(r#"{"used-a": 1, "used-b": 2, "used-c": 0.5, "used-d": 3}"#),
        )
        .await;

    for i in 0..9_i64 {
        mock.set_usage(Some((10 + i * 7, 3 + i, 0)));
        let model = models[usize::try_from(i).unwrap_or(0) % models.len()];
        let (status, body) = server
            .send(
                server
                    .client
                    .post(server.url("/v1/chat/completions"))
                    .bearer_auth(&key)
                    .json(
                        &json!({"model": model, "messages": [{"role": "user", "content": "hi"}]}),
                    ),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }

    let (_, used, _, rows) = balances(&server, payer_id).await;
    let mut per_channel: BTreeMap<i64, i64> = BTreeMap::new();
    let mut consumed = 0;
    for row in rows.iter().filter(|r| r.log_type == LOG_CONSUME) {
        *per_channel.entry(row.channel_id).or_default() += row.quota;
        consumed += 1;
    }
    assert_eq!(consumed, 9, "nine consume rows");
    assert_eq!(per_channel.len(), 4, "spread over the four channels");
    assert_eq!(
        per_channel.values().sum::<i64>(),
        used,
        "the user's used quota"
    );

    let (status, list) = root.get("/api/channel/?p=1&page_size=100").await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let items = list["data"]["items"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(items.len(), 4, "{list}");
    for item in &items {
        let id = item["id"].as_i64().unwrap_or(0);
        let expected = per_channel.get(&id).copied().unwrap_or(0);
        assert!(expected > 0, "channel {id} served requests");
        assert_eq!(item["used_quota"], json!(expected), "list, channel {id}");
        let (_, detail) = root.get(&format!("/api/channel/{id}")).await;
        assert_eq!(
            detail["data"]["used_quota"],
            json!(expected),
            "detail, channel {id}"
        );
    }
}

#[tokio::test]
async fn the_cache_hit_rate_per_channel_counts_each_formats_cached_tokens_and_survives_a_restart() {
    let openai = MockUpstream::start().await;
    let claude = MockAnthropic::start().await;
    let server = TestServer::start().await;
    let channels = [
        json!({"name": "cache-openai", "type": 1, "key": "upstream-key-1", "base_url": openai.base,
               "models": "gemini-test", "group": "default"}),
        json!({"name": "cache-claude", "type": 14, "key": "claude-key", "base_url": claude.base,
               "models": "claude-test", "group": "default"}),
    ];
    let (root, payer, key) = fixture(&server, &channels, 100_000_000, 100_000_000).await;
    let (_, list) = root.get("/api/channel/?p=1&page_size=10").await;
    let id_of = |name: &str| {
        list["data"]["items"]
            .as_array()
            .and_then(|items| items.iter().find(|c| c["name"] == name))
            .and_then(|c| c["id"].as_i64())
            .unwrap_or(0)
    };
    let (openai_id, claude_id) = (id_of("cache-openai"), id_of("cache-claude"));
    assert!(openai_id > 0 && claude_id > 0, "{list}");

    // OpenAI counts cached tokens inside prompt_tokens: 3 × (1000 prompt, 600 cached).
    openai.set_usage(Some((1000, 5, 600)));
    for _ in 0..3 {
        let (status, body) = server
            .send(server.client.post(server.url("/v1/chat/completions")).bearer_auth(&key).json(
                &json!({"model": "gemini-test", "messages": [{"role": "user", "content": "hi"}]}),
            ))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    // Anthropic reports cache reads and writes beside input_tokens: 100 + 300 read + 100 written
    // = 500 prompt tokens, 300 cached; twice.
    claude.set_usage(AnthropicUsage {
        input: 100,
        output: 5,
        cache_read: 300,
        cache_write: 100,
    });
    for _ in 0..2 {
        let (status, body) = server
            .send(
                server
                    .client
                    .post(server.url("/v1/messages"))
                    .header("x-api-key", &key)
                    .header("anthropic-version", "2023-06-01")
                    .json(&json!({"model": "claude-test", "max_tokens": 20,
                                  "messages": [{"role": "user", "content": "hi"}]})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    server.flush().await;

    let expected = json!([
        {"channel_id": openai_id, "channel_name": "cache-openai", "prompt_tokens": 3000,
         "cached_tokens": 1800, "hit_rate": 0.6},
        {"channel_id": claude_id, "channel_name": "cache-claude", "prompt_tokens": 1000,
         "cached_tokens": 600, "hit_rate": 0.6},
    ]);
    let (status, body) = root.get("/api/dashboard/cache_hit_rate").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"], expected, "{body}");
    let (_, one) = root
        .get(&format!(
            "/api/dashboard/cache_hit_rate?channel={claude_id}"
        ))
        .await;
    assert_eq!(one["data"], json!([expected[1]]), "{one}");
    let (_, before) = root
        .get("/api/dashboard/cache_hit_rate?start_timestamp=1000&end_timestamp=2000")
        .await;
    assert_eq!(before["data"], json!([]), "nothing in 1970: {before}");
    let (status, reversed) = root
        .get("/api/dashboard/cache_hit_rate?start_timestamp=2000&end_timestamp=1000")
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{reversed}");

    let (status, refused) = payer.get("/api/dashboard/cache_hit_rate").await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "a user is not an admin: {refused}"
    );
    assert_ne!(refused["success"], true, "{refused}");

    let dir = server.stop().await;
    let server = TestServer::start_in(dir).await;
    let root = server
        .client_for(common::ROOT_USER, common::ROOT_PASS)
        .await;
    let (status, body) = root.get("/api/dashboard/cache_hit_rate").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"], expected, "kept across a restart: {body}");
}
