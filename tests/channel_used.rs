//! A channel's used quota (issue P16 item 10): the log writer counts each consume row's quota
//! against its channel in the batch that stores the row, so every channel's used quota, as the
//! console's list and detail show it, equals the sum of its consume rows.

mod common;

use std::collections::BTreeMap;

use common::TestServer;
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
