//! After `tollgate import new-api`, what the incumbent was still doing carries on here: a user
//! who signed in there with OIDC signs in with the same account (the subject bound with the
//! imported configuration's issuer), a drawing in flight is polled to its end by Tollgate's
//! poller on the imported channel, an old key pays a chat on the imported multi-key channel
//! (never with the key new-api had disabled) and the books still balance, and the drawing and
//! task logs show the users' history (an unfinished task of a platform Tollgate does not poll
//! marked failed, not refunded).
//!
//! The fixture is tests/fixtures/newapi/newapi.db; its copy gets the addresses of this test's
//! mock OIDC provider and Midjourney-proxy, as the incumbent's own configuration names them, and
//! its drawing in flight a submit time of now.

#![expect(
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail the test loudly"
)]

mod common;

use std::path::Path;
use std::time::Duration;

use common::books::assert_books;
use common::import_fixture::{args, import, source_copy, values};
use common::mock_json::MockJson;
use common::mock_upstream::MockUpstream;
use common::oauth_browser::Browser;
use common::oidc_provider::{Account, CLIENT_ID, CLIENT_SECRET, OidcProvider};
use common::{Actor, TestServer, relay_fixture};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::{Connection, SqliteConnection};
use tollgate::config::ImportArgs;

/// The drawing bob still waits for at the incumbent.
const IN_FLIGHT: &str = "1700000000002";

/// Points the source's OIDC configuration at `idp`, its OpenAI channel at `openai` and its
/// Midjourney channel at `mj`, and makes the drawing in flight one submitted now (in
/// milliseconds, as new-api stores it).
async fn as_running_incumbent(source: &Path, idp: &OidcProvider, openai: &str, mj: &str) {
    let mut db = SqliteConnection::connect(&format!("sqlite://{}", source.display()))
        .await
        .expect("open the source copy");
    for (key, value) in [
        ("oidc.well_known", idp.well_known()),
        ("oidc.client_id", CLIENT_ID.to_owned()),
        ("oidc.client_secret", CLIENT_SECRET.to_owned()),
    ] {
        sqlx::query("UPDATE `options` SET `value` = ? WHERE `key` = ?")
            .bind(value)
            .bind(key)
            .execute(&mut db)
            .await
            .expect("option");
    }
    for (id, base) in [(1, openai), (2, mj)] {
        sqlx::query("UPDATE `channels` SET `base_url` = ? WHERE `id` = ?")
            .bind(base)
            .bind(id)
            .execute(&mut db)
            .await
            .expect("channel");
    }
    sqlx::query("UPDATE `midjourneys` SET `submit_time` = ? WHERE `mj_id` = ?")
        .bind(tollgate::clock::now_unix() * 1000)
        .bind(IN_FLIGHT)
        .execute(&mut db)
        .await
        .expect("drawing");
    db.close().await.expect("closed");
}

/// The item of `list` (a drawing or task list answer) whose `field` is `id`.
fn item<'a>(list: &'a Value, field: &str, id: &str) -> &'a Value {
    list["data"]["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i[field] == id)
        .unwrap_or_else(|| panic!("{id} not in {list}"))
}

