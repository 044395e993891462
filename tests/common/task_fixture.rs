//! The task tests' bed (tests/task_relay.rs, tests/task_poll.rs): a server polling tasks every
//! 50 ms, a mock task upstream ([`MockTasks`]) with channels on it, root, a payer with a key
//! ([`TaskBed`]), and the requests and readings those tests share: submits in each family's
//! auth, a user's stored tasks, a channel's used quota, a second user's key, a task charged
//! from the harness.
#![expect(
    clippy::expect_used,
    reason = "a harness failure must fail the test loudly"
)]

use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tollgate::Config;
use tollgate::outbound::Overrides;
use tollgate_storage::logs::{LOG_CONSUME, LogEntry};
use tollgate_storage::tasks::{self, List, SUBMITTED, Task, TaskKind, query};
use tollgate_storage::usage::BalanceChange;
use tollgate_storage::{ChannelId, TokenId, UserId, channel_usage};

use super::mock_tasks::MockTasks;
use super::relay_fixture::{fixture, new_key};
use super::{Actor, TestServer};

/// The task tests' configuration: tasks polled every 50 ms, `/metrics` on a listener of its
/// own, and `images.test` resolving to 127.0.0.1 and trusted (the image proxy's upstream).
pub fn tune(c: &mut Config) {
    let overrides = Overrides {
        hosts: [(
            "images.test".to_owned(),
            vec!["127.0.0.1".parse().expect("ip")],
        )]
        .into_iter()
        .collect(),
        trusted: vec!["images.test".to_owned()],
    };
    c.task_poll_interval_ms = 50;
    c.metrics_listen = Some("127.0.0.1:0".parse().expect("addr"));
    c.outbound_overrides = Arc::new(overrides);
}

/// A channel body of type `ty` (2 Midjourney, 36 Suno, 1 OpenAI videos) on `mock` serving
/// `models`, key `task-secret`, named `t{ty}`.
pub fn channel_on(mock: &MockTasks, ty: i32, models: &str) -> Value {
    json!({"name": format!("t{ty}"), "type": ty, "key": "task-secret", "base_url": mock.base,
           "models": models, "group": "default"})
}

/// The channel type and priced model of `kind`'s tasks.
pub fn type_of(kind: TaskKind) -> (i32, &'static str) {
    match kind {
        TaskKind::Midjourney => (2, "mj_imagine"),
        TaskKind::Suno => (36, "suno_music"),
        TaskKind::Video => (1, "sora-2"),
    }
}

/// POSTs JSON `body` to `path` with `key` in `mj-api-secret` (no Authorization).
pub async fn mj_post(
    server: &TestServer,
    key: &str,
    path: &str,
    body: Value,
) -> (StatusCode, Value) {
    let req = server.client.post(server.url(path));
    server
        .send(req.header("mj-api-secret", key).json(&body))
        .await
}

/// POSTs JSON `body` to `path` with `key` as a Bearer key (Suno, videos).
pub async fn bearer_post(
    server: &TestServer,
    key: &str,
    path: &str,
    body: Value,
) -> (StatusCode, Value) {
    let req = server.client.post(server.url(path));
    server.send(req.bearer_auth(key).json(&body)).await
}

/// GETs `path` with `key` as a Bearer key.
pub async fn get_key(server: &TestServer, key: &str, path: &str) -> (StatusCode, Value) {
    server
        .send(server.client.get(server.url(path)).bearer_auth(key))
        .await
}

/// The tasks of `list` of `user` in storage, newest first.
pub fn stored(server: &TestServer, user: i64, list: List) -> Vec<Task> {
    let filter = query::TaskFilter {
        user: Some(UserId(user)),
        ..query::TaskFilter::default()
    };
    server
        .store()
        .read_blocking(move |rtx| query::page(rtx, list, &filter, 0, 100))
        .expect("read")
        .0
}

/// The used quota of channel `id` (the sum of its consume rows).
pub fn channel_used(server: &TestServer, id: i64) -> i64 {
    server
        .store()
        .read_blocking(|rtx| channel_usage::used(rtx, ChannelId(id)))
        .expect("read")
        .0
}

