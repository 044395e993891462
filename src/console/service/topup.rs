//! The wallet's online top-up through an Epay gateway (spec 02 §2 "Wallet", §5, §7; reference
//! §8.1): the price quote, the pending order with its signed payment form, the gateway's
//! notification, and the order history.
//!
//! - Amount: an integer number of US$ of quota (1 = QuotaPerUnit units), at least MinTopUp and
//!   at least 1. Payable: `amount × Price × TopupGroupRatio[user group]` (a missing or zero
//!   ratio counts as 1), in the payment currency, rounded to cents.
//! - Online top-up is enabled when PayAddress, EpayId and EpayKey are all set.
//! - Notification: the signature must verify with EpayKey and the `pid` must be EpayId; the order
//!   must exist; the notified `money` must equal the order's to the cent (new-api does not check
//!   it); only `TRADE_SUCCESS` completes an order. Completion is a compare-and-swap from pending
//!   to success in the transaction that credits the balance and writes the top-up log, so a
//!   replayed notification credits nothing. Every refused or ignored notification is logged.
//! - Invite rewards: none on top-ups. The spec credits invite rewards (QuotaForInviter and
//!   QuotaForInvitee) at registration only and names no top-up rebate option, so a top-up
//!   changes nobody's balance but the payer's.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tollgate_actors::options::OptionsSnapshot;
use tollgate_actors::quota::Credit;
use tollgate_storage::logs::{LOG_TOPUP, LogEntry};
use tollgate_storage::topups::{self, STATUS_PENDING, TopUp};
use tollgate_storage::users::User;
use tollgate_storage::{Quota, StorageError, TopUpId, UserId, users};

use super::audit::Auditor;
use super::epay;
use super::secrets::random_alnum;
use crate::clock::now_unix;
use crate::error::{ConsoleError, ErrorCode};
use crate::http::page::PageQuery;
use crate::state::AppState;

/// The path of the notification route (new-api's, so gateways configured for it keep working).
pub const NOTIFY_PATH: &str = "/api/user/epay/notify";
/// Largest amount one order may buy (US$), far above any real top-up; keeps the arithmetic
/// comfortably inside `i64`.
pub const MAX_AMOUNT: i64 = 10_000_000;

/// Body of POST /api/user/amount and POST /api/user/pay.
#[derive(Debug, Default, Deserialize)]
pub struct PayRequest {
    /// US$ of quota to buy.
    #[serde(default)]
    pub amount: i64,
    /// Gift code field of new-api's console (unused by Epay top-ups; accepted and ignored).
    #[serde(default)]
    pub top_up_code: String,
    /// `zfb` (Alipay) or `wx` (WeChat Pay); `alipay` and `wxpay` are accepted too.
    #[serde(default)]
    pub payment_method: String,
}

/// What POST /api/user/pay returns: the form to post to the gateway.
#[derive(Debug, Serialize)]
pub struct PaymentForm {
    /// Form fields, signed.
    pub params: BTreeMap<String, String>,
    /// Where the form is posted.
    pub url: String,
    /// The order's trade number.
    pub trade_no: String,
}

/// An order as the console sees it (new-api's field names).
#[derive(Debug, Serialize)]
pub struct TopUpView {
    /// Id.
    pub id: TopUpId,
    /// Payer.
    pub user_id: UserId,
    /// US$ of quota bought.
    pub amount: i64,
    /// Money payable, in the payment currency.
    pub money: f64,
    /// Quota credited when paid.
    pub quota: Quota,
    /// Trade number.
    pub trade_no: String,
    /// Payment type asked for.
    pub payment_method: String,
    /// `pending` or `success`.
    pub status: String,
    /// Unix seconds of creation.
    pub create_time: i64,
    /// Unix seconds of completion, 0 while pending.
    pub complete_time: i64,
}

impl From<&TopUp> for TopUpView {
    fn from(t: &TopUp) -> Self {
        TopUpView {
            id: t.id,
            user_id: t.user_id,
            amount: t.amount,
            money: t.money_cents as f64 / 100.0,
            quota: t.quota,
            trade_no: t.trade_no.clone(),
            payment_method: t.payment_method.clone(),
            status: t.status.clone(),
            create_time: t.created_time,
            complete_time: t.complete_time,
        }
    }
}

