//! GET/PUT /api/option/: the runtime options. Writing is root's alone; reading is root's, and
//! an admin who is not root reads the named operation subset of
//! [`option_access`](super::service::option_access). Secrets are write-only.

use crate::http::api::{Access, ApiRouter, get};
use axum::extract::State;
use serde::{Deserialize, Serialize};
use tollgate_storage::users::ROLE_ROOT;

use super::service::audit::{AuditIp, Auditor};
use super::service::option_access;
use crate::error::ConsoleError;
use crate::http::envelope::{Envelope, done, ok};
use crate::http::extract::{AdminSession, ApiJson, RootSession};
use crate::state::AppState;

/// Option routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new().route(
        "/api/option/",
        get(Access::Admin, list_options).put(Access::Root, update_option),
    )
}

/// One option as the console reads it.
#[derive(Debug, Serialize)]
pub struct OptionItem {
    /// The key.
    pub key: &'static str,
    /// Its effective value (stored, else the default).
    pub value: String,
}

/// Body of PUT /api/option/. Booleans and numbers are accepted as JSON values too.
#[derive(Debug, Deserialize)]
pub struct OptionUpdate {
    /// The key.
    pub key: String,
    /// The new value.
    pub value: serde_json::Value,
}

async fn list_options(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
) -> Envelope<Vec<OptionItem>> {
    let snapshot = state.options.current();
    let root = admin.user.role >= ROLE_ROOT;
    let items = option_access::readable(&snapshot, root)
        .into_iter()
        .map(|(key, value)| OptionItem {
            key,
            value: value.to_owned(),
        })
        .collect();
    ok(items)
}

async fn update_option(
    State(state): State<AppState>,
    RootSession(root): RootSession,
    AuditIp(ip): AuditIp,
    ApiJson(update): ApiJson<OptionUpdate>,
) -> Result<Envelope<()>, ConsoleError> {
    let value = match update.value {
        serde_json::Value::String(s) => s,
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    };
    let entry = Auditor::user(&root.user, ip).entry(
        "option.update",
        format!("option:{}", update.key),
        &serde_json::Value::Null,
        &serde_json::Value::Null,
    );
    state
        .options
        .update_audited(&update.key, &value, entry)
        .await?;
    tracing::info!(user = %root.user.id, key = %update.key, "option updated");
    Ok(done(""))
}
