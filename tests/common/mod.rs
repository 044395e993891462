//! Test harness: the real server in-process on 127.0.0.1:0 with a temporary database.
#![allow(
    dead_code,
    reason = "each test binary uses a different subset of the harness"
)]
#![expect(
    clippy::expect_used,
    reason = "a harness failure must fail the test loudly"
)]

pub mod books;
pub mod cloud_auth;
pub mod fault;
pub mod faulty_disk;
pub mod import_fixture;
pub mod limits_fixture;
pub mod log_capture;
pub mod mock_anthropic;
pub mod mock_audio;
pub mod mock_baidu;
pub mod mock_cloud;
pub mod mock_compatible;
pub mod mock_coze;
pub mod mock_dify;
pub mod mock_gemini;
pub mod mock_hunyuan;
pub mod mock_json;
pub mod mock_scripted;
pub mod mock_spark;
pub mod mock_tasks;
pub mod mock_upstream;
pub mod oauth_browser;
pub mod oidc_provider;
pub mod relay_fixture;
pub mod smtp;
pub mod socks;
pub mod sql_servers;
pub mod task_fixture;
pub mod two_factor;
pub mod webhook;

use std::path::Path;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tollgate::{App, Config, StartupError};
use tollgate_actors::channel_pool::ChannelPool;
use tollgate_actors::quota::QuotaBook;
use tollgate_actors::storage_health::StorageFault;
use tollgate_storage::store::BackendWrap;
use tollgate_storage::users::{self, NewUser};
use tollgate_storage::{Quota, Store};

/// Root credentials every test uses.
pub const ROOT_USER: &str = "root";
/// Root password every test uses.
pub const ROOT_PASS: &str = "password123";

/// A running Tollgate with its own data directory.
pub struct TestServer {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// `http://<addr>` of the `--metrics-listen` listener, when configured.
    pub metrics_base: Option<String>,
    /// Client with a cookie store (keeps the session).
    pub client: reqwest::Client,
    /// The data directory (kept alive as long as the server).
    pub dir: TempDir,
    /// The server's database handle (for consistency checks; writes go through HTTP); dropped
    /// at shutdown so the file is closed.
    store: Option<Store>,
    /// The server's channel pool (to trigger the auto-enable re-test without waiting).
    pool: Option<ChannelPool>,
    /// The server's quota book (to wait for settlements to be committed); dropped at shutdown
    /// so the log writer can finish.
    quota: Option<QuotaBook>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<(), StartupError>>>,
}

impl TestServer {
    /// Starts a server on a fresh data directory.
    pub async fn start() -> TestServer {
        TestServer::start_in(tempfile::tempdir().expect("tempdir")).await
    }

    /// Starts a server on `dir` (e.g. the directory of a stopped server, to test restarts).
    pub async fn start_in(dir: TempDir) -> TestServer {
        TestServer::start_with(dir, |_| {}).await
    }

    /// Starts a server on `dir` with a configuration adjusted by `tune`.
    pub async fn start_with(dir: TempDir, tune: impl FnOnce(&mut Config)) -> TestServer {
        TestServer::start_on(dir, tune, None).await
    }

