//! The task relays over the HTTP API against a mock Midjourney-proxy, Suno and OpenAI video
//! upstream speaking their documented formats: submits billed when the upstream accepts
//! (the task row with its charge), refusals not billed, Midjourney's `mj-api-secret` key and
//! error shape, the five Mj* switches (each test fails when its switch is ignored), an action's
//! origin task scoped to its owner, the fetch routes over the local task table, the image
//! proxy by unguessable id, Suno and per-second video billing, and unpriced task models.
//! The set-up (server, mock upstream, channels, payer and key) is `common::task_fixture`'s.

#![expect(
    clippy::expect_used,
    reason = "test helpers: a failed call fails the test"
)]

mod common;

use axum::body::Bytes;
use common::books::assert_books;
use common::mock_tasks::MockTasks;
use common::relay_fixture::{balances, wait_until};
use common::task_fixture::{
    TaskBed, bearer_post, channel_on, channel_used, get_key, mj_post, other_key, stored,
};
use common::{Actor, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate_storage::UserId;
use tollgate_storage::tasks::{List, Task};

/// QuotaPerUnit's default: US$ 1.
const QPU: i64 = 500_000;
/// The payer's balance.
const QUOTA: i64 = 10_000_000;

/// A bed whose Midjourney channel serves imagine, upscale and variation.
async fn mj_bed() -> TaskBed {
    TaskBed::start(QUOTA, &[(2, "mj_imagine,mj_upscale,mj_variation")]).await
}

#[tokio::test]
async fn midjourney_submit_is_billed_with_its_task_and_fetched_by_its_owner_only() {
    let (server, mock, root, payer, key) = mj_bed().await.parts();
    mock.json(
        "/mj/submit/imagine",
        200,
        json!({"code": 22, "description": "queued", "result": "mj-1",
               "properties": {"discordInstanceId": "9"}}),
    );
    let (status, body) = mj_post(
        &server,
        &key,
        "/mj/submit/imagine",
        json!({"prompt": "a cat --fast", "notifyHook": "https://hook.example/x",
               "accountFilter": {"modes": ["FAST"]}, "base64Array": []}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["code"], 1, "code 22 is answered as 1: {body}");
    // DrawingEnabled and TaskEnabled stay off by default (README: they only show the pages in
    // the menu); the relays answer anyway.
    let (_, shown) = server.get("/api/status").await;
    assert_eq!(shown["data"]["enable_drawing"], false, "{shown}");
    assert_eq!(shown["data"]["enable_task"], false, "{shown}");
    assert_eq!(body["result"], "mj-1");
    // What went upstream: the channel's key in mj-api-secret; the switches' defaults
    // (MjNotifyEnabled off, MjAccountFilterEnabled off, MjModeClearEnabled off).
    let sent = mock.calls_to("/mj/submit/imagine");
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].headers.get("mj-api-secret").map(String::as_str),
        Some("task-secret")
    );
    let sent_body = sent[0].json();
    assert!(
        sent_body.get("notifyHook").is_none(),
        "notifyHook removed: {sent_body}"
    );
    assert!(
        sent_body.get("accountFilter").is_none(),
        "accountFilter removed: {sent_body}"
    );
    assert_eq!(sent_body["prompt"], "a cat --fast");
    // Billed at mj_imagine's default price ($0.1), with its task in the same commit.
    let (quota, used, _, rows) = balances(&server, payer.id).await;
    assert_eq!(used, QPU / 10);
    assert_eq!(quota, QUOTA - QPU / 10);
    assert_eq!(rows[0].model_name, "mj_imagine");
    let tasks = stored(&server, payer.id, List::Drawing);
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].upstream_id, "mj-1");
    assert_eq!(tasks[0].code, 22, "the stored code keeps the upstream's");
    assert_eq!(tasks[0].quota, QPU / 10);
    assert_books(&server, payer.id).await;
    // Fetched from the local table by its owner, with and without a speed prefix.
    let (status, task) = get_key(&server, &key, "/mj/task/mj-1/fetch").await;
    assert_eq!(status, StatusCode::OK, "{task}");
    assert_eq!(task["id"], "mj-1");
    assert_eq!(task["action"], "IMAGINE");
    let (status, list) = mj_post(
        &server,
        &key,
        "/mj-fast/mj/task/list-by-condition",
        json!({"ids": ["mj-1", "nope"]}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(list.as_array().map(Vec::len), Some(1));
    // Another user's key: 404 in Midjourney-proxy's error shape.
    let others = other_key(&server, &root, QUOTA).await;
    let (status, err) = get_key(&server, &others, "/mj/task/mj-1/fetch").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{err}");
    assert_eq!(err["code"], 3, "{err}");
    assert!(
        err["description"]
            .as_str()
            .is_some_and(|d| d.contains("mj-1")),
        "{err}"
    );
    assert!(err.get("error").is_none(), "MJ shape, not OpenAI's: {err}");
    // No key at all: refused in the MJ shape too.
    let (status, err) = server
        .send(server.client.get(server.url("/mj/task/mj-1/fetch")))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{err}");
    assert_eq!(err["code"], 4, "{err}");
}

#[tokio::test]
async fn midjourney_switches_shape_the_forwarded_body() {
    let (server, mock, root, _, key) = mj_bed().await.parts();
    for (name, value) in [
        ("MjNotifyEnabled", "true"),
        ("MjAccountFilterEnabled", "true"),
        ("MjModeClearEnabled", "true"),
    ] {
        server.set_option(&root, name, json!(value)).await;
    }
    mock.json(
        "/mj-relax/mj/submit/imagine",
        200,
        json!({"code": 1, "description": "ok", "result": "mj-2"}),
    );
    let (status, body) = mj_post(
        &server,
        &key,
        "/mj-relax/mj/submit/imagine",
        json!({"prompt": "a dog --relax --v 6 --turbo", "notifyHook": "https://hook.example/x",
               "accountFilter": {"modes": ["RELAX"]}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let sent = mock.calls_to("/mj-relax/mj/submit/imagine");
    assert_eq!(sent.len(), 1, "the speed prefix is kept upstream");
    let sent_body = sent[0].json();
    assert_eq!(
        sent_body["notifyHook"], "https://hook.example/x",
        "MjNotifyEnabled on"
    );
    assert_eq!(
        sent_body["accountFilter"]["modes"][0], "RELAX",
        "MjAccountFilterEnabled on"
    );
    assert_eq!(sent_body["prompt"], "a dog --v 6", "MjModeClearEnabled on");
}

#[tokio::test]
async fn midjourney_actions_need_an_own_successful_origin() {
    let (server, mock, root, payer, key) = mj_bed().await.parts();
    mock.json(
        "/mj/submit/imagine",
        200,
        json!({"code": 1, "description": "ok", "result": "origin-1"}),
    );
    let (status, _) = mj_post(&server, &key, "/mj/submit/imagine", json!({"prompt": "x"})).await;
    assert_eq!(status, StatusCode::OK);
    mock.json(
        "/mj/submit/change",
        200,
        json!({"code": 1, "description": "ok", "result": "up-1"}),
    );
    let change = json!({"action": "UPSCALE", "index": 1, "taskId": "origin-1"});
    // MjActionCheckSuccessEnabled (on by default): the origin has not succeeded yet.
    let (status, err) = mj_post(&server, &key, "/mj/submit/change", change.clone()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    assert_eq!(err["code"], 4, "{err}");
    assert!(
        mock.calls_to("/mj/submit/change").is_empty(),
        "refused before forwarding"
    );
    // Another user cannot act on it at all.
    let others = other_key(&server, &root, QUOTA).await;
    let (status, err) = mj_post(&server, &others, "/mj/submit/change", change.clone()).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{err}");
    // With the check off, the owner's action goes to the origin's channel and is billed.
    server
        .set_option(&root, "MjActionCheckSuccessEnabled", json!("false"))
        .await;
    let (status, body) = mj_post(&server, &key, "/mj/submit/change", change).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(mock.calls_to("/mj/submit/change").len(), 1);
    let (_, used, _, _) = balances(&server, payer.id).await;
    assert_eq!(
        used,
        QPU / 10 + QPU / 20,
        "mj_imagine $0.1 + mj_upscale $0.05"
    );
    assert_books(&server, payer.id).await;
}

#[tokio::test]
async fn a_refused_submit_is_not_billed() {
    let (server, mock, _, payer, key) = mj_bed().await.parts();
    mock.json(
        "/mj/submit/imagine",
        200,
        json!({"code": 23, "description": "queue full", "result": ""}),
    );
    let (status, body) = mj_post(&server, &key, "/mj/submit/imagine", json!({"prompt": "x"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["code"], 23,
        "the upstream's refusal as it came: {body}"
    );
    let (quota, used, _, _) = balances(&server, payer.id).await;
    assert_eq!((quota, used), (QUOTA, 0));
    assert!(stored(&server, payer.id, List::Drawing).is_empty());
    // An upstream failure: released too.
    mock.json("/mj/submit/imagine", 500, json!({"error": "down"}));
    let (status, _) = mj_post(&server, &key, "/mj/submit/imagine", json!({"prompt": "x"})).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    let (quota, used, _, _) = balances(&server, payer.id).await;
    assert_eq!((quota, used), (QUOTA, 0));
    assert_books(&server, payer.id).await;
}

#[tokio::test]
async fn forwarded_image_urls_point_at_the_image_proxy_by_unguessable_id() {
    let (server, mock, root, payer, key) = mj_bed().await.parts();
    server
        .set_option(&root, "ServerAddress", json!("https://gw.example"))
        .await;
    mock.json(
        "/mj/submit/imagine",
        200,
        json!({"code": 1, "description": "ok", "result": "mj-img"}),
    );
    let image_url = format!("http://images.test:{}/cat.png", mock.port);
    mock.json(
        "/mj/task/list-by-condition",
        200,
        json!([{"id": "mj-img", "status": "SUCCESS", "progress": "100%", "imageUrl": image_url}]),
    );
    mock.bytes(
        "/cat.png",
        200,
        "image/png",
        Bytes::from_static(b"\x89PNG-cat"),
    );
    let (status, _) = mj_post(&server, &key, "/mj/submit/imagine", json!({"prompt": "x"})).await;
    assert_eq!(status, StatusCode::OK);
    let mut shown = Value::Null;
    for _ in 0..250 {
        let (_, task) = get_key(&server, &key, "/mj/task/mj-img/fetch").await;
        if task["status"] == "SUCCESS" {
            shown = task;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let url = shown["imageUrl"].as_str().expect("image url").to_owned();
    let path = url
        .strip_prefix("https://gw.example")
        .expect("MjForwardUrlEnabled (on by default) rewrites to ServerAddress");
    assert!(path.starts_with("/mj/image/"), "{url}");
    let resp = server
        .client
        .get(server.url(path))
        .send()
        .await
        .expect("image");
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(
        resp.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("image/png")
    );
    assert_eq!(resp.bytes().await.expect("bytes").as_ref(), b"\x89PNG-cat");
    // The task's number alone, or a forged signature, is not an image id.
    let id = path.trim_start_matches("/mj/image/");
    let number = id.split('-').next().expect("number");
    for forged in [
        number.to_owned(),
        format!("{number}-AAAAAAAAAAAAAAAAAAAAAA"),
    ] {
        let (status, _) = server.get(&format!("/mj/image/{forged}")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{forged}");
    }
    // A stored URL on a private address (not trusted), or one that answers no image, is not
    // served: the guarded fetcher and the image-type rule hold.
    let private_url = format!("http://127.0.0.1:{}/cat.png", mock.port);
    let page_url = format!("http://images.test:{}/page.html", mock.port);
    mock.bytes(
        "/page.html",
        200,
        "text/html",
        Bytes::from_static(b"<html></html>"),
    );
    mock.json(
        "/mj/task/list-by-condition",
        200,
        json!([{"id": "mj-img", "status": "SUCCESS", "progress": "100%", "imageUrl": image_url},
               {"id": "mj-private", "status": "SUCCESS", "progress": "100%", "imageUrl": private_url},
               {"id": "mj-page", "status": "SUCCESS", "progress": "100%", "imageUrl": page_url}]),
    );
    for id in ["mj-private", "mj-page"] {
        mock.json(
            "/mj/submit/imagine",
            200,
            json!({"code": 1, "description": "ok", "result": id}),
        );
        let (status, body) =
            mj_post(&server, &key, "/mj/submit/imagine", json!({"prompt": "x"})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    wait_until("both finished", || {
        stored(&server, payer.id, List::Drawing)
            .iter()
            .all(|t| t.status == "SUCCESS")
    })
    .await;
    for id in ["mj-private", "mj-page"] {
        let (_, task) = get_key(&server, &key, &format!("/mj/task/{id}/fetch")).await;
        let url = task["imageUrl"].as_str().expect("image url");
        let path = url.strip_prefix("https://gw.example").expect("rewritten");
        let (status, err) = server.get(path).await;
        assert_eq!(status, StatusCode::BAD_GATEWAY, "{id}: {err}");
        assert_eq!(
            err["code"], 9,
            "{id}: Midjourney-proxy's failure code: {err}"
        );
    }
    let served = mock.calls_to("/page.html").len() + mock.calls_to("/cat.png").len();
    assert_eq!(served, 2, "the private address was never asked");
    // With the switch off, the stored URL is shown.
    server
        .set_option(&root, "MjForwardUrlEnabled", json!("false"))
        .await;
    let (_, task) = get_key(&server, &key, "/mj/task/mj-img/fetch").await;
    assert_eq!(task["imageUrl"], image_url.as_str());
}

#[tokio::test]
async fn suno_submit_and_fetch() {
    let (server, mock, _, payer, key) = TaskBed::start(QUOTA, &[(36, "suno_music,suno_lyrics")])
        .await
        .parts();
    mock.json(
        "/suno/submit/music",
        200,
        json!({"code": "success", "message": "", "data": "song-1"}),
    );
    let (status, body) = bearer_post(
        &server,
        &key,
        "/suno/submit/music",
        json!({"prompt": "[Verse] hello", "mv": "chirp-v3-5", "title": "t"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"], "song-1");
    let sent = mock.calls_to("/suno/submit/music");
    assert_eq!(
        sent[0].headers.get("authorization").map(String::as_str),
        Some("Bearer task-secret")
    );
    let (_, used, _, _) = balances(&server, payer.id).await;
    assert_eq!(used, QPU / 10, "suno_music $0.1");
    mock.json(
        "/suno/submit/lyrics",
        200,
        json!({"code": "success", "message": "", "data": "lyrics-1"}),
    );
    let (status, body) = bearer_post(
        &server,
        &key,
        "/suno/submit/lyrics",
        json!({"prompt": "a song about cats"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"], "lyrics-1");
    assert_eq!(mock.calls_to("/suno/submit/lyrics").len(), 1);
    let (_, used, _, _) = balances(&server, payer.id).await;
    assert_eq!(used, QPU / 10 + QPU / 100, "suno_lyrics $0.01");
    let lyrics = &stored(&server, payer.id, List::Tasks)[0];
    assert_eq!(
        (lyrics.action.as_str(), lyrics.model_name.as_str()),
        ("LYRICS", "suno_lyrics")
    );
    let (status, one) = get_key(&server, &key, "/suno/fetch/song-1").await;
    assert_eq!(status, StatusCode::OK, "{one}");
    assert_eq!(one["data"]["task_id"], "song-1");
    assert_eq!(one["data"]["action"], "MUSIC");
    let (status, many) =
        bearer_post(&server, &key, "/suno/fetch", json!({"ids": ["song-1"]})).await;
    assert_eq!(status, StatusCode::OK, "{many}");
    assert_eq!(many["data"][0]["task_id"], "song-1");
    let (status, err) = get_key(&server, &key, "/suno/fetch/nope").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(err["code"], "task_not_found", "Suno's shape: {err}");
    assert_books(&server, payer.id).await;
}

#[tokio::test]
async fn videos_are_billed_per_second_and_read_back() {
    let (server, mock, _, payer, key) = TaskBed::start(QUOTA, &[(1, "sora-2")]).await.parts();
    mock.json(
        "/v1/videos",
        200,
        json!({"id": "video_1", "object": "video", "model": "sora-2", "status": "queued",
               "progress": 0, "seconds": "8", "size": "720x1280"}),
    );
    mock.bytes(
        "/v1/videos/video_1/content",
        200,
        "video/mp4",
        Bytes::from_static(b"mp4-bytes"),
    );
    let (status, body) = bearer_post(
        &server,
        &key,
        "/v1/videos",
        json!({"model": "sora-2", "prompt": "waves", "seconds": "8"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["id"], "video_1");
    // sora-2 at $0.3 per second × 8 s.
    let (_, used, _, _) = balances(&server, payer.id).await;
    assert_eq!(used, QPU * 3 / 10 * 8);
    let (status, video) = get_key(&server, &key, "/v1/videos/video_1").await;
    assert_eq!(status, StatusCode::OK, "{video}");
    assert_eq!(video["id"], "video_1");
    let resp = server
        .client
        .get(server.url("/v1/videos/video_1/content"))
        .bearer_auth(&key)
        .send()
        .await
        .expect("content");
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.bytes().await.expect("bytes").as_ref(), b"mp4-bytes");
    assert_books(&server, payer.id).await;
}

#[tokio::test]
async fn an_unpriced_task_model_is_refused_unless_self_use() {
    let (server, mock, root, payer, key) = TaskBed::start(QUOTA, &[(1, "video-x")]).await.parts();
    mock.json(
        "/v1/videos",
        200,
        json!({"id": "video_x", "object": "video", "status": "queued", "seconds": "4"}),
    );
    let ask = json!({"model": "video-x", "prompt": "p"});
    let (status, err) = bearer_post(&server, &key, "/v1/videos", ask.clone()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    assert!(mock.calls_to("/v1/videos").is_empty(), "never forwarded");
    server
        .set_option(&root, "SelfUseModeEnabled", json!("true"))
        .await;
    let (status, body) = bearer_post(&server, &key, "/v1/videos", ask).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, used, _, _) = balances(&server, payer.id).await;
    assert_eq!(
        used, 0,
        "admitted without a price, never billed at DefaultModelRatio"
    );
    wait_until("the task is stored", || {
        !stored(&server, payer.id, List::Tasks).is_empty()
    })
    .await;
    assert_books(&server, payer.id).await;
}

#[tokio::test]
async fn a_task_settlement_journalled_before_a_crash_is_replayed_with_its_task() {
    use tollgate_actors::journal::Journal;
    use tollgate_storage::logs::{LOG_CONSUME, LogEntry};
    use tollgate_storage::tasks::{SUBMITTED, TaskKind};
    use tollgate_storage::usage::BalanceChange;
    use tollgate_storage::{ChannelId, TokenId};

    let (server, _, _, payer, _) = mj_bed().await.parts();
    let (_, tokens) = payer.get("/api/token/?p=1&size=10").await;
    let token = TokenId(tokens["data"]["items"][0]["id"].as_i64().expect("token id"));
    let channel = ChannelId(
        server
            .pool()
            .table()
            .load()
            .channels()
            .next()
            .map_or(1, |c| c.id().0),
    );
    let dir = server.stop().await;
    // The process accepted a submit, journalled its settlement (charge, row and task in one
    // record) and died before the log writer committed it.
    let price = QPU / 10;
    let now = tollgate::clock::now_unix();
    let mut journal = Journal::create(dir.path(), 77).expect("journal");
    let row = LogEntry {
        created_at: now,
        log_type: LOG_CONSUME,
        user_id: UserId(payer.id),
        username: "payer".into(),
        token_id: token.0,
        model_name: "mj_imagine".into(),
        channel_id: channel.0,
        quota: price,
        ..LogEntry::default()
    };
    let task = Task {
        kind: TaskKind::Midjourney,
        user_id: UserId(payer.id),
        token_id: Some(token),
        model_name: "mj_imagine".into(),
        channel_id: channel,
        action: "IMAGINE".into(),
        upstream_id: "crash-1".into(),
        status: SUBMITTED.into(),
        quota: price,
        created_at: now,
        submit_time: now,
        ..Task::default()
    };
    let change = BalanceChange {
        user_id: UserId(payer.id),
        token_id: Some(token),
        charged: price,
        is_request: true,
        at: now,
    };
    journal
        .settled_task(1_000_000, Some(999_999), Some(change), Some(&row), &task)
        .expect("journalled");
    drop(journal);
    let server = TestServer::start_in(dir).await;
    let (quota, used, _, _) = balances(&server, payer.id).await;
    assert_eq!(
        (quota, used),
        (QUOTA - price, price),
        "the charge is replayed"
    );
    let tasks = stored(&server, payer.id, List::Drawing);
    assert_eq!(tasks.len(), 1, "with its task");
    assert_eq!(tasks[0].upstream_id, "crash-1");
    assert_eq!(tasks[0].quota, price);
    assert_books(&server, payer.id).await;
}

#[tokio::test]
async fn an_upstream_refusal_never_shows_the_channels_key() {
    const UPSTREAM_KEY: &str = "sk-mj-upstream-0123456789abcdef";
    let mock = MockTasks::start().await;
    let mut ch = channel_on(&mock, 2, "mj_imagine");
    ch["key"] = json!(UPSTREAM_KEY);
    let (server, mock, _, _, key) = TaskBed::on(mock, QUOTA, QUOTA, &[ch]).await.parts();
    // A refusal answered 200 goes back as it came, and an error status too: both quote the key.
    mock.json(
        "/mj/submit/imagine",
        200,
        json!({"code": 4, "description": format!("invalid key {UPSTREAM_KEY}"), "result": ""}),
    );
    let (_, body) = mj_post(&server, &key, "/mj/submit/imagine", json!({"prompt": "x"})).await;
    assert!(!body.to_string().contains("0123456789abcdef"), "{body}");
    assert!(
        body["description"]
            .as_str()
            .is_some_and(|d| d.contains("*****")),
        "{body}"
    );
    mock.json(
        "/mj/submit/imagine",
        401,
        json!({"error": {"message": format!("Incorrect API key provided: {UPSTREAM_KEY}.")}}),
    );
    let (status, body) = mj_post(&server, &key, "/mj/submit/imagine", json!({"prompt": "x"})).await;
    assert!(
        status.is_client_error() || status.is_server_error(),
        "{status} {body}"
    );
    assert!(!body.to_string().contains("0123456789abcdef"), "{body}");
}

#[tokio::test]
async fn a_model_whose_channels_cannot_take_the_task_is_a_client_error() {
    // A Gemini channel (type 24) serves the model, but videos go to OpenAI channels only.
    let (server, mock, _, _, key) = TaskBed::start(QUOTA, &[(24, "gemini-2.5-flash")])
        .await
        .parts();
    let (status, body) = bearer_post(
        &server,
        &key,
        "/v1/videos",
        json!({"model": "gemini-2.5-flash", "prompt": "a cat"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body.to_string().contains("no channel whose type can serve"),
        "{body}"
    );
    // The refusal names the types the model's channels have (P7b: "naming the type and the route").
    assert!(body.to_string().contains("types: Gemini (24)"), "{body}");
    assert!(mock.calls().is_empty(), "nothing was sent upstream");
}

/// A key's limits as its owner sets them.
async fn key_limits(payer: &Actor, limits: Value) -> i64 {
    let (_, list) = payer.get("/api/token/?p=1&page_size=10").await;
    let token = list["data"]["items"][0]["id"].as_i64().expect("token id");
    let (status, body) = payer
        .put(&format!("/api/token/{token}/limits"), limits)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    token
}

#[tokio::test]
async fn task_submits_count_against_a_keys_rpm_limit_and_are_refused_in_the_family_shape() {
    let (server, mock, _, payer, key) =
        TaskBed::start(QUOTA, &[(2, "mj_imagine"), (36, "suno_music")])
            .await
            .parts();
    key_limits(&payer, json!({"rpm_limit": 1})).await;
    mock.json(
        "/mj/submit/imagine",
        200,
        json!({"code": 1, "description": "ok", "result": "101"}),
    );
    mock.json(
        "/suno/submit/music",
        200,
        json!({"code": "success", "message": "", "data": "s-1"}),
    );
    let (status, body) = mj_post(&server, &key, "/mj/submit/imagine", json!({"prompt": "a"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The second submit of the minute: Midjourney-proxy's shape, with Retry-After.
    let resp = server
        .client
        .post(server.url("/mj/submit/imagine"))
        .header("mj-api-secret", &key)
        .json(&json!({"prompt": "b"}))
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(resp.headers().contains_key("retry-after"));
    let body: Value = resp.json().await.expect("json");
    assert_eq!(body["type"], "rate_limit_exceeded", "{body}");
    assert_eq!(body["code"], 4, "{body}");
    assert!(
        body["description"]
            .as_str()
            .is_some_and(|d| d.contains("rpm")),
        "{body}"
    );
    // Suno's shape.
    let (status, body) = bearer_post(
        &server,
        &key,
        "/suno/submit/music",
        json!({"prompt": "a song"}),
    )
    .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["code"], "rate_limit_exceeded", "{body}");
    assert!(body["data"].is_null(), "{body}");
    assert_eq!(mock.calls_to("/mj/submit/imagine").len(), 1);
    assert!(
        mock.calls_to("/suno/submit/music").is_empty(),
        "a refused submit never reaches the upstream"
    );
    let (quota, used, _, _) = balances(&server, payer.id).await;
    assert_eq!(
        (quota, used),
        (QUOTA - QPU / 10, QPU / 10),
        "one submit paid"
    );
    assert_books(&server, payer.id).await;
}

#[tokio::test]
async fn a_failing_task_channel_is_reported_and_the_next_one_takes_the_submit() {
    let failing = MockTasks::start().await;
    let healthy = MockTasks::start().await;
    let mut first = channel_on(&failing, 2, "mj_imagine");
    first["priority"] = json!(10);
    first["auto_ban"] = json!(1);
    let mut second = channel_on(&healthy, 2, "mj_imagine");
    second["name"] = json!("backup");
    second["priority"] = json!(0);
    let (server, failing, root, payer, key) = TaskBed::on(failing, QUOTA, QUOTA, &[first, second])
        .await
        .parts();
    server.set_option(&root, "RetryTimes", json!("1")).await;
    server
        .set_option(&root, "AutomaticDisableChannelEnabled", json!("true"))
        .await;
    failing.json(
        "/mj/submit/imagine",
        401,
        json!({"error": {"message": "invalid mj-api-secret"}}),
    );
    healthy.json(
        "/mj/submit/imagine",
        200,
        json!({"code": 1, "description": "ok", "result": "202"}),
    );
    let (status, body) = mj_post(&server, &key, "/mj/submit/imagine", json!({"prompt": "a"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"], "202");
    assert_eq!(failing.calls_to("/mj/submit/imagine").len(), 1);
    let tasks = stored(&server, payer.id, List::Drawing);
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].channel_id.0, 2, "the backup took it");
    // The channel pool heard the 401: the failing channel is auto-disabled.
    wait_until("the failing channel is disabled", || {
        server
            .pool()
            .table()
            .load()
            .channel(tollgate_storage::ChannelId(1))
            .is_none()
    })
    .await;
    let (_, channel) = root.get("/api/channel/1").await;
    assert_eq!(channel["data"]["status"], 3, "{channel}");
    // The consume row carries the attempt timeline.
    let (_, _, _, logs) = balances(&server, payer.id).await;
    let row = logs
        .iter()
        .find(|l| l.model_name == "mj_imagine")
        .expect("consume row");
    assert_eq!(row.channel_id, 2);
    let other: Value = serde_json::from_str(&row.other).expect("other");
    assert_eq!(other["admin_info"]["use_channel"], json!([1, 2]), "{other}");
    assert_eq!(other["admin_info"]["attempts"][0]["s"], 401, "{other}");
    assert_eq!(other["admin_info"]["attempts"][0]["e"], "auth", "{other}");
    assert_eq!(other["admin_info"]["attempts"][1]["s"], 200, "{other}");
    assert_books(&server, payer.id).await;
}

#[tokio::test]
async fn a_video_is_charged_for_the_seconds_it_finished_at_once() {
    let (server, mock, _, payer, key) = TaskBed::start(QUOTA, &[(1, "sora-2")]).await.parts();
    let per_second = QPU * 3 / 10;
    // Asked for 4 s (charged 4 s at submit), finished at 8 s: 4 s more are charged.
    mock.json(
        "/v1/videos",
        200,
        json!({"id": "video_long", "object": "video", "model": "sora-2", "status": "queued",
               "progress": 0, "seconds": "4"}),
    );
    mock.json(
        "/v1/videos/video_long",
        200,
        json!({"id": "video_long", "object": "video", "status": "completed", "progress": 100,
               "completed_at": 1_700_000_100, "seconds": "8"}),
    );
    let (status, body) = bearer_post(
        &server,
        &key,
        "/v1/videos",
        json!({"model": "sora-2", "prompt": "waves", "seconds": "4"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    wait_until("the video finished", || {
        stored(&server, payer.id, List::Tasks)
            .first()
            .is_some_and(|t| t.status == "SUCCESS")
    })
    .await;
    let (quota, used, _, logs) = balances(&server, payer.id).await;
    assert_eq!((quota, used), (QUOTA - 8 * per_second, 8 * per_second));
    let task = &stored(&server, payer.id, List::Tasks)[0];
    assert_eq!(task.quota, 8 * per_second, "the task's charge follows");
    let correction = logs
        .iter()
        .find(|l| l.content.contains("billed for 8 seconds"))
        .expect("the correction's consume row");
    assert_eq!(correction.quota, 4 * per_second);
    assert_eq!(channel_used(&server, 1), 8 * per_second);
    let (_, tokens) = payer.get("/api/token/?p=1&page_size=10").await;
    assert_eq!(
        tokens["data"]["items"][0]["remain_quota"],
        QUOTA - 8 * per_second,
        "the key's limit pays the difference too"
    );
    // Asked for 8 s, finished at 2 s: 6 s go back.
    mock.json(
        "/v1/videos",
        200,
        json!({"id": "video_short", "object": "video", "status": "queued", "seconds": "8"}),
    );
    mock.json(
        "/v1/videos/video_short",
        200,
        json!({"id": "video_short", "object": "video", "status": "completed", "progress": 100,
               "seconds": "2"}),
    );
    let (status, body) = bearer_post(
        &server,
        &key,
        "/v1/videos",
        json!({"model": "sora-2", "prompt": "a cat", "seconds": "8"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    wait_until("the short video finished", || {
        stored(&server, payer.id, List::Tasks)
            .iter()
            .all(|t| t.status == "SUCCESS")
            && stored(&server, payer.id, List::Tasks).len() == 2
    })
    .await;
    let (quota, used, _, logs) = balances(&server, payer.id).await;
    assert_eq!((quota, used), (QUOTA - 10 * per_second, 10 * per_second));
    assert_eq!(channel_used(&server, 1), 10 * per_second);
    assert_eq!(
        logs.iter()
            .filter(|l| l.content.contains("seconds as finished"))
            .count(),
        2,
        "each video corrected once"
    );
    assert_books(&server, payer.id).await;
}

#[tokio::test]
async fn every_midjourney_route_and_speed_prefix_is_relayed_at_its_priced_model() {
    let models = "mj_imagine,mj_upscale,mj_variation,mj_describe,mj_blend,mj_modal,mj_shorten,\
                  mj_upload,mj_edits,mj_video,swap_face";
    let (server, mock, root, payer, key) = TaskBed::start(QUOTA, &[(2, models)]).await.parts();
    server
        .set_option(&root, "MjActionCheckSuccessEnabled", json!("false"))
        .await;
    mock.json(
        "/mj/submit/imagine",
        200,
        json!({"code": 1, "description": "ok", "result": "origin"}),
    );
    // `Authorization: midjourney-proxy` says nothing: the key is the mj-api-secret.
    let (status, body) = server
        .send(
            server
                .client
                .post(server.url("/mj/submit/imagine"))
                .header("authorization", "midjourney-proxy")
                .header("mj-api-secret", &key)
                .json(&json!({"prompt": "origin"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let image = "data:image/png;base64,iVBORw0KGgo=";
    // (route after /mj/, body, priced model)
    let routes = [
        ("submit/imagine", json!({"prompt": "a cat"}), "mj_imagine"),
        (
            "submit/change",
            json!({"action": "UPSCALE", "index": 1, "taskId": "origin"}),
            "mj_upscale",
        ),
        (
            "submit/simple-change",
            json!({"content": "origin V1"}),
            "mj_variation",
        ),
        ("submit/describe", json!({"base64": image}), "mj_describe"),
        (
            "submit/blend",
            json!({"base64Array": [image, image], "dimensions": "SQUARE"}),
            "mj_blend",
        ),
        (
            "submit/action",
            json!({"customId": "MJ::JOB::upsample::1::origin", "taskId": "origin"}),
            "mj_upscale",
        ),
        (
            "submit/modal",
            json!({"taskId": "origin", "prompt": "more"}),
            "mj_modal",
        ),
        (
            "submit/shorten",
            json!({"prompt": "a long prompt"}),
            "mj_shorten",
        ),
        (
            "submit/upload-discord-images",
            json!({"base64Array": [image]}),
            "mj_upload",
        ),
        (
            "submit/edits",
            json!({"prompt": "recolour", "image": image}),
            "mj_edits",
        ),
        (
            "submit/video",
            json!({"taskId": "origin", "prompt": "move"}),
            "mj_video",
        ),
        (
            "insight-face/swap",
            json!({"sourceBase64": image, "targetBase64": image}),
            "swap_face",
        ),
    ];
    let mut submitted = 1;
    for prefix in ["", "/mj-fast", "/mj-turbo", "/mj-relax"] {
        for (route, body, model) in &routes {
            submitted += 1;
            let path = format!("{prefix}/mj/{route}");
            let id = format!("task-{submitted}");
            mock.json(
                &path,
                200,
                json!({"code": 1, "description": "ok", "result": id}),
            );
            let before = mock.calls_to(&path).len();
            let (status, answer) = mj_post(&server, &key, &path, body.clone()).await;
            assert_eq!(status, StatusCode::OK, "{path}: {answer}");
            assert_eq!(answer["result"], id.as_str(), "{path}: {answer}");
            let sent = mock.calls_to(&path);
            assert_eq!(
                sent.len(),
                before + 1,
                "{path} is forwarded to the same path"
            );
            let forwarded = sent.last().map(common::mock_tasks::Call::json);
            assert_eq!(
                forwarded.map(|b| b["base64Array"].clone()),
                Some(body["base64Array"].clone()),
                "{path}"
            );
            let (_, _, _, rows) = balances(&server, payer.id).await;
            assert_eq!(rows[0].model_name, *model, "{path} is billed as {model}");
        }
    }
    assert_eq!(stored(&server, payer.id, List::Drawing).len(), submitted);
    // The image seed is asked of the task's channel, under any prefix, by its owner only.
    mock.json(
        "/mj-turbo/mj/task/origin/image-seed",
        200,
        json!({"code": 1, "description": "ok", "result": "seed-42"}),
    );
    let (status, seed) = get_key(&server, &key, "/mj-turbo/mj/task/origin/image-seed").await;
    assert_eq!(status, StatusCode::OK, "{seed}");
    assert_eq!(seed["result"], "seed-42");
    let others = other_key(&server, &root, QUOTA).await;
    let (status, err) = get_key(&server, &others, "/mj/task/origin/image-seed").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{err}");
    assert_eq!(err["code"], 3, "{err}");
    assert_books(&server, payer.id).await;
}

#[tokio::test]
async fn upstream_error_statuses_and_quota_refusals_take_each_familys_shape() {
    let (server, mock, root, payer, key) =
        TaskBed::start(QUOTA, &[(2, "mj_imagine"), (36, "suno_music")])
            .await
            .parts();
    // Midjourney-proxy's own error answer, {code, description}: the client reads it in the
    // same shape, with the upstream's description.
    mock.json(
        "/mj/submit/imagine",
        400,
        json!({"code": 4, "description": "prompt has a banned word", "result": null}),
    );
    let (status, err) = mj_post(&server, &key, "/mj/submit/imagine", json!({"prompt": "x"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    assert_eq!(err["code"], 4, "{err}");
    assert!(err["type"].is_string(), "{err}");
    assert!(
        err["description"]
            .as_str()
            .is_some_and(|d| d.contains("banned word")),
        "the upstream's description: {err}"
    );
    assert!(err.get("error").is_none(), "not OpenAI's shape: {err}");
    // Suno's, {code, message, data}.
    mock.json(
        "/suno/submit/music",
        400,
        json!({"code": "param_error", "message": "lyrics too long", "data": null}),
    );
    let (status, err) =
        bearer_post(&server, &key, "/suno/submit/music", json!({"prompt": "a"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    assert!(err["code"].is_string(), "{err}");
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains("lyrics too long")),
        "{err}"
    );
    assert!(err["data"].is_null() && err.get("error").is_none(), "{err}");
    // A client error is not tried on another channel, and nothing is billed.
    assert_eq!(mock.calls_to("/mj/submit/imagine").len(), 1);
    assert_eq!(mock.calls_to("/suno/submit/music").len(), 1);
    let (quota, used, _, _) = balances(&server, payer.id).await;
    assert_eq!((quota, used), (QUOTA, 0));
    // A balance below the price: the quota error, in each family's shape.
    let (status, body) = root
        .put("/api/user/", json!({"id": payer.id, "quota": QPU / 10 - 1}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, err) = mj_post(&server, &key, "/mj/submit/imagine", json!({"prompt": "x"})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{err}");
    assert_eq!(
        (err["type"].as_str(), err["code"].as_i64()),
        (Some("insufficient_user_quota"), Some(4)),
        "{err}"
    );
    assert!(err["description"].is_string(), "{err}");
    let (status, err) =
        bearer_post(&server, &key, "/suno/submit/music", json!({"prompt": "a"})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{err}");
    assert_eq!(err["code"], "insufficient_user_quota", "{err}");
    assert!(err["message"].is_string() && err["data"].is_null(), "{err}");
    assert_eq!(
        mock.calls_to("/mj/submit/imagine").len(),
        1,
        "never forwarded"
    );
    assert_books(&server, payer.id).await;
}

#[tokio::test]
async fn a_ratio_priced_task_reserves_its_whole_price_and_never_goes_into_debt() {
    let mock = MockTasks::start().await;
    // A video model priced by ratio (0.2): ratio / 2 = US$ 0.1 a second, so 4 s cost 200,000.
    // A request without tokens at that ratio would reserve PreConsumedQuota × 0.2 = 100.
    let price = QPU / 10 * 4;
    let ch = channel_on(&mock, 1, "sora-ratio");
    let (server, mock, root, payer, key) = TaskBed::on(mock, price - 1, QUOTA, &[ch]).await.parts();
    server
        .set_option(&root, "ModelRatio", json!(r#"{"sora-ratio": 0.2}"#))
        .await;
    mock.json(
        "/v1/videos",
        200,
        json!({"id": "video_r", "object": "video", "status": "queued", "seconds": "4"}),
    );
    let ask = json!({"model": "sora-ratio", "prompt": "waves", "seconds": "4"});
    // One unit short of the price: refused before the upstream hears of it, no debt.
    let (status, err) = bearer_post(&server, &key, "/v1/videos", ask.clone()).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{err}");
    assert_eq!(err["error"]["code"], "insufficient_user_quota", "{err}");
    assert!(
        mock.calls_to("/v1/videos").is_empty(),
        "a submit the balance cannot pay never reaches the upstream"
    );
    let (quota, used, _, _) = balances(&server, payer.id).await;
    assert_eq!((quota, used), (price - 1, 0), "never in debt");
    // Exactly the price: admitted (so the reservation is the price, no more and no less), and
    // settled at what was reserved.
    let (status, body) = root
        .put("/api/user/", json!({"id": payer.id, "quota": price}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = bearer_post(&server, &key, "/v1/videos", ask).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (quota, used, _, _) = balances(&server, payer.id).await;
    assert_eq!((quota, used), (0, price));
    assert_eq!(stored(&server, payer.id, List::Tasks)[0].quota, price);
    assert_books(&server, payer.id).await;
}

#[tokio::test]
async fn a_multipart_video_gets_the_channels_model_name() {
    let mock = MockTasks::start().await;
    let mut ch = channel_on(&mock, 1, "sora-2");
    ch["model_mapping"] = json!(r#"{"sora-2": "sora-2-2025-10-06"}"#);
    let (server, mock, _, payer, key) = TaskBed::on(mock, QUOTA, QUOTA, &[ch]).await.parts();
    mock.json(
        "/v1/videos",
        200,
        json!({"id": "video_form", "object": "video", "status": "queued", "seconds": "4"}),
    );
    // A boundary with capitals (browsers send such): it is read as sent.
    let boundary = "----WebKitFormBoundaryAbCdEf012345";
    let mut form = Vec::new();
    for (name, value) in [("model", "sora-2"), ("prompt", "a cat"), ("seconds", "4")] {
        form.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    }
    form.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"input_reference\"; \
             filename=\"cat.png\"\r\nContent-Type: image/png\r\n\r\n"
        )
        .as_bytes(),
    );
    form.extend_from_slice(b"\x89PNG-bytes");
    form.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let (status, body) = server
        .send(
            server
                .client
                .post(server.url("/v1/videos"))
                .bearer_auth(&key)
                .header(
                    "content-type",
                    format!("multipart/form-data; boundary={boundary}"),
                )
                .body(form),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let sent = mock.calls_to("/v1/videos");
    assert_eq!(sent.len(), 1);
    let content_type = sent[0]
        .headers
        .get("content-type")
        .cloned()
        .unwrap_or_default();
    assert!(
        content_type.starts_with("multipart/form-data"),
        "{content_type}"
    );
    let text = String::from_utf8_lossy(&sent[0].body).into_owned();
    assert!(
        text.contains("sora-2-2025-10-06"),
        "the mapped model name: {text}"
    );
    assert!(
        !text.contains("\r\n\r\nsora-2\r\n"),
        "not the asked name: {text}"
    );
    assert!(text.contains("filename=\"cat.png\""), "{text}");
    assert!(
        text.contains("PNG-bytes") && text.contains("a cat"),
        "{text}"
    );
    let (_, used, _, _) = balances(&server, payer.id).await;
    assert_eq!(used, QPU * 3 / 10 * 4);
    assert_books(&server, payer.id).await;
}

#[tokio::test]
async fn continuations_go_to_the_origin_tasks_channel_and_are_the_owners_only() {
    let preferred = MockTasks::start().await;
    let (server, first, root, payer, key) =
        TaskBed::start(QUOTA, &[(36, "suno_music"), (2, "mj_imagine,mj_video")])
            .await
            .parts();
    first.json(
        "/suno/submit/music",
        200,
        json!({"code": "success", "message": "", "data": "song-1"}),
    );
    first.json(
        "/mj/submit/imagine",
        200,
        json!({"code": 1, "description": "ok", "result": "img-1"}),
    );
    let (status, body) = bearer_post(
        &server,
        &key,
        "/suno/submit/music",
        json!({"prompt": "a song"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = mj_post(&server, &key, "/mj/submit/imagine", json!({"prompt": "x"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Channels of higher priority now take new submits.
    for (ty, models) in [(36, "suno_music"), (2, "mj_imagine,mj_video")] {
        let mut ch = channel_on(&preferred, ty, models);
        ch["name"] = json!(format!("preferred{ty}"));
        ch["priority"] = json!(10);
        let (status, body) = root.post("/api/channel/", ch).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    server
        .set_option(&root, "MjActionCheckSuccessEnabled", json!("false"))
        .await;
    for mock in [&first, &preferred] {
        mock.json(
            "/suno/submit/music",
            200,
            json!({"code": "success", "message": "", "data": "song-2"}),
        );
        mock.json(
            "/mj/submit/video",
            200,
            json!({"code": 1, "description": "ok", "result": "vid-1"}),
        );
    }
    let extend = json!({"prompt": "more", "continue_clip_id": "clip-9", "continue_at": 30,
                        "task_id": "song-1"});
    // Another user's key: the origin is not theirs.
    let other = other_key(&server, &root, QUOTA).await;
    let (status, err) = bearer_post(&server, &other, "/suno/submit/music", extend.clone()).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{err}");
    assert_eq!(err["code"], "task_not_found", "{err}");
    let video = json!({"customId": "MJ::JOB::video::1::img-1", "prompt": "move"});
    let (status, err) = mj_post(&server, &other, "/mj/submit/video", video.clone()).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{err}");
    assert_eq!(err["code"], 3, "{err}");
    // A continuation without its task, a video without any: refused before forwarding.
    let (status, err) = bearer_post(
        &server,
        &key,
        "/suno/submit/music",
        json!({"prompt": "more", "continue_clip_id": "clip-9"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    let (status, err) = mj_post(&server, &key, "/mj/submit/video", json!({"prompt": "move"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    assert_eq!(err["code"], 4, "{err}");
    // The owner's continuation and video go to the origin's channel, not the preferred one.
    let (status, body) = bearer_post(&server, &key, "/suno/submit/music", extend).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = mj_post(&server, &key, "/mj/submit/video", video).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(first.calls_to("/suno/submit/music").len(), 2);
    assert_eq!(first.calls_to("/mj/submit/video").len(), 1);
    assert!(preferred.calls_to("/suno/submit/music").is_empty());
    assert!(preferred.calls_to("/mj/submit/video").is_empty());
    // A plain submit goes to the preferred channel.
    let (status, body) = bearer_post(
        &server,
        &key,
        "/suno/submit/music",
        json!({"prompt": "new"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(preferred.calls_to("/suno/submit/music").len(), 1);
    assert_books(&server, payer.id).await;
}

#[tokio::test]
async fn submitted_tasks_are_polled_to_success_and_to_failure_with_a_refund() {
    let (server, mock, _, payer, key) =
        TaskBed::start(QUOTA, &[(2, "mj_imagine"), (36, "suno_music")])
            .await
            .parts();
    // A drawing the upstream fails, a song it finishes.
    mock.json(
        "/mj/submit/imagine",
        200,
        json!({"code": 1, "description": "ok", "result": "mj-fail"}),
    );
    mock.json(
        "/mj/task/list-by-condition",
        200,
        json!([{"id": "mj-fail", "action": "IMAGINE", "status": "FAILURE", "progress": "0%",
                "failReason": "banned prompt", "submitTime": 1_700_000_000_000_i64}]),
    );
    mock.json(
        "/suno/submit/music",
        200,
        json!({"code": "success", "message": "", "data": "song-ok"}),
    );
    mock.json(
        "/suno/fetch",
        200,
        json!({"code": "success", "message": "", "data": [{"task_id": "song-ok",
               "action": "MUSIC", "status": "SUCCESS", "fail_reason": "",
               "submit_time": 1_700_000_000, "finish_time": 1_700_000_100,
               "data": [{"id": "clip-1", "title": "Song", "audio_url": "https://cdn.test/s.mp3",
                         "image_url": "https://cdn.test/s.png"}]}]}),
    );
    let (status, body) = mj_post(&server, &key, "/mj/submit/imagine", json!({"prompt": "x"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = bearer_post(
        &server,
        &key,
        "/suno/submit/music",
        json!({"prompt": "a song"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    wait_until("the drawing failed and the song finished", || {
        stored(&server, payer.id, List::Drawing)
            .first()
            .is_some_and(|t| t.refunded)
            && stored(&server, payer.id, List::Tasks)
                .first()
                .is_some_and(|t| t.status == "SUCCESS")
    })
    .await;
    let drawing = &stored(&server, payer.id, List::Drawing)[0];
    assert_eq!(drawing.status, "FAILURE");
    assert_eq!(drawing.fail_reason, "banned prompt");
    let song = &stored(&server, payer.id, List::Tasks)[0];
    assert_eq!(song.result_url, "https://cdn.test/s.mp3");
    // The song's charge stays; the drawing's came back, with its negative consume row.
    let (quota, used, _, logs) = balances(&server, payer.id).await;
    assert_eq!((quota, used), (QUOTA - QPU / 10, QPU / 10));
    let refund = logs
        .iter()
        .find(|l| l.content.contains("refunded"))
        .expect("the refund's row");
    assert_eq!(refund.quota, -(QPU / 10));
    assert_eq!(channel_used(&server, 1), 0, "the drawing's channel");
    assert_eq!(channel_used(&server, 2), QPU / 10, "the song's channel");
    let (_, tokens) = payer.get("/api/token/?p=1&page_size=10").await;
    assert_eq!(tokens["data"]["items"][0]["remain_quota"], QUOTA - QPU / 10);
    // The fetch routes show what the poller stored.
    let (status, fetched) = get_key(&server, &key, "/mj/task/mj-fail/fetch").await;
    assert_eq!(status, StatusCode::OK, "{fetched}");
    assert_eq!(fetched["status"], "FAILURE", "{fetched}");
    assert_books(&server, payer.id).await;
}
