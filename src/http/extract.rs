//! Request extractors whose rejections are our error type: [`ApiJson`], [`ApiQuery`], [`Session`],
//! [`AdminSession`], [`RootSession`].

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum_extra::extract::SignedCookieJar;
use axum_extra::extract::cookie::Key;
use serde::de::DeserializeOwned;
use tollgate_storage::users::{self, ROLE_ADMIN, ROLE_ROOT, STATUS_ENABLED, User};
use tollgate_storage::{StorageError, UserId};

use crate::console::service::session::{SESSION_COOKIE, SessionClaims};
use crate::error::ConsoleError;
use crate::state::AppState;

/// Header every authenticated console call carries; must equal the session's user id.
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
            Err(rejection) => Err(ConsoleError::Invalid(rejection.body_text())),
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
            Err(rejection) => Err(ConsoleError::Invalid(rejection.body_text())),
        }
    }
}

/// A logged-in, enabled user whose `New-Api-User` header matches the session cookie.
///
/// The user record is read on every request, so a ban, a demotion or a deletion takes effect
/// on the next call, not at the next login.
#[derive(Debug, Clone)]
pub struct Session {
    /// The user, as stored now.
    pub user: User,
}

impl FromRequestParts<AppState> for Session {
    type Rejection = ConsoleError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let jar: SignedCookieJar<Key> =
            SignedCookieJar::from_headers(&parts.headers, state.cookie_key.clone());
        let claims = jar
            .get(SESSION_COOKIE)
            .and_then(|c| SessionClaims::parse(c.value()))
            .ok_or(ConsoleError::NotLoggedIn)?;
        let header = parts
            .headers
            .get(USER_HEADER)
            .ok_or(ConsoleError::UserHeader("New-Api-User header not provided"))?;
        let claimed: UserId =
            header
                .to_str()
                .ok()
                .and_then(|v| v.parse().ok())
                .ok_or(ConsoleError::UserHeader(
                    "New-Api-User header has a bad format",
                ))?;
        if claimed != claims.user_id {
            return Err(ConsoleError::UserHeader(
                "New-Api-User header does not match the session",
            ));
        }
        let id = claims.user_id;
        let user = state
            .store
            .read(move |rtx| users::get(rtx, id))
            .await
            .map_err(|e: StorageError| ConsoleError::from(e))?
            .filter(|u| u.deleted_at.is_none())
            .ok_or(ConsoleError::NotLoggedIn)?;
        if user.status != STATUS_ENABLED {
            return Err(ConsoleError::UserDisabled);
        }
        Ok(Session { user })
    }
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
        let session = Session::from_request_parts(parts, state).await?;
        if session.user.role < ROLE_ADMIN {
            return Err(ConsoleError::Forbidden);
        }
        Ok(AdminSession(session))
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
        let session = Session::from_request_parts(parts, state).await?;
        if session.user.role < ROLE_ROOT {
            return Err(ConsoleError::Forbidden);
        }
        Ok(RootSession(session))
    }
}