    /// Starts a server on `dir` whose database file backend is wrapped by `wrap` (storage
    /// fault injection).
    pub async fn start_on(
        dir: TempDir,
        tune: impl FnOnce(&mut Config),
        wrap: Option<BackendWrap>,
    ) -> TestServer {
        let mut config = Config::for_data_dir(dir.path());
        tune(&mut config);
        let app = App::build_on(config, wrap).await.expect("server builds");
        let addr = app.local_addr().expect("bound");
        let metrics_base = app.metrics_addr().map(|a| format!("http://{a}"));
        let store = app.state().store.clone();
        let pool = app.state().channel_pool.clone();
        let quota = app.state().quota.clone();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(app.serve(async move {
            let _ = stopped.await;
        }));
        TestServer {
            base: format!("http://{addr}"),
            metrics_base,
            client: new_client(),
            dir,
            store: Some(store),
            pool: Some(pool),
            quota: Some(quota),
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Stops gracefully and hands back the data directory.
    pub async fn stop(mut self) -> TempDir {
        self.shutdown().await;
        let dir = tempfile::tempdir().expect("tempdir");
        std::mem::replace(&mut self.dir, dir)
    }

    /// The running server's database handle.
    pub fn store(&self) -> &Store {
        self.store.as_ref().expect("the server is running")
    }

    /// The running server's channel pool.
    pub fn pool(&self) -> &ChannelPool {
        self.pool.as_ref().expect("the server is running")
    }

    /// Waits until every settlement so far is committed to the database.
    pub async fn flush(&self) {
        self.try_flush().await.expect("settlements committed");
    }

    /// Like [`TestServer::flush`], with the storage fault when a commit failed.
    pub async fn try_flush(&self) -> Result<(), StorageFault> {
        self.quota
            .as_ref()
            .expect("the server is running")
            .flush()
            .await
    }

    /// Signals shutdown and waits for the server to finish.
    pub async fn shutdown(&mut self) {
        self.store = None;
        self.pool = None;
        self.quota = None;
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await
                .expect("server task")
                .expect("server stops cleanly");
        }
    }

    /// Absolute URL of `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Path of the data directory.
    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    /// GET returning status and JSON body.
    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.send(self.client.get(self.url(path))).await
    }

