//! Password sign-in: username or email plus password.

use serde::Deserialize;
use tollgate_storage::StorageError;
use tollgate_storage::users::{self, ROLE_ROOT, STATUS_ENABLED, User};

use super::password::is_bcrypt;
use crate::error::{ConsoleError, ErrorCode};
use crate::state::AppState;

/// POST /api/user/login body.
#[derive(Debug, Deserialize)]
pub struct LoginRequest {
    /// Username or email.
    #[serde(default)]
    pub username: String,
    /// Password.
    #[serde(default)]
    pub password: String,
}

/// Checks the credentials and returns the user. Unknown users cost the same argon2 work as
/// known ones, and the answer never says which part was wrong.
///
/// When the admin has turned password sign-in off, the super admin can still sign in with
/// their password (so a broken provider never locks the operator out); everyone else, and
/// any wrong credentials, get "password sign-in is off".
pub async fn verify(state: &AppState, req: LoginRequest) -> Result<User, ConsoleError> {
    if state.options.current().flag("PasswordLoginEnabled") {
        return check(state, req).await;
    }
    match check(state, req).await {
        Ok(user) if user.role >= ROLE_ROOT => Ok(user),
        Ok(_) | Err(ConsoleError::BadCredentials) => Err(ConsoleError::PasswordLoginDisabled),
        Err(refused) if refused.code() == ErrorCode::InvalidRequest => {
            Err(ConsoleError::PasswordLoginDisabled)
        }
        Err(other) => Err(other),
    }
}

async fn check(state: &AppState, req: LoginRequest) -> Result<User, ConsoleError> {
    let name = req.username.trim().to_owned();
    if name.is_empty() || req.password.is_empty() {
        return Err(ConsoleError::of(ErrorCode::LoginFieldsRequired));
    }
    let found = state
        .store
        .read(move |rtx| {
            let by_name = users::find_by_username(rtx, &name)?;
            match by_name {
                Some(u) => Ok::<_, StorageError>(Some(u)),
                None if name.contains('@') => users::find_by_email(rtx, &name),
                None => Ok(None),
            }
        })
        .await?
        .filter(|u| u.deleted_at.is_none());
    let hash = found.as_ref().map(|u| u.password_hash.clone());
    let password = req.password.clone();
    if !state.hasher.verify(req.password, hash).await? {
        return Err(ConsoleError::BadCredentials);
    }
    let user = found.ok_or(ConsoleError::BadCredentials)?;
    if user.status != STATUS_ENABLED {
        return Err(ConsoleError::UserDisabled);
    }
    if is_bcrypt(&user.password_hash) {
        upgrade_hash(state, &user, password).await?;
    }
    Ok(user)
}

/// Replaces an imported bcrypt hash with an argon2id hash of the password that just matched.
async fn upgrade_hash(state: &AppState, user: &User, password: String) -> Result<(), ConsoleError> {
    let new = state.hasher.hash(password).await?;
    let (id, old) = (user.id, user.password_hash.clone());
    state
        .store
        .write(move |wtx| users::upgrade_password_hash(wtx, id, &old, &new))
        .await?;
    Ok(())
}
