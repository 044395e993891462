//! Upstream balance queries: what a channel's provider account has left, in US$.
//!
//! The channel type table says which API a type has ([`BalanceApi`]); the APIs (the key travels
//! as a bearer token, put on by the relay's adaptor, `crate::relay::adaptor::get`):
//! - OpenAI (1) and Custom (8): `GET /v1/dashboard/billing/subscription` (`hard_limit_usd`,
//!   `has_payment_method`), then `GET /v1/dashboard/billing/usage?start_date&end_date`
//!   (`total_usage` in cents) over the current month, or the last 100 days when the account
//!   has no payment method; balance = hard limit − usage.
//! - OpenRouter (20): `GET /api/v1/credits` → `total_credits − total_usage` (US$).
//! - Moonshot (25): `GET /v1/users/me/balance` → `available_balance` (CNY).
//! - SiliconCloud (40): `GET /v1/user/info` → `totalBalance` (CNY).
//! - DeepSeek (43): `GET /user/balance` → the `USD` entry of `balance_infos`, else the `CNY`
//!   one.
//!
//! CNY amounts are converted with the `Price` option (CNY per US$), so every stored balance is
//! in US$ as new-api's are. Multi-key channels are refused (each key is its own account).

use std::time::Duration;

use serde_json::Value;
use time::OffsetDateTime;
use tollgate_storage::channels::Channel;

use super::probe::{base_url, transport_error, upstream_message};
use crate::channel_types::{self, BalanceApi};
use crate::error::{ConsoleError, ErrorCode};
use crate::relay::adaptor;
use crate::relay::wire::Wire;
use crate::upstream::HttpClients;

/// How long one balance request may take.
pub const BALANCE_TIMEOUT: Duration = Duration::from_secs(15);

/// The balance API of `channel_type`, if it has one.
fn api(channel_type: i32) -> Option<BalanceApi> {
    channel_types::by_id(channel_type).and_then(|t| t.balance)
}

/// Whether `channel_type` has a balance query.
pub fn supported(channel_type: i32) -> bool {
    api(channel_type).is_some()
}

/// Asks the channel's provider for its balance, in US$ (`cny_per_usd` converts CNY amounts).
pub async fn query(
    http: &HttpClients,
    channel: &Channel,
    cny_per_usd: f64,
) -> Result<f64, ConsoleError> {
    let Some(api) = api(channel.channel_type) else {
        return Err(ConsoleError::of(ErrorCode::BalanceUnsupported));
    };
    let keys = channel.key_lines();
    let [key] = keys.as_slice() else {
        return Err(ConsoleError::of(ErrorCode::BalanceMultiKey));
    };
    let base = base_url(channel.channel_type, &channel.base_url)?;
    let client = http
        .for_proxy(&channel.proxy)
        .map_err(|e| ConsoleError::with_args(ErrorCode::ProxyUnusable, [e]))?;
    let get = |path: String| fetch(&client, channel, format!("{base}{path}"), key);
    let cny = |amount: f64| {
        if cny_per_usd > 0.0 {
            amount / cny_per_usd
        } else {
            amount
        }
    };
    let balance = match api {
        BalanceApi::OpenRouterCredits => {
            let v = get("/api/v1/credits".into()).await?;
            number(&v["data"]["total_credits"])? - number(&v["data"]["total_usage"])?
        }
        BalanceApi::MoonshotBalance => cny(number(
            &get("/v1/users/me/balance".into()).await?["data"]["available_balance"],
        )?),
        BalanceApi::SiliconFlowUserInfo => cny(number(
            &get("/v1/user/info".into()).await?["data"]["totalBalance"],
        )?),
        BalanceApi::DeepSeekBalance => {
            let v = get("/user/balance".into()).await?;
            let infos = v["balance_infos"].as_array().cloned().unwrap_or_default();
            let of = |currency: &str| {
                infos
                    .iter()
                    .find(|i| i["currency"] == currency)
                    .map(|i| number(&i["total_balance"]))
            };
            match (of("USD"), of("CNY")) {
                (Some(usd), _) => usd?,
                (None, Some(amount)) => cny(amount?),
                (None, None) => return Err(unexpected()),
            }
        }
        BalanceApi::OpenAiBilling => {
            let sub = get("/v1/dashboard/billing/subscription".into()).await?;
            let limit = number(&sub["hard_limit_usd"])?;
            let (start, end) = usage_window(
                OffsetDateTime::now_utc(),
                sub["has_payment_method"].as_bool().unwrap_or(false),
            );
            let usage = get(format!(
                "/v1/dashboard/billing/usage?start_date={start}&end_date={end}"
            ))
            .await?;
            limit - number(&usage["total_usage"])? / 100.0
        }
    };
    if balance.is_finite() {
        Ok((balance * 1_000_000.0).round() / 1_000_000.0)
    } else {
        Err(unexpected())
    }
}

