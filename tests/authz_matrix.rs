//! The authorization matrix (issue #22 item 7): one row per declared route (method, path, who
//! may call it). A route declared in the code without a row here fails
//! `every_declared_route_has_a_row`; every row is then called by every kind of principal —
//! guest, user, admin, root, banned, deleted, a forged `New-Api-User`, a session that outlived a
//! role change, a system access token, and for the relay an API key (a live one, a banned
//! owner's, a deleted owner's, none) — and must be refused (401/403) exactly when the row says so.
//! Cross-user isolation of tokens, logs, top-ups, bindings and settings has its own test.

#![expect(
    clippy::expect_used,
    reason = "test helpers: a failed call fails the test"
)]

mod common;

use std::collections::BTreeSet;

use common::{Actor, ROOT_PASS, ROOT_USER, TestServer, new_client};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tollgate::http::api::Access;
use tollgate::http::api::Access::{Admin, ApiKey, Public, Root, User};

/// (method, path as declared, who may call it).
const MATRIX: &[(&str, &str, Access)] = &[
    ("post", "/api/user/register", Public),
    ("get", "/api/verification", Public),
    ("get", "/api/reset_password", Public),
    ("post", "/api/user/reset", Public),
    ("post", "/api/user/login", Public),
    ("post", "/api/user/login/2fa", Public),
    ("get", "/api/user/2fa/status", User),
    ("post", "/api/user/2fa/setup", User),
    ("post", "/api/user/2fa/enable", User),
    ("post", "/api/user/2fa/disable", User),
    ("post", "/api/user/2fa/backup_codes", User),
    ("post", "/api/verify", User),
    ("get", "/api/user/2fa/stats", Admin),
    ("delete", "/api/user/{id}/2fa", Admin),
    ("get", "/api/user/logout", Public),
    ("get", "/api/backup", Root),
    ("get", "/api/user/backup_tokens", Root),
    ("post", "/api/user/backup_tokens", Root),
    ("delete", "/api/user/backup_tokens/{id}", Root),
    ("get", "/api/channel/", Admin),
    ("post", "/api/channel/", Admin),
    ("put", "/api/channel/", Admin),
    ("get", "/api/channel/search", Admin),
    ("delete", "/api/channel/disabled", Admin),
    ("post", "/api/channel/batch", Admin),
    ("post", "/api/channel/fix", Admin),
    ("post", "/api/channel/copy/{id}", Admin),
    ("get", "/api/channel/{id}", Admin),
    ("delete", "/api/channel/{id}", Admin),
    ("delete", "/api/channel/{id}/", Admin),
    ("post", "/api/channel/{id}/key", Root),
    ("put", "/api/channel/tag", Admin),
    ("post", "/api/channel/tag/enabled", Admin),
    ("post", "/api/channel/tag/disabled", Admin),
    ("post", "/api/channel/batch/tag", Admin),
    ("get", "/api/channel/models", Admin),
    ("get", "/api/channel/models_enabled", Admin),
    ("post", "/api/channel/fetch_models", Admin),
    ("get", "/api/channel/types", Admin),
    ("get", "/api/channel/fetch_models/{id}", Admin),
    ("get", "/api/channel/test", Admin),
    ("get", "/api/channel/test/{id}", Admin),
    ("get", "/api/channel/test_proxy", Admin),
    ("post", "/api/channel/test_proxy", Admin),
    ("get", "/api/channel/update_balance", Admin),
    ("get", "/api/channel/update_balance/{id}", Admin),
    ("get", "/api/channel/update_balance/{id}/", Admin),
    ("get", "/api/group/", Admin),
    ("get", "/api/notice", Public),
    ("get", "/api/about", Public),
    ("get", "/api/home_page_content", Public),
    ("get", "/api/option/getModelProviders", Public),
    ("get", "/api/option/getCustomNavLinks", Public),
    ("get", "/api/option/getTypingList", Public),
    ("get", "/api/option/getAdvantages", Public),
    ("get", "/api/option/getModelDescriptions", Public),
    ("get", "/api/option/getImageReadProxy", Root),
    ("get", "/api/data/", Admin),
    ("get", "/api/data/users", Admin),
    ("get", "/api/data/self", User),
    ("get", "/api/data/self/", User),
    ("get", "/api/dashboard/cache_hit_rate", Admin),
    ("get", "/metrics", Root),
    ("get", "/api/audit", Root),
    ("get", "/api/health", Public),
    ("get", "/api/health/live", Public),
    ("get", "/api/log/", Admin),
    ("delete", "/api/log/", Root),
    ("get", "/api/log/stat", Admin),
    ("get", "/api/log/delete_progress", Admin),
    ("get", "/api/log/self", User),
    ("get", "/api/log/self/", User),
    ("get", "/api/log/self/stat", User),
    ("get", "/api/mj/", Admin),
    ("get", "/api/mj/self", User),
    ("get", "/api/mj/self/", User),
    ("get", "/api/task/", Admin),
    ("get", "/api/task/self", User),
    ("get", "/api/task/self/", User),
    ("post", "/api/task/{id}/refund", Admin),
    ("get", "/api/oauth/state", Public),
    ("get", "/api/oauth/telegram/login", Public),
    ("get", "/api/oauth/telegram/bind", User),
    ("get", "/api/oauth/wechat", Public),
    ("get", "/api/oauth/wechat/bind", User),
    ("get", "/api/oauth/{provider}", Public),
    ("post", "/api/option/oidc_discovery", Root),
    ("get", "/api/option/", Admin),
    ("put", "/api/option/", Root),
    ("get", "/api/user/self", User),
    ("put", "/api/user/self", User),
    ("delete", "/api/user/self", User),
    ("get", "/api/user/token", User),
    ("get", "/api/user/aff", User),
    ("post", "/api/user/aff_transfer", User),
    ("put", "/api/user/setting", User),
    ("get", "/api/user/self/groups", User),
    ("get", "/api/user/models", User),
    ("get", "/api/oauth/email/bind", User),
    ("get", "/api/pricing", Public),
    ("post", "/api/option/rest_model_ratio", Root),
    ("get", "/api/redemption/", Admin),
    ("post", "/api/redemption/", Admin),
    ("put", "/api/redemption/", Admin),
    ("get", "/api/redemption/search", Admin),
    ("delete", "/api/redemption/invalid", Admin),
    ("get", "/api/redemption/{id}", Admin),
    ("delete", "/api/redemption/{id}", Admin),
    ("delete", "/api/redemption/{id}/", Admin),
    ("get", "/api/setup", Public),
    ("post", "/api/setup", Public),
    ("get", "/api/status", Public),
    ("get", "/api/token/", User),
    ("post", "/api/token/", User),
    ("put", "/api/token/", User),
    ("get", "/api/token/search", User),
    ("get", "/api/token/{id}", User),
    ("delete", "/api/token/{id}", User),
    ("delete", "/api/token/{id}/", User),
    ("post", "/api/token/{id}/key", User),
    ("get", "/api/token/{id}/budget", User),
    ("put", "/api/token/{id}/budget", User),
    ("get", "/api/user/{id}/budget", Admin),
    ("put", "/api/user/{id}/budget", Admin),
    ("get", "/api/token/{id}/limits", User),
    ("put", "/api/token/{id}/limits", User),
    ("get", "/api/user/{id}/limits", Admin),
    ("put", "/api/user/{id}/limits", Admin),
    ("get", "/api/channel/{id}/limits", Admin),
    ("put", "/api/channel/{id}/limits", Admin),
    ("get", "/dashboard/billing/subscription", ApiKey),
    ("get", "/v1/dashboard/billing/subscription", ApiKey),
    ("get", "/dashboard/billing/usage", ApiKey),
    ("get", "/v1/dashboard/billing/usage", ApiKey),
    ("get", "/api/usage/token/", ApiKey),
    ("get", "/api/usage/token", ApiKey),
    ("get", "/api/user/topup", Admin),
    ("post", "/api/user/topup", User),
    ("get", "/api/user/topup/self", User),
    ("post", "/api/user/topup/complete", Root),
    ("post", "/api/user/amount", User),
    ("post", "/api/user/pay", User),
    ("get", "/api/user/epay/notify", Public),
    ("post", "/api/user/epay/notify", Public),
    ("get", "/api/user/", Admin),
    ("post", "/api/user/", Admin),
    ("put", "/api/user/", Admin),
    ("get", "/api/user/search", Admin),
    ("post", "/api/user/manage", Admin),
    ("get", "/api/user/{id}", Admin),
    ("post", "/v1/chat/completions", ApiKey),
    ("post", "/v1/completions", ApiKey),
    ("post", "/v1/embeddings", ApiKey),
    ("post", "/v1/moderations", ApiKey),
    ("post", "/v1/images/generations", ApiKey),
    ("post", "/v1/rerank", ApiKey),
    ("post", "/v1/responses", ApiKey),
    ("post", "/v1/audio/speech", ApiKey),
    ("post", "/v1/audio/transcriptions", ApiKey),
    ("post", "/v1/audio/translations", ApiKey),
    ("post", "/v1/messages", ApiKey),
    ("post", "/v1/messages/count_tokens", ApiKey),
    ("post", "/v1beta/models/{target}", ApiKey),
    ("post", "/pg/chat/completions", User),
    ("get", "/v1/models", ApiKey),
    ("get", "/v1/models/{model}", ApiKey),
    ("get", "/v1/files", Public),
    ("post", "/v1/files", Public),
    ("put", "/v1/files", Public),
    ("patch", "/v1/files", Public),
    ("delete", "/v1/files", Public),
    ("get", "/v1/files/{*rest}", Public),
    ("post", "/v1/files/{*rest}", Public),
    ("put", "/v1/files/{*rest}", Public),
    ("patch", "/v1/files/{*rest}", Public),
    ("delete", "/v1/files/{*rest}", Public),
    ("get", "/v1/fine_tuning/{*rest}", Public),
    ("post", "/v1/fine_tuning/{*rest}", Public),
    ("put", "/v1/fine_tuning/{*rest}", Public),
    ("patch", "/v1/fine_tuning/{*rest}", Public),
    ("delete", "/v1/fine_tuning/{*rest}", Public),
    ("get", "/v1/batches", Public),
    ("post", "/v1/batches", Public),
    ("put", "/v1/batches", Public),
    ("patch", "/v1/batches", Public),
    ("delete", "/v1/batches", Public),
    ("get", "/v1/batches/{*rest}", Public),
    ("post", "/v1/batches/{*rest}", Public),
    ("put", "/v1/batches/{*rest}", Public),
    ("patch", "/v1/batches/{*rest}", Public),
    ("delete", "/v1/batches/{*rest}", Public),
    ("get", "/v1/assistants", Public),
    ("post", "/v1/assistants", Public),
    ("put", "/v1/assistants", Public),
    ("patch", "/v1/assistants", Public),
    ("delete", "/v1/assistants", Public),
    ("get", "/v1/assistants/{*rest}", Public),
    ("post", "/v1/assistants/{*rest}", Public),
    ("put", "/v1/assistants/{*rest}", Public),
    ("patch", "/v1/assistants/{*rest}", Public),
    ("delete", "/v1/assistants/{*rest}", Public),
    ("get", "/v1/threads", Public),
    ("post", "/v1/threads", Public),
    ("put", "/v1/threads", Public),
    ("patch", "/v1/threads", Public),
    ("delete", "/v1/threads", Public),
    ("get", "/v1/threads/{*rest}", Public),
    ("post", "/v1/threads/{*rest}", Public),
    ("put", "/v1/threads/{*rest}", Public),
    ("patch", "/v1/threads/{*rest}", Public),
    ("delete", "/v1/threads/{*rest}", Public),
    // The task relays (Midjourney-proxy with its speed prefixes, Suno, OpenAI videos).
    ("post", "/mj/submit/imagine", ApiKey),
    ("post", "/mj/submit/change", ApiKey),
    ("post", "/mj/submit/simple-change", ApiKey),
    ("post", "/mj/submit/describe", ApiKey),
    ("post", "/mj/submit/blend", ApiKey),
    ("post", "/mj/submit/action", ApiKey),
    ("post", "/mj/submit/modal", ApiKey),
    ("post", "/mj/submit/shorten", ApiKey),
    ("post", "/mj/submit/upload-discord-images", ApiKey),
    ("post", "/mj/submit/edits", ApiKey),
    ("post", "/mj/submit/video", ApiKey),
    ("post", "/mj/insight-face/swap", ApiKey),
    ("get", "/mj/task/{id}/fetch", ApiKey),
    ("get", "/mj/task/{id}/image-seed", ApiKey),
    ("post", "/mj/task/list-by-condition", ApiKey),
    ("get", "/mj/image/{id}", Public),
    ("post", "/mj-fast/mj/submit/imagine", ApiKey),
    ("post", "/mj-fast/mj/submit/change", ApiKey),
    ("post", "/mj-fast/mj/submit/simple-change", ApiKey),
    ("post", "/mj-fast/mj/submit/describe", ApiKey),
    ("post", "/mj-fast/mj/submit/blend", ApiKey),
    ("post", "/mj-fast/mj/submit/action", ApiKey),
    ("post", "/mj-fast/mj/submit/modal", ApiKey),
    ("post", "/mj-fast/mj/submit/shorten", ApiKey),
    ("post", "/mj-fast/mj/submit/upload-discord-images", ApiKey),
    ("post", "/mj-fast/mj/submit/edits", ApiKey),
    ("post", "/mj-fast/mj/submit/video", ApiKey),
    ("post", "/mj-fast/mj/insight-face/swap", ApiKey),
    ("get", "/mj-fast/mj/task/{id}/fetch", ApiKey),
    ("get", "/mj-fast/mj/task/{id}/image-seed", ApiKey),
    ("post", "/mj-fast/mj/task/list-by-condition", ApiKey),
    ("get", "/mj-fast/mj/image/{id}", Public),
    ("post", "/mj-turbo/mj/submit/imagine", ApiKey),
    ("post", "/mj-turbo/mj/submit/change", ApiKey),
    ("post", "/mj-turbo/mj/submit/simple-change", ApiKey),
    ("post", "/mj-turbo/mj/submit/describe", ApiKey),
    ("post", "/mj-turbo/mj/submit/blend", ApiKey),
    ("post", "/mj-turbo/mj/submit/action", ApiKey),
    ("post", "/mj-turbo/mj/submit/modal", ApiKey),
    ("post", "/mj-turbo/mj/submit/shorten", ApiKey),
    ("post", "/mj-turbo/mj/submit/upload-discord-images", ApiKey),
    ("post", "/mj-turbo/mj/submit/edits", ApiKey),
    ("post", "/mj-turbo/mj/submit/video", ApiKey),
    ("post", "/mj-turbo/mj/insight-face/swap", ApiKey),
    ("get", "/mj-turbo/mj/task/{id}/fetch", ApiKey),
    ("get", "/mj-turbo/mj/task/{id}/image-seed", ApiKey),
    ("post", "/mj-turbo/mj/task/list-by-condition", ApiKey),
    ("get", "/mj-turbo/mj/image/{id}", Public),
    ("post", "/mj-relax/mj/submit/imagine", ApiKey),
    ("post", "/mj-relax/mj/submit/change", ApiKey),
    ("post", "/mj-relax/mj/submit/simple-change", ApiKey),
    ("post", "/mj-relax/mj/submit/describe", ApiKey),
    ("post", "/mj-relax/mj/submit/blend", ApiKey),
    ("post", "/mj-relax/mj/submit/action", ApiKey),
    ("post", "/mj-relax/mj/submit/modal", ApiKey),
    ("post", "/mj-relax/mj/submit/shorten", ApiKey),
    ("post", "/mj-relax/mj/submit/upload-discord-images", ApiKey),
    ("post", "/mj-relax/mj/submit/edits", ApiKey),
    ("post", "/mj-relax/mj/submit/video", ApiKey),
    ("post", "/mj-relax/mj/insight-face/swap", ApiKey),
    ("get", "/mj-relax/mj/task/{id}/fetch", ApiKey),
    ("get", "/mj-relax/mj/task/{id}/image-seed", ApiKey),
    ("post", "/mj-relax/mj/task/list-by-condition", ApiKey),
    ("get", "/mj-relax/mj/image/{id}", Public),
    ("post", "/suno/submit/{action}", ApiKey),
    ("post", "/suno/fetch", ApiKey),
    ("get", "/suno/fetch/{id}", ApiKey),
    ("post", "/v1/videos", ApiKey),
    ("get", "/v1/videos/{id}", ApiKey),
    ("get", "/v1/videos/{id}/content", ApiKey),
    ("get", "/api/openapi.json", Public),
];

