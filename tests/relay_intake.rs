//! The relay's intake (P16 item 4): a caller is authenticated and its balance checked before
//! any byte of its body is read, bodies are charged to the memory budget as they arrive, and a
//! slow body is cut at its read deadline, so slow uploads cannot stop other users. The uploads
//! here are raw HTTP/1.1 over TCP, so the test controls every byte that is sent.

mod common;

use std::time::Duration;

use common::mock_upstream::MockUpstream;
use common::relay_fixture::{fixture, new_key};
use common::{Actor, TestServer};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// What each slow upload announces: 128 MiB.
const ANNOUNCED: u64 = 128 * 1024 * 1024;

/// How long a test waits for an answer before calling the server stuck.
const ANSWER_WITHIN: Duration = Duration::from_secs(5);

fn channel(mock: &MockUpstream) -> Value {
    json!({"name": "mock", "type": 1, "key": "upstream-key-1", "base_url": mock.base,
           "models": "gpt-4o", "group": "default"})
}

/// A user `name` with `quota` and a key of it with `token_quota`.
async fn user_with_key(
    server: &TestServer,
    root: &Actor,
    name: &str,
    quota: i64,
    token_quota: i64,
) -> String {
    let id = server.create_user(root, name, "password1").await;
    let (status, body) = root
        .put("/api/user/", json!({"id": id, "quota": quota}))
        .await;
    assert_eq!(status, StatusCode::OK, "quota: {body}");
    let owner = server.client_for(name, "password1").await;
    new_key(&owner, token_quota, json!({})).await
}

/// An upload in progress over a raw connection.
struct Upload {
    /// The answer's status and body, once it came.
    answer: tokio::task::JoinHandle<Option<(u16, String)>>,
    /// Stops the trickle.
    trickle: tokio::task::JoinHandle<()>,
}

#[expect(
    clippy::expect_used,
    reason = "test helper: a failed connection fails the test"
)]
/// Starts a POST to `path` with `key`, announcing [`ANNOUNCED`] bytes of `content_type`: the
/// head, then `first`, then (when `every` is given) one byte at that pace until the answer.
async fn slow_upload(
    server: &TestServer,
    path: &str,
    key: &str,
    content_type: &str,
    first: Vec<u8>,
    every: Option<Duration>,
) -> Upload {
    let addr = server.base.trim_start_matches("http://").to_owned();
    let stream = TcpStream::connect(&addr).await.expect("connect");
    let (read, mut write) = stream.into_split();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: {content_type}\r\nContent-Length: {ANNOUNCED}\r\n\r\n"
    );
    write.write_all(head.as_bytes()).await.expect("head");
    if !first.is_empty() {
        write.write_all(&first).await.expect("first bytes");
    }
    let trickle = tokio::spawn(async move {
        let Some(every) = every else {
            // Keep the connection open without sending a byte.
            std::future::pending::<()>().await;
            return;
        };
        loop {
            tokio::time::sleep(every).await;
            if write.write_all(b"x").await.is_err() {
                return;
            }
        }
    });
    let answer = tokio::spawn(async move {
        tokio::time::timeout(ANSWER_WITHIN, read_answer(read))
            .await
            .ok()
            .flatten()
    });
    Upload { answer, trickle }
}

/// Reads an HTTP/1.1 answer: its status and body.
async fn read_answer(read: tokio::net::tcp::OwnedReadHalf) -> Option<(u16, String)> {
    let mut reader = BufReader::new(read);
    let mut line = String::new();
    reader.read_line(&mut line).await.ok()?;
    let status: u16 = line.split_whitespace().nth(1)?.parse().ok()?;
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).await.ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await.ok()?;
    Some((status, String::from_utf8_lossy(&body).into_owned()))
}

impl Upload {
    #[expect(clippy::expect_used, reason = "test helper: no answer fails the test")]
    async fn answer(self) -> (u16, Value) {
        let answer = self.answer.await.expect("joined");
        self.trickle.abort();
        let (status, body) = answer.expect("answered before the upload was finished");
        (status, serde_json::from_str(&body).unwrap_or(Value::Null))
    }
}

async fn small_chat(server: &TestServer, key: &str) -> (StatusCode, Value) {
    let body = json!({"model": "gpt-4o", "max_tokens": 10,
        "messages": [{"role": "user", "content": "x".repeat(1000)}]});
    server
        .send(
            server
                .client
                .post(server.url("/v1/chat/completions"))
                .bearer_auth(key)
                .json(&body),
        )
        .await
}

