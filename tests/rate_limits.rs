//! Rate-limit configuration (P15 item 1) through the console API: a key's limits for its
//! owner, a user's and a channel's (with per-key limits) for an admin, each edit audited and
//! kept across a restart; `RateLimitRules` refused with a code naming the rule. The engine
//! itself is tested beside its code (actors/src/limiter).

mod common;

use common::TestServer;
use common::limits_fixture::{Setup, hi, limits_fixture, put_limits};
use common::relay_fixture::{balances, chat_request, fixture, openai_channel, other, raw};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn limits_are_set_read_back_audited_and_kept_across_a_restart() {
    let common::limits_fixture::Limited {
        server,
        root,
        payer,
        token,
        channel,
        ..
    } = limits_fixture(Setup {
        quota: 1_000,
        dir: Some(tempfile::tempdir().expect("tempdir")),
        ..Setup::default()
    })
    .await;

    // A key's limits, by its owner; another user's key reads as not found.
    let path = format!("/api/token/{token}/limits");
    let (status, body) = payer.get(&path).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["data"],
        json!({"concurrency_limit": 0, "rpm_limit": 0, "tpm_limit": 0, "rpd_limit": 0,
               "key_limits": []})
    );
    let (status, body) = payer
        .put(&path, json!({"rpm_limit": 60, "concurrency_limit": 2}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["rpm_limit"], 60);
    let (status, _) = root.get(&path).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "root does not own the key");
    // key_limits belong to channels only; a negative limit is not a number of requests.
    let (status, body) = payer
        .put(&path, json!({"key_limits": [{"index": 0, "rpm_limit": 1}]}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["detail"], "limit_key_not_channel", "{body}");
    let (status, body) = payer.put(&path, json!({"rpm_limit": -1})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    // A user's, by an admin.
    let user_path = format!("/api/user/{}/limits", payer.id);
    let (status, body) = root
        .put(&user_path, json!({"tpm_limit": 100000, "rpd_limit": 1000}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = payer.get(&user_path).await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "a user does not read the admin's route"
    );

    // A channel's, with per-key limits (sorted, empty entries dropped, a key given twice refused).
    let channel_path = format!("/api/channel/{channel}/limits");
    let (status, body) = root
        .put(
            &channel_path,
            json!({"concurrency_limit": 10, "key_limits": [
                {"index": 2, "rpm_limit": 30}, {"index": 1}, {"index": 0, "tpm_limit": 5000}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["data"]["key_limits"],
        json!([
            {"index": 0, "concurrency_limit": 0, "rpm_limit": 0, "tpm_limit": 5000, "rpd_limit": 0},
            {"index": 2, "concurrency_limit": 0, "rpm_limit": 30, "tpm_limit": 0, "rpd_limit": 0}
        ])
    );
    let (status, body) = root
        .put(
            &channel_path,
            json!({"key_limits": [{"index": 1, "rpm_limit": 1}, {"index": 1, "rpm_limit": 2}]}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["detail"], "limit_key_twice", "{body}");
    assert_eq!(body["args"], json!(["1"]), "{body}");

    // Each edit is audited with what it replaced.
    for action in ["token.limits", "user.limits", "channel.limits"] {
        let (_, audit) = root.get(&format!("/api/audit?action={action}")).await;
        assert_eq!(audit["data"]["total"], json!(1), "{action}: {audit}");
    }
    let (_, audit) = root.get("/api/audit?action=token.limits").await;
    let row = &audit["data"]["items"][0];
    assert!(
        row["after"]
            .as_str()
            .is_some_and(|a| a.contains("\"rpm_limit\":60")),
        "{row}"
    );

    // Kept across a restart, and the engine starts with them.
    let dir = server.stop().await;
    let server = TestServer::start_in(dir).await;
    let payer = server.client_for("payer", "password1").await;
    let (_, body) = payer.get(&path).await;
    assert_eq!(body["data"]["rpm_limit"], 60, "{body}");
    assert_eq!(body["data"]["concurrency_limit"], 2, "{body}");
}

#[tokio::test]
async fn rate_limit_rules_are_checked_and_refusals_name_the_rule() {
    let server = TestServer::start().await;
    server.setup_root().await;
    let root = server
        .client_for(common::ROOT_USER, common::ROOT_PASS)
        .await;
    let put = |value: &'static str| {
        let root = root.clone();
        async move {
            root.put(
                "/api/option/",
                json!({"key": "RateLimitRules", "value": value}),
            )
            .await
        }
    };
    let (status, body) = put(r#"[{"group":"free","rpm_limit":60},{"model":"gpt-4o","concurrency_limit":5,"queue":10,"queue_timeout_ms":2000}]"#).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    for (value, detail, args) in [
        (r#"{"group":"a"}"#, "limit_rule_shape", None),
        (
            r#"[{"rpm_limit":1}]"#,
            "limit_rule_no_target",
            Some(json!(["1"])),
        ),
        (
            r#"[{"group":"a","rpm_limit":1},{"group":"a","model":"m"}]"#,
            "limit_rule_no_limit",
            Some(json!(["2"])),
        ),
        (
            r#"[{"group":"a","rpm_limit":1},{"group":"a","tpm_limit":5}]"#,
            "limit_rule_duplicate",
            Some(json!(["2", "1"])),
        ),
        (
            r#"[{"model":"m","rpm_limit":1,"queue":3}]"#,
            "limit_rule_queue",
            Some(json!(["1", "10000", "600000"])),
        ),
    ] {
        let (status, body) = put(value).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{value}: {body}");
        assert_eq!(body["detail"], detail, "{value}: {body}");
        if let Some(args) = args {
            assert_eq!(body["args"], args, "{value}: {body}");
        }
    }
    let (_, options) = root.get("/api/option/").await;
    let saved = options["data"]
        .as_array()
        .and_then(|all| all.iter().find(|o| o["key"] == "RateLimitRules"))
        .expect("RateLimitRules is listed");
    assert!(
        saved["value"].as_str().is_some_and(|v| v.contains("free")),
        "the refused values left the saved one: {saved}"
    );
}

#[tokio::test]
async fn a_keys_rpm_limit_answers_429_naming_it_in_each_format_with_ratelimit_headers() {
    let common::limits_fixture::Limited {
        mock,
        server,
        root,
        payer,
        key,
        token,
        ..
    } = limits_fixture(Setup {
        token_limits: Some(json!({"rpm_limit": 2})),
        ..Setup::default()
    })
    .await;

    let body = hi();
    for remaining in ["1", "0"] {
        let (status, headers, text) = raw(chat_request(&server, &key, &body)).await;
        assert_eq!(status, StatusCode::OK, "{text}");
        assert_eq!(headers["x-ratelimit-limit-requests"], "2");
        assert_eq!(headers["x-ratelimit-remaining-requests"], remaining);
        assert!(headers.contains_key("x-ratelimit-reset-requests"));
    }
    let (status, headers, text) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{text}");
    let retry: u64 = headers["retry-after"]
        .to_str()
        .expect("ascii")
        .parse()
        .expect("seconds");
    assert!((1..=60).contains(&retry), "{retry}");
    let error: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(error["error"]["code"], "rate_limit_exceeded", "{error}");
    let message = error["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("API key {token}")) && message.contains("rpm"),
        "{message}"
    );
    assert_eq!(
        mock.chat_calls(),
        2,
        "the refused request never reached the upstream"
    );

    // Anthropic's shape on /v1/messages, Gemini's on its route; both keep Retry-After.
    let (status, headers, text) = raw(server
        .client
        .post(server.url("/v1/messages"))
        .header("x-api-key", &key)
        .header("anthropic-version", "2023-06-01")
        .json(&body))
    .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{text}");
    assert!(headers.contains_key("retry-after"));
    let error: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(error["error"]["type"], "rate_limit_error", "{error}");
    let (status, headers, text) = raw(server
        .client
        .post(server.url("/v1beta/models/claude-test:generateContent"))
        .header("x-goog-api-key", &key)
        .json(&json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})))
    .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{text}");
    assert!(headers.contains_key("retry-after"));
    let error: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(error["error"]["status"], "RESOURCE_EXHAUSTED", "{error}");

    // The refusals have error rows naming the rule (one per rule per second, the next one
    // counting the refusals in between), and /metrics counts each refusal by rule.
    let (_, _, _, logs) = balances(&server, payer.id).await;
    let refused: Vec<_> = logs
        .iter()
        .filter(|row| row.log_type == tollgate_storage::logs::LOG_ERROR)
        .collect();
    assert!((1..=3).contains(&refused.len()), "{refused:?}");
    for row in refused {
        let mut o = other(row);
        assert_eq!(o["error_code"], "rate_limit_exceeded", "{o}");
        if let Some(limit) = o["limit"].as_object_mut() {
            limit.remove("repeated");
        }
        assert_eq!(
            o["limit"],
            json!({"scope": "token", "kind": "rpm", "limit": 2, "token_id": token}),
            "{o}"
        );
        assert!(row.content.contains("rpm"), "{}", row.content);
    }
    let exposition = metrics(&server, &root).await;
    assert!(
        exposition.contains(r#"tollgate_rate_limit_refusals_total{scope="token",kind="rpm"} 3"#),
        "{exposition}"
    );
}

/// The `/metrics` exposition, read with root's system access token.
#[expect(
    clippy::expect_used,
    reason = "test helper: a failed call fails the test"
)]
async fn metrics(server: &TestServer, root: &common::Actor) -> String {
    let (_, token) = root.get("/api/user/token").await;
    let token = token["data"].as_str().expect("access token");
    server
        .client
        .get(server.url("/metrics"))
        .bearer_auth(token)
        .send()
        .await
        .expect("sent")
        .text()
        .await
        .expect("body")
}

#[tokio::test]
async fn a_model_rules_concurrency_queue_lets_a_waiting_request_in_when_the_first_ends() {
    let f = limits_fixture(Setup {
        options: &[(
            "RateLimitRules",
            r#"[{"model":"claude-test","concurrency_limit":1,"queue":1,"queue_timeout_ms":900}]"#,
        )],
        ..Setup::default()
    })
    .await;
    f.mock.set_delay(std::time::Duration::from_millis(300));
    let body = hi();
    let send = || f.send(&body);
    // Three at once: one runs, one waits in the queue and runs after it, one finds the queue
    // full and is refused at once naming the model's rule.
    let (a, b, c) = tokio::join!(send(), send(), send());
    let mut statuses = [a.0, b.0, c.0];
    statuses.sort();
    assert_eq!(
        statuses,
        [
            StatusCode::OK,
            StatusCode::OK,
            StatusCode::TOO_MANY_REQUESTS
        ],
        "{} | {} | {}",
        a.2,
        b.2,
        c.2
    );
    let refused = [&a, &b, &c]
        .into_iter()
        .find(|r| r.0 == StatusCode::TOO_MANY_REQUESTS)
        .expect("one refused");
    assert!(refused.2.contains("model claude-test"), "{}", refused.2);
    assert!(refused.2.contains("concurrency"), "{}", refused.2);
}

/// Two mocks behind two channels: `a` (priority 10, tried first) and `b` (priority 0), both
/// answering after `delay`. Returns (server, root, key, mock a, mock b, channel a, channel b).
#[expect(
    clippy::expect_used,
    reason = "test helper: a failed call fails the test"
)]
async fn two_channels(
    delay: std::time::Duration,
) -> (
    TestServer,
    common::Actor,
    String,
    common::mock_upstream::MockUpstream,
    common::mock_upstream::MockUpstream,
    i64,
    i64,
) {
    let a = common::mock_upstream::MockUpstream::start().await;
    let b = common::mock_upstream::MockUpstream::start().await;
    a.set_delay(delay);
    b.set_delay(delay);
    let server = TestServer::start().await;
    let mut first = openai_channel(&a.base, "claude-test");
    first["name"] = json!("a");
    first["priority"] = json!(10);
    let mut second = openai_channel(&b.base, "claude-test");
    second["name"] = json!("b");
    let (root, _payer, key) = fixture(&server, &[first, second], 100_000_000, 100_000_000).await;
    let (_, channels) = root.get("/api/channel/?p=1&page_size=10").await;
    let id = |name: &str| {
        channels["data"]["items"]
            .as_array()
            .and_then(|all| all.iter().find(|c| c["name"] == name))
            .and_then(|c| c["id"].as_i64())
            .expect("channel id")
    };
    let (ia, ib) = (id("a"), id("b"));
    (server, root, key, a, b, ia, ib)
}

#[tokio::test]
async fn a_channel_at_its_concurrency_limit_is_skipped_for_the_next_and_all_full_answers_429() {
    let (server, root, key, a, b, ia, ib) =
        two_channels(std::time::Duration::from_millis(400)).await;
    put_limits(
        &root,
        &format!("/api/channel/{ia}/limits"),
        json!({"concurrency_limit": 1}),
    )
    .await;
    let body = json!({"model": "claude-test", "max_tokens": 5,
                      "messages": [{"role": "user", "content": "hi"}]});
    let send = || raw(chat_request(&server, &key, &body));
    // Three at once: channel a (tried first) takes one, the other two go to b.
    let (r1, r2, r3) = tokio::join!(send(), send(), send());
    for r in [&r1, &r2, &r3] {
        assert_eq!(r.0, StatusCode::OK, "{}", r.2);
    }
    assert_eq!(
        (a.chat_calls(), b.chat_calls()),
        (1, 2),
        "a at its limit gave way to b"
    );

    // Both channels full: the third request is refused naming the channel's limit, and the
    // skipped channels took no retry (RetryTimes 0 still reaches b).
    put_limits(
        &root,
        &format!("/api/channel/{ib}/limits"),
        json!({"concurrency_limit": 1}),
    )
    .await;
    let (r1, r2, r3) = tokio::join!(send(), send(), send());
    let mut statuses = [r1.0, r2.0, r3.0];
    statuses.sort();
    assert_eq!(
        statuses,
        [
            StatusCode::OK,
            StatusCode::OK,
            StatusCode::TOO_MANY_REQUESTS
        ],
        "{} | {} | {}",
        r1.2,
        r2.2,
        r3.2
    );
    let refused = [&r1, &r2, &r3]
        .into_iter()
        .find(|r| r.0 == StatusCode::TOO_MANY_REQUESTS)
        .expect("one refused");
    assert!(refused.1.contains_key("retry-after"));
    assert!(
        refused.2.contains("channel") && refused.2.contains("concurrency"),
        "{}",
        refused.2
    );
    assert_eq!((a.chat_calls(), b.chat_calls()), (2, 3));
    let exposition = metrics(&server, &root).await;
    assert!(
        !exposition.contains(
            r#"tollgate_rate_limit_refusals_total{scope="channel",kind="concurrency"} 0"#
        ) && exposition
            .contains(r#"tollgate_rate_limit_refusals_total{scope="channel",kind="concurrency"}"#),
        "the pick's skips are counted: {exposition}"
    );
}

#[tokio::test]
async fn a_channel_keys_limit_moves_the_attempt_to_the_next_key() {
    let f = limits_fixture(Setup {
        keys: "upstream-key-1\nupstream-key-2",
        channel_limits: Some(json!({"key_limits": [{"index": 0, "rpm_limit": 1}]})),
        ..Setup::default()
    })
    .await;
    let mut keys = Vec::new();
    for _ in 0..4 {
        let (status, _, text) = f.send(&hi()).await;
        assert_eq!(status, StatusCode::OK, "{text}");
        keys.push(f.mock.last_key().expect("a key"));
    }
    assert_eq!(
        keys.iter().filter(|k| *k == "upstream-key-1").count(),
        1,
        "key line 0 serves one request a minute, the rest go to line 1: {keys:?}"
    );
}

#[tokio::test]
async fn a_streams_concurrency_place_is_held_until_its_last_byte() {
    use futures_util::StreamExt;
    let common::limits_fixture::Limited {
        mock, server, key, ..
    } = limits_fixture(Setup {
        token_limits: Some(json!({"concurrency_limit": 1})),
        ..Setup::default()
    })
    .await;
    mock.set_pieces(&["one", "two", "three", "four"]);
    mock.set_chunk_delay(std::time::Duration::from_millis(150));
    let body = json!({"model": "claude-test", "max_tokens": 5, "stream": true,
                      "messages": [{"role": "user", "content": "hi"}]});
    let resp = chat_request(&server, &key, &body)
        .send()
        .await
        .expect("stream");
    assert_eq!(resp.status(), StatusCode::OK);
    let mut stream = resp.bytes_stream();
    let first = stream.next().await.expect("a first chunk").expect("bytes");
    assert!(!first.is_empty());
    // The stream is still running: its place is taken.
    let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(
        status,
        StatusCode::TOO_MANY_REQUESTS,
        "a second request while the stream runs: {text}"
    );
    while let Some(chunk) = stream.next().await {
        chunk.expect("bytes");
    }
    // Its last byte gave the place back (the settlement right after it releases it).
    let mut status = StatusCode::TOO_MANY_REQUESTS;
    for _ in 0..20 {
        status = raw(chat_request(&server, &key, &body)).await.0;
        if status == StatusCode::OK {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(
        status,
        StatusCode::OK,
        "the place came back after the stream"
    );
}

#[tokio::test]
async fn tokens_per_minute_count_the_used_tokens_after_settlement_not_the_estimate() {
    let f = limits_fixture(Setup {
        token_limits: Some(json!({"tpm_limit": 1000})),
        ..Setup::default()
    })
    .await;
    f.mock.set_usage(Some((10, 5, 0)));
    // Each request reserves its prompt and 600 output tokens: two estimates do not fit in
    // 1,000, but what the first really used (15) leaves room for the second.
    let body = json!({"model": "claude-test", "max_tokens": 600,
                      "messages": [{"role": "user", "content": "hi"}]});
    let (status, headers, text) = f.send(&body).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(headers["x-ratelimit-limit-tokens"], "1000");
    let (status, headers, text) = f.send(&body).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "the first request's 15 tokens: {text}"
    );
    let remaining: u64 = headers["x-ratelimit-remaining-tokens"]
        .to_str()
        .expect("ascii")
        .parse()
        .expect("number");
    assert!(
        (300..=400).contains(&remaining),
        "1000 - 15 - this request's estimate: {remaining}"
    );
}

#[tokio::test]
async fn one_conversation_sticks_to_one_channel_and_moves_when_it_answers_429() {
    let mocks = [
        common::mock_upstream::MockUpstream::start().await,
        common::mock_upstream::MockUpstream::start().await,
        common::mock_upstream::MockUpstream::start().await,
    ];
    let server = TestServer::start().await;
    let channels: Vec<_> = mocks
        .iter()
        .map(|m| openai_channel(&m.base, "claude-test"))
        .collect();
    let (_root, _payer, key) = fixture(&server, &channels, 100_000_000, 100_000_000).await;
    let body = json!({"model": "claude-test", "max_tokens": 5, "prompt_cache_key": "conv-1",
                      "messages": [{"role": "user", "content": "hi"}]});
    for _ in 0..100 {
        let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
        assert_eq!(status, StatusCode::OK, "{text}");
    }
    let calls: Vec<usize> = mocks.iter().map(|m| m.chat_calls()).collect();
    let first = calls
        .iter()
        .position(|c| *c == 100)
        .unwrap_or_else(|| panic!("all 100 on one channel: {calls:?}"));

    // That channel answers 429: the request fails (RetryTimes 0), the next goes elsewhere and
    // the conversation stays there.
    mocks[first].push_fault(
        429,
        json!({"error": {"message": "slow down", "type": "rate_limit_error"}}),
    );
    let (status, _, _) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    for _ in 0..20 {
        let (status, _, text) = raw(chat_request(&server, &key, &body)).await;
        assert_eq!(status, StatusCode::OK, "{text}");
    }
    let after: Vec<usize> = mocks
        .iter()
        .zip(&calls)
        .map(|(m, before)| m.chat_calls() - before)
        .collect();
    assert_eq!(after[first], 1, "only the refused call: {after:?}");
    assert!(
        after.contains(&20),
        "the 20 after it went to one other channel: {after:?}"
    );
}

#[tokio::test]
async fn the_model_request_limit_is_a_user_rule_with_headers_a_log_row_and_metrics() {
    let common::limits_fixture::Limited {
        mock,
        server,
        root,
        payer,
        key,
        ..
    } = limits_fixture(Setup {
        options: &[
            ("ModelRequestRateLimitEnabled", "true"),
            ("ModelRequestRateLimitCount", "2"),
            ("ModelRequestRateLimitDurationMinutes", "1"),
        ],
        ..Setup::default()
    })
    .await;
    let body = hi();
    for remaining in ["1", "0"] {
        let (status, headers, text) = raw(chat_request(&server, &key, &body)).await;
        assert_eq!(status, StatusCode::OK, "{text}");
        assert_eq!(headers["x-ratelimit-limit-requests"], "2");
        assert_eq!(headers["x-ratelimit-remaining-requests"], remaining);
        assert!(headers.contains_key("x-ratelimit-reset-requests"));
    }
    let (status, headers, text) = raw(chat_request(&server, &key, &body)).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{text}");
    let retry: u64 = headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!((1..=60).contains(&retry), "Retry-After {retry}: {text}");
    let error: serde_json::Value = serde_json::from_str(&text).expect("json");
    let message = error["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("user {}", payer.id))
            && message.contains("at most 2 requests per 1 minute"),
        "{message}"
    );
    assert_eq!(mock.chat_calls(), 2);

    let (_, _, _, logs) = balances(&server, payer.id).await;
    let refused: Vec<_> = logs
        .iter()
        .filter(|row| row.log_type == tollgate_storage::logs::LOG_ERROR)
        .collect();
    assert_eq!(refused.len(), 1, "one error row for the refusal");
    assert_eq!(
        other(refused[0])["limit"],
        json!({"scope": "user", "kind": "model_requests", "limit": 2,
               "user_id": payer.id, "window_minutes": 1}),
    );
    let exposition = metrics(&server, &root).await;
    assert!(
        exposition.contains(
            r#"tollgate_rate_limit_refusals_total{scope="user",kind="model_requests"} 1"#
        ),
        "{exposition}"
    );
}

#[tokio::test]
async fn a_request_refused_for_its_balance_uses_nothing_of_its_keys_limits() {
    // A balance of 1 passes the check before the body is read, not the reservation.
    let f = limits_fixture(Setup {
        quota: 1,
        token_limits: Some(json!({"rpm_limit": 1})),
        ..Setup::default()
    })
    .await;
    let body = json!({"model": "claude-test", "max_tokens": 5,
                      "messages": [{"role": "user", "content": "hello there"}]});
    let (status, _, text) = f.send(&body).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{text}");
    assert!(text.contains("insufficient user quota"), "{text}");
    let (status, answer) = f
        .root
        .put(
            "/api/user/",
            json!({"id": f.payer.id, "quota": 100_000_000}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (status, _, text) = f.send(&body).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "the refused request did not use the key's one request per minute: {text}"
    );
    let (status, _, text) = f.send(&body).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{text}");
}

#[tokio::test]
async fn a_keys_limits_follow_it_when_the_channels_keys_are_reordered_or_deleted() {
    // Key 2 (line 1) may serve one request a minute, key 3 (line 2) two.
    let f = limits_fixture(Setup {
        keys: "upstream-key-1\nupstream-key-2\nupstream-key-3",
        channel_limits: Some(
            json!({"key_limits": [{"index": 1, "rpm_limit": 1}, {"index": 2, "rpm_limit": 2}]}),
        ),
        ..Setup::default()
    })
    .await;
    let (root, id) = (&f.root, f.channel);
    let path = format!("/api/channel/{id}/limits");
    // Key 1 is deleted and key 3 moves in front of key 2.
    let (status, answer) = root
        .put(
            "/api/channel/",
            json!({"id": id, "key": "upstream-key-3\nupstream-key-2"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (_, limits) = root.get(&path).await;
    let rows: Vec<_> = limits["data"]["key_limits"]
        .as_array()
        .expect("key_limits")
        .iter()
        .map(|k| (k["index"].clone(), k["rpm_limit"].clone()))
        .collect();
    assert_eq!(
        rows,
        vec![(json!(0), json!(2)), (json!(1), json!(1))],
        "the rows follow their keys: {limits}"
    );
    let mut keys = Vec::new();
    for _ in 0..3 {
        let (status, _, text) = f.send(&hi()).await;
        assert_eq!(status, StatusCode::OK, "{text}");
        keys.push(f.mock.last_key().expect("a key"));
    }
    keys.sort();
    assert_eq!(
        keys,
        ["upstream-key-2", "upstream-key-3", "upstream-key-3"],
        "each key keeps its own limit on its new line"
    );
    let (status, _, text) = f.send(&hi()).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{text}");
}

#[tokio::test]
async fn a_client_hammering_a_limit_costs_one_error_row_per_rule_per_second() {
    let f = limits_fixture(Setup {
        token_limits: Some(json!({"rpm_limit": 1})),
        ..Setup::default()
    })
    .await;
    let (status, _, text) = f.send(&hi()).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let started = std::time::Instant::now();
    for _ in 0..40 {
        let (status, _, text) = f.send(&hi()).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{text}");
    }
    let seconds = started.elapsed().as_secs() + 2;
    let (_, _, _, logs) = balances(&f.server, f.payer.id).await;
    let rows: Vec<_> = logs
        .iter()
        .filter(|row| row.log_type == tollgate_storage::logs::LOG_ERROR)
        .map(other)
        .collect();
    let rows_len = u64::try_from(rows.len()).unwrap_or(u64::MAX);
    assert!(
        (1..=seconds).contains(&rows_len),
        "40 refusals in under {seconds} s: {} rows",
        rows.len()
    );
    let counted: u64 = rows
        .iter()
        .map(|o| 1 + o["limit"]["repeated"].as_u64().unwrap_or(0))
        .sum();
    assert!(counted <= 40, "{rows:?}");
    let exposition = metrics(&f.server, &f.root).await;
    assert!(
        exposition.contains(r#"tollgate_rate_limit_refusals_total{scope="token",kind="rpm"} 40"#),
        "every refusal is still counted: {exposition}"
    );
}

#[tokio::test]
async fn a_queued_requests_body_counts_against_its_keys_body_share() {
    let common::limits_fixture::Limited {
        mock,
        server,
        root,
        key,
        ..
    } = limits_fixture(Setup {
        options: &[
            (
                "RateLimitRules",
                r#"[{"model":"claude-test","concurrency_limit":1,"queue":2,"queue_timeout_ms":5000}]"#,
            ),
            ("RelayBodyBudgetPerKeyMB", "1"),
        ],
        ..Setup::default()
    })
    .await;
    mock.set_delay(std::time::Duration::from_millis(700));
    let small = hi();
    // 600 KiB of padding the prompt counter does not read.
    let mut big = small.clone();
    big["pad"] = json!("x".repeat(600 * 1024));
    let running = tokio::spawn(raw(chat_request(&server, &key, &small)));
    while mock.last_key().is_none() {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let queued = tokio::spawn(raw(chat_request(&server, &key, &big)));
    let waits = r#"tollgate_rate_limit_queue_waits_total{scope="rule",kind="concurrency"} 1"#;
    for _ in 0..500 {
        if metrics(&server, &root).await.contains(waits) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(
        metrics(&server, &root).await.contains(waits),
        "the second request waits"
    );
    // The queued request's 600 KiB are still charged: another 600 KiB of the key pass its 1 MiB.
    let (status, _, text) = raw(chat_request(&server, &key, &big)).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{text}");
    assert!(text.contains("request_body_share_exceeded"), "{text}");
    let (status, _, text) = running.await.expect("joined");
    assert_eq!(status, StatusCode::OK, "{text}");
    let (status, _, text) = queued.await.expect("joined");
    assert_eq!(
        status,
        StatusCode::OK,
        "the queued request ran after the first: {text}"
    );
}
