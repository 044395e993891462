//! The wallet: redeeming a code (POST /api/user/topup), the online top-up quote and order
//! (POST /api/user/amount, /api/user/pay), the Epay notification (GET|POST
//! /api/user/epay/notify, public), and the order history (GET /api/user/topup/self; all users'
//! for admins at GET /api/user/topup; root completes another user's order by hand at POST
//! /api/user/topup/complete).

use std::collections::BTreeMap;

use crate::http::api::{Access, ApiRouter, Body, get, post};
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use super::service::audit::{AuditIp, Auditor};
use super::service::epay::format_cents;
use super::service::redemptions;
use super::service::topup::{self, NOTIFY_PATH, NotifyOutcome, PayRequest, TopUpView};
use crate::error::ConsoleError;
use crate::http::envelope::{Envelope, done, ok};
use crate::http::extract::{AdminSession, ApiJson, ApiQuery, RootSession, Session};
use crate::http::page::{Page, PageQuery};
use crate::state::AppState;

/// Wallet routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route(
            "/api/user/topup",
            get(Access::Admin, list_all_topups).post(Access::User, redeem_code),
        )
        .route("/api/user/topup/self", get(Access::User, list_own_topups))
        .route(
            "/api/user/topup/complete",
            post(Access::Root, complete_topup),
        )
        .route("/api/user/amount", post(Access::User, quote_amount))
        .route("/api/user/pay", post(Access::User, create_payment))
        .route(
            NOTIFY_PATH,
            get(Access::Public, payment_notify)
                .post(Access::Public, payment_notify)
                .body(Body::Form),
        )
}

/// POST /api/user/topup body.
#[derive(Debug, Deserialize)]
struct RedeemRequest {
    #[serde(default)]
    key: String,
}

async fn redeem_code(
    State(state): State<AppState>,
    session: Session,
    ApiJson(req): ApiJson<RedeemRequest>,
) -> Result<Envelope<i64>, ConsoleError> {
    Ok(ok(
        redemptions::redeem(&state, &session.user, &req.key).await?
    ))
}

async fn quote_amount(
    State(state): State<AppState>,
    session: Session,
    ApiJson(req): ApiJson<PayRequest>,
) -> Result<Envelope<String>, ConsoleError> {
    let cents = topup::quote(&state.options.current(), &session.user.group, req.amount)?;
    Ok(Envelope {
        success: true,
        message: "success".into(),
        data: format_cents(cents),
    })
}

/// POST /api/user/pay's answer: new-api's shape, with `url` beside `data`.
#[derive(Debug, Serialize)]
struct PaymentAnswer {
    success: bool,
    message: &'static str,
    data: BTreeMap<String, String>,
    url: String,
    trade_no: String,
}

async fn create_payment(
    State(state): State<AppState>,
    session: Session,
    ApiJson(req): ApiJson<PayRequest>,
) -> Result<axum::Json<PaymentAnswer>, ConsoleError> {
    let form = topup::pay(&state, &session.user, req).await?;
    Ok(axum::Json(PaymentAnswer {
        success: true,
        message: "success",
        data: form.params,
        url: form.url,
        trade_no: form.trade_no,
    }))
}

/// The gateway's notification, by GET (query) or POST (form body, query merged). Answers the
/// plain text `success` (credited or nothing to do) or `fail` (refused), as Epay expects.
async fn payment_notify(
    State(state): State<AppState>,
    AuditIp(ip): AuditIp,
    RawQuery(query): RawQuery,
    body: Bytes,
) -> Response {
    let mut params: BTreeMap<String, String> = BTreeMap::new();
    for part in [query.unwrap_or_default().as_bytes(), body.as_ref()] {
        for (k, v) in form_urlencoded::parse(part) {
            params.insert(k.into_owned(), v.into_owned());
        }
    }
    match topup::notify(&state, params, Auditor::system(ip)).await {
        NotifyOutcome::Credited | NotifyOutcome::Ignored => "success".into_response(),
        NotifyOutcome::Rejected => "fail".into_response(),
    }
}

async fn list_own_topups(
    State(state): State<AppState>,
    session: Session,
    ApiQuery(page): ApiQuery<PageQuery>,
) -> Result<Envelope<Page<TopUpView>>, ConsoleError> {
    let (orders, total) = topup::records(&state, Some(session.user.id), page).await?;
    Ok(ok(Page::new(
        page,
        orders.iter().map(TopUpView::from).collect(),
        total,
    )))
}

async fn list_all_topups(
    State(state): State<AppState>,
    _admin: AdminSession,
    ApiQuery(page): ApiQuery<PageQuery>,
) -> Result<Envelope<Page<TopUpView>>, ConsoleError> {
    let (orders, total) = topup::records(&state, None, page).await?;
    Ok(ok(Page::new(
        page,
        orders.iter().map(TopUpView::from).collect(),
        total,
    )))
}

/// POST /api/user/topup/complete body.
#[derive(Debug, Deserialize)]
struct CompleteRequest {
    #[serde(default)]
    trade_no: String,
}

async fn complete_topup(
    State(state): State<AppState>,
    RootSession(root): RootSession,
    AuditIp(ip): AuditIp,
    ApiJson(req): ApiJson<CompleteRequest>,
) -> Result<Envelope<()>, ConsoleError> {
    let auditor = Auditor::user(&root.user, ip);
    topup::complete_by_admin(&state, &root.user, &req.trade_no, auditor).await?;
    Ok(done("completed"))
}
