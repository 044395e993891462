//! Rate limits in the console (P15 items 1 and 5): a key's limits for its owner, a user's and
//! a channel's (with per-key limits) for an admin. The wire shape is flat — the four fields
//! `concurrency_limit`, `rpm_limit`, `tpm_limit`, `rpd_limit` (0 = none) and, for a channel,
//! `key_limits: [{index, …the four…}]` — and a change is stored with its audit row in one
//! transaction (`token.limits`, `user.limits`, `channel.limits`).

use serde::{Deserialize, Serialize};
use serde_json::json;
use tollgate_storage::limits::{self, KeyLimit, Limits, Owner, OwnerLimits};
use tollgate_storage::users::User;
use tollgate_storage::{ChannelId, TokenId, UserId};

use super::audit::Auditor;
use super::users_admin::{self, may_act_on};
use crate::error::{ConsoleError, ErrorCode};
use crate::state::AppState;

/// One upstream key's limits on the wire.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct KeyLimitBody {
    /// The key's line in the channel's key list (0 = the first).
    pub index: u32,
    /// Its limits.
    #[serde(flatten)]
    pub limits: Limits,
}

/// An owner's limits on the wire (GET answer and PUT body).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LimitsBody {
    /// The owner's own limits.
    #[serde(flatten)]
    pub limits: Limits,
    /// Per upstream key (channels only).
    #[serde(default)]
    pub key_limits: Vec<KeyLimitBody>,
}

impl From<OwnerLimits> for LimitsBody {
    fn from(o: OwnerLimits) -> LimitsBody {
        LimitsBody {
            limits: o.limits,
            key_limits: o
                .key_limits
                .into_iter()
                .map(|k| KeyLimitBody {
                    index: k.index,
                    limits: k.limits,
                })
                .collect(),
        }
    }
}

impl From<LimitsBody> for OwnerLimits {
    fn from(b: LimitsBody) -> OwnerLimits {
        OwnerLimits {
            limits: b.limits,
            key_limits: b
                .key_limits
                .into_iter()
                .map(|k| KeyLimit {
                    index: k.index,
                    limits: k.limits,
                })
                .collect(),
        }
    }
}

async fn stored(state: &AppState, owner: Owner) -> Result<LimitsBody, ConsoleError> {
    Ok(state
        .store
        .read(move |rtx| limits::get(rtx, owner))
        .await?
        .into())
}

/// Validates and stores `body` for `owner` with its audit row, then tells the engine.
async fn replace(
    state: &AppState,
    owner: Owner,
    body: LimitsBody,
    action: &'static str,
    target: String,
    auditor: Auditor,
) -> Result<LimitsBody, ConsoleError> {
    let set = OwnerLimits::from(body).validated(owner)?;
    let after = json!(LimitsBody::from(set.clone()));
    let saved = set.clone();
    state
        .store
        .write(move |wtx| {
            limits::replace(wtx, owner, &saved, |before| {
                auditor.entry(
                    action,
                    target,
                    &json!(LimitsBody::from(before.clone())),
                    &after,
                )
            })
        })
        .await?;
    state.limits.set(owner, set.clone());
    Ok(set.into())
}

/// The limits of `user`'s key `id` (others' keys read as not found).
pub async fn token_limits(
    state: &AppState,
    user: &User,
    id: TokenId,
) -> Result<LimitsBody, ConsoleError> {
    let token = super::tokens::get(state, user, id).await?;
    stored(state, Owner::Token(token.id)).await
}

/// Sets the limits of `user`'s key `id`.
pub async fn set_token_limits(
    state: &AppState,
    user: &User,
    id: TokenId,
    body: LimitsBody,
    auditor: Auditor,
) -> Result<LimitsBody, ConsoleError> {
    let token = super::tokens::get(state, user, id).await?;
    let target = format!("token {} ({})", token.id, token.name);
    replace(
        state,
        Owner::Token(token.id),
        body,
        "token.limits",
        target,
        auditor,
    )
    .await
}

/// The limits of user `id`, for an admin who may read them.
pub async fn user_limits(
    state: &AppState,
    actor: &User,
    id: UserId,
) -> Result<LimitsBody, ConsoleError> {
    let user = users_admin::get(state, actor, id).await?;
    stored(state, Owner::User(user.id)).await
}

/// Sets the limits of user `id`, for an admin who may change them.
pub async fn set_user_limits(
    state: &AppState,
    actor: &User,
    id: UserId,
    body: LimitsBody,
    auditor: Auditor,
) -> Result<LimitsBody, ConsoleError> {
    let user = users_admin::get(state, actor, id).await?;
    if !may_act_on(actor, &user) {
        return Err(ConsoleError::with_args(ErrorCode::CannotManagePeer, []));
    }
    let target = format!("user {} ({})", user.id, user.username);
    replace(
        state,
        Owner::User(user.id),
        body,
        "user.limits",
        target,
        auditor,
    )
    .await
}

/// The limits of channel `id` and of its keys.
pub async fn channel_limits(state: &AppState, id: ChannelId) -> Result<LimitsBody, ConsoleError> {
    let channel = super::channel::get(state, id).await?;
    stored(state, Owner::Channel(ChannelId(channel.id))).await
}

/// Sets the limits of channel `id` and of its keys.
pub async fn set_channel_limits(
    state: &AppState,
    id: ChannelId,
    body: LimitsBody,
    auditor: Auditor,
) -> Result<LimitsBody, ConsoleError> {
    let channel = super::channel::get(state, id).await?;
    let target = format!("channel {} ({})", channel.id, channel.name);
    replace(
        state,
        Owner::Channel(ChannelId(channel.id)),
        body,
        "channel.limits",
        target,
        auditor,
    )
    .await
}
