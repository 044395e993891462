//! Third-party sign-in routes, all behind the per-IP limit: `GET /api/oauth/state`, the
//! authorization-code callbacks `GET /api/oauth/{github|oidc|linuxdo}?code&state`, the
//! Telegram widget (`/api/oauth/telegram/login|bind`) and the WeChat server
//! (`/api/oauth/wechat`, `/api/oauth/wechat/bind`).

use std::collections::BTreeMap;

use crate::http::api::{Access, ApiRouter, get};
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum_extra::extract::SignedCookieJar;
use axum_extra::extract::cookie::Key;
use serde::{Deserialize, Serialize};
use tollgate_storage::UserId;

use super::service::oauth::link::{self, Identity, Outcome};
use super::service::oauth::state::{Pending, STATE_COOKIE, removal};
use super::service::oauth::{Flow, redirect_provider, redirect_uri, telegram, wechat};
use super::service::session::{self, SESSION_COOKIE, SessionClaims};
use super::service::two_factor::signin;
use super::service::user_view::UserView;
use crate::clock::now_unix;
use crate::error::{ConsoleError, ErrorCode};
use crate::http::client_ip::Limited;
use crate::http::envelope::ok;
use crate::http::extract::{ApiQuery, Session};
use crate::state::AppState;

/// Third-party sign-in routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route("/api/oauth/state", get(Access::Public, issue_state))
        .route(
            "/api/oauth/telegram/login",
            get(Access::Public, telegram_login),
        )
        .route("/api/oauth/telegram/bind", get(Access::User, telegram_bind))
        .route("/api/oauth/wechat", get(Access::Public, wechat_login))
        .route("/api/oauth/wechat/bind", get(Access::User, wechat_bind))
        .route("/api/oauth/{provider}", get(Access::Public, callback))
}

/// `GET /api/oauth/state?aff=&provider=`.
#[derive(Debug, Deserialize)]
struct StateQuery {
    #[serde(default)]
    aff: String,
    #[serde(default)]
    provider: String,
}

/// The state answer: `data` is the state (spec 01 §7); with `?provider=`, `authorize_url` is
/// the provider's sign-in page with the client id, the callback address, the state, and the
/// nonce and PKCE challenge where the provider takes them.
#[derive(Debug, Serialize)]
struct StateAnswer {
    success: bool,
    message: String,
    data: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    authorize_url: Option<String>,
}

async fn issue_state(
    State(state): State<AppState>,
    Limited(_ip): Limited,
    jar: SignedCookieJar<Key>,
    ApiQuery(q): ApiQuery<StateQuery>,
) -> Result<(SignedCookieJar<Key>, axum::Json<StateAnswer>), ConsoleError> {
    let options = state.options.current();
    let provider = if q.provider.is_empty() {
        None
    } else {
        Some(redirect_provider(&q.provider)?)
    };
    let flow = match provider {
        Some(p) => Some(Flow::of(&state, p).await?),
        None => None,
    };
    let bind_user = session_user(&state, &jar).await.map_or(0, |id| id.0);
    let now = now_unix();
    let pending = Pending::new(
        provider.map_or("", |p| p.name()),
        &q.aff,
        provider
            .map(|p| redirect_uri(&options, p))
            .unwrap_or_default(),
        bind_user,
        now,
    );
    let authorize_url = match &flow {
        Some(flow) => Some(flow.authorize_url(&pending)?),
        None => None,
    };
    state.oauth_states.issue(&pending, now)?;
    let jar = jar.add(pending.cookie(session::secure(&state))?);
    Ok((
        jar,
        axum::Json(StateAnswer {
            success: true,
            message: String::new(),
            data: pending.state,
            authorize_url,
        }),
    ))
}

/// `?code=&state=` of a provider's redirect.
#[derive(Debug, Deserialize)]
struct CallbackQuery {
    #[serde(default)]
    code: String,
    #[serde(default)]
    state: String,
}

async fn callback(
    State(state): State<AppState>,
    Limited(_ip): Limited,
    Path(provider): Path<String>,
    jar: SignedCookieJar<Key>,
    ApiQuery(q): ApiQuery<CallbackQuery>,
) -> Response {
    // The state cookie is spent whatever the outcome.
    let cleared = jar.clone().remove(removal());
    match finish_callback(&state, &provider, &jar, q).await {
        Ok(outcome) => answer(&state, cleared, outcome).await,
        Err(e) => (cleared, e).into_response(),
    }
}