/// The usage window OpenAI's billing API is asked about: from the first day of this month
/// (accounts with a payment method) or 100 days back, to tomorrow; `YYYY-MM-DD`.
pub fn usage_window(now: OffsetDateTime, has_payment_method: bool) -> (String, String) {
    let day = |d: time::Date| format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day());
    let today = now.date();
    let start = if has_payment_method {
        today.replace_day(1).unwrap_or(today)
    } else {
        today.saturating_sub(time::Duration::days(100))
    };
    (
        day(start),
        day(today.saturating_add(time::Duration::days(1))),
    )
}

/// A balance API's answer: a GET authenticated by the channel's adaptor (a bearer key: every
/// type with a balance API speaks OpenAI's wire).
async fn fetch(
    client: &reqwest::Client,
    channel: &Channel,
    url: String,
    key: &str,
) -> Result<Value, ConsoleError> {
    let resp = adaptor::get(client, channel.channel_type, "", Wire::OpenAi, &url, key)
        .map_err(|e| ConsoleError::with_args(ErrorCode::BalanceFailed, [e.to_string()]))?
        .timeout(BALANCE_TIMEOUT)
        .send()
        .await
        .map_err(|e| {
            ConsoleError::with_args(
                ErrorCode::BalanceFailed,
                [transport_error(&e, BALANCE_TIMEOUT).to_string()],
            )
        })?;
    let status = resp.status();
    let body = resp.text().await.map_err(|e| {
        ConsoleError::with_args(
            ErrorCode::BalanceFailed,
            [transport_error(&e, BALANCE_TIMEOUT).to_string()],
        )
    })?;
    if !status.is_success() {
        let why = upstream_message(&body).unwrap_or_else(|| format!("status {}", status.as_u16()));
        return Err(ConsoleError::with_args(
            ErrorCode::BalanceFailed,
            [why.replace(key, "*****").to_string()],
        ));
    }
    serde_json::from_str(&body).map_err(|_| unexpected())
}

/// A JSON number, or a number written as a string (SiliconCloud and DeepSeek send strings).
fn number(v: &Value) -> Result<f64, ConsoleError> {
    v.as_f64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        .ok_or_else(unexpected)
}

fn unexpected() -> ConsoleError {
    ConsoleError::of(ErrorCode::BalanceBadAnswer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn window_is_this_month_or_the_last_100_days() {
        let now = datetime!(2026-03-15 10:00 UTC);
        assert_eq!(
            usage_window(now, true),
            ("2026-03-01".into(), "2026-03-16".into())
        );
        assert_eq!(
            usage_window(now, false),
            ("2025-12-05".into(), "2026-03-16".into())
        );
    }

    #[test]
    fn numbers_may_be_strings() {
        assert_eq!(number(&serde_json::json!("12.5")).ok(), Some(12.5));
        assert_eq!(number(&serde_json::json!(3)).ok(), Some(3.0));
        assert!(number(&serde_json::json!(null)).is_err());
    }
}