/// Whether the Epay gateway is configured.
pub fn online_topup_enabled(options: &OptionsSnapshot) -> bool {
    !options.text("PayAddress").is_empty()
        && !options.text("EpayId").is_empty()
        && !options.text("EpayKey").is_empty()
}

/// The top-up ratio of `group` (TopupGroupRatio; missing, zero or malformed counts as 1).
pub fn topup_group_ratio(options: &OptionsSnapshot, group: &str) -> f64 {
    serde_json::from_str::<BTreeMap<String, f64>>(options.text("TopupGroupRatio"))
        .ok()
        .and_then(|m| m.get(group).copied())
        .filter(|r| r.is_finite() && *r > 0.0)
        .unwrap_or(1.0)
}

/// Checks the amount and returns the money payable, in cents.
pub fn quote(options: &OptionsSnapshot, group: &str, amount: i64) -> Result<i64, ConsoleError> {
    let min = options.int("MinTopUp").max(1);
    if amount < min {
        return Err(ConsoleError::with_args(
            ErrorCode::TopupBelowMinimum,
            [min.to_string()],
        ));
    }
    if amount > MAX_AMOUNT {
        return Err(ConsoleError::with_args(
            ErrorCode::TopupAboveMaximum,
            [MAX_AMOUNT.to_string()],
        ));
    }
    let cents = epay::quote_cents(
        amount,
        options.number("Price"),
        topup_group_ratio(options, group),
    )
    .ok_or_else(|| ConsoleError::of(ErrorCode::AmountPayableOutOfRange))?;
    if cents < 1 {
        return Err(ConsoleError::of(ErrorCode::AmountPayableTooSmall));
    }
    Ok(cents)
}

/// The Epay `type` of a console payment method.
fn epay_type(method: &str) -> Result<&'static str, ConsoleError> {
    match method.trim() {
        "zfb" | "alipay" => Ok("alipay"),
        "wx" | "wxpay" => Ok("wxpay"),
        _ => Err(ConsoleError::of(ErrorCode::PaymentMethodInvalid)),
    }
}

