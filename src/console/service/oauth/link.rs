//! What a verified third-party identity does: binds to the user who started the flow, signs
//! in the account it is bound to, or creates an account through the one registration path.
//! An existing account is never matched by email.

use tollgate_storage::UserId;
use tollgate_storage::users::{self, Provider, STATUS_ENABLED, User};

use crate::clock::now_unix;
use crate::console::service::accounts::check_email;
use crate::console::service::register::{
    Rewards, Signup, Username, create_account, registration_open,
};
use crate::error::{ConsoleError, ErrorCode};
use crate::state::AppState;

/// Longest display name taken from a provider.
const MAX_DISPLAY_NAME: usize = 20;

/// Who the provider says the user is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The provider.
    pub provider: Provider,
    /// The provider's stable id of the account (never its changeable login name).
    pub external_id: String,
    /// The provider's login name ("" if none); a new account's username when free.
    pub username: String,
    /// The provider's display name ("" if none).
    pub display_name: String,
    /// An email address the provider vouches for (verified), if any.
    pub verified_email: Option<String>,
}

/// The result of a third-party callback.
#[derive(Debug)]
pub enum Outcome {
    /// The identity's account (found or just created) is signed in.
    SignedIn(User),
    /// The identity was bound to the signed-in user.
    Bound(User),
}

/// Binds `identity` to `bind_user` when the flow was started by a signed-in user (who must
/// still be the one signed in), else signs in (or signs up) with it.
pub async fn finish(
    state: &AppState,
    identity: Identity,
    bind_user: i64,
    session_user: Option<UserId>,
    aff: String,
) -> Result<Outcome, ConsoleError> {
    if bind_user != 0 {
        let me = session_user
            .filter(|id| id.0 == bind_user)
            .ok_or(ConsoleError::NotLoggedIn)?;
        return bind(state, me, identity).await.map(Outcome::Bound);
    }
    sign_in(state, identity, aff).await.map(Outcome::SignedIn)
}

/// Binds `identity` to user `me`; refused when another account holds it.
pub async fn bind(state: &AppState, me: UserId, identity: Identity) -> Result<User, ConsoleError> {
    let provider = identity.provider;
    let user = state
        .store
        .write(move |wtx| {
            let mut user = users::get_rw(wtx, me)?
                .filter(|u| u.deleted_at.is_none())
                .ok_or(ConsoleError::NotLoggedIn)?;
            if user.status != STATUS_ENABLED {
                return Err(ConsoleError::UserDisabled);
            }
            match users::find_by_identity_rw(wtx, provider, &identity.external_id)? {
                Some(owner) if owner.id != me => {
                    return Err(ConsoleError::AlreadyBound(provider.name()));
                }
                Some(_) => return Ok(user),
                None => {}
            }
            *provider.bound_mut(&mut user) = identity.external_id;
            users::update(wtx, &user)?;
            Ok::<_, ConsoleError>(user)
        })
        .await?;
    state.users.upsert(&user);
    tracing::info!(user = %user.id, provider = provider.name(), "third-party identity bound");
    Ok(user)
}

/// Signs in the account bound to `identity`, or creates one when registration is open.
pub async fn sign_in(
    state: &AppState,
    identity: Identity,
    aff: String,
) -> Result<User, ConsoleError> {
    let options = state.options.current();
    let provider = identity.provider;
    // A provider's email is kept only when verified and allowed; whether it is free is decided
    // in the transaction. It never selects an existing account.
    let email = identity
        .verified_email
        .as_deref()
        .and_then(|e| check_email(e, &options).ok())
        .unwrap_or_default();
    let open = registration_open(&options);
    let rewards = Rewards::from_options(&options);
    let display_name: String = identity
        .display_name
        .trim()
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_DISPLAY_NAME)
        .collect();
    let (user, created) = state
        .store
        .write(move |wtx| {
            if let Some(user) = users::find_by_identity_rw(wtx, provider, &identity.external_id)? {
                if user.deleted_at.is_some() {
                    return Err(ConsoleError::of(ErrorCode::BoundAccountDeleted));
                }
                if user.status != STATUS_ENABLED {
                    return Err(ConsoleError::UserDisabled);
                }
                return Ok((user, false));
            }
            open?;
            let email = if !email.is_empty() && users::find_by_email_rw(wtx, &email)?.is_none() {
                email
            } else {
                String::new()
            };
            let signup = Signup {
                username: Username::FromProvider {
                    name: identity.username,
                    provider,
                },
                display_name,
                password_hash: String::new(),
                email,
                aff_code: aff,
                identity: Some((provider, identity.external_id)),
            };
            let user = create_account(wtx, signup, &rewards, now_unix())?;
            Ok::<_, ConsoleError>((user, true))
        })
        .await?;
    if created {
        tracing::info!(user = %user.id, provider = provider.name(), invited_by = user.inviter_id,
            "user registered through a provider");
    }
    Ok(user)
}
