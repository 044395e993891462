//! Two-factor (TOTP) routes: the user's own `/api/user/2fa/{status,setup,enable,disable,
//! backup_codes}`, the sign-in's second step `POST /api/user/login/2fa`, re-verification
//! `POST /api/verify` (5 minutes, needed to reveal a channel key), and for admins
//! `DELETE /api/user/{id}/2fa` (audited) and `GET /api/user/2fa/stats`. Every route that takes
//! a code or a password is behind the per-IP sign-in limiter; setup asks for the password
//! first ([`reauth`]).

use axum::extract::{Path, State};
use axum_extra::extract::SignedCookieJar;
use axum_extra::extract::cookie::Key;
use serde::{Deserialize, Serialize};
use tollgate_storage::UserId;

use super::service::audit::AuditIp;
use super::service::reauth::{self, ProofBody};
use super::service::session;
use super::service::two_factor::{self, RecoveryCodes, Setup, Stats, Status, signin};
use super::service::user_view::UserView;
use crate::clock::now_unix;
use crate::error::{ConsoleError, ErrorCode};
use crate::http::api::{Access, ApiRouter, delete, get, post};
use crate::http::client_ip::Limited;
use crate::http::envelope::{Envelope, done, ok};
use crate::http::extract::{AdminSession, ApiJson, Session};
use crate::state::AppState;

/// Two-factor routes.
pub fn routes() -> ApiRouter {
    ApiRouter::new()
        .route("/api/user/2fa/status", get(Access::User, get_status))
        .route("/api/user/2fa/setup", post(Access::User, start_setup))
        .route("/api/user/2fa/enable", post(Access::User, enable))
        .route("/api/user/2fa/disable", post(Access::User, disable))
        .route(
            "/api/user/2fa/backup_codes",
            post(Access::User, regenerate_codes),
        )
        .route("/api/user/2fa/stats", get(Access::Admin, get_stats))
        .route("/api/user/{id}/2fa", delete(Access::Admin, reset_user))
        .route(
            "/api/user/login/2fa",
            post(Access::Public, login_second_step),
        )
        .route("/api/verify", post(Access::User, verify))
}

/// A body carrying a code (a current TOTP code, or a recovery code where one is accepted).
#[derive(Debug, Deserialize)]
struct CodeBody {
    #[serde(default)]
    code: String,
}

impl CodeBody {
    fn code(self) -> Result<String, ConsoleError> {
        let code = self.code.trim().to_owned();
        if code.is_empty() {
            return Err(ConsoleError::of(ErrorCode::TwoFactorCodeRequired));
        }
        Ok(code)
    }
}

async fn get_status(
    State(state): State<AppState>,
    session: Session,
) -> Result<Envelope<Status>, ConsoleError> {
    Ok(ok(two_factor::status(&state, session.user.id).await?))
}

/// Asks for the password (or, for an account with none, a recent third-party sign-in) first.
async fn start_setup(
    State(state): State<AppState>,
    Limited(_ip): Limited,
    session: Session,
    ProofBody(proof): ProofBody,
) -> Result<Envelope<Setup>, ConsoleError> {
    reauth::confirm(&state, &session, proof).await?;
    Ok(ok(two_factor::setup(&state, &session.user).await?))
}

/// Turning two-factor on ends every session of the user, this one too; the browser that did
/// it (holding the code) gets a fresh one.
async fn enable(
    State(state): State<AppState>,
    Limited(_ip): Limited,
    session: Session,
    jar: SignedCookieJar<Key>,
    ApiJson(body): ApiJson<CodeBody>,
) -> Result<(SignedCookieJar<Key>, Envelope<RecoveryCodes>), ConsoleError> {
    let codes = two_factor::enable(&state, session.user.id, body.code()?).await?;
    let jar = jar.add(session::issue(&state, session.user.id).await?);
    Ok((jar, ok(codes)))
}

/// Like [`enable`]: the other sessions end, this browser gets a fresh one.
async fn disable(
    State(state): State<AppState>,
    Limited(_ip): Limited,
    session: Session,
    jar: SignedCookieJar<Key>,
    ApiJson(body): ApiJson<CodeBody>,
) -> Result<(SignedCookieJar<Key>, Envelope<()>), ConsoleError> {
    two_factor::disable(&state, session.user.id, body.code()?).await?;
    let jar = jar.add(session::issue(&state, session.user.id).await?);
    Ok((jar, done("two-factor authentication turned off")))
}

async fn regenerate_codes(
    State(state): State<AppState>,
    Limited(_ip): Limited,
    session: Session,
    ApiJson(body): ApiJson<CodeBody>,
) -> Result<Envelope<RecoveryCodes>, ConsoleError> {
    Ok(ok(two_factor::regenerate(
        &state,
        session.user.id,
        body.code()?,
    )
    .await?))
}

async fn login_second_step(
    State(state): State<AppState>,
    Limited(_ip): Limited,
    jar: SignedCookieJar<Key>,
    ApiJson(body): ApiJson<CodeBody>,
) -> Result<(SignedCookieJar<Key>, Envelope<UserView>), ConsoleError> {
    signin::second_factor(&state, jar, body.code()?).await
}

/// POST /api/verify answer.
#[derive(Debug, Serialize)]
struct Verified {
    verified: bool,
    /// Unix seconds until which this session counts as verified.
    expires_at: i64,
}

/// Re-verifies this session with a code: for the next 5 minutes it may reveal channel keys.
async fn verify(
    State(state): State<AppState>,
    Limited(_ip): Limited,
    session: Session,
    ApiJson(body): ApiJson<CodeBody>,
) -> Result<Envelope<Verified>, ConsoleError> {
    two_factor::prove(&state, session.user.id, body.code()?).await?;
    let expires_at = state.two_factor.verified(&session.key, now_unix())?;
    Ok(ok(Verified {
        verified: true,
        expires_at,
    }))
}

async fn get_stats(
    State(state): State<AppState>,
    _admin: AdminSession,
) -> Result<Envelope<Stats>, ConsoleError> {
    Ok(ok(two_factor::stats(&state).await?))
}

async fn reset_user(
    State(state): State<AppState>,
    AdminSession(admin): AdminSession,
    AuditIp(ip): AuditIp,
    Path(id): Path<String>,
) -> Result<Envelope<()>, ConsoleError> {
    let id: i64 = id
        .parse()
        .map_err(|_| ConsoleError::of(ErrorCode::BadUserId))?;
    two_factor::reset(&state, &admin.user, UserId(id), ip).await?;
    Ok(done("two-factor authentication reset"))
}