async fn finish_callback(
    state: &AppState,
    provider: &str,
    jar: &SignedCookieJar<Key>,
    q: CallbackQuery,
) -> Result<Outcome, ConsoleError> {
    let provider = redirect_provider(provider)?;
    let cookie = jar.get(STATE_COOKIE);
    let mut pending = state.oauth_states.redeem(
        cookie.as_ref().map(|c| c.value()),
        &q.state,
        provider.name(),
        now_unix(),
    )?;
    if pending.redirect_uri.is_empty() {
        pending.redirect_uri = redirect_uri(&state.options.current(), provider);
    }
    let flow = Flow::of(state, provider).await?;
    let identity = flow.identity(state, &pending, &q.code).await?;
    let me = session_user(state, jar).await;
    link::finish(state, identity, pending.bind_user, me, pending.aff).await
}

/// The signed-in user's answer: a new session for a sign-in (or, with two-factor on, the
/// pending sign-in and `{require_2fa: true}`), message `bind` for a binding.
async fn answer(state: &AppState, jar: SignedCookieJar<Key>, outcome: Outcome) -> Response {
    match outcome {
        Outcome::SignedIn(user) => match signin::first_factor(state, jar.clone(), &user).await {
            Ok(answer) => answer.into_response(),
            Err(e) => (jar, e).into_response(),
        },
        Outcome::Bound(user) => {
            let mut envelope = ok(UserView::from(&user));
            envelope.message = "bind".into();
            (jar, envelope).into_response()
        }
    }
}

/// The user of a valid session cookie, if any (no `New-Api-User` check: used only to tell a
/// binding from a sign-in, which the state cookie ties to this browser).
async fn session_user(state: &AppState, jar: &SignedCookieJar<Key>) -> Option<UserId> {
    let claims = jar
        .get(SESSION_COOKIE)
        .and_then(|c| SessionClaims::parse(c.value(), session::now(state)))?;
    let user = session::current_user(state, claims).await.ok().flatten()?;
    (user.deleted_at.is_none()).then_some(user.id)
}

fn telegram_identity(
    state: &AppState,
    fields: &BTreeMap<String, String>,
) -> Result<Identity, ConsoleError> {
    let options = state.options.current();
    if !options.flag("TelegramOAuthEnabled") {
        return Err(ConsoleError::of(ErrorCode::TelegramDisabled));
    }
    let token = options.text("TelegramBotToken");
    if token.is_empty() {
        return Err(ConsoleError::of(ErrorCode::TelegramNotConfigured));
    }
    let now = now_unix();
    let verified = telegram::verify(fields, token, now)?;
    let digest = format!("telegram:{}", verified.hash);
    if !state
        .oauth_states
        .spend(&digest, verified.expires_at, now)?
    {
        return Err(ConsoleError::of(ErrorCode::TelegramReplayed));
    }
    Ok(verified.identity)
}

async fn telegram_login(
    State(state): State<AppState>,
    Limited(_ip): Limited,
    jar: SignedCookieJar<Key>,
    ApiQuery(fields): ApiQuery<BTreeMap<String, String>>,
) -> Result<Response, ConsoleError> {
    let identity = telegram_identity(&state, &fields)?;
    let aff = fields.get("aff").cloned().unwrap_or_default();
    let user = link::sign_in(&state, identity, aff).await?;
    Ok(answer(&state, jar, Outcome::SignedIn(user)).await)
}

async fn telegram_bind(
    State(state): State<AppState>,
    Limited(_ip): Limited,
    session: Session,
    jar: SignedCookieJar<Key>,
    ApiQuery(fields): ApiQuery<BTreeMap<String, String>>,
) -> Result<Response, ConsoleError> {
    let identity = telegram_identity(&state, &fields)?;
    let user = link::bind(&state, session.user.id, identity).await?;
    Ok(answer(&state, jar, Outcome::Bound(user)).await)
}

/// `?code=` (and `&aff=` for a first sign-in).
#[derive(Debug, Deserialize)]
struct WeChatQuery {
    #[serde(default)]
    code: String,
    #[serde(default)]
    aff: String,
}

async fn wechat_login(
    State(state): State<AppState>,
    Limited(_ip): Limited,
    jar: SignedCookieJar<Key>,
    ApiQuery(q): ApiQuery<WeChatQuery>,
) -> Result<Response, ConsoleError> {
    let identity = wechat::identity(&state, &q.code).await?;
    let user = link::sign_in(&state, identity, q.aff).await?;
    Ok(answer(&state, jar, Outcome::SignedIn(user)).await)
}

async fn wechat_bind(
    State(state): State<AppState>,
    Limited(_ip): Limited,
    session: Session,
    jar: SignedCookieJar<Key>,
    ApiQuery(q): ApiQuery<WeChatQuery>,
) -> Result<Response, ConsoleError> {
    let identity = wechat::identity(&state, &q.code).await?;
    let user = link::bind(&state, session.user.id, identity).await?;
    Ok(answer(&state, jar, Outcome::Bound(user)).await)
}