#[test]
fn every_declared_route_has_a_row() {
    let declared: BTreeSet<(String, String, Access)> = tollgate::http::endpoints()
        .into_iter()
        .map(|e| (e.method.name().to_owned(), e.path, e.access))
        .collect();
    let rows: BTreeSet<(String, String, Access)> = MATRIX
        .iter()
        .map(|(m, p, a)| ((*m).to_owned(), (*p).to_owned(), *a))
        .collect();
    assert_eq!(rows.len(), MATRIX.len(), "a row appears twice");
    let missing: Vec<_> = declared.difference(&rows).collect();
    let stale: Vec<_> = rows.difference(&declared).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "declared routes without a matching row: {missing:?}\nrows without a declared route: {stale:?}"
    );
}

/// How a principal presents itself.
struct Principal {
    name: &'static str,
    client: reqwest::Client,
    /// `New-Api-User`.
    header: Option<i64>,
    /// `Authorization`.
    authorization: Option<String>,
    /// The least access this principal must be granted (None: refused everywhere but public).
    grants: Option<Access>,
    /// Whose system access token `authorization` is (renewed when that user asks for a new one).
    token_of: Option<i64>,
}

impl Principal {
    fn allowed(&self, access: Access) -> bool {
        match (access, self.grants) {
            (Public, _) => true,
            (_, None) => false,
            (ApiKey, Some(g)) => g == ApiKey,
            (_, Some(ApiKey)) => false,
            (need, Some(g)) => g >= need,
        }
    }
}

