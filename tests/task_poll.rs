//! The task poller and the task lists over the HTTP API: mock Midjourney-proxy, Suno and OpenAI
//! video upstreams (their documented status answers) drive tasks to success and to failure
//! (refunded once), timeouts, a lost channel, a restart in the middle of polling, backing off
//! from a failing upstream, an admin's audited refund, and the /metrics families.
//!
//! These tests start from tasks already submitted: their rows and charges are written from the
//! harness ([`TaskBed::charged_task`], `tasks::insert_charged`; the submit routes, which settle
//! through the quota ledger, are tested end to end in `tests/task_relay.rs` and the console's
//! `web/e2e/tasks.spec.ts`). The harness's charge does not pass through the in-memory quota
//! ledger, so billing is checked in storage (balances, used quota, credited total, consume
//! rows). Timeouts are driven by the tasks' submit times (set in the past), and the poll
//! interval is injected (`task_poll_interval_ms`), so no test sleeps longer than its interval.

#![expect(
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers: a failed call or a task that never finishes fails the test"
)]

mod common;

use std::time::Duration;

use common::TestServer;
use common::task_fixture::{TaskBed, tune};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate::clock::now_unix;
use tollgate_storage::logs::{self, LOG_CONSUME, LogEntry};
use tollgate_storage::tasks::{self, FAILURE, SUBMITTED, SUCCESS, Task, TaskKind, query};
use tollgate_storage::{StorageError, TokenId, UserId, audit, tokens, users};

/// What each test task costs.
const PRICE: i64 = 50_000;
/// The payer's starting balance and key limit.
const QUOTA: i64 = 1_000_000;

/// The task with local id `id` as stored.
fn stored(server: &TestServer, id: i64) -> Task {
    server
        .store()
        .read_blocking(|rtx| query::get(rtx, id))
        .expect("read")
        .expect("task")
}

