//! The relay through the public HTTP API against a mock upstream: exact billing (non-stream and
//! stream), usage provenance, auth refusals, failover, and conservation under concurrency.

mod common;

use std::time::Duration;

use common::mock_upstream::MockUpstream;
use common::relay_fixture::{
    balances, chat, new_key, openai_channel, wait_channel_status, wait_until,
};
use common::socks::SocksProxy;
use common::{Actor, ROOT_PASS, ROOT_USER, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// A server with one OpenAI channel on `mock` serving gpt-4o, a user "payer" with `quota`, and a
/// token with `token_quota`; returns (root, payer, full key).
async fn fixture(
    server: &TestServer,
    mock: &MockUpstream,
    quota: i64,
    token_quota: i64,
) -> (Actor, Actor, String) {
    let channel = openai_channel(&mock.base, "gpt-4o,gpt-4o-mini");
    fixture_with(server, channel, quota, token_quota).await
}

/// [`fixture`] with the channel `channel` (the body of its creation).
async fn fixture_with(
    server: &TestServer,
    channel: Value,
    quota: i64,
    token_quota: i64,
) -> (Actor, Actor, String) {
    server.setup_root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let (status, body) = root.post("/api/channel/", channel).await;
    assert_eq!(status, StatusCode::OK, "channel: {body}");
    let payer_id = server.create_user(&root, "payer", "password1").await;
    let (status, body) = root
        .put("/api/user/", json!({"id": payer_id, "quota": quota}))
        .await;
    assert_eq!(status, StatusCode::OK, "quota: {body}");
    let payer = server.client_for("payer", "password1").await;
    let key = new_key(&payer, token_quota, json!({})).await;
    (root, payer, key)
}

#[tokio::test]
async fn non_stream_request_is_billed_exactly_and_logged() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((1000, 200, 0)));
    mock.set_pieces(&["hello"]);
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(&server, &mock, 1_000_000, 500_000).await;
    let (status, body) = chat(
        &server,
        &key,
        json!({"model": "gpt-4o", "max_tokens": 300,
        "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["choices"][0]["message"]["content"], "hello",
        "the answer passes through"
    );
    assert_eq!(mock.last_key().as_deref(), Some("upstream-key-1"));
    let (quota, used, count, logs) = balances(&server, payer.id).await;
    // gpt-4o: ratio 1.25, completion 4 → 1.25 × (1000 + 200 × 4) = 2250
    assert_eq!((quota, used, count), (1_000_000 - 2250, 2250, 1));
    assert_eq!(logs.len(), 1);
    let log = &logs[0];
    assert_eq!(
        (log.quota, log.prompt_tokens, log.completion_tokens),
        (2250, 1000, 200)
    );
    assert_eq!(log.model_name, "gpt-4o");
    let other: Value = serde_json::from_str(&log.other).expect("other");
    assert_eq!(other["usage_source"], "upstream");
    assert_eq!(other["model_ratio"], 1.25);
    assert_eq!(other["admin_info"]["use_channel"], json!([1]));
    let (_, tokens) = payer.get("/api/token/").await;
    assert_eq!(
        tokens["data"]["items"][0]["remain_quota"],
        500_000 - 2250,
        "token charged too"
    );
    assert_eq!(tokens["data"]["items"][0]["used_quota"], 2250);
}

#[tokio::test]
async fn cached_tokens_group_ratio_and_per_call_prices() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((1000, 200, 400)));
    let server = TestServer::start().await;
    let (root, payer, key) = fixture(&server, &mock, 1_000_000, 900_000).await;
    server
        .set_option(&root, "GroupRatio", json!(r#"{"default": 0.5}"#))
        .await;
    let (status, _) = chat(&server, &key, json!({"model": "gpt-4o", "messages": []})).await;
    assert_eq!(status, StatusCode::OK);
    // 0.5 × 1.25 × (600 + 400 × 0.5 + 200 × 4) = 1000
    let (quota, ..) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000 - 1000);
    server
        .set_option(&root, "ModelPrice", json!(r#"{"gpt-4o-mini": 0.01}"#))
        .await;
    let (status, _) = chat(
        &server,
        &key,
        json!({"model": "gpt-4o-mini", "messages": []}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    // 0.01 × 500000 × 0.5 = 2500 per call, whatever the tokens
    let (quota, ..) = balances(&server, payer.id).await;
    assert_eq!(quota, 1_000_000 - 1000 - 2500);
}

#[tokio::test]
async fn stream_is_piped_billed_and_the_usage_chunk_hidden_unless_asked() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((10, 3, 0)));
    mock.set_pieces(&["He", "llo", "!"]);
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(&server, &mock, 1_000_000, 500_000).await;
    let body =
        json!({"model": "gpt-4o", "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    let resp = server
        .client
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(&key)
        .json(&body)
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .expect("ascii")
            .starts_with("text/event-stream")
    );
    let text = resp.text().await.expect("stream");
    assert!(
        text.contains("\"He\"") && text.contains("\"llo\"") && text.ends_with("data: [DONE]\n\n"),
        "{text}"
    );
    assert!(
        !text.contains("\"usage\""),
        "the client did not ask for usage: {text}"
    );
    assert_eq!(
        mock.last_body().expect("sent")["stream_options"]["include_usage"],
        true,
        "forced upstream"
    );
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // 1.25 × (10 + 3 × 4) = 27.5 → 28
    assert_eq!(quota, 1_000_000 - 28);
    assert!(logs[0].is_stream);

    let mut asked = body.clone();
    asked["stream_options"] = json!({"include_usage": true});
    let text = server
        .client
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(&key)
        .json(&asked)
        .send()
        .await
        .expect("sent")
        .text()
        .await
        .expect("stream");
    assert!(
        text.contains("\"usage\""),
        "the client asked for usage: {text}"
    );
}

/// The OpenAI stream path forwards the upstream's own bytes — comments, CRLF line breaks,
/// fields Tollgate does not know, events split across reads — and holds back only the
/// usage-only event the client did not ask for, however the reads cut it.
#[tokio::test]
async fn stream_forwards_the_upstreams_own_bytes_however_the_reads_split_them() {
    let usage_event = "data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":3,\"total_tokens\":13}}\n\n";
    let (usage_head, usage_tail) = usage_event.split_at(usage_event.len() - 1);
    let head = ": upstream comment\r\n\r\ndata: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"He\"}}]}\r\n\r\ndata: {\"id\":\"c\",\"cho";
    let middle = "ices\":[{\"index\":0,\"delta\":{\"content\":\"llo\"}}],\"x_vendor\":1}\n\n";
    let third = format!("{middle}{usage_head}");
    let last = format!("{usage_tail}data: [DONE]\n\n");
    let mock = MockUpstream::start().await;
    mock.set_raw_stream(&[head, &third, &last]);
    mock.set_chunk_delay(Duration::from_millis(20));
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(&server, &mock, 1_000_000, 500_000).await;
    let mut body =
        json!({"model": "gpt-4o", "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    let stream = |body: Value| {
        let req = server
            .client
            .post(server.url("/v1/chat/completions"))
            .bearer_auth(&key)
            .json(&body);
        async move {
            req.send()
                .await
                .expect("sent")
                .text()
                .await
                .expect("stream")
        }
    };

    let text = stream(body.clone()).await;
    assert_eq!(text, format!("{head}{middle}data: [DONE]\n\n"));
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // Billed from the held-back usage event: 1.25 × (10 + 3 × 4) = 27.5 → 28.
    assert_eq!(quota, 1_000_000 - 28);
    assert_eq!((logs[0].prompt_tokens, logs[0].completion_tokens), (10, 3));

    body["stream_options"] = json!({"include_usage": true});
    let text = stream(body).await;
    assert_eq!(text, format!("{head}{third}{last}"));
}

#[tokio::test]
async fn an_upstream_event_that_never_ends_is_cut_off_not_buffered_without_limit() {
    let first =
        "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"He\"}}]}\n\n";
    // One event of 65 MiB with no blank line after it: past the 64 MiB limit of an event.
    let endless = format!("data: {}", "x".repeat(65 << 20));
    let mock = MockUpstream::start().await;
    mock.set_raw_stream(&[first, &endless, "\n\ndata: [DONE]\n\n"]);
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(&server, &mock, 1_000_000, 500_000).await;
    let text = server.client.post(server.url("/v1/chat/completions")).bearer_auth(&key)
        .json(&json!({"model": "gpt-4o", "stream": true, "messages": [{"role": "user", "content": "hi"}]}))
        .send().await.expect("sent").text().await.expect("stream");
    // The whole events before it went out; nothing of it did.
    assert!(text == first, "the client got {} bytes", text.len());
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    let other: Value = serde_json::from_str(&logs[0].other).expect("other");
    assert_eq!(other["usage_source"], "partial");
    assert!(quota < 1_000_000, "what was produced is billed");
}

#[tokio::test]
async fn missing_usage_is_estimated_and_said_so() {
    let mock = MockUpstream::start().await;
    mock.set_usage(None);
    mock.set_pieces(&["abcdefgh"]);
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(&server, &mock, 1_000_000, 500_000).await;
    let text = server.client.post(server.url("/v1/chat/completions")).bearer_auth(&key)
        .json(&json!({"model": "gpt-4o", "stream": true, "messages": [{"role": "user", "content": "12345678"}]}))
        .send().await.expect("sent").text().await.expect("stream");
    assert!(text.contains("abcdefgh"));
    let (_, _, _, logs) = balances(&server, payer.id).await;
    let other: Value = serde_json::from_str(&logs[0].other).expect("other");
    assert_eq!(other["usage_source"], "estimated");
    // Counted with gpt-4o's o200k_base encoding: "12345678" is 3 tokens ("123" "456" "78")
    // + 3 + 3 framing = 9; the streamed "abcdefgh" is 1 token. (chars ÷ 4 would say 8 and 2.)
    assert_eq!((logs[0].prompt_tokens, logs[0].completion_tokens), (9, 1));
}

#[tokio::test]
async fn upstream_keep_alive_comments_reach_the_client_before_the_first_event() {
    let comment = ": OPENROUTER PROCESSING\n\n";
    let event = "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: [DONE]\n\n";
    let mock = MockUpstream::start().await;
    mock.set_raw_stream(&[comment, event]);
    // Each part comes 300 ms after the one before: the comment is alone on the wire that long.
    mock.set_chunk_delay(Duration::from_millis(300));
    let server = TestServer::start().await;
    let (_, _, key) = fixture(&server, &mock, 1_000_000, 500_000).await;
    let mut resp = server.client.post(server.url("/v1/chat/completions")).bearer_auth(&key)
        .json(&json!({"model": "gpt-4o", "stream": true, "messages": [{"role": "user", "content": "hi"}]}))
        .send().await.expect("sent");
    let first = resp.chunk().await.expect("chunk").expect("some");
    assert_eq!(
        String::from_utf8_lossy(&first),
        comment,
        "the comment came on its own"
    );
    let mut rest = Vec::new();
    while let Some(chunk) = resp.chunk().await.expect("chunk") {
        rest.extend_from_slice(&chunk);
    }
    assert_eq!(String::from_utf8_lossy(&rest), event);
}

#[tokio::test]
async fn client_disconnect_bills_what_was_produced_and_closes_upstream() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((10, 50, 0)));
    mock.set_pieces(&["aaaa", "bbbb", "cccc", "dddd", "eeee", "ffff"]);
    mock.set_chunk_delay(Duration::from_millis(150));
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(&server, &mock, 1_000_000, 500_000).await;
    let mut resp = server.client.post(server.url("/v1/chat/completions")).bearer_auth(&key)
        .json(&json!({"model": "gpt-4o", "stream": true, "messages": [{"role": "user", "content": "hi"}]}))
        .send().await.expect("sent");
    let first = resp.chunk().await.expect("chunk").expect("some");
    assert!(String::from_utf8_lossy(&first).contains("aaaa"));
    drop(resp);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (_, _, count, logs) = balances(&server, payer.id).await;
        if count == 1 {
            let other: Value = serde_json::from_str(&logs[0].other).expect("other");
            assert_eq!(other["usage_source"], "partial");
            assert!(
                logs[0].completion_tokens >= 1 && logs[0].completion_tokens < 50,
                "billed what was produced: {:?}",
                logs[0]
            );
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the disconnect was never settled"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    wait_until("the upstream stream to be closed", || {
        mock.streams_cut() > 0
    })
    .await;
}

#[tokio::test]
async fn keys_and_quota_are_checked_before_forwarding() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((1, 1, 0)));
    let server = TestServer::start().await;
    let (root, payer, key) = fixture(&server, &mock, 1_000_000, 500_000).await;
    let msg = json!({"model": "gpt-4o", "messages": []});
    let (status, body) = server
        .send(
            server
                .client
                .post(server.url("/v1/chat/completions"))
                .json(&msg),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["error"]["code"], "invalid_api_key");
    assert_eq!(
        chat(&server, "sk-nope", msg.clone()).await.0,
        StatusCode::UNAUTHORIZED
    );
    let (status, body) = chat(
        &server,
        &key,
        json!({"model": "unpriced-model", "messages": []}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .expect("m")
            .contains("price not configured")
    );
    let (status, body) = chat(&server, &format!("{key}-1"), msg.clone()).await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "ordinary users cannot pin a channel: {body}"
    );

    // Admission refuses when what is available is below the prompt + min(output bound,
    // DefaultOutputReserve) (P16 item 3a); a larger max_tokens is no longer refused but served
    // with a lower limit (tests/relay_output_limit.rs). DefaultOutputReserve is raised so that
    // the bound itself, gpt-4o's maximum output of 16,384, must be covered:
    // 1.25 × (500 + 16,384 × 4) = 82,545. A user with 50,000 is refused however large the
    // client's max_tokens, and so is a key with 50,000 left; nothing reaches the upstream.
    server
        .set_option(&root, "DefaultOutputReserve", json!("2000000"))
        .await;
    let (status, body) = root
        .put("/api/user/", json!({"id": payer.id, "quota": 50_000}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = chat(
        &server,
        &key,
        json!({"model": "gpt-4o", "max_tokens": 1_000_000, "messages": []}),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "insufficient_user_quota");
    assert!(
        body["error"]["message"]
            .as_str()
            .expect("m")
            .contains("user quota"),
        "{body}"
    );
    let (status, body) = root
        .put("/api/user/", json!({"id": payer.id, "quota": 1_000_000}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, tokens) = payer.get("/api/token/").await;
    let id = tokens["data"]["items"][0]["id"].as_i64().expect("id");
    let (status, body) = payer
        .put("/api/token/", json!({"id": id, "remain_quota": 50_000}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = chat(&server, &key, json!({"model": "gpt-4o", "messages": []})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .expect("m")
            .contains("token quota"),
        "{body}"
    );
    assert_eq!(mock.chat_calls(), 0, "nothing was forwarded");
    let (status, body) = payer
        .put("/api/token/", json!({"id": id, "remain_quota": 500_000}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    payer
        .put(
            "/api/token/?status_only=true",
            json!({"id": id, "status": 2}),
        )
        .await;
    let (status, body) = chat(&server, &key, msg.clone()).await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "a disabled key stops at once: {body}"
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .expect("m")
            .contains("disabled")
    );
    payer
        .put(
            "/api/token/?status_only=true",
            json!({"id": id, "status": 1}),
        )
        .await;
    payer
        .put(
            "/api/token/",
            json!({"id": id, "model_limits_enabled": true, "model_limits": "gpt-4o-mini"}),
        )
        .await;
    let (status, _) = chat(&server, &key, msg.clone()).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "model limits");
    payer
        .put(
            "/api/token/",
            json!({"id": id, "model_limits_enabled": false, "allow_ips": "10.0.0.0/8"}),
        )
        .await;
    let (status, body) = chat(&server, &key, msg.clone()).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "IP allow list: {body}");
    payer
        .put("/api/token/", json!({"id": id, "allow_ips": "127.0.0.1"}))
        .await;
    assert_eq!(chat(&server, &key, msg.clone()).await.0, StatusCode::OK);

    root.post(
        "/api/user/manage",
        json!({"id": payer.id, "action": "disable"}),
    )
    .await;
    let (status, body) = chat(&server, &key, msg).await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "a banned owner's keys stop at once: {body}"
    );
}

#[tokio::test]
async fn failover_walks_the_tiers_and_bad_keys_get_the_channel_disabled() {
    let primary = MockUpstream::start().await;
    let backup = MockUpstream::start().await;
    backup.set_usage(Some((1, 1, 0)));
    let server = TestServer::start().await;
    let (root, _, key) = fixture(&server, &primary, 1_000_000, 500_000).await;
    root.put("/api/channel/", json!({"id": 1, "priority": 10}))
        .await;
    let (status, body) = root
        .post(
            "/api/channel/",
            json!({"name": "backup", "type": 1, "key": "backup-key",
        "base_url": backup.base, "models": "gpt-4o", "group": "default", "priority": 0}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let msg = json!({"model": "gpt-4o", "messages": []});

    primary.push_fault(503, json!({"error": {"message": "overloaded"}}));
    let (status, body) = chat(&server, &key, msg.clone()).await;
    assert_eq!(
        status,
        StatusCode::SERVICE_UNAVAILABLE,
        "RetryTimes 0: no retry: {body}"
    );
    assert_eq!(backup.chat_calls(), 0);

    server.set_option(&root, "RetryTimes", json!("2")).await;
    primary.push_fault(503, json!({"error": {"message": "overloaded"}}));
    let (status, body) = chat(&server, &key, msg.clone()).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "failed over to the backup tier: {body}"
    );
    assert_eq!(backup.chat_calls(), 1);

    primary.push_fault(
        400,
        json!({"error": {"message": "bad request from client"}}),
    );
    let (status, _) = chat(&server, &key, msg.clone()).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "client errors are not retried"
    );
    assert_eq!(backup.chat_calls(), 1);

    server
        .set_option(&root, "AutomaticDisableChannelEnabled", json!("true"))
        .await;
    primary.push_fault(
        401,
        json!({"error": {"message": "Incorrect API key provided: upstream-key-1"}}),
    );
    let (status, body) = chat(&server, &key, msg.clone()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    wait_channel_status(&root, 1, 3).await;
    let calls = primary.chat_calls();
    assert_eq!(chat(&server, &key, msg).await.0, StatusCode::OK);
    assert_eq!(
        primary.chat_calls(),
        calls,
        "a disabled channel gets no traffic"
    );
}

/// Relayed successes skip the channel pool while no channel has failures counted; once one
/// has, a success still reaches it and resets the count.
#[tokio::test]
async fn a_relayed_success_between_failures_still_resets_the_count() {
    let mock = MockUpstream::start().await;
    let server = TestServer::start().await;
    let (root, _, key) = fixture(&server, &mock, 1_000_000, 500_000).await;
    server
        .set_option(&root, "AutomaticDisableChannelEnabled", json!("true"))
        .await;
    let msg = json!({"model": "gpt-4o", "messages": []});
    let fail = |n: usize| {
        for _ in 0..n {
            mock.push_fault(502, json!({"error": {"message": "bad gateway"}}));
        }
    };
    // Outcomes reach the pool in order; a call to it returns once those before it are applied.
    let settled = || async { server.pool().retest_now().await.expect("pool answers") };
    let status = || async {
        settled().await;
        root.get("/api/channel/1").await.1["data"]["status"].clone()
    };

    assert_eq!(chat(&server, &key, msg.clone()).await.0, StatusCode::OK);
    fail(2);
    for _ in 0..2 {
        assert_eq!(
            chat(&server, &key, msg.clone()).await.0,
            StatusCode::BAD_GATEWAY
        );
    }
    assert_eq!(chat(&server, &key, msg.clone()).await.0, StatusCode::OK);
    fail(2);
    for _ in 0..2 {
        chat(&server, &key, msg.clone()).await;
    }
    assert_eq!(status().await, 1, "the success in between reset the count");
    fail(1);
    chat(&server, &key, msg).await;
    assert_eq!(status().await, 3, "three in a row disable it");
}

#[tokio::test]
async fn upstream_errors_keep_their_status_and_mask_the_key() {
    let mock = MockUpstream::start().await;
    let server = TestServer::start().await;
    let (_, payer, key) = fixture(&server, &mock, 1_000_000, 500_000).await;
    mock.push_fault(
        401,
        json!({"error": {"message": "Incorrect API key provided: upstream-key-1"}}),
    );
    let (status, body) = chat(&server, &key, json!({"model": "gpt-4o", "messages": []})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let text = body.to_string();
    assert!(
        !text.contains("upstream-key-1") && text.contains("*****"),
        "{text}"
    );
    let (quota, _, count, _) = balances(&server, payer.id).await;
    assert_eq!(
        (quota, count),
        (1_000_000, 0),
        "a failed request costs nothing"
    );
}

/// 1,000 concurrent requests from 10 users, some of whom run out of user or token quota on
/// the way: sum(balances) + sum(logged quota) stays the initial total, one request is counted
/// per success, and every token's remaining quota agrees with its logs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_conserve_money() {
    const USERS: usize = 10;
    const REQUESTS: usize = 1_000;
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((100, 20, 0)));
    let server = TestServer::start().await;
    let (root, payer, key) = fixture(&server, &mock, 20_000, 15_000).await;
    // Each request costs 1.25 × (100 + 20 × 4) = 225. User i has 20,000 + i × 3,000 and a
    // token of 15,000 + i × 1,000 (or unlimited for odd i): the small ones run dry mid-run.
    let mut users = vec![(payer, key, 20_000i64, Some(15_000i64))];
    for i in 1..USERS {
        let name = format!("user{i}");
        let id = server.create_user(&root, &name, "password1").await;
        let quota = 20_000 + i64::try_from(i).expect("i") * 3_000;
        root.put("/api/user/", json!({"id": id, "quota": quota}))
            .await;
        let actor = server.client_for(&name, "password1").await;
        let token_quota = (i % 2 == 0).then(|| 15_000 + i64::try_from(i).expect("i") * 1_000);
        let key = match token_quota {
            Some(q) => new_key(&actor, q, json!({})).await,
            None => {
                let (_, token) = actor
                    .post("/api/token/", json!({"name": "k", "unlimited_quota": true}))
                    .await;
                let id = token["data"]["id"].as_i64().expect("token id");
                let (_, full) = actor.post(&format!("/api/token/{id}/key"), json!({})).await;
                full["data"]["key"].as_str().expect("key").to_owned()
            }
        };
        users.push((actor, key, quota, token_quota));
    }
    let initial: i64 = users.iter().map(|u| u.2).sum();
    let mut tasks = Vec::new();
    for i in 0..REQUESTS {
        let client = server.client.clone();
        let url = server.url("/v1/chat/completions");
        let key = users[i % USERS].1.clone();
        tasks.push(tokio::spawn(async move {
            client
                .post(url)
                .bearer_auth(key)
                .json(&json!({"model": "gpt-4o", "max_tokens": 50, "messages": []}))
                .send()
                .await
                .expect("sent")
                .status()
        }));
    }
    let mut ok = 0;
    for t in tasks {
        let status = t.await.expect("task");
        assert!(
            status == StatusCode::OK || status == StatusCode::FORBIDDEN,
            "{status}"
        );
        ok += usize::from(status == StatusCode::OK);
    }
    assert!(ok > 0 && ok < REQUESTS, "some succeed, some run dry: {ok}");
    let mut balances_sum = 0;
    let mut logged_sum = 0;
    let mut counted = 0;
    for (actor, _, _, token_quota) in &users {
        let (q, _, c, logs) = balances(&server, actor.id).await;
        assert!(q >= 0, "never negative");
        let logged: i64 = logs.iter().map(|l| l.quota).sum();
        balances_sum += q;
        logged_sum += logged;
        counted += c;
        if let Some(token_quota) = token_quota {
            let (_, tokens) = actor.get("/api/token/").await;
            let remain = tokens["data"]["items"][0]["remain_quota"]
                .as_i64()
                .expect("remain");
            assert_eq!(
                remain + logged,
                *token_quota,
                "the token balance agrees with its logs"
            );
        }
    }
    assert_eq!(
        balances_sum + logged_sum,
        initial,
        "sum(balances) + sum(logged quota) == initial"
    );
    assert_eq!(
        usize::try_from(counted).expect("count"),
        ok,
        "one request counted per success"
    );
}

#[tokio::test]
async fn embeddings_are_relayed_and_billed_by_prompt_tokens() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((1000, 0, 0)));
    let server = TestServer::start().await;
    let (root, payer, key) = fixture(&server, &mock, 1_000_000, 500_000).await;
    root.put(
        "/api/channel/",
        json!({"id": 1, "models": "gpt-4o,text-embedding-3-small"}),
    )
    .await;
    let (status, body) = server
        .send(
            server
                .client
                .post(server.url("/v1/embeddings"))
                .bearer_auth(&key)
                .json(&json!({"model": "text-embedding-3-small", "input": ["hello", "world"]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"][0]["embedding"], json!([0.5, 0.25]));
    let (quota, _, _, logs) = balances(&server, payer.id).await;
    // text-embedding-3-small: ratio 0.01 × 1000 = 10
    assert_eq!(quota, 1_000_000 - 10);
    assert_eq!(logs[0].model_name, "text-embedding-3-small");
}

#[tokio::test]
async fn users_see_the_models_their_groups_reach() {
    let mock = MockUpstream::start().await;
    let server = TestServer::start().await;
    let (root, payer, _) = fixture(&server, &mock, 1, 1).await;
    root.post(
        "/api/channel/",
        json!({"name": "svip-only", "type": 1, "key": "k2", "base_url": mock.base,
        "models": "o3", "group": "svip"}),
    )
    .await;
    let (status, body) = payer.get("/api/user/models").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body["data"],
        json!(["gpt-4o", "gpt-4o-mini"]),
        "svip is not one of the payer's groups"
    );
}

#[tokio::test]
async fn model_mapping_param_override_and_status_mapping_apply_per_channel() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((10, 10, 0)));
    let server = TestServer::start().await;
    let (root, payer, key) = fixture(&server, &mock, 1_000_000, 500_000).await;
    let (status, body) = root
        .put(
            "/api/channel/",
            json!({"id": 1, "model_mapping": r#"{"gpt-4o": "gpt-4o-2024-08-06"}"#,
            "param_override": r#"{"temperature": 0.1, "user": "gateway"}"#,
            "status_code_mapping": r#"{"429": "503"}"#}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = chat(
        &server,
        &key,
        json!({"model": "gpt-4o", "temperature": 0.9, "messages": []}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let sent = mock.last_body().expect("sent");
    assert_eq!(
        sent["model"], "gpt-4o-2024-08-06",
        "the upstream gets the mapped name"
    );
    assert_eq!(
        (sent["temperature"].as_f64(), sent["user"].as_str()),
        (Some(0.1), Some("gateway"))
    );
    let (_, _, _, logs) = balances(&server, payer.id).await;
    assert_eq!(
        logs[0].model_name, "gpt-4o",
        "the log keeps the requested name"
    );
    let other: Value = serde_json::from_str(&logs[0].other).expect("other");
    assert_eq!(
        (
            other["is_model_mapped"].as_bool(),
            other["upstream_model_name"].as_str()
        ),
        (Some(true), Some("gpt-4o-2024-08-06"))
    );
    mock.push_fault(429, json!({"error": {"message": "slow down"}}));
    let (status, _) = chat(&server, &key, json!({"model": "gpt-4o", "messages": []})).await;
    assert_eq!(
        status,
        StatusCode::SERVICE_UNAVAILABLE,
        "429 mapped to 503 by the channel"
    );
}

#[tokio::test]
async fn channels_of_types_not_relayed_yet_are_never_picked_nor_blamed() {
    let mock = MockUpstream::start().await;
    let server = TestServer::start().await;
    let (root, _, key) = fixture(&server, &mock, 1_000_000, 500_000).await;
    // Midjourney Proxy (2): a task type with no chat route, so no chat request can use it.
    let (status, body) = root
        .put(
            "/api/channel/",
            json!({"id": 1, "type": 2, "key": "mj-proxy-secret"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    server
        .set_option(&root, "AutomaticDisableChannelEnabled", json!("true"))
        .await;
    for _ in 0..4 {
        let (status, body) = chat(&server, &key, json!({"model": "gpt-4o", "messages": []})).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("/v1/chat/completions") && message.contains("gpt-4o"),
            "{message}"
        );
    }
    assert_eq!(mock.chat_calls(), 0);
    let (_, channel) = root.get("/api/channel/1").await;
    assert_eq!(
        channel["data"]["status"], 1,
        "our limitation never disables the channel"
    );
}

#[tokio::test]
async fn a_channel_with_a_proxy_is_relayed_through_it() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((10, 5, 0)));
    mock.set_pieces(&["through the proxy"]);
    let socks = SocksProxy::start(None).await;
    let server = TestServer::start().await;
    let mut channel = openai_channel(&mock.base, "gpt-4o");
    channel["proxy"] = json!(format!("socks5://{}", socks.addr));
    let (_, _, key) = fixture_with(&server, channel, 1_000_000, 500_000).await;
    for stream in [false, true] {
        let (status, body) = chat(
            &server,
            &key,
            json!({"model": "gpt-4o", "stream": stream,
            "messages": [{"role": "user", "content": "hi"}]}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    // The channel's requests take its proxy, not the direct client (which skips reqwest).
    assert!(socks.relayed() >= 1, "the relay went through the proxy");
    assert_eq!(mock.chat_calls(), 2, "both answered by the upstream");
}