/// Waits (every 20 ms, up to 5 s) until bob's drawing in flight has finished; its list item.
async fn finished_drawing(bob: &Actor) -> Value {
    for _ in 0..250 {
        let (_, list) = bob.get("/api/mj/self/?p=1&page_size=10").await;
        let drawing = item(&list, "mj_id", IN_FLIGHT).clone();
        if drawing["status"] == "SUCCESS" || drawing["status"] == "FAILURE" {
            return drawing;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the imported drawing in flight was never polled to its end");
}

#[tokio::test]
async fn oidc_users_sign_in_and_the_drawing_in_flight_is_polled_to_its_end() {
    let values = values();
    let idp = OidcProvider::start().await;
    let mj = MockJson::start().await;
    mj.answer(
        "/mj/task/list-by-condition",
        200,
        json!([{"id": IN_FLIGHT, "action": "IMAGINE", "status": "SUCCESS", "progress": "100%",
                "imageUrl": "https://cdn.example/done.png", "promptEn": "a cat"}]),
    );
    let upstream = MockUpstream::start().await;
    // The multi-key channel's second key was disabled at the incumbent: never sent.
    upstream.accept_keys(&["sk-upstream-one", "sk-upstream-three"]);
    let (_src, source) = source_copy();
    as_running_incumbent(&source, &idp, &upstream.base, &mj.base).await;
    let dir = tempfile::tempdir().expect("dir");
    let report = import(
        dir.path(),
        ImportArgs {
            with_logs: false,
            ..args(&source)
        },
    )
    .await
    .expect("imports");
    assert!(
        !report.contains("user 3 (bob): OIDC"),
        "bob's subject is bound, not listed:\n{report}"
    );
    let server = TestServer::start_with(dir, |c| c.task_poll_interval_ms = 50).await;
    let bob = server
        .client_for("bob", values["bob"]["password"].as_str().expect("pass"))
        .await;

    // The poller took the drawing over: asked the imported channel with its key, kept the charge.
    let drawing = finished_drawing(&bob).await;
    assert_eq!(drawing["status"], "SUCCESS", "{drawing}");
    assert_eq!(drawing["image_url"], "https://cdn.example/done.png");
    assert!(
        mj.calls()
            .iter()
            .any(|c| c.uri == "/mj/task/list-by-condition"),
        "the imported channel was asked"
    );
    assert_books(&server, 3).await;

    // Alice's old key pays a chat on the imported channel; the books still balance.
    let alice_key = format!("sk-{}", values["keys"]["alice"].as_str().expect("key"));
    for _ in 0..3 {
        let (status, body) = relay_fixture::chat(
            &server,
            &alice_key,
            json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    assert_ne!(upstream.last_key().as_deref(), Some("sk-upstream-two"));
    server.flush().await;
    let used = server
        .store()
        .read_blocking(|rtx| tollgate_storage::users::get(rtx, tollgate_storage::UserId(2)))
        .expect("read")
        .expect("alice")
        .used_quota
        .0;
    assert!(used > 12_345, "the chats were charged: {used}");
    assert_books(&server, 2).await;

    // Bob's task log: the song, the video (under the id new-api gave his client) and the Kling
    // video marked failed, not refunded; no upstream key anywhere.
    let (status, tasks) = bob.get("/api/task/self?p=1&page_size=10").await;
    assert_eq!(status, StatusCode::OK, "{tasks}");
    assert_eq!(tasks["data"]["total"], 3, "{tasks}");
    let kling = item(&tasks, "task_id", "task_kling1");
    assert_eq!(kling["status"], "FAILURE");
    assert!(
        kling["fail_reason"]
            .as_str()
            .is_some_and(|r| r.contains("unfinished at the import")),
        "{kling}"
    );
    let video = item(&tasks, "task_id", "task_vid1");
    assert_eq!(video["status"], "SUCCESS", "{video}");
    assert!(!tasks.to_string().contains("sk-private-upstream-key"));

    // Alice's drawings, as root's drawing log shows them (the failed one refunded there).
    let root = server
        .login(
            values["root"]["username"].as_str().expect("name"),
            values["root"]["password"].as_str().expect("pass"),
        )
        .await;
    let (_, all) = server.get_as(root, "/api/mj/?p=1&page_size=10").await;
    assert_eq!(all["data"]["total"], 3, "{all}");
    assert_eq!(
        item(&all, "mj_id", "1700000000001")["fail_reason"],
        "banned prompt"
    );

    // Bob's OIDC account signs him in; another subject does not become bob (and registration,
    // closed at the incumbent, stays closed).
    server
        .set_option_as(root, "ServerAddress", &server.base.clone())
        .await;
    idp.sign_in_as(Account::new("sub-bob", "bob-at-idp", "bob@example.com"));
    let (status, body) = Browser::guest(&server).sign_in("oidc", "").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["id"], 3, "the same account: {body}");
    idp.sign_in_as(Account::new("sub-mallory", "bob", "bob@example.com"));
    let (_, body) = Browser::guest(&server).sign_in("oidc", "").await;
    assert_ne!(body["data"]["id"], 3, "{body}");
}