/// Waits (polling every 20 ms, up to 5 s) until task `id` is finished.
async fn finished(server: &TestServer, id: i64) -> Task {
    for _ in 0..250 {
        let task = stored(server, id);
        if task.is_finished() {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("task {id} did not finish: {:?}", stored(server, id));
}

/// (balance, used, credited, consume rows' sum, token remaining) of `user` in storage;
/// asserts balance + used == credited and consume rows == used.
async fn books(server: &TestServer, user: i64, token: TokenId) -> (i64, i64, i64) {
    server.flush().await;
    let (quota, used, credited, logged, remain) = server
        .store()
        .read_blocking(|rtx| {
            let u = users::get(rtx, UserId(user))?.expect("user");
            let logged: i64 = logs::recent_for_user(rtx, UserId(user), 10_000)?
                .iter()
                .filter(|l| l.log_type == LOG_CONSUME)
                .map(|l| l.quota)
                .sum();
            let remain = tokens::get(rtx, token)?.expect("token").remain_quota.0;
            Ok::<_, StorageError>((
                u.quota.0,
                u.used_quota.0,
                users::credited(rtx, UserId(user))?,
                logged,
                remain,
            ))
        })
        .expect("read");
    assert_eq!(quota + used, credited, "balance + used == credited");
    assert_eq!(
        logged, used,
        "consume rows (refunds negative) == used quota"
    );
    (quota, used, remain)
}

/// The consume rows of `user`, newest first.
fn consume_rows(server: &TestServer, user: i64) -> Vec<LogEntry> {
    server
        .store()
        .read_blocking(|rtx| logs::recent_for_user(rtx, UserId(user), 100))
        .expect("logs")
        .into_iter()
        .filter(|l| l.log_type == LOG_CONSUME)
        .collect()
}

#[tokio::test]
async fn a_midjourney_task_is_polled_to_success_keeps_its_charge_and_is_listed() {
    let bed = TaskBed::of(QUOTA, &[TaskKind::Midjourney]).await;
    let (server, mock, root, payer) = (&bed.server, &bed.mock, &bed.root, &bed.payer);
    let ch = bed.channels[0];
    mock.json(
        "/mj/task/list-by-condition",
        200,
        json!([{"id": "mj-1", "action": "IMAGINE", "status": "SUCCESS", "progress": "100%",
                "imageUrl": "https://cdn.example/mj-1.png", "promptEn": "a cat",
                "submitTime": 1_700_000_000_000_i64, "finishTime": 1_700_000_042_000_i64,
                "buttons": [{"customId": "MJ::JOB::upsample::1"}]}]),
    );
    let task = bed.charged_task(TaskKind::Midjourney, ch, "mj-1", now_unix(), "0%", PRICE);
    let done = finished(server, task.id).await;
    assert_eq!(done.status, SUCCESS);
    assert_eq!(done.image_url, "https://cdn.example/mj-1.png");
    assert!(!done.refunded);
    let call = mock
        .calls()
        .into_iter()
        .find(|c| c.path == "/mj/task/list-by-condition")
        .expect("the poller asked the channel");
    assert_eq!(
        call.headers.get("authorization"),
        None,
        "Midjourney-proxy takes the key in mj-api-secret"
    );
    let (quota, used, remain) = books(server, payer.id, bed.token).await;
    assert_eq!((quota, used, remain), (QUOTA - PRICE, PRICE, QUOTA - PRICE));

    // The owner's drawing log (times in milliseconds, no channel).
    let (status, body) = payer.get("/api/mj/self/?p=1&page_size=10").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let item = &body["data"]["items"][0];
    assert_eq!(body["data"]["total"], 1);
    assert_eq!(item["mj_id"], "mj-1");
    assert_eq!(item["status"], "SUCCESS");
    assert_eq!(item["progress"], "100%");
    assert_eq!(item["image_url"], "https://cdn.example/mj-1.png");
    assert_eq!(item["channel_id"], 0, "owners do not see the channel");
    assert_eq!(item["finish_time"], 1_700_000_042_000_i64);
    // Filters: by id, and a window that excludes it (milliseconds, as new-api's page sends).
    let (_, none) = payer.get("/api/mj/self/?mj_id=mj-2").await;
    assert_eq!(none["data"]["total"], 0);
    let later = (now_unix() + 3_600) * 1000;
    let (_, none) = payer
        .get(&format!("/api/mj/self/?start_timestamp={later}"))
        .await;
    assert_eq!(none["data"]["total"], 0);
    // The admin's list sees the channel and filters by it; a user may not use it.
    let (_, all) = root.get(&format!("/api/mj/?channel_id={ch}")).await;
    assert_eq!(all["data"]["items"][0]["channel_id"], ch);
    let (_, other) = root.get(&format!("/api/mj/?channel_id={}", ch + 100)).await;
    assert_eq!(other["data"]["total"], 0);
    let (status, _) = payer.get("/api/mj/").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // Drawing tasks are not on the task list.
    let (_, tasks_list) = payer.get("/api/task/self").await;
    assert_eq!(tasks_list["data"]["total"], 0);
}

#[tokio::test]
async fn a_failed_suno_task_is_refunded_once_to_the_user_and_the_key() {
    let bed = TaskBed::of(QUOTA, &[TaskKind::Suno]).await;
    let (server, mock, root, payer) = (&bed.server, &bed.mock, &bed.root, &bed.payer);
    let ch = bed.channels[0];
    mock.json(
        "/suno/fetch",
        200,
        json!({"code": "success", "message": "", "data": [
            {"task_id": "song-ok", "action": "MUSIC", "status": "SUCCESS", "fail_reason": "",
             "submit_time": 1_700_000_000, "finish_time": 1_700_000_090,
             "data": [{"id": "clip-1", "title": "Cat song", "audio_url": "https://cdn.example/song.mp3",
                       "image_url": "https://cdn.example/cover.png"}]},
            {"task_id": "song-bad", "action": "MUSIC", "status": "FAILED",
             "fail_reason": "lyrics rejected", "submit_time": 1_700_000_000, "data": null}]}),
    );
    let now = now_unix();
    let ok = bed.charged_task(TaskKind::Suno, ch, "song-ok", now, "", PRICE);
    let bad = bed.charged_task(TaskKind::Suno, ch, "song-bad", now, "", PRICE);
    let ok = finished(server, ok.id).await;
    let bad = finished(server, bad.id).await;
    assert_eq!(ok.status, SUCCESS);
    assert_eq!(ok.result_url, "https://cdn.example/song.mp3");
    assert_eq!(ok.progress, "100%");
    assert_eq!(bad.status, FAILURE);
    assert_eq!(bad.fail_reason, "lyrics rejected");
    assert!(bad.refunded);
    let call = mock
        .calls()
        .into_iter()
        .find(|c| c.path == "/suno/fetch")
        .expect("asked");
    assert_eq!(
        call.headers.get("authorization").map(String::as_str),
        Some("Bearer task-secret")
    );

    // Let a few more rounds pass: the refund happened once.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (quota, used, remain) = books(server, payer.id, bed.token).await;
    assert_eq!((quota, used, remain), (QUOTA - PRICE, PRICE, QUOTA - PRICE));
    let rows = consume_rows(server, payer.id);
    let refunds: Vec<_> = rows.iter().filter(|l| l.quota < 0).collect();
    assert_eq!(refunds.len(), 1, "one refund row: {rows:?}");
    assert_eq!(refunds[0].quota, -PRICE);
    assert_eq!(refunds[0].model_name, "suno_music");
    assert_eq!(refunds[0].channel_id, ch);
    assert!(
        refunds[0].content.contains("song-bad"),
        "{}",
        refunds[0].content
    );

    // The task list: statuses, the song, and an admin's view.
    let (_, body) = payer.get("/api/task/self?task_id=song-ok").await;
    let item = &body["data"]["items"][0];
    assert_eq!(item["platform"], "suno");
    assert_eq!(item["result_url"], "https://cdn.example/song.mp3");
    assert_eq!(item["finish_time"], 1_700_000_090);
    let (_, all) = root.get("/api/task/?p=1&page_size=10").await;
    assert_eq!(all["data"]["total"], 2);
}

#[tokio::test]
async fn an_openai_video_is_polled_per_task_to_success() {
    let bed = TaskBed::of(QUOTA, &[TaskKind::Video]).await;
    let (server, mock, payer) = (&bed.server, &bed.mock, &bed.payer);
    let ch = bed.channels[0];
    mock.json(
        "/v1/videos/video_1",
        200,
        json!({"id": "video_1", "object": "video", "model": "sora-2", "status": "in_progress",
               "progress": 40, "created_at": 1_700_000_000, "seconds": "8", "size": "720x1280"}),
    );
    let task = bed.charged_task(TaskKind::Video, ch, "video_1", now_unix(), "", PRICE);
    for _ in 0..250 {
        if stored(server, task.id).progress == "40%" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(stored(server, task.id).status, "IN_PROGRESS");
    mock.json(
        "/v1/videos/video_1",
        200,
        json!({"id": "video_1", "object": "video", "model": "sora-2", "status": "completed",
               "progress": 100, "created_at": 1_700_000_000, "completed_at": 1_700_000_100,
               "seconds": "8", "size": "720x1280"}),
    );
    let done = finished(server, task.id).await;
    assert_eq!(done.status, SUCCESS);
    assert_eq!(done.finish_time, 1_700_000_100);
    assert_eq!(done.result_url, "/v1/videos/video_1/content");
    let call = mock.calls().into_iter().next().expect("asked");
    assert_eq!(
        call.headers.get("authorization").map(String::as_str),
        Some("Bearer task-secret")
    );
    let (_, body) = payer.get("/api/task/self").await;
    assert_eq!(body["data"]["items"][0]["platform"], "openai");
    books(server, payer.id, bed.token).await;
}

#[tokio::test]
async fn timeouts_the_midjourney_hour_and_a_deleted_channel_fail_and_refund() {
    let bed = TaskBed::of(QUOTA, &[TaskKind::Midjourney, TaskKind::Suno]).await;
    let (server, mock, root, payer) = (&bed.server, &bed.mock, &bed.root, &bed.payer);
    let [mj, suno] = bed.channels[..] else {
        panic!("two channels");
    };
    // The upstreams keep saying "still running".
    mock.json(
        "/mj/task/list-by-condition",
        200,
        json!([{"id": "mj-slow", "status": "IN_PROGRESS", "progress": "50%"}]),
    );
    mock.json(
        "/suno/fetch",
        200,
        json!({"code": "success", "data": [{"task_id": "song-old", "status": "processing"}]}),
    );
    let now = now_unix();
    // Submitted 61 minutes ago at 50 %: past the Midjourney hour.
    let slow = bed.charged_task(
        TaskKind::Midjourney,
        mj,
        "mj-slow",
        now - 3_660,
        "50%",
        PRICE,
    );
    // Submitted a day and a minute ago: past TaskTimeoutMinutes (1,440).
    let old = bed.charged_task(TaskKind::Suno, suno, "song-old", now - 86_460, "", PRICE);
    let slow = finished(server, slow.id).await;
    let old = finished(server, old.id).await;
    assert_eq!(
        (slow.status.as_str(), slow.fail_reason.as_str()),
        (FAILURE, "no result within 1 hour")
    );
    assert_eq!(old.fail_reason, "timed out after 1440 minutes");
    assert!(slow.refunded && old.refunded);

    // A shorter TaskTimeoutMinutes applies to the next round.
    server
        .set_option(root, "TaskTimeoutMinutes", json!("10"))
        .await;
    let recent = bed.charged_task(TaskKind::Suno, suno, "song-old", now - 660, "", PRICE);
    assert_eq!(
        finished(server, recent.id).await.fail_reason,
        "timed out after 10 minutes"
    );

    // A task whose channel was deleted.
    let orphan = bed.charged_task(TaskKind::Suno, suno, "song-orphan", now, "", PRICE);
    let (status, body) = root.delete(&format!("/api/channel/{suno}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let orphan = finished(server, orphan.id).await;
    assert_eq!(orphan.fail_reason, "channel deleted");
    assert!(orphan.refunded);

    let (quota, used, remain) = books(server, payer.id, bed.token).await;
    assert_eq!(
        (quota, used, remain),
        (QUOTA, 0, QUOTA),
        "all four refunded"
    );
}

#[tokio::test]
async fn a_restart_in_the_middle_of_polling_loses_no_task() {
    let bed = TaskBed::of(QUOTA, &[TaskKind::Midjourney]).await;
    // The upstream is down while the first server runs: the task stays open, leased or not.
    bed.mock
        .json("/mj/task/list-by-condition", 503, json!({"error": "down"}));
    let task = bed.charged_task(
        TaskKind::Midjourney,
        bed.channels[0],
        "mj-r",
        now_unix(),
        "0%",
        PRICE,
    );
    let TaskBed {
        server,
        mock,
        payer,
        token,
        ..
    } = bed;
    for _ in 0..250 {
        if !mock.calls().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!mock.calls().is_empty(), "the first server asked");
    let dir = server.stop().await;
    // A crash in the middle of a round leaves the task leased by this node for two minutes.
    let store = tollgate_storage::Store::open_dir(dir.path()).expect("open");
    store
        .write_blocking(|wtx| {
            tasks::release_leases(wtx, "local", None)?;
            tasks::claim(wtx, "local", now_unix(), 120, 10).map(|_| ())
        })
        .expect("lease");
    assert_eq!(
        store
            .read_blocking(|rtx| query::get(rtx, task.id))
            .expect("read")
            .expect("task")
            .lease_owner,
        "local"
    );
    drop(store);

    mock.json(
        "/mj/task/list-by-condition",
        200,
        json!([{"id": "mj-r", "status": "SUCCESS", "progress": "100%",
                "imageUrl": "https://cdn.example/r.png"}]),
    );
    let server = TestServer::start_with(dir, tune).await;
    let done = finished(&server, task.id).await;
    assert_eq!(
        done.status, SUCCESS,
        "polled again after the restart, lease returned"
    );
    assert!(done.lease_owner.is_empty());
    books(&server, payer.id, token).await;
}

#[tokio::test]
async fn a_failing_upstream_is_backed_off_from() {
    let bed = TaskBed::of(QUOTA, &[TaskKind::Midjourney]).await;
    let (server, mock) = (&bed.server, &bed.mock);
    let ch = bed.channels[0];
    mock.json("/mj/task/list-by-condition", 500, json!({}));
    let task = bed.charged_task(TaskKind::Midjourney, ch, "mj-b", now_unix(), "0%", PRICE);
    // 20 rounds of 50 ms; backing off (100, 200, 400, 800 ms) asks at most about 4 times.
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let calls = mock.calls().len();
    assert!((1..=5).contains(&calls), "asked {calls} times in 1 s");
    let open = stored(server, task.id);
    assert_eq!(open.status, SUBMITTED, "an upstream error changes nothing");
    assert!(!open.refunded);
    // Between rounds the lease is returned (a round may hold it for a moment).
    let mut returned = false;
    for _ in 0..50 {
        if stored(server, task.id).lease_owner.is_empty() {
            returned = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(returned, "the lease was returned");
}

#[tokio::test]
async fn an_admin_refund_is_audited_once_and_users_may_not() {
    let bed = TaskBed::of(QUOTA, &[TaskKind::Suno]).await;
    let (server, mock, root, payer) = (&bed.server, &bed.mock, &bed.root, &bed.payer);
    let ch = bed.channels[0];
    mock.json(
        "/suno/fetch",
        200,
        json!({"code": "success", "data": [{"task_id": "song-x", "status": "SUCCESS",
               "data": [{"audio_url": "https://cdn.example/x.mp3"}]}]}),
    );
    let task = bed.charged_task(TaskKind::Suno, ch, "song-x", now_unix(), "", PRICE);
    finished(server, task.id).await;

    let path = format!("/api/task/{}/refund", task.id);
    let (status, _) = payer.post(&path, json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, body) = root.post(&path, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["quota"], PRICE);
    assert_eq!(
        body["data"]["status"], SUCCESS,
        "a finished task keeps its status"
    );
    let (status, body) = root.post(&path, json!({})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, _) = root.post("/api/task/999999/refund", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let (quota, used, remain) = books(server, payer.id, bed.token).await;
    assert_eq!((quota, used, remain), (QUOTA, 0, QUOTA));
    let rows = server
        .store()
        .read_blocking(|rtx| {
            audit::list(
                rtx,
                &audit::AuditFilter {
                    action: Some("task.refund".into()),
                    ..audit::AuditFilter::default()
                },
                0,
                10,
            )
        })
        .expect("audit")
        .0;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].actor_id, root.id);
    assert_eq!(rows[0].target, format!("task:{}", task.id));
    let after: Value = serde_json::from_str(&rows[0].after).expect("json");
    assert_eq!(after["returned"], PRICE);
    let (_, body) = root.get("/api/task/").await;
    assert_eq!(body["data"]["items"][0]["refunded"], true);
}

#[tokio::test]
async fn metrics_show_tasks_by_state_and_the_poller_lag() {
    let bed = TaskBed::of(QUOTA, &[TaskKind::Midjourney]).await;
    let (server, mock) = (&bed.server, &bed.mock);
    let ch = bed.channels[0];
    mock.json(
        "/mj/task/list-by-condition",
        200,
        json!([{"id": "mj-m", "status": "SUCCESS", "progress": "100%"}]),
    );
    let task = bed.charged_task(TaskKind::Midjourney, ch, "mj-m", now_unix(), "0%", PRICE);
    finished(server, task.id).await;
    let base = server.metrics_base.clone().expect("metrics listener");
    let mut text = String::new();
    for _ in 0..100 {
        text = reqwest::get(format!("{base}/metrics"))
            .await
            .expect("scrape")
            .text()
            .await
            .expect("text");
        if text.contains(r#"tollgate_tasks{list="mj",state="SUCCESS"} 1"#) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        text.contains(r#"tollgate_tasks{list="mj",state="SUCCESS"} 1"#),
        "{text}"
    );
    assert!(text.contains("tollgate_task_poll_lag_seconds 0"), "{text}");
}

#[tokio::test]
async fn a_refunded_task_frees_the_budget_windows_it_had_used() {
    let bed = TaskBed::of(QUOTA, &[TaskKind::Suno]).await;
    bed.mock.json(
        "/suno/fetch",
        200,
        json!({"code": "success", "data": [{"task_id": "song-b", "status": "SUCCESS",
               "data": [{"audio_url": "https://cdn.example/b.mp3"}]}]}),
    );
    let task = bed.charged_task(
        TaskKind::Suno,
        bed.channels[0],
        "song-b",
        now_unix(),
        "",
        PRICE,
    );
    let TaskBed {
        server,
        root,
        payer,
        token,
        ..
    } = bed;
    finished(&server, task.id).await;
    // Budgets set after the charge: the user's and the key's books load the stored spend.
    let window = json!({"windows": [{"period": "month", "rolling": true, "limit": 10 * PRICE}]});
    let user_budget = format!("/api/user/{}/budget", payer.id);
    let key_budget = format!("/api/token/{}/budget", token.0);
    let (status, body) = root.put(&user_budget, window.clone()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["windows"][0]["spent"], json!(PRICE), "{body}");
    let (status, body) = payer.put(&key_budget, window).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["windows"][0]["spent"], json!(PRICE), "{body}");

    let (status, body) = root
        .post(&format!("/api/task/{}/refund", task.id), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    for (who, path) in [(&root, &user_budget), (&payer, &key_budget)] {
        let (_, body) = who.get(path).await;
        assert_eq!(
            body["data"]["windows"][0]["spent"],
            json!(0),
            "the refund frees the window in memory: {path} {body}"
        );
    }

    // And in storage: a restart rebuilds the windows without the refunded charge.
    let dir = server.stop().await;
    let server = TestServer::start_in(dir).await;
    let root = server
        .client_for(common::ROOT_USER, common::ROOT_PASS)
        .await;
    let payer = server.client_for("payer", "password1").await;
    for (who, path) in [(&root, &user_budget), (&payer, &key_budget)] {
        let (_, body) = who.get(path).await;
        assert_eq!(
            body["data"]["windows"][0]["spent"],
            json!(0),
            "the refund frees the window in storage: {path} {body}"
        );
    }
}
