//! Tollgate's set-up and its books, through the public HTTP API only (as an operator would):
//! first-run setup, root login, one OpenAI channel on the mock, LogConsumeEnabled on, a user
//! "bench" with quota and one key; afterwards the consume logs and the user's balance.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Quota given to the bench user (never runs out in a run).
pub const BENCH_QUOTA: i64 = 1_000_000_000_000;

/// A logged-in console session.
pub struct Console {
    client: reqwest::Client,
    base: String,
    user: i64,
}

impl Console {
    /// Logs in as `username`.
    pub async fn login(base: &str, username: &str, password: &str) -> Result<Console, String> {
        let client = reqwest::Client::builder()
            .cookie_store(true)
            .build()
            .map_err(|e| e.to_string())?;
        let mut c = Console {
            client,
            base: base.to_owned(),
            user: 0,
        };
        let body = c
            .call(
                reqwest::Method::POST,
                "/api/user/login",
                Some(json!({"username": username, "password": password})),
            )
            .await?;
        c.user = body["data"]["id"].as_i64().ok_or("login: no id")?;
        Ok(c)
    }

    /// One console call; fails unless `success` is true.
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, String> {
        let mut req = self
            .client
            .request(method, format!("{}{path}", self.base))
            .header("New-Api-User", self.user.to_string());
        if let Some(body) = body {
            req = req.json(&body);
        }
        let resp = req.send().await.map_err(|e| format!("{path}: {e}"))?;
        let v: Value = resp.json().await.map_err(|e| format!("{path}: {e}"))?;
        if v["success"] != true {
            return Err(format!("{path}: {v}"));
        }
        Ok(v)
    }
}

/// Waits for Tollgate to answer, sets it up and returns the root's and the bench user's
/// sessions and the bench user's full key.
pub async fn prepare(base: &str, mock: &str) -> Result<(Console, Console, String), String> {
    let started = Instant::now();
    while reqwest::get(format!("{base}/api/status")).await.is_err() {
        if started.elapsed() > Duration::from_secs(30) {
            return Err("Tollgate did not start within 30 s".into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pass = "bench-password-1";
    let setup = json!({"username": "root", "password": pass, "confirmPassword": pass});
    let resp = reqwest::Client::new()
        .post(format!("{base}/api/setup"))
        .json(&setup)
        .send()
        .await;
    resp.map_err(|e| format!("setup: {e}"))?;
    let root = Console::login(base, "root", pass).await?;
    use reqwest::Method as M;
    let channel = json!({"name": "mock", "type": 1, "key": "mock-key", "base_url": mock,
        "models": "gpt-4o-mini,bench-slow,bench-long", "group": "default"});
    root.call(M::POST, "/api/channel/", Some(channel)).await?;
    root.call(
        M::PUT,
        "/api/option/",
        Some(json!({"key": "LogConsumeEnabled", "value": "true"})),
    )
    .await?;
    root.call(
        M::PUT,
        "/api/option/",
        Some(
            json!({"key": "ModelRatio", "value": r#"{"gpt-4o-mini": 0.075, "bench-slow": 0.075, "bench-long": 0.075}"#}),
        ),
    )
    .await?;
    let user = root
        .call(
            M::POST,
            "/api/user/",
            Some(json!({"username": "bench", "password": pass})),
        )
        .await?;
    let id = user["data"]["id"].as_i64().ok_or("user id")?;
    root.call(
        M::PUT,
        "/api/user/",
        Some(json!({"id": id, "quota": BENCH_QUOTA})),
    )
    .await?;
    let bench = Console::login(base, "bench", pass).await?;
    let token = bench
        .call(
            M::POST,
            "/api/token/",
            Some(json!({"name": "bench", "unlimited_quota": true})),
        )
        .await?;
    let tid = token["data"]["id"].as_i64().ok_or("token id")?;
    let key = bench
        .call(M::POST, &format!("/api/token/{tid}/key"), Some(json!({})))
        .await?;
    let key = key["data"]["key"].as_str().ok_or("key")?.to_owned();
    Ok((root, bench, key))
}

/// The books after the run: (requests counted on the user, quota used, consume log rows, their
/// quota sum).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Books {
    /// The user's request count.
    pub requests: i64,
    /// The user's used quota.
    pub used: i64,
    /// The user's remaining quota.
    pub remaining: i64,
    /// Consume log rows.
    pub log_rows: i64,
    /// Quota of the consume log rows.
    pub log_quota: i64,
}

/// Reads the books once settlements have stopped moving (at most 30 s).
pub async fn books(bench: &Console) -> Result<Books, String> {
    let mut last: Option<Books> = None;
    let started = Instant::now();
    loop {
        use reqwest::Method as M;
        let me = bench.call(M::GET, "/api/user/self", None).await?;
        let page = bench
            .call(M::GET, "/api/log/self/?type=2&p=1&page_size=1", None)
            .await?;
        let stat = bench
            .call(M::GET, "/api/log/self/stat?type=2", None)
            .await?;
        let now = Books {
            requests: me["data"]["request_count"].as_i64().unwrap_or(-1),
            used: me["data"]["used_quota"].as_i64().unwrap_or(-1),
            remaining: me["data"]["quota"].as_i64().unwrap_or(-1),
            log_rows: page["data"]["total"].as_i64().unwrap_or(-1),
            log_quota: stat["data"]["quota"].as_i64().unwrap_or(-1),
        };
        if last == Some(now) && now.requests == now.log_rows
            || started.elapsed() > Duration::from_secs(30)
        {
            return Ok(now);
        }
        last = Some(now);
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
