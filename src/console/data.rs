//! Dashboard data: GET /api/data/ (admin; all users or `username`), /api/data/users (admin; by
//! user) and /api/data/self (own), each `?start_timestamp=&end_timestamp=`; and GET
//! /api/dashboard/cache_hit_rate (admin; the prompt-cache hit rate per channel, `&channel=`).

use crate::http::api::{Access, ApiRouter, get};
use axum::extract::State;

use super::service::cache_rate::{self, CacheRateQuery, CacheRateView};
use super::service::dashboard::{self, DataQuery, DataView};
use crate::error::ConsoleError;
use crate::http::envelope::{Envelope, ok};
use crate::http::extract::{AdminSession, ApiQuery, Session};
use crate::state::AppState;

/// Dashboard routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route("/api/data/", get(Access::Admin, all))
        .route("/api/data/users", get(Access::Admin, by_user))
        .route("/api/data/self", get(Access::User, own))
        .route("/api/data/self/", get(Access::User, own))
        .route(
            "/api/dashboard/cache_hit_rate",
            get(Access::Admin, cache_hit_rate),
        )
}

async fn all(
    State(state): State<AppState>,
    _admin: AdminSession,
    ApiQuery(q): ApiQuery<DataQuery>,
) -> Result<Envelope<Vec<DataView>>, ConsoleError> {
    Ok(ok(dashboard::all(&state, &q).await?))
}

async fn by_user(
    State(state): State<AppState>,
    _admin: AdminSession,
    ApiQuery(q): ApiQuery<DataQuery>,
) -> Result<Envelope<Vec<DataView>>, ConsoleError> {
    Ok(ok(dashboard::by_user(&state, &q).await?))
}

async fn own(
    State(state): State<AppState>,
    session: Session,
    ApiQuery(q): ApiQuery<DataQuery>,
) -> Result<Envelope<Vec<DataView>>, ConsoleError> {
    let user = session.user;
    Ok(ok(dashboard::own(&state, user.id, user.username, &q).await?))
}

async fn cache_hit_rate(
    State(state): State<AppState>,
    _admin: AdminSession,
    ApiQuery(q): ApiQuery<CacheRateQuery>,
) -> Result<Envelope<Vec<CacheRateView>>, ConsoleError> {
    Ok(ok(cache_rate::per_channel(&state, &q).await?))
}
