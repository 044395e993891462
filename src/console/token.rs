//! API tokens (owners only): /api/token/ list, search, read, create, update, status, delete,
//! and the full key for its owner.

use crate::http::api::{Access, ApiRouter, delete, get, post};
use axum::extract::{Path, Query, State};
use serde::{Deserialize, Serialize};
use tollgate_storage::TokenId;

use super::service::tokens::{self, TokenInput, TokenSearch, TokenView};
use crate::clock::now_unix;
use crate::error::ConsoleError;
use crate::http::envelope::{Envelope, done, ok};
use crate::http::extract::{ApiJson, Session};
use crate::http::page::{Page, PageQuery};
use crate::state::AppState;

/// Token routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route(
            "/api/token/",
            get(Access::User, list_tokens)
                .post(Access::User, create_token)
                .put(Access::User, update_token),
        )
        .route("/api/token/search", get(Access::User, search_tokens))
        .route(
            "/api/token/{id}",
            get(Access::User, get_token).delete(Access::User, delete_token),
        )
        .route("/api/token/{id}/", delete(Access::User, delete_token))
        .route("/api/token/{id}/key", post(Access::User, reveal_key))
}

fn page_of(page: PageQuery, all: Vec<tollgate_storage::tokens::Token>) -> Page<TokenView> {
    let now = now_unix();
    let total = all.len() as u64;
    let items = all
        .iter()
        .skip(page.offset())
        .take(page.size())
        .map(|t| TokenView::new(t, now))
        .collect();
    Page::new(page, items, total)
}

async fn list_tokens(
    State(state): State<AppState>,
    session: Session,
    Query(page): Query<PageQuery>,
) -> Result<Envelope<Page<TokenView>>, ConsoleError> {
    let all = tokens::list(&state, &session.user, TokenSearch::default()).await?;
    Ok(ok(page_of(page, all)))
}

async fn search_tokens(
    State(state): State<AppState>,
    session: Session,
    Query(page): Query<PageQuery>,
    Query(search): Query<TokenSearch>,
) -> Result<Envelope<Page<TokenView>>, ConsoleError> {
    let all = tokens::list(&state, &session.user, search).await?;
    Ok(ok(page_of(page, all)))
}

async fn get_token(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
) -> Result<Envelope<TokenView>, ConsoleError> {
    let token = tokens::get(&state, &session.user, TokenId(id)).await?;
    Ok(ok(TokenView::new(&token, now_unix())))
}

async fn create_token(
    State(state): State<AppState>,
    session: Session,
    ApiJson(input): ApiJson<TokenInput>,
) -> Result<Envelope<TokenView>, ConsoleError> {
    let token = tokens::create(&state, &session.user, input).await?;
    Ok(ok(TokenView::new(&token, now_unix())))
}

/// `?status_only=true`.
#[derive(Debug, Default, Deserialize)]
struct UpdateMode {
    #[serde(default)]
    status_only: bool,
}

async fn update_token(
    State(state): State<AppState>,
    session: Session,
    Query(mode): Query<UpdateMode>,
    ApiJson(input): ApiJson<TokenInput>,
) -> Result<Envelope<TokenView>, ConsoleError> {
    let token = tokens::update(&state, &session.user, input, mode.status_only).await?;
    Ok(ok(TokenView::new(&token, now_unix())))
}

async fn delete_token(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
) -> Result<Envelope<()>, ConsoleError> {
    tokens::delete(&state, &session.user, TokenId(id)).await?;
    Ok(done("deleted"))
}

/// The full key.
#[derive(Debug, Serialize)]
struct FullKey {
    key: String,
}

async fn reveal_key(
    State(state): State<AppState>,
    session: Session,
    Path(id): Path<i64>,
) -> Result<Envelope<FullKey>, ConsoleError> {
    let token = tokens::get(&state, &session.user, TokenId(id)).await?;
    Ok(ok(FullKey {
        key: format!("sk-{}", token.key),
    }))
}