/// Creates a pending order for `user` and returns the signed form for the gateway.
pub async fn pay(
    state: &AppState,
    user: &User,
    req: PayRequest,
) -> Result<PaymentForm, ConsoleError> {
    let options = state.options.current();
    if !online_topup_enabled(&options) {
        return Err(ConsoleError::of(ErrorCode::OnlineTopupDisabled));
    }
    let pay_type = epay_type(&req.payment_method)?;
    let cents = quote(&options, &user.group, req.amount)?;
    let quota = req
        .amount
        .checked_mul(options.int("QuotaPerUnit"))
        .ok_or_else(|| ConsoleError::of(ErrorCode::TopupOutOfRange))?;
    let now = now_unix();
    let server = options.text("ServerAddress").to_owned();
    let callback = match options.text("CustomCallbackAddress") {
        "" => server.clone(),
        custom => custom.to_owned(),
    };
    let (user_id, amount) = (user.id, req.amount);
    let order = state
        .store
        .write(move |wtx| {
            // The random part makes a collision all but impossible; the unique index makes
            // it impossible, and a collision just draws again.
            for _ in 0..8 {
                let order = TopUp {
                    id: TopUpId(0),
                    user_id,
                    amount,
                    quota: Quota(quota),
                    money_cents: cents,
                    trade_no: format!("USR{user_id}NO{}{now}", random_alnum(6)),
                    payment_method: pay_type.to_owned(),
                    paid_type: String::new(),
                    gateway_trade_no: String::new(),
                    status: STATUS_PENDING.to_owned(),
                    created_time: now,
                    complete_time: 0,
                };
                match topups::insert(wtx, order) {
                    Err(StorageError::Duplicate { .. }) => continue,
                    other => return other,
                }
            }
            Err(StorageError::Duplicate {
                what: "trade number",
            })
        })
        .await?;
    let mut params: BTreeMap<String, String> = [
        ("pid", options.text("EpayId").to_owned()),
        ("type", pay_type.to_owned()),
        ("out_trade_no", order.trade_no.clone()),
        ("notify_url", format!("{callback}{NOTIFY_PATH}")),
        ("return_url", format!("{server}/topup")),
        ("name", format!("TUC{amount}")),
        ("money", epay::format_cents(cents)),
        ("device", "pc".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let sign = epay::sign(&params, options.text("EpayKey"));
    params.insert("sign".into(), sign);
    params.insert("sign_type".into(), "MD5".into());
    tracing::info!(user = %user.id, trade_no = %order.trade_no, amount, money_cents = cents, "top-up order created");
    Ok(PaymentForm {
        params,
        url: format!("{}/submit.php", options.text("PayAddress")),
        trade_no: order.trade_no,
    })
}

/// What became of a notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotifyOutcome {
    /// The order was paid and credited now.
    Credited,
    /// A verified notification that needs no action (already credited, or not a success
    /// status): acknowledged so the gateway stops retrying.
    Ignored,
    /// Refused: forged or tampered signature, unknown order, wrong amount, or top-up off.
    Rejected,
}

/// Handles a payment notification (the query or form parameters of the notify route).
pub async fn notify(
    state: &AppState,
    params: BTreeMap<String, String>,
    auditor: Auditor,
) -> NotifyOutcome {
    let options = state.options.current();
    let trade_no = params.get("out_trade_no").cloned().unwrap_or_default();
    if !online_topup_enabled(&options) {
        tracing::warn!(%trade_no, "payment notification refused: online top-up is not configured");
        return NotifyOutcome::Rejected;
    }
    if !epay::verify(&params, options.text("EpayKey")) {
        tracing::warn!(%trade_no, "payment notification refused: bad signature (forged or tampered)");
        return NotifyOutcome::Rejected;
    }
    if params.get("pid").map(String::as_str) != Some(options.text("EpayId")) {
        tracing::warn!(%trade_no, "payment notification refused: pid is not this merchant");
        return NotifyOutcome::Rejected;
    }
    let status = params.get("trade_status").map_or("", String::as_str);
    if status != "TRADE_SUCCESS" {
        tracing::info!(%trade_no, status, "payment notification ignored: not a success");
        return NotifyOutcome::Ignored;
    }
    let lookup = trade_no.clone();
    let order = match state
        .store
        .read(move |rtx| topups::find_by_trade_no(rtx, &lookup))
        .await
    {
        Ok(Some(order)) => order,
        Ok(None) => {
            tracing::warn!(%trade_no, "payment notification refused: unknown order");
            return NotifyOutcome::Rejected;
        }
        Err(e) => {
            tracing::error!(%trade_no, error = %e, "payment notification: reading the order failed");
            return NotifyOutcome::Rejected;
        }
    };
    let notified = params.get("money").and_then(|m| epay::parse_cents(m));
    if notified != Some(order.money_cents) {
        tracing::warn!(%trade_no, expected = order.money_cents, notified = ?params.get("money"),
            "payment notification refused: the amount does not match the order");
        return NotifyOutcome::Rejected;
    }
    let paid_type = params.get("type").cloned().unwrap_or_default();
    let gateway_no = params.get("trade_no").cloned().unwrap_or_default();
    match complete(
        state,
        &order,
        &paid_type,
        &gateway_no,
        "online payment",
        auditor,
    )
    .await
    {
        Ok(true) => NotifyOutcome::Credited,
        Ok(false) => {
            tracing::info!(%trade_no, "payment notification ignored: the order was already credited (replay)");
            NotifyOutcome::Ignored
        }
        Err(e) => {
            tracing::error!(%trade_no, error = %e, "payment notification: crediting failed");
            NotifyOutcome::Rejected
        }
    }
}

/// Completes `order` if it is still pending: credits its quota and writes the top-up log in
/// the same transaction. `Ok(false)` when it was completed before.
async fn complete(
    state: &AppState,
    order: &TopUp,
    paid_type: &str,
    gateway_no: &str,
    how: &'static str,
    auditor: Auditor,
) -> Result<bool, ConsoleError> {
    let now = now_unix();
    let (trade_no, paid_type, gateway_no) = (
        order.trade_no.clone(),
        paid_type.to_owned(),
        gateway_no.to_owned(),
    );
    let user_id = order.user_id;
    let credited = state
        .quota
        .credit_with(user_id, move |wtx| {
            let Some(done) = topups::complete(wtx, &trade_no, &paid_type, &gateway_no, now)? else {
                return Ok::<_, ConsoleError>((false, None));
            };
            let user = users::get_rw(wtx, done.user_id)?;
            let action = if auditor.id == 0 {
                "topup.complete.notify"
            } else {
                "topup.complete.manual"
            };
            let entry = auditor.entry(
                action,
                format!("topup:{}", done.trade_no),
                &serde_json::json!({"status": "pending"}),
                &serde_json::json!({"status": "success", "user_id": done.user_id.0,
                    "quota": done.quota.0, "money_cents": done.money_cents,
                    "paid_type": done.paid_type}),
            );
            tollgate_storage::audit::append(wtx, entry)?;
            let log = LogEntry {
                created_at: now,
                log_type: LOG_TOPUP,
                user_id: done.user_id,
                username: user
                    .as_ref()
                    .map(|u| u.username.clone())
                    .unwrap_or_default(),
                group: user.map(|u| u.group).unwrap_or_default(),
                quota: done.quota.0,
                content: format!(
                    "{how}: order {} paid {} ({}), credited {} quota",
                    done.trade_no,
                    epay::format_cents(done.money_cents),
                    done.paid_type,
                    done.quota
                ),
                ..LogEntry::default()
            };
            Ok((
                true,
                Some(Credit {
                    amount: done.quota.0,
                    log,
                }),
            ))
        })
        .await?;
    if credited {
        tracing::info!(user = %order.user_id, trade_no = %order.trade_no, quota = %order.quota, how, "top-up order credited");
    }
    Ok(credited)
}

/// Root completes a pending order by hand (the gateway paid but never notified). Never an
/// order of one's own: crediting oneself without a payment needs a second person.
pub async fn complete_by_admin(
    state: &AppState,
    admin: &User,
    trade_no: &str,
    auditor: Auditor,
) -> Result<(), ConsoleError> {
    let lookup = trade_no.trim().to_owned();
    let order = state
        .store
        .read(move |rtx| topups::find_by_trade_no(rtx, &lookup))
        .await?
        .ok_or(ConsoleError::NotFound("order"))?;
    if order.user_id == admin.id {
        return Err(ConsoleError::of(ErrorCode::TopupOwnOrder));
    }
    if !complete(
        state,
        &order,
        "manual",
        "",
        "completed by an admin",
        auditor,
    )
    .await?
    {
        return Err(ConsoleError::of(ErrorCode::OrderNotPending));
    }
    tracing::info!(by = %admin.id, trade_no = %order.trade_no, "top-up order completed by hand");
    Ok(())
}

/// One page of a user's orders (or every user's when `user` is `None`), newest first.
pub async fn records(
    state: &AppState,
    user: Option<UserId>,
    page: PageQuery,
) -> Result<(Vec<TopUp>, u64), ConsoleError> {
    Ok(state
        .store
        .read(move |rtx| match user {
            Some(user) => topups::list_for_user(rtx, user, page.offset(), page.size()),
            None => topups::list(rtx, page.offset(), page.size()),
        })
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(pairs: &[(&str, &str)]) -> OptionsSnapshot {
        OptionsSnapshot::from_stored(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        )
    }

    #[test]
    fn quote_applies_price_group_ratio_and_minimum() {
        let o = options(&[
            ("Price", "7.3"),
            ("MinTopUp", "5"),
            ("TopupGroupRatio", r#"{"default":1,"vip":0.8,"zero":0}"#),
        ]);
        assert_eq!(quote(&o, "default", 10).ok(), Some(7300));
        assert_eq!(quote(&o, "vip", 10).ok(), Some(5840));
        assert_eq!(quote(&o, "zero", 10).ok(), Some(7300), "0 counts as 1");
        assert_eq!(quote(&o, "unknown", 10).ok(), Some(7300));
        assert!(quote(&o, "default", 4).is_err(), "below MinTopUp");
        assert!(quote(&o, "default", MAX_AMOUNT + 1).is_err());
        let free = options(&[("Price", "0")]);
        assert!(quote(&free, "default", 1).is_err(), "nothing to pay");
    }

    #[test]
    fn payment_methods_map_to_epay_types() {
        assert_eq!(epay_type("zfb").ok(), Some("alipay"));
        assert_eq!(epay_type("wx").ok(), Some("wxpay"));
        assert!(epay_type("paypal").is_err());
    }
}
