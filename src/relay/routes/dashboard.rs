//! What an API key's holder may read of its money with the key alone (P15 item 2): the
//! OpenAI-dashboard routes the incumbent serves (`/dashboard/billing/subscription`,
//! `/dashboard/billing/usage`, each also under `/v1`) and `GET /api/usage/token/`, with the
//! incumbent's values (reference §1.4: DisplayTokenStatEnabled picks the key's or the user's
//! figures, DisplayInCurrencyEnabled shows dollars, an unlimited key reports 100,000,000,
//! `access_until` is the key's expiry) plus `budget_windows`: every budget window of the key
//! and of its user in force now, with what is left and when it resets.

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use serde_json::{Value, json};
use tollgate_actors::quota::budget::WindowState;
use tollgate_storage::budgets::Period;
use tollgate_storage::tokens;

use crate::error::RelayError;
use crate::http::api::{Access, ApiRouter, get};
use crate::relay::pipeline::auth::Caller;
use crate::state::AppState;

/// What an unlimited key reports as its limit (the incumbent's value).
const UNLIMITED: f64 = 100_000_000.0;

/// The dashboard and token-usage routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route(
            "/dashboard/billing/subscription",
            get(Access::ApiKey, subscription),
        )
        .route(
            "/v1/dashboard/billing/subscription",
            get(Access::ApiKey, subscription),
        )
        .route("/dashboard/billing/usage", get(Access::ApiKey, usage))
        .route("/v1/dashboard/billing/usage", get(Access::ApiKey, usage))
        .route("/api/usage/token/", get(Access::ApiKey, token_usage))
        .route("/api/usage/token", get(Access::ApiKey, token_usage))
}

/// One budget window as these routes show it.
#[derive(Debug, Serialize)]
struct WindowOut {
    /// `key` or `user`.
    owner: &'static str,
    period: Period,
    rolling: bool,
    limit: Value,
    spent: Value,
    remaining: Value,
    /// Unix seconds.
    resets_at: i64,
}

/// The caller's figures, read once.
struct Figures {
    /// Remaining quota (the key's or the user's), units.
    remain: i64,
    /// Used quota (the key's or the user's), units.
    used: i64,
    /// The key has no limit and the key's figures are shown.
    unlimited: bool,
    /// The key's expiry, 0 for never.
    access_until: i64,
    token: tokens::Token,
    windows: Vec<WindowOut>,
}

/// Units as shown: dollars when DisplayInCurrencyEnabled, else units.
fn shown(state: &AppState, units: i64) -> f64 {
    let options = state.options.current();
    #[expect(clippy::cast_precision_loss, reason = "display only")]
    let amount = units as f64;
    if options.flag("DisplayInCurrencyEnabled") {
        amount / options.int("QuotaPerUnit").max(1) as f64
    } else {
        amount
    }
}

fn windows_out(
    state: &AppState,
    owner: &'static str,
    windows: &[WindowState],
    convert: bool,
) -> impl Iterator<Item = WindowOut> {
    let amount = move |units: i64| {
        if convert {
            json!(shown(state, units))
        } else {
            json!(units)
        }
    };
    windows
        .iter()
        .map(move |w| WindowOut {
            owner,
            period: w.window.period,
            rolling: w.window.rolling,
            limit: amount(w.window.limit),
            spent: amount(w.spent),
            remaining: amount(w.left(0).max(0)),
            resets_at: w.resets_at,
        })
        .collect::<Vec<_>>()
        .into_iter()
}

/// The key's figures (`key_stats`) or its user's; budget amounts in dollars when `convert`
/// (and DisplayInCurrencyEnabled).
async fn figures(
    state: &AppState,
    caller: &Caller,
    key_stats: bool,
    convert: bool,
) -> Result<Figures, RelayError> {
    let id = caller.token.id;
    let (token, user) = state
        .store
        .read(move |rtx| tokens::with_owner(rtx, id))
        .await
        .map_err(|e| RelayError::Internal(format!("reading the key: {e}")))?
        .ok_or(RelayError::InvalidKey("this API key no longer exists"))?;
    let quota = |e| RelayError::Internal(format!("reading the balance: {e}"));
    let view = state
        .quota
        .budget_view(user.id, Some(token.id))
        .await
        .map_err(quota)?;
    let (remain, used) = if key_stats {
        let remain = state
            .quota
            .token_remain(user.id, token.id)
            .await
            .map_err(quota)?;
        (remain, token.used_quota.0)
    } else {
        let balance = state.quota.current_balance(user.id).await.map_err(quota)?;
        (balance, user.used_quota.0)
    };
    let mut windows: Vec<WindowOut> = windows_out(state, "key", &view.key, convert).collect();
    windows.extend(windows_out(state, "user", &view.user, convert));
    Ok(Figures {
        remain,
        used,
        unlimited: key_stats && token.unlimited_quota,
        access_until: token.expired_time.max(0),
        token,
        windows,
    })
}

/// `GET /dashboard/billing/subscription`: the limit is what remains plus what was used.
async fn subscription(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<Value>, RelayError> {
    let key_stats = state.options.current().flag("DisplayTokenStatEnabled");
    let f = figures(&state, &caller, key_stats, true).await?;
    let amount = if f.unlimited {
        UNLIMITED
    } else {
        shown(&state, f.remain.saturating_add(f.used))
    };
    Ok(Json(json!({
        "object": "billing_subscription",
        "has_payment_method": true,
        "soft_limit_usd": amount,
        "hard_limit_usd": amount,
        "system_hard_limit_usd": amount,
        "access_until": f.access_until,
        "budget_windows": f.windows,
    })))
}

/// `GET /dashboard/billing/usage`: what was used, in hundredths (OpenAI's cents).
async fn usage(State(state): State<AppState>, caller: Caller) -> Result<Json<Value>, RelayError> {
    let key_stats = state.options.current().flag("DisplayTokenStatEnabled");
    let f = figures(&state, &caller, key_stats, true).await?;
    Ok(Json(json!({
        "object": "list",
        "total_usage": shown(&state, f.used) * 100.0,
        "budget_windows": f.windows,
    })))
}

/// `GET /api/usage/token/`: the key's own figures, in units.
async fn token_usage(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<Value>, RelayError> {
    let f = figures(&state, &caller, true, false).await?;
    let limits: serde_json::Map<String, Value> = f
        .token
        .model_limits
        .split(',')
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(|m| (m.to_owned(), Value::Bool(true)))
        .collect();
    let remain = if f.token.unlimited_quota { 0 } else { f.remain };
    Ok(Json(json!({
        "code": true,
        "message": "ok",
        "data": {
            "object": "token_usage",
            "name": f.token.name,
            "total_granted": remain.saturating_add(f.used),
            "total_used": f.used,
            "total_available": remain,
            "unlimited_quota": f.token.unlimited_quota,
            "model_limits": limits,
            "model_limits_enabled": f.token.model_limits_enabled,
            "expires_at": f.access_until,
            "budget_windows": f.windows,
        }
    })))
}
