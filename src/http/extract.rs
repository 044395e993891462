//! Request extractors whose rejections are our error type: [`ApiJson`], [`ApiQuery`], [`Session`],
//! [`AdminSession`], [`RootSession`].

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header;
use axum::http::request::Parts;
use axum_extra::extract::SignedCookieJar;
use axum_extra::extract::cookie::Key;
use serde::de::DeserializeOwned;
use tollgate_storage::UserId;
use tollgate_storage::users::{self, ROLE_ADMIN, ROLE_ROOT, STATUS_ENABLED, User};

use crate::console::service::secrets::sha256_hex;
use crate::console::service::session::{self, SESSION_COOKIE, SessionClaims};
use crate::error::{ConsoleError, ErrorCode};
use crate::state::AppState;

/// Header every authenticated console call carries; must equal the authenticated user's id.
pub const USER_HEADER: &str = "New-Api-User";

/// JSON body extractor: malformed input becomes a 400 in the console's shape.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ConsoleError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(value)) => Ok(ApiJson(value)),
            Err(rejection) => Err(ConsoleError::with_args(
                ErrorCode::BodyInvalid,
                [rejection.body_text()],
            )),
        }
    }
}

/// Query-string extractor: malformed parameters become a 400 in the console's shape.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiQuery<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ConsoleError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(ApiQuery(value)),
            Err(rejection) => Err(ConsoleError::with_args(
                ErrorCode::QueryInvalid,
                [rejection.body_text()],
            )),
        }
    }
}

/// An authenticated, enabled user whose `New-Api-User` header names them.
///
/// Authentication is the signed session cookie of a live session (its generation is still the
/// user's, see [`session`]), or else a system access token in `Authorization` (optionally
/// `Bearer `-prefixed). The user record is read on every request, so a ban, a demotion or a
/// deletion takes effect on the next call, not at the next login.
#[derive(Debug, Clone)]
pub struct Session {
    /// The user, as stored now.
    pub user: User,
    /// Names this one session (the cookie's user, sign-in time and generation, or a digest of
    /// the access token), for state tied to it such as a recent two-factor re-verification.
    pub key: String,
    /// Unix seconds of the sign-in that issued the session cookie (`None` for an access token).
    pub signed_in_at: Option<i64>,
}

impl Session {
    /// Whether this session is a system access token (not a browser's cookie).
    pub fn via_access_token(&self) -> bool {
        self.key.starts_with(ACCESS_TOKEN_KEY)
    }
}

/// How [`Session::key`] starts for a system access token.
const ACCESS_TOKEN_KEY: &str = "t:";

impl FromRequestParts<AppState> for Session {
    type Rejection = ConsoleError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let jar = SignedCookieJar::<Key>::from_headers(&parts.headers, state.cookie_key.clone());
        let claims = jar
            .get(SESSION_COOKIE)
            .and_then(|c| SessionClaims::parse(c.value(), session::now(state)));
        let found = match (claims, access_token(parts)) {
            (Some(claims), _) => match session::lookup(state, claims).await? {
                Some((user, true)) => Some((
                    user,
                    format!(
                        "s:{}.{}.{}.{}",
                        claims.user_id, claims.issued_at, claims.generation, claims.nonce
                    ),
                    Some(claims.issued_at),
                )),
                // The ban ended the session; while it lasts, say so rather than "log in again".
                Some((user, false))
                    if user.status != STATUS_ENABLED && user.deleted_at.is_none() =>
                {
                    return Err(ConsoleError::UserDisabled);
                }
                _ => None,
            },
            (None, Some(token)) => Some((
                user_by_access_token(state, &token)
                    .await?
                    .ok_or(ConsoleError::InvalidAccessToken)?,
                format!("{ACCESS_TOKEN_KEY}{}", sha256_hex(&token)),
                None,
            )),
            (None, None) => None,
        };
        let (user, key, signed_in_at) = found
            .filter(|(u, _, _)| u.deleted_at.is_none())
            .ok_or(ConsoleError::NotLoggedIn)?;
        check_user_header(parts, user.id)?;
        if user.status != STATUS_ENABLED {
            return Err(ConsoleError::UserDisabled);
        }
        Ok(Session {
            user,
            key,
            signed_in_at,
        })
    }
}

/// The user whose system access token is `token`, if any.
pub async fn user_by_access_token(
    state: &AppState,
    token: &str,
) -> Result<Option<User>, ConsoleError> {
    let hash = sha256_hex(token);
    Ok(state
        .store
        .read(move |rtx| users::find_by_access_token(rtx, &hash))
        .await?)
}

/// The system access token from `Authorization`, if any.
fn access_token(parts: &Parts) -> Option<String> {
    bearer_token(&parts.headers)
}

/// The token in an `Authorization` header (optionally `Bearer `-prefixed), if any.
pub fn bearer_token(headers: &axum::http::HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let token = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .unwrap_or(value)
        .trim();
    (!token.is_empty()).then(|| token.to_owned())
}

/// The `New-Api-User` header must name the authenticated user (a cross-site request cannot set
/// it, so this doubles as CSRF protection).
fn check_user_header(parts: &Parts, id: UserId) -> Result<(), ConsoleError> {
    let header = parts
        .headers
        .get(USER_HEADER)
        .ok_or(ConsoleError::of(ErrorCode::UserHeaderMissing))?;
    let claimed: UserId = header
        .to_str()
        .ok()
        .and_then(|v| v.parse().ok())
        .ok_or(ConsoleError::of(ErrorCode::UserHeaderBadFormat))?;
    if claimed != id {
        return Err(ConsoleError::of(ErrorCode::UserHeaderSessionMismatch));
    }
    Ok(())
}

/// A [`Session`] whose user has at least role `min`.
async fn session_with_role(
    parts: &mut Parts,
    state: &AppState,
    min: i32,
) -> Result<Session, ConsoleError> {
    let session = Session::from_request_parts(parts, state).await?;
    if session.user.role < min {
        return Err(ConsoleError::Forbidden);
    }
    Ok(session)
}

/// A [`Session`] of an admin (role ≥ 10).
#[derive(Debug, Clone)]
pub struct AdminSession(pub Session);

impl FromRequestParts<AppState> for AdminSession {
    type Rejection = ConsoleError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        session_with_role(parts, state, ROLE_ADMIN)
            .await
            .map(AdminSession)
    }
}

/// A [`Session`] of the super admin (role ≥ 100).
#[derive(Debug, Clone)]
pub struct RootSession(pub Session);

impl FromRequestParts<AppState> for RootSession {
    type Rejection = ConsoleError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        session_with_role(parts, state, ROLE_ROOT)
            .await
            .map(RootSession)
    }
}