/// A second user, "other", with `quota` and a key of the same limit; returns the key.
pub async fn other_key(server: &TestServer, root: &Actor, quota: i64) -> String {
    server.create_user(root, "other", "password1").await;
    let other = server.client_for("other", "password1").await;
    let (status, body) = root
        .put("/api/user/", json!({"id": other.id, "quota": quota}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    new_key(&other, quota, json!({})).await
}

/// A running bed: the server, its mock upstream, root, and the payer with a key.
pub struct TaskBed {
    /// The server ([`tune`]d).
    pub server: TestServer,
    /// The upstream the bed's channels point at.
    pub mock: MockTasks,
    /// Root.
    pub root: Actor,
    /// The paying user.
    pub payer: Actor,
    /// The payer's key (its limit the payer's starting quota).
    pub key: String,
    /// That key's id.
    pub token: TokenId,
    /// The ids of the channels made at start, in the order given.
    pub channels: Vec<i64>,
}

impl TaskBed {
    /// A bed whose payer has `quota` (and a key of the same limit), with channels of type `ty`
    /// serving `models` on a new mock, one per `(ty, models)`.
    pub async fn start(quota: i64, channels: &[(i32, &str)]) -> TaskBed {
        let mock = MockTasks::start().await;
        let bodies: Vec<Value> = channels
            .iter()
            .map(|(ty, models)| channel_on(&mock, *ty, models))
            .collect();
        TaskBed::on(mock, quota, quota, &bodies).await
    }

    /// A bed with one channel for each of `kinds` (its type and priced model, [`type_of`]).
    pub async fn of(quota: i64, kinds: &[TaskKind]) -> TaskBed {
        let channels: Vec<(i32, &str)> = kinds.iter().map(|k| type_of(*k)).collect();
        TaskBed::start(quota, &channels).await
    }

    /// A bed on `mock` whose payer has `quota` and a key limited to `key_quota`, with the
    /// channels of JSON `bodies` (made with [`channel_on`], on `mock` or another mock).
    pub async fn on(mock: MockTasks, quota: i64, key_quota: i64, bodies: &[Value]) -> TaskBed {
        let server = TestServer::start_with(tempfile::tempdir().expect("tempdir"), tune).await;
        let (root, payer, key) = fixture(&server, bodies, quota, key_quota).await;
        let (_, list) = root.get("/api/channel/?p=1&page_size=100").await;
        let mut channels: Vec<i64> = list["data"]["items"]
            .as_array()
            .expect("channels")
            .iter()
            .filter_map(|c| c["id"].as_i64())
            .collect();
        channels.sort_unstable();
        let (_, tokens) = payer.get("/api/token/?p=1&size=10").await;
        let token = TokenId(tokens["data"]["items"][0]["id"].as_i64().expect("token id"));
        TaskBed {
            server,
            mock,
            root,
            payer,
            key,
            token,
            channels,
        }
    }

    /// The bed taken apart: (server, mock, root, payer, key).
    pub fn parts(self) -> (TestServer, MockTasks, Actor, Actor, String) {
        (self.server, self.mock, self.root, self.payer, self.key)
    }

    /// A submitted task of `kind` on `channel`, upstream id `upstream_id`, submitted at
    /// `submitted_at` at `progress`, charged `price` to the payer and their key with its consume
    /// row, as a submit's settlement writes them (written from the harness: the in-memory quota
    /// ledger does not hear of it).
    pub fn charged_task(
        &self,
        kind: TaskKind,
        channel: i64,
        upstream_id: &str,
        submitted_at: i64,
        progress: &str,
        price: i64,
    ) -> Task {
        let (_, model) = type_of(kind);
        let (action, platform) = match kind {
            TaskKind::Midjourney => ("IMAGINE", "midjourney"),
            TaskKind::Suno => ("MUSIC", "suno"),
            TaskKind::Video => ("GENERATE", "openai"),
        };
        let user = UserId(self.payer.id);
        let task = Task {
            kind,
            platform: platform.into(),
            user_id: user,
            token_id: Some(self.token),
            token_name: "k".into(),
            username: "payer".into(),
            group: "default".into(),
            model_name: model.into(),
            channel_id: ChannelId(channel),
            action: action.into(),
            upstream_id: upstream_id.into(),
            code: 1,
            status: SUBMITTED.into(),
            progress: progress.into(),
            prompt: "a cat".into(),
            created_at: submitted_at,
            submit_time: submitted_at,
            ..Task::default()
        };
        let change = BalanceChange {
            user_id: user,
            token_id: Some(self.token),
            charged: price,
            is_request: true,
            at: submitted_at,
        };
        let log = LogEntry {
            created_at: submitted_at,
            log_type: LOG_CONSUME,
            user_id: user,
            username: "payer".into(),
            token_id: self.token.0,
            token_name: "k".into(),
            model_name: model.into(),
            channel_id: channel,
            group: "default".into(),
            ..LogEntry::default()
        };
        self.server
            .store()
            .write_blocking(|wtx| tasks::insert_charged(wtx, task, change, log))
            .expect("insert task")
    }
}