#[tokio::test]
async fn uploads_from_a_key_with_nothing_available_are_refused_before_a_byte_is_read() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((10, 10, 0)));
    let server = TestServer::start().await;
    let (root, _payer, funded) = fixture(&server, &[channel(&mock)], 1_000_000, 1_000_000).await;
    let broke = user_with_key(&server, &root, "broke", 0, 1_000_000).await;
    let exhausted = user_with_key(&server, &root, "spent", 1_000_000, 0).await;

    let mut uploads = Vec::new();
    for _ in 0..12 {
        uploads.push(
            slow_upload(
                &server,
                "/v1/chat/completions",
                &broke,
                "application/json",
                Vec::new(),
                None,
            )
            .await,
        );
    }
    let (status, body) = small_chat(&server, &funded).await;
    assert_eq!(status, StatusCode::OK, "another user is served: {body}");
    for upload in uploads {
        let (status, body) = upload.answer().await;
        assert_eq!(status, 403, "{body}");
        assert_eq!(body["error"]["code"], "insufficient_user_quota", "{body}");
    }

    let spent = slow_upload(
        &server,
        "/v1/chat/completions",
        &exhausted,
        "application/json",
        Vec::new(),
        None,
    )
    .await;
    let (status, body) = spent.answer().await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], "insufficient_token_quota", "{body}");

    let unknown = slow_upload(
        &server,
        "/v1/messages",
        "sk-unknown",
        "application/json",
        Vec::new(),
        None,
    )
    .await;
    let (status, body) = unknown.answer().await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["type"], "error", "in Anthropic's shape: {body}");

    let upload = slow_upload(
        &server,
        "/v1/audio/transcriptions",
        &broke,
        "multipart/form-data; boundary=b",
        Vec::new(),
        None,
    )
    .await;
    let (status, body) = upload.answer().await;
    assert_eq!(status, 403, "a multipart upload too: {body}");
    assert_eq!(
        mock.chat_calls(),
        1,
        "only the funded request reached the upstream"
    );
}

#[tokio::test]
async fn slow_uploads_from_a_funded_key_are_cut_at_their_deadline_while_others_are_served() {
    let mock = MockUpstream::start().await;
    mock.set_usage(Some((10, 10, 0)));
    let server = TestServer::start_with(tempfile::tempdir().expect("dir"), |config| {
        config.body_read_timeout_override = Some(Duration::from_millis(700));
    })
    .await;
    let (root, _payer, slow) = fixture(&server, &[channel(&mock)], 1_000_000, 1_000_000).await;
    let other = user_with_key(&server, &root, "other", 1_000_000, 1_000_000).await;

    let mut uploads = Vec::new();
    for _ in 0..12 {
        uploads.push(
            slow_upload(
                &server,
                "/v1/chat/completions",
                &slow,
                "application/json",
                b"{\"model\":\"gpt-4o\",".to_vec(),
                Some(Duration::from_millis(50)),
            )
            .await,
        );
    }
    let form_head = b"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.mp3\"\r\n\
        Content-Type: audio/mpeg\r\n\r\nID3"
        .to_vec();
    let multipart = slow_upload(
        &server,
        "/v1/audio/transcriptions",
        &slow,
        "multipart/form-data; boundary=b",
        form_head,
        Some(Duration::from_millis(50)),
    )
    .await;
    let (status, body) = small_chat(&server, &other).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "another user's request is served meanwhile: {body}"
    );
    for upload in uploads {
        let (status, body) = upload.answer().await;
        assert_eq!(status, 408, "{body}");
        assert_eq!(body["error"]["code"], "request_body_timeout", "{body}");
    }
    let (status, body) = multipart.answer().await;
    assert_eq!(status, 408, "the multipart upload too: {body}");
    assert_eq!(mock.chat_calls(), 1, "no cut body reached the upstream");

    // The shares came back: a key's share is the limit of what it has in flight.
    server
        .set_option(&root, "RelayBodyBudgetPerKeyMB", json!("1"))
        .await;
    let mut big = json!({"model": "gpt-4o", "max_tokens": 10,
        "messages": [{"role": "user", "content": "x".repeat(2 * 1024 * 1024)}]});
    let (status, body) = server
        .send(
            server
                .client
                .post(server.url("/v1/chat/completions"))
                .bearer_auth(&slow)
                .json(&big),
        )
        .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"]["code"], "request_body_share_exceeded");
    big["messages"][0]["content"] = json!("x".repeat(512 * 1024));
    let (status, body) = server
        .send(
            server
                .client
                .post(server.url("/v1/chat/completions"))
                .bearer_auth(&slow)
                .json(&big),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "within the share: {body}");
}