fn concrete(path: &str) -> String {
    path.replace("{id}", "987654")
        .replace("{*rest}", "x")
        .replace("{target}", "gemini-x:generateContent")
        .replace("{model}", "gpt-x")
        .replace("{provider}", "github")
        .replace("{action}", "music")
}

async fn call(
    server: &TestServer,
    p: &Principal,
    method: &str,
    path: &str,
) -> (StatusCode, String) {
    let method = Method::from_bytes(method.to_uppercase().as_bytes()).expect("method");
    let mut req = p
        .client
        .request(method.clone(), server.url(&concrete(path)));
    if let Some(id) = p.header {
        req = req.header("New-Api-User", id.to_string());
    }
    if let Some(auth) = &p.authorization {
        req = req.header("Authorization", auth);
    }
    if method != Method::GET && method != Method::DELETE {
        req = req.json(&json!({}));
    }
    let resp = req.send().await.expect("sent");
    let status = resp.status();
    (status, resp.text().await.unwrap_or_default())
}

async fn manage(root: &Actor, id: i64, action: &str) {
    let (status, body) = root
        .post("/api/user/manage", json!({"id": id, "action": action}))
        .await;
    assert_eq!(status, StatusCode::OK, "{action}: {body}");
}

async fn api_key(actor: &Actor) -> String {
    let (status, body) = actor
        .post(
            "/api/token/",
            json!({"name": "k", "unlimited_quota": true, "expired_time": -1}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let id = body["data"]["id"].as_i64().expect("token id");
    let (_, body) = actor.post(&format!("/api/token/{id}/key"), json!({})).await;
    body["data"]["key"].as_str().expect("key").to_owned()
}

fn session(name: &'static str, actor: &Actor, header: i64, grants: Option<Access>) -> Principal {
    Principal {
        name,
        client: actor.client.clone(),
        header: Some(header),
        authorization: None,
        grants,
        token_of: None,
    }
}

fn bearer(
    name: &'static str,
    value: String,
    header: Option<i64>,
    grants: Option<Access>,
    token_of: Option<i64>,
) -> Principal {
    Principal {
        name,
        client: new_client(),
        header,
        authorization: Some(value),
        grants,
        token_of,
    }
}

/// Routes that take the console session only: a system access token is refused there (the
/// playground spends the user's quota without an API key's limits).
const SESSION_ONLY: &[&str] = &["/pg/chat/completions"];

/// Refusals a row's role does not explain: (method, path, principal); "the super admin cannot
/// be deleted"; "revealing a channel key needs two-factor authentication on" (403
/// `two_factor_not_enabled`, checked before the channel is looked up); a backup through an
/// access token needs a two-factor verification through it, and a backup token needs
/// two-factor on (403).
const REFUSED_FOR_ANOTHER_REASON: &[(&str, &str, &str)] = &[
    ("delete", "/api/user/self", "root"),
    ("delete", "/api/user/self", "root access token"),
    ("post", "/api/channel/{id}/key", "root"),
    ("post", "/api/channel/{id}/key", "root access token"),
    ("get", "/api/backup", "root access token"),
    ("post", "/api/user/backup_tokens", "root"),
    ("post", "/api/user/backup_tokens", "root access token"),
];

/// Rows whose call changes the caller itself: called last, in this order (a new access token
/// replaces the old one; deleting oneself ends everything).
const LAST: &[(&str, &str)] = &[
    ("get", "/api/user/token"),
    ("get", "/api/user/self"),
    ("put", "/api/user/self"),
    ("delete", "/api/user/self"),
];

#[tokio::test]
async fn every_principal_gets_exactly_what_its_row_allows() {
    let server = TestServer::start().await;
    server.root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    let make = async |name: &str| {
        let id = server.create_user(&root, name, "password123").await;
        (id, server.client_for(name, "password123").await)
    };
    let (_, user) = make("plain").await;
    let (admin_id, _) = make("admin1").await;
    manage(&root, admin_id, "promote").await;
    let admin = server.client_for("admin1", "password123").await;
    let (banned_id, banned) = make("banned1").await;
    let (deleted_id, deleted) = make("deleted1").await;
    let (stale_id, _) = make("stale1").await;
    manage(&root, stale_id, "promote").await;
    let stale = server.client_for("stale1", "password123").await;
    let (token_id, token_user) = make("tokenuser").await;
    let (_, body) = token_user.get("/api/user/token").await;
    let access_token = body["data"].as_str().expect("access token").to_owned();
    let (_, body) = root.get("/api/user/token").await;
    let root_token = body["data"].as_str().expect("root access token").to_owned();

    // The relay refuses a caller with nothing available before reading the body (403): the
    // user and the admin who call the relay and the playground get a balance, so that their
    // rows answer for their role, not for an empty wallet.
    for id in [user.id, admin_id] {
        let (status, body) = root
            .put("/api/user/", json!({"id": id, "quota": 1_000_000}))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let user_key = api_key(&user).await;
    let banned_key = api_key(&banned).await;
    let deleted_key = api_key(&deleted).await;
    manage(&root, banned_id, "disable").await;
    manage(&root, deleted_id, "delete").await;
    manage(&root, stale_id, "demote").await;

    let mut principals = [
        Principal {
            name: "guest",
            client: new_client(),
            header: None,
            authorization: None,
            grants: None,
            token_of: None,
        },
        session("user", &user, user.id, Some(User)),
        session("admin", &admin, admin.id, Some(Admin)),
        session("root", &root, root.id, Some(Root)),
        session("banned", &banned, banned.id, None),
        session("deleted", &deleted, deleted.id, None),
        session("forged New-Api-User", &user, root.id, None),
        session("stale after demotion", &stale, stale.id, None),
        bearer(
            "access token",
            access_token,
            Some(token_id),
            Some(User),
            Some(token_id),
        ),
        bearer(
            "root access token",
            root_token.clone(),
            Some(root.id),
            Some(Root),
            Some(root.id),
        ),
        bearer(
            "access token, forged header",
            root_token,
            Some(user.id),
            None,
            Some(root.id),
        ),
        bearer(
            "api key",
            format!("Bearer {user_key}"),
            None,
            Some(ApiKey),
            None,
        ),
        bearer(
            "banned owner's api key",
            format!("Bearer {banned_key}"),
            None,
            None,
            None,
        ),
        bearer(
            "deleted owner's api key",
            format!("Bearer {deleted_key}"),
            None,
            None,
            None,
        ),
        session("session on the relay", &root, root.id, None),
    ];
    let mut rows: Vec<&(&str, &str, Access)> = MATRIX.iter().collect();
    rows.sort_by_key(|(method, path, _)| LAST.iter().position(|l| l == &(*method, *path)));
    let mut wrong = Vec::new();
    for (method, path, access) in rows {
        for i in 0..principals.len() {
            let p = &principals[i];
            // Public routes are checked as a guest (sign-out as root would end the run's session).
            if *access == Public && p.name != "guest" {
                continue;
            }
            // A console session grants nothing on the relay, and an API key nothing in the console.
            if p.name == "session on the relay" && *access != ApiKey {
                continue;
            }
            let (status, body) = call(&server, p, method, path).await;
            let refused = status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN;
            let session_only = SESSION_ONLY.contains(path) && p.authorization.is_some();
            let other_reason = REFUSED_FOR_ANOTHER_REASON.contains(&(*method, *path, p.name));
            let expect_refused = !p.allowed(*access) || session_only || other_reason;
            if *path == "/api/user/token" && status == StatusCode::OK {
                renew_tokens(&mut principals, i, &body);
            }
            let p = &principals[i];
            if refused != expect_refused {
                wrong.push(format!(
                    "{method} {path} ({}) as {}: {status} {}",
                    access.name(),
                    p.name,
                    body.chars().take(120).collect::<String>()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong answers:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// After principal `i` was issued a new access token (`body`), every principal presenting that
/// user's old token presents the new one.
fn renew_tokens(principals: &mut [Principal], i: usize, body: &str) {
    let owner = principals[i]
        .header
        .filter(|_| principals[i].grants.is_some());
    let token: Value = serde_json::from_str(body).unwrap_or_default();
    let (Some(owner), Some(token)) = (owner, token["data"].as_str()) else {
        return;
    };
    for p in principals.iter_mut().filter(|p| p.token_of == Some(owner)) {
        p.authorization = Some(token.to_owned());
    }
}

/// What `actor` sees of itself.
async fn me(actor: &Actor) -> Value {
    let (status, body) = actor.get("/api/user/self").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["data"].clone()
}

/// `actor`'s session with another user's id in `New-Api-User`.
async fn as_other(
    server: &TestServer,
    actor: &Actor,
    other: i64,
    method: Method,
    path: &str,
    body: Value,
) -> StatusCode {
    actor
        .client
        .request(method, server.url(path))
        .header("New-Api-User", other.to_string())
        .json(&body)
        .send()
        .await
        .expect("sent")
        .status()
}

#[tokio::test]
async fn users_reach_only_their_own_tokens_logs_top_ups_bindings_and_settings() {
    let server = TestServer::start().await;
    server.root().await;
    let root = server.client_for(ROOT_USER, ROOT_PASS).await;
    server.create_user(&root, "alice", "password123").await;
    server.create_user(&root, "bob", "password123").await;
    let alice = server.client_for("alice", "password123").await;
    let bob = server.client_for("bob", "password123").await;

    // Tokens: bob can neither read, change, reveal nor delete alice's.
    let (_, body) = alice
        .post(
            "/api/token/",
            json!({"name": "mine", "unlimited_quota": true, "expired_time": -1}),
        )
        .await;
    let token = body["data"]["id"].as_i64().expect("token id");
    let path = format!("/api/token/{token}");
    assert_eq!(bob.get(&path).await.1["success"], false);
    let (_, changed) = bob
        .put("/api/token/", json!({"id": token, "name": "stolen"}))
        .await;
    assert_eq!(changed["success"], false, "{changed}");
    let (_, revealed) = bob.post(&format!("{path}/key"), json!({})).await;
    assert_eq!(revealed["success"], false, "{revealed}");
    assert!(revealed["data"]["key"].is_null());
    assert_eq!(bob.delete(&path).await.1["success"], false);
    assert_eq!(bob.get("/api/token/").await.1["data"]["total"], 0);
    assert_eq!(
        bob.get("/api/token/search?keyword=mine").await.1["data"]["total"],
        0
    );
    let (_, still) = alice.get(&path).await;
    assert_eq!(still["data"]["name"], "mine", "{still}");

    // Logs: an admin's quota edit is logged for alice; bob's own log and stats do not show it.
    let (status, body) = root
        .put("/api/user/", json!({"id": alice.id, "quota": 123_456}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, alices) = alice.get("/api/log/self").await;
    assert!(alices["data"]["total"].as_i64() > Some(0), "{alices}");
    let (_, bobs) = bob.get("/api/log/self?username=alice").await;
    assert_eq!(bobs["data"]["total"], 0, "{bobs}");
    let (_, all) = bob.get("/api/log/?username=alice").await;
    assert_eq!(all["success"], false, "{all}");

    // Top-ups: alice's order is not in bob's history, and bob cannot complete it.
    for (key, value) in [
        ("PayAddress", "https://pay.example.com/"),
        ("EpayId", "1001"),
        ("EpayKey", "epay-secret-key"),
        ("Price", "7.3"),
        ("MinTopUp", "1"),
    ] {
        server.set_option(&root, key, json!(value)).await;
    }
    let (status, order) = alice
        .post(
            "/api/user/pay",
            json!({"amount": 5, "payment_method": "zfb", "top_up_code": ""}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{order}");
    assert_eq!(
        alice.get("/api/user/topup/self").await.1["data"]["total"],
        1
    );
    assert_eq!(bob.get("/api/user/topup/self").await.1["data"]["total"], 0);
    let trade_no = order["data"]["out_trade_no"].as_str().unwrap_or_default();
    let (status, _) = bob
        .post("/api/user/topup/complete", json!({"trade_no": trade_no}))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // Settings and bindings act on the session's user only: naming alice is refused.
    let before = me(&alice).await;
    for (method, path, body) in [
        (
            Method::PUT,
            "/api/user/setting",
            json!({"accept_unset_model_ratio_model": true}),
        ),
        (
            Method::PUT,
            "/api/user/self",
            json!({"display_name": "bob was here"}),
        ),
        (
            Method::GET,
            "/api/oauth/email/bind?email=b%40example.com&code=123456",
            json!({}),
        ),
        (
            Method::GET,
            "/api/oauth/telegram/bind?id=1&hash=x",
            json!({}),
        ),
        (Method::GET, "/api/oauth/wechat/bind?code=1", json!({})),
        (Method::GET, "/api/user/token", json!({})),
    ] {
        let status = as_other(&server, &bob, alice.id, method, path, body).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}");
    }
    let (status, _) = bob
        .put(
            "/api/user/setting",
            json!({"accept_unset_model_ratio_model": true}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(me(&alice).await, before, "alice's record is untouched");
}
