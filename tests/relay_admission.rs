//! Relay admission and request-level features through the public HTTP API against a mock
//! upstream: sensitive words, the per-user model request rate limit (with group overrides),
//! the console playground, keep-alive pings on slow streams, error rows for failed requests,
//! and the request body limit.

mod common;

use std::time::Duration;

use common::mock_upstream::MockUpstream;
use common::relay_fixture::{chat, fixture, new_key};
use common::{Actor, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate_storage::logs::{self, LOG_CONSUME, LOG_ERROR};
use tollgate_storage::{StorageError, UserId, users};

fn channel(mock: &MockUpstream) -> Value {
    json!({"name": "mock", "type": 1, "key": "upstream-key-1", "base_url": mock.base,
           "models": "gpt-4o", "group": "default,vip"})
}

fn ask(text: &str) -> Value {
    json!({"model": "gpt-4o", "max_tokens": 10, "messages": [{"role": "user", "content": text}]})
}

#[expect(
    clippy::expect_used,
    reason = "test helper: a failed read fails the test"
)]
async fn user_state(server: &TestServer, user: i64) -> (i64, Vec<logs::LogEntry>) {
    server.flush().await;
    server
        .store()
        .read_blocking(|rtx| {
            let u = users::get(rtx, UserId(user))?.expect("user");
            // The set-up's balance edits (type-3 rows) aside: the rows of what was relayed.
            let rows = logs::recent_for_user(rtx, UserId(user), 100)?
                .into_iter()
                .filter(|l| l.log_type != logs::LOG_MANAGE)
                .collect();
            Ok::<_, StorageError>((u.quota.0, rows))
        })
        .expect("read")
}

