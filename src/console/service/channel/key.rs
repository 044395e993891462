//! Revealing a channel's key: root only, with two-factor authentication on and this session
//! re-verified with a code within the last five minutes (POST /api/verify), and audited. The
//! audit line names who, which channel and when — never the key.

use serde::Serialize;
use tollgate_storage::ChannelId;
use tollgate_storage::channels;
use tollgate_storage::users::User;

use crate::clock::now_unix;
use crate::console::service::two_factor;
use crate::error::{ConsoleError, ErrorCode};
use crate::state::AppState;

/// The revealed key (the only response that carries one).
#[derive(Serialize)]
pub struct RevealedKey {
    /// The key text, one key per line.
    pub key: String,
}

/// Returns channel `id`'s key to `root` (whose session is `session_key`), once the session
/// has proved a second factor recently.
pub async fn reveal(
    state: &AppState,
    root: &User,
    session_key: &str,
    id: ChannelId,
    ip: Option<std::net::IpAddr>,
) -> Result<RevealedKey, ConsoleError> {
    if !two_factor::is_enabled(state, root.id).await? {
        return Err(ConsoleError::of(ErrorCode::KeyRevealNeedsTwoFactor));
    }
    if !state.two_factor.is_verified(session_key, now_unix()) {
        tracing::warn!(user = %root.id, channel = %id, "channel key reveal refused: not re-verified");
        return Err(ConsoleError::of(ErrorCode::KeyRevealNeedsCode));
    }
    let channel = state
        .store
        .read(move |rtx| channels::get(rtx, id))
        .await?
        .ok_or(ConsoleError::NotFound("channel"))?;
    // No reveal without its audit row.
    let entry = crate::console::service::audit::Auditor::user(root, ip).entry(
        "channel.key.reveal",
        format!("channel:{}", id.0),
        &serde_json::Value::Null,
        &serde_json::Value::Null,
    );
    state
        .store
        .write(move |wtx| tollgate_storage::audit::append(wtx, entry))
        .await?;
    tracing::warn!(user = %root.id, channel = %id, "channel key revealed to root");
    Ok(RevealedKey {
        key: channel.key.expose().to_owned(),
    })
}
