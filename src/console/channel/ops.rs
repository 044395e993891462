//! Handlers: the channel type table, model lists, upstream model fetch, channel tests, proxy
//! test, balances, groups.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, State};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tollgate_storage::channels;
use tollgate_storage::secret::Secret;

use super::crud::channel_id;
use crate::channel_types::{CHANNEL_TYPES, Caps, ChannelType};
use crate::console::service::channel::check::{self, BalanceSummary, TestResult};
use crate::console::service::channel::probe::{self, ProxyReport};
use crate::error::ConsoleError;
use crate::http::envelope::{Envelope, ok};
use crate::http::extract::{AdminSession, ApiJson, ApiQuery};
use crate::state::AppState;

/// A model the console can offer.
#[derive(Debug, Serialize)]
pub struct KnownModel {
    /// Model id.
    pub id: &'static str,
    /// Always "model".
    pub object: &'static str,
    /// Provider name.
    pub owned_by: &'static str,
    /// Channel type id.
    #[serde(rename = "type")]
    pub channel_type: i32,
}

/// One row of the channel type table as the console reads it.
#[derive(Debug, Serialize)]
pub struct TypeView {
    /// The row: id, name, family, base URL, auth, key format, fields, test, models.
    #[serde(flatten)]
    pub row: &'static ChannelType,
    /// What the relay serves for the type (and `balance` when it has a balance query).
    pub capabilities: Caps,
}

/// GET /api/channel/types: every channel type with its extra-field descriptors, key format and
/// capabilities (the console's channel editor renders the type-specific inputs from it).
pub async fn list_types(_admin: AdminSession) -> Envelope<Vec<TypeView>> {
    ok(CHANNEL_TYPES
        .iter()
        .map(|row| TypeView {
            row,
            capabilities: row.capabilities(),
        })
        .collect())
}

/// GET /api/channel/models: the built-in model list of every type.
pub async fn list_known_models(_admin: AdminSession) -> Envelope<Vec<KnownModel>> {
    let models = CHANNEL_TYPES
        .iter()
        .flat_map(|t| {
            t.models.iter().map(|m| KnownModel {
                id: m,
                object: "model",
                owned_by: t.name,
                channel_type: t.id,
            })
        })
        .collect();
    ok(models)
}

/// GET /api/channel/models_enabled: models some enabled channel serves (from the routing table).
pub async fn list_enabled_models(
    State(state): State<AppState>,
    _admin: AdminSession,
) -> Envelope<Vec<String>> {
    let table = state.channel_pool.table().load();
    ok(table.models().into_iter().map(str::to_owned).collect())
}

/// Body of POST /api/channel/fetch_models.
#[derive(Debug, Deserialize)]
pub struct FetchModelsBody {
    /// Base URL ("" = the type's default).
    #[serde(default)]
    pub base_url: String,
    /// Channel type.
    #[serde(rename = "type", default = "default_type")]
    pub channel_type: i32,
    /// Key (first line used).
    #[serde(default)]
    pub key: Secret,
    /// Proxy URL.
    #[serde(default)]
    pub proxy: String,
}

fn default_type() -> i32 {
    1
}

/// POST /api/channel/fetch_models
pub async fn fetch_models(
    State(state): State<AppState>,
    _admin: AdminSession,
    ApiJson(body): ApiJson<FetchModelsBody>,
) -> Result<Envelope<Vec<String>>, ConsoleError> {
    let models = probe::fetch_models(
        &state.http,
        body.channel_type,
        &body.base_url,
        &body.key,
        &body.proxy,
    )
    .await?;
    Ok(ok(models))
}

/// GET /api/channel/fetch_models/{id}
pub async fn fetch_channel_models(
    State(state): State<AppState>,
    _admin: AdminSession,
    Path(id): Path<String>,
) -> Result<Envelope<Vec<String>>, ConsoleError> {
    let id = channel_id(&id)?;
    let c = state
        .store
        .read(move |rtx| channels::get(rtx, id))
        .await?
        .ok_or(ConsoleError::NotFound("channel"))?;
    let models =
        probe::fetch_models(&state.http, c.channel_type, &c.base_url, &c.key, &c.proxy).await?;
    Ok(ok(models))
}

/// Query of GET /api/channel/test/{id}.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct TestParams {
    /// Model to test (default: the channel's test model, else its first model).
    pub model: Option<String>,
}

/// GET /api/channel/test/{id}: `{success, message, time}`.
pub async fn test_channel(
    State(state): State<AppState>,
    _admin: AdminSession,
    Path(id): Path<String>,
    ApiQuery(params): ApiQuery<TestParams>,
) -> Result<Json<TestResult>, ConsoleError> {
    Ok(Json(
        check::test_one(&state, channel_id(&id)?, params.model).await?,
    ))
}

/// GET /api/channel/test: tests all channels in the background.
pub async fn test_all_channels(
    State(state): State<AppState>,
    _admin: AdminSession,
) -> Result<Envelope<Value>, ConsoleError> {
    let count = check::test_all(&state).await?;
    let mut envelope = ok(json!({ "count": count }));
    envelope.message = format!("testing {count} channels in the background");
    Ok(envelope)
}

/// Query of GET /api/channel/test_proxy.
#[derive(Default, Deserialize)]
#[serde(default)]
pub struct ProxyParams {
    /// The proxy URL.
    pub proxy: String,
}

/// POST /api/channel/test_proxy with `{proxy}`: the same check, with the proxy (and any
/// credentials in it) in the body, where no access log or browser history keeps it.
pub async fn test_proxy_body(
    State(state): State<AppState>,
    _admin: AdminSession,
    ApiJson(params): ApiJson<ProxyParams>,
) -> Result<Envelope<ProxyReport>, ConsoleError> {
    Ok(ok(probe::check_proxy(&state.http, &params.proxy).await?))
}

/// GET /api/channel/test_proxy?proxy=… (new-api's form; prefer the POST).
pub async fn test_proxy(
    State(state): State<AppState>,
    _admin: AdminSession,
    ApiQuery(params): ApiQuery<ProxyParams>,
) -> Result<Envelope<ProxyReport>, ConsoleError> {
    Ok(ok(probe::check_proxy(&state.http, &params.proxy).await?))
}

/// GET /api/channel/update_balance/{id}/
pub async fn update_balance(
    State(state): State<AppState>,
    _admin: AdminSession,
    Path(id): Path<String>,
) -> Result<Envelope<f64>, ConsoleError> {
    Ok(ok(check::update_balance(&state, channel_id(&id)?).await?))
}

/// GET /api/channel/update_balance: refreshes every enabled channel that has a balance API.
pub async fn update_all_balances(
    State(state): State<AppState>,
    _admin: AdminSession,
) -> Result<Envelope<BalanceSummary>, ConsoleError> {
    let summary = check::update_all_balances(&state).await?;
    let mut envelope = ok(summary);
    envelope.message = format!(
        "{} balances updated, {} failed, {} channels disabled for an empty balance",
        envelope.data.updated, envelope.data.failed, envelope.data.disabled
    );
    Ok(envelope)
}

/// GET /api/group/: the group names of the GroupRatio option, sorted.
pub async fn list_groups(
    State(state): State<AppState>,
    _admin: AdminSession,
) -> Result<Envelope<Vec<String>>, ConsoleError> {
    let options = state.options.current();
    let ratios: BTreeMap<String, Value> = serde_json::from_str(options.text("GroupRatio"))
        .map_err(|e| ConsoleError::Internal(format!("GroupRatio does not parse: {e}")))?;
    Ok(ok(ratios.into_keys().collect()))
}
