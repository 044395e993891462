//! Revealing a channel's key: root only, with root's password entered again, and audited.
//! The audit line names who, which channel and when — never the key.

use serde::Serialize;
use tollgate_storage::ChannelId;
use tollgate_storage::channels;
use tollgate_storage::users::User;

use crate::error::ConsoleError;
use crate::state::AppState;

/// The revealed key (the only response that carries one).
#[derive(Serialize)]
pub struct RevealedKey {
    /// The key text, one key per line.
    pub key: String,
}

/// Checks `password` against `root`'s and returns channel `id`'s key.
pub async fn reveal(
    state: &AppState,
    root: &User,
    id: ChannelId,
    password: String,
    ip: Option<std::net::IpAddr>,
) -> Result<RevealedKey, ConsoleError> {
    if password.is_empty() {
        return Err(ConsoleError::Invalid(
            "enter your password to reveal the key".into(),
        ));
    }
    if !state
        .hasher
        .verify(password, Some(root.password_hash.clone()))
        .await?
    {
        tracing::warn!(user = %root.id, channel = %id, "channel key reveal refused: wrong password");
        return Err(ConsoleError::Invalid("wrong password".into()));
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