#[tokio::test]
async fn sensitive_words_in_the_prompt_are_refused_before_anything_is_sent() {
    let mock = MockUpstream::start().await;
    let server = TestServer::start().await;
    let (root, payer, key) = fixture(&server, &[channel(&mock)], 100_000, 50_000).await;
    for (k, v) in [
        ("CheckSensitiveEnabled", "true"),
        ("CheckSensitiveOnPromptEnabled", "true"),
        ("SensitiveWords", "forbidden plan\nsecret"),
    ] {
        server.set_option(&root, k, json!(v)).await;
    }
    let (status, body) = chat(&server, &key, ask("tell me the SECRET, please")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], "sensitive_words_detected", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("secret")),
        "{body}"
    );
    // Other input fields are checked too (embeddings' `input`).
    let (status, body) = server
        .send(
            server
                .client
                .post(server.url("/v1/embeddings"))
                .bearer_auth(&key)
                .json(&json!({"model": "gpt-4o", "input": ["ok", "a forbidden plan"]})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(mock.chat_calls(), 0, "nothing was forwarded");
    let (balance, rows) = user_state(&server, payer.id).await;
    assert_eq!(
        (balance, rows.len()),
        (100_000, 0),
        "nothing billed or logged"
    );

    let (status, body) = chat(&server, &key, ask("hello")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // With StopOnSensitiveEnabled off, the prompt goes through unchanged.
    server
        .set_option(&root, "StopOnSensitiveEnabled", json!("false"))
        .await;
    let (status, body) = chat(&server, &key, ask("tell me the secret")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(mock.chat_calls(), 2);
}

#[tokio::test]
async fn the_model_request_rate_limit_counts_per_user_with_group_overrides() {
    let mock = MockUpstream::start().await;
    let server = TestServer::start().await;
    let (root, _payer, key) = fixture(&server, &[channel(&mock)], 100_000, 50_000).await;
    let vip_id = server.create_user(&root, "vipper", "password1").await;
    let (status, body) = root
        .put(
            "/api/user/",
            json!({"id": vip_id, "quota": 100_000, "group": "vip"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let vipper = server.client_for("vipper", "password1").await;
    let vip_key = new_key(&vipper, 50_000, json!({})).await;
    for (k, v) in [
        ("ModelRequestRateLimitEnabled", "true"),
        ("ModelRequestRateLimitCount", "2"),
        ("ModelRequestRateLimitDurationMinutes", "1"),
        ("ModelRequestRateLimitGroup", r#"{"vip": [0, 1]}"#),
    ] {
        server.set_option(&root, k, json!(v)).await;
    }
    for _ in 0..2 {
        let (status, body) = chat(&server, &key, ask("hi")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (status, body) = chat(&server, &key, ask("hi")).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"]["code"], "rate_limit_exceeded", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("at most 2 requests per 1 minute")),
        "{body}"
    );
    // The vip group: no total limit, one successful request per minute. A failed request
    // does not use it up.
    mock.push_fault(500, json!({"error": {"message": "boom"}}));
    let (status, _) = chat(&server, &vip_key, ask("hi")).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    let (status, body) = chat(&server, &vip_key, ask("hi")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = chat(&server, &vip_key, ask("hi")).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("at most 1 successful requests")),
        "{body}"
    );
    // Off again: no limit.
    server
        .set_option(&root, "ModelRequestRateLimitEnabled", json!("false"))
        .await;
    let (status, body) = chat(&server, &key, ask("hi")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn the_playground_bills_the_session_user_and_no_token() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((100, 20, 0)));
    let server = TestServer::start().await;
    let (_root, payer, key) = fixture(&server, &[channel(&mock)], 100_000, 50_000).await;
    let (status, body) = payer.post("/pg/chat/completions", ask("hello")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["object"], "chat.completion", "{body}");
    let (balance, rows) = user_state(&server, payer.id).await;
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!((row.log_type, row.token_id), (LOG_CONSUME, 0));
    assert_eq!(row.token_name, "playground", "the log names the playground");
    assert!(row.quota > 0);
    assert_eq!(balance, 100_000 - row.quota, "the user's balance paid");
    let (_, tokens) = payer.get("/api/token/").await;
    assert_eq!(
        tokens["data"]["items"][0]["remain_quota"], 50_000,
        "no token quota touched"
    );
    // Another usable group may be picked; others may not.
    let mut vip = ask("hello");
    vip["group"] = json!("vip");
    let (status, body) = payer.post("/pg/chat/completions", vip).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mut svip = ask("hello");
    svip["group"] = json!("svip");
    let (status, body) = payer.post("/pg/chat/completions", svip).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    // No session: refused; an API key or access token is not a session.
    let (status, _) = Actor::guest(&server)
        .post("/pg/chat/completions", ask("hello"))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, body) = server
        .send(
            payer
                .client
                .post(server.url("/pg/chat/completions"))
                .header("New-Api-User", payer.id.to_string())
                .bearer_auth(&key)
                .json(&ask("hello")),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(mock.chat_calls(), 2);
}

#[tokio::test]
async fn slow_streams_get_keep_alive_pings_and_still_bill_exactly() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((10, 2, 0)));
    mock.set_pieces(&["Hel", "lo"]);
    // The upstream waits 2.5 s before each chunk; pings every second fill the silence.
    mock.set_chunk_delay(Duration::from_millis(2500));
    let server = TestServer::start().await;
    let (root, payer, key) = fixture(&server, &[channel(&mock)], 100_000, 50_000).await;
    server
        .set_option(
            &root,
            "general_setting.ping_interval_enabled",
            json!("true"),
        )
        .await;
    server
        .set_option(&root, "general_setting.ping_interval_seconds", json!("1"))
        .await;
    let mut body = ask("hi");
    body["stream"] = json!(true);
    let resp = server
        .client
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(&key)
        .json(&body)
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status(), StatusCode::OK);
    let text = resp.text().await.expect("body");
    assert!(text.contains(": PING\n\n"), "{text}");
    assert!(
        text.contains("\"Hel\"") && text.ends_with("data: [DONE]\n\n"),
        "{text}"
    );
    let (_, rows) = user_state(&server, payer.id).await;
    let other: Value = serde_json::from_str(&rows[0].other).expect("other");
    assert_eq!(other["usage_source"], "upstream");
    assert_eq!((rows[0].prompt_tokens, rows[0].completion_tokens), (10, 2));
}

#[tokio::test]
async fn failed_requests_leave_an_error_row_with_the_attempts() {
    let mock = MockUpstream::start().await;
    let server = TestServer::start().await;
    let (root, payer, key) = fixture(&server, &[channel(&mock)], 100_000, 50_000).await;
    mock.push_fault(
        503,
        json!({"error": {"message": "overloaded, key upstream-key-1"}}),
    );
    let (status, body) = chat(&server, &key, ask("hi")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let (balance, rows) = user_state(&server, payer.id).await;
    assert_eq!(balance, 100_000, "nothing charged");
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!((row.log_type, row.quota), (LOG_ERROR, 0));
    assert_eq!(row.model_name, "gpt-4o");
    assert!(row.content.contains("overloaded"), "{}", row.content);
    assert!(!row.content.contains("upstream-key-1"), "the key is masked");
    let other: Value = serde_json::from_str(&row.other).expect("other");
    assert_eq!(other["status_code"], 503);
    assert_eq!(other["admin_info"]["attempts"][0]["s"], 503);
    assert_eq!(other["admin_info"]["attempts"][0]["e"], "server");
    // The admin's log page lists it under type 5.
    let (_, page) = root.get("/api/log/?type=5").await;
    assert_eq!(page["data"]["total"], 1, "{page}");
    // Switched off: no row.
    server
        .set_option(&root, "ErrorLogEnabled", json!("false"))
        .await;
    mock.push_fault(503, json!({"error": {"message": "overloaded"}}));
    let (status, _) = chat(&server, &key, ask("hi")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    let (_, rows) = user_state(&server, payer.id).await;
    assert_eq!(rows.len(), 1);
}

#[tokio::test]
async fn bodies_over_the_limit_get_413_and_large_images_pass_by_default() {
    let mock = MockUpstream::start().await;
    let server = TestServer::start().await;
    let (_root, _payer, key) = fixture(&server, &[channel(&mock)], 100_000, 50_000).await;
    // 3 MB of base64 image: over axum's 2 MB default, under Tollgate's 128 MiB.
    let image = format!("data:image/png;base64,{}", "A".repeat(3 * 1024 * 1024));
    let body = json!({"model": "gpt-4o", "max_tokens": 5, "messages": [{"role": "user",
        "content": [{"type": "image_url", "image_url": {"url": image}}]}]});
    let (status, answer) = chat(&server, &key, body.clone()).await;
    assert_eq!(status, StatusCode::OK, "{answer}");

    let small = TestServer::start_with(tempfile::tempdir().expect("dir"), |c| {
        c.max_request_body_mb = 1;
    })
    .await;
    let (_root, _payer, key) = fixture(&small, &[channel(&mock)], 100_000, 50_000).await;
    let (status, answer) = chat(&small, &key, body).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{answer}");
    assert_eq!(
        answer["error"]["code"], "request_body_too_large",
        "{answer}"
    );
}

#[tokio::test]
async fn channel_settings_add_a_system_prompt_or_pass_the_body_through() {
    let mock = MockUpstream::start().await;
    let server = TestServer::start().await;
    let mut prompted = channel(&mock);
    prompted["setting"] = json!(r#"{"system_prompt": "Be brief."}"#);
    let (root, _payer, key) = fixture(&server, &[prompted], 100_000, 50_000).await;
    let (status, body) = chat(&server, &key, ask("hi")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let sent = mock.last_body().expect("sent");
    assert_eq!(
        sent["messages"][0],
        json!({"role": "system", "content": "Be brief."})
    );
    assert_eq!(sent["messages"][1]["content"], "hi");
    // The client's own system prompt stands (no system_prompt_override).
    let mut own = ask("hi");
    own["messages"]
        .as_array_mut()
        .expect("messages")
        .insert(0, json!({"role": "system", "content": "Mine."}));
    chat(&server, &key, own).await;
    let sent = mock.last_body().expect("sent");
    assert_eq!(sent["messages"].as_array().map(Vec::len), Some(2));
    assert_eq!(sent["messages"][0]["content"], "Mine.");

    // Pass-through: the body goes as sent — no mapping, no prompt.
    let (_, list) = root.get("/api/channel/?p=1&page_size=10").await;
    let id = list["data"]["items"][0]["id"].as_i64().expect("id");
    let (status, body) = root
        .put(
            "/api/channel/",
            json!({"id": id, "setting": r#"{"system_prompt": "Be brief.", "pass_through_body_enabled": true}"#,
                   "model_mapping": r#"{"gpt-4o": "gpt-4o-2024"}"#}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let raw = ask("verbatim");
    let (status, body) = chat(&server, &key, raw.clone()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(mock.last_body().expect("sent"), raw);
}

#[tokio::test]
async fn openai_streams_of_a_mixed_route_pass_through_unchanged() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((10, 2, 0)));
    mock.set_pieces(&["Hel", "lo"]);
    let claude = common::mock_anthropic::MockAnthropic::start().await;
    let server = TestServer::start().await;
    // gpt-4o is served by an OpenAI channel (priority 10) and a Claude one (standby, 0): the
    // route needs the adaptor path, but the OpenAI channel's stream must reach the client as
    // the upstream sent it.
    let mut openai = channel(&mock);
    openai["priority"] = json!(10);
    let claude_channel = json!({"name": "claude", "type": 14, "key": "claude-key",
        "base_url": claude.base, "models": "gpt-4o", "group": "default", "priority": 0});
    let (_root, payer, key) = fixture(&server, &[openai, claude_channel], 100_000, 50_000).await;
    let mut body = ask("hi");
    body["stream"] = json!(true);
    let text = server
        .client
        .post(server.url("/v1/chat/completions"))
        .bearer_auth(&key)
        .json(&body)
        .send()
        .await
        .expect("sent")
        .text()
        .await
        .expect("body");
    let chunk = json!({"id": "c", "object": "chat.completion.chunk", "model": "gpt-4o",
        "choices": [{"index": 0, "delta": {"content": "Hel"}}]});
    assert!(text.contains(&format!("data: {chunk}\n\n")), "{text}");
    assert!(!text.contains("\"usage\""), "usage chunk held back: {text}");
    assert_eq!(claude.calls(), 0);
    let (_, rows) = user_state(&server, payer.id).await;
    assert_eq!((rows[0].prompt_tokens, rows[0].completion_tokens), (10, 2));
}

#[tokio::test]
async fn an_upstream_that_hangs_times_out_and_releases_the_reservation() {
    let mock = MockUpstream::start().await;
    let server = TestServer::start_with(tempfile::tempdir().expect("dir"), |c| {
        c.relay_timeout_secs = 1;
    })
    .await;
    // 1,000 covers one reservation of this request (at least PreConsumedQuota, 500, at the
    // model ratio) but not two: a leaked reservation would refuse the second request.
    let (_root, payer, key) = fixture(&server, &[channel(&mock)], 1_000, 1_000).await;
    mock.set_delay(Duration::from_secs(3));
    let (status, body) = chat(&server, &key, ask("hi")).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    assert_eq!(body["error"]["code"], "upstream_unreachable", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no answer within 1 s")),
        "{body}"
    );
    // The reservation was released: the same balance admits the next request.
    mock.set_delay(Duration::ZERO);
    let (status, body) = chat(&server, &key, ask("hi")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, rows) = user_state(&server, payer.id).await;
    let timeline: Value = serde_json::from_str(
        &rows
            .iter()
            .find(|r| r.log_type == LOG_ERROR)
            .expect("error row")
            .other,
    )
    .expect("other");
    assert_eq!(timeline["admin_info"]["attempts"][0]["e"], "timeout");
}

#[tokio::test]
async fn a_prompt_longer_than_every_channel_accepts_is_refused_before_anything_is_sent() {
    let mock = MockUpstream::start().await;
    let server = TestServer::start().await;
    let mut small = channel(&mock);
    small["max_input_tokens"] = json!(20);
    let (root, payer, key) = fixture(&server, &[small], 100_000, 50_000).await;
    let long = "tollgate ".repeat(100);

    let (status, body) = chat(&server, &key, ask(&long)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("at most 20 input tokens")),
        "{body}"
    );
    assert_eq!(mock.calls(), 0, "nothing was sent upstream");
    let (quota, rows) = user_state(&server, payer.id).await;
    assert_eq!(quota, 100_000, "nothing was charged: {rows:?}");

    // A prompt within the limit goes through.
    let (status, body) = chat(&server, &key, ask("hello")).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // A channel without a limit takes the long prompt.
    let mut open = channel(&mock);
    open["name"] = json!("open");
    let (status, body) = root.post("/api/channel/", open).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = chat(&server, &key, ask(&long)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn a_channel_too_small_for_the_prompt_is_skipped_for_one_that_fits() {
    let small_mock = MockUpstream::start().await;
    let open_mock = MockUpstream::start().await;
    let server = TestServer::start().await;
    // The small channel is tried first (higher priority) whenever it can take the prompt.
    let mut small = channel(&small_mock);
    small["name"] = json!("small");
    small["max_input_tokens"] = json!(20);
    small["priority"] = json!(10);
    let mut open = channel(&open_mock);
    open["name"] = json!("open");
    let (_root, _payer, key) = fixture(&server, &[small, open], 100_000, 50_000).await;

    let (status, body) = chat(&server, &key, ask(&"tollgate ".repeat(100))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        small_mock.calls(),
        0,
        "the long prompt never went to the small channel"
    );
    assert_eq!(open_mock.calls(), 1);

    let (status, body) = chat(&server, &key, ask("hello")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        small_mock.calls(),
        1,
        "a short prompt still uses the small channel"
    );
    assert_eq!(open_mock.calls(), 1);
}