    /// POST JSON returning status and JSON body.
    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(self.client.post(self.url(path)).json(&body))
            .await
    }

    /// Sends a request and decodes the JSON answer.
    pub async fn send(&self, req: reqwest::RequestBuilder) -> (StatusCode, Value) {
        let resp = req.send().await.expect("request sent");
        let status = resp.status();
        let text = resp.text().await.expect("body");
        let body = serde_json::from_str(&text).unwrap_or_else(|_| json!({ "raw": text }));
        (status, body)
    }

    /// Completes setup with the standard root credentials.
    pub async fn setup_root(&self) {
        let (status, body) = self
            .post(
                "/api/setup",
                json!({"username": ROOT_USER, "password": ROOT_PASS, "confirmPassword": ROOT_PASS}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "setup: {body}");
        assert_eq!(body["success"], true, "setup: {body}");
    }

    /// A data directory whose server was set up with the standard root credentials and then
    /// stopped: for a server that must start with a configuration under which setup needs the
    /// one-time token (e.g. behind trusted proxies).
    pub async fn set_up_dir() -> TempDir {
        let server = TestServer::start().await;
        server.setup_root().await;
        server.stop().await
    }

    /// Logs in with this server's client (the cookie is kept) and returns the user id.
    pub async fn login(&self, username: &str, password: &str) -> i64 {
        let (status, body) = self
            .post(
                "/api/user/login",
                json!({"username": username, "password": password}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "login: {body}");
        body["data"]["id"].as_i64().expect("user id")
    }

    /// Setup + root login; returns root's id.
    pub async fn root(&self) -> i64 {
        self.setup_root().await;
        self.login(ROOT_USER, ROOT_PASS).await
    }

    /// GET as `user_id` (session cookie + New-Api-User header).
    pub async fn get_as(&self, user_id: i64, path: &str) -> (StatusCode, Value) {
        self.send(
            self.client
                .get(self.url(path))
                .header("New-Api-User", user_id.to_string()),
        )
        .await
    }

    /// POST JSON as `user_id`.
    pub async fn post_as(&self, user_id: i64, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(
            self.client
                .post(self.url(path))
                .header("New-Api-User", user_id.to_string())
                .json(&body),
        )
        .await
    }

    /// DELETE as `user_id`.
    pub async fn delete_as(&self, user_id: i64, path: &str) -> (StatusCode, Value) {
        self.send(
            self.client
                .delete(self.url(path))
                .header("New-Api-User", user_id.to_string()),
        )
        .await
    }

    /// Sets a runtime option as `user_id` (an admin).
    pub async fn set_option_as(&self, user_id: i64, key: &str, value: &str) {
        let (status, body) = self
            .put_as(user_id, "/api/option/", json!({"key": key, "value": value}))
            .await;
        assert_eq!(status, StatusCode::OK, "set {key}: {body}");
    }

    /// PUT JSON as `user_id`.
    pub async fn put_as(&self, user_id: i64, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(
            self.client
                .put(self.url(path))
                .header("New-Api-User", user_id.to_string())
                .json(&body),
        )
        .await
    }
}

impl TestServer {
    /// Logs in with a NEW client (its own cookies) and returns it with the user id.
    pub async fn client_for(&self, username: &str, password: &str) -> Actor {
        let client = new_client();
        let (status, body) = self
            .send(
                client
                    .post(self.url("/api/user/login"))
                    .json(&json!({"username": username, "password": password})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "login {username}: {body}");
        Actor {
            client,
            id: body["data"]["id"].as_i64().expect("id"),
            password: password.to_owned(),
            base: self.base.clone(),
        }
    }

    /// Creates a user through the admin API as `admin` and returns its id.
    pub async fn create_user(&self, admin: &Actor, username: &str, password: &str) -> i64 {
        let (status, body) = admin
            .post(
                "/api/user/",
                json!({"username": username, "password": password}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "create {username}: {body}");
        body["data"]["id"].as_i64().expect("id")
    }

    /// Saves an option as `admin`.
    pub async fn set_option(&self, admin: &Actor, key: &str, value: Value) {
        let (status, body) = admin
            .put("/api/option/", json!({"key": key, "value": value}))
            .await;
        assert_eq!(status, StatusCode::OK, "option {key}: {body}");
    }
}

/// A logged-in client: cookie session plus the `New-Api-User` header on every call.
#[derive(Clone)]
pub struct Actor {
    /// Client holding the session cookie.
    pub client: reqwest::Client,
    /// The user's id.
    pub id: i64,
    /// The user's password when the harness knows it ("" otherwise), for the actions that ask
    /// for it again (two-factor setup, account deletion).
    pub password: String,
    base: String,
}

impl Actor {
    /// A client with no session (it still sends `New-Api-User: 0`).
    pub fn guest(server: &TestServer) -> Actor {
        Actor {
            client: new_client(),
            id: 0,
            password: String::new(),
            base: server.base.clone(),
        }
    }

    fn req(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.base))
            .header("New-Api-User", self.id.to_string())
    }

    /// Sends `method path` with an optional JSON body.
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut req = self.req(method, path);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let resp = req.send().await.expect("sent");
        let status = resp.status();
        let text = resp.text().await.expect("body");
        (
            status,
            serde_json::from_str(&text).unwrap_or_else(|_| json!({ "raw": text })),
        )
    }

    /// GET.
    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.call(reqwest::Method::GET, path, None).await
    }

    /// POST JSON.
    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    /// PUT JSON.
    pub async fn put(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.call(reqwest::Method::PUT, path, Some(body)).await
    }

    /// DELETE.
    pub async fn delete(&self, path: &str) -> (StatusCode, Value) {
        self.call(reqwest::Method::DELETE, path, None).await
    }
}

/// Creates a user directly in the database of `dir` (before a server opens it).
pub async fn create_user(dir: &Path, username: &str, password: &str, role: i32) {
    let store = Store::open_dir(dir).expect("open");
    let hash = tollgate::console::service::password::Hasher::spawn()
        .expect("hashing thread")
        .hash(password.into())
        .await
        .expect("hash");
    let username = username.to_owned();
    store
        .write_blocking(move |wtx| {
            users::insert(
                wtx,
                NewUser {
                    username,
                    display_name: String::new(),
                    password_hash: hash,
                    email: String::new(),
                    role,
                    group: "default".into(),
                    quota: Quota(0),
                    aff_code: String::new(),
                    inviter_id: 0,
                    created_at: 0,
                },
            )
        })
        .expect("insert user");
}

/// A client with its own cookie store.
pub fn new_client() -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .expect("client")
}
