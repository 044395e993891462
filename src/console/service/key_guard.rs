//! A stored channel key goes only where it was entered for. Changing a channel's base URL,
//! proxy or type decides where its key is sent (every test, model fetch and relay call); an
//! admin who is not root could otherwise point a channel at a host of their own and have the
//! key they cannot reveal delivered there. So that change is root's, unless the admin enters
//! the key again (then it is their key, sent where they say).

use tollgate_storage::channels::Channel;

use crate::error::{ConsoleError, ErrorCode};

/// Refuses an update by an admin who is not root that changes where `current`'s stored key
/// goes, unless the update carries a key of its own (`key_entered`).
pub fn check(
    current: &Channel,
    next: &Channel,
    root: bool,
    key_entered: bool,
) -> Result<(), ConsoleError> {
    let redirected = next.base_url != current.base_url
        || next.proxy != current.proxy
        || next.channel_type != current.channel_type;
    let holds_key = !current.key.expose().trim().is_empty();
    if redirected && holds_key && !root && !key_entered {
        return Err(ConsoleError::of(ErrorCode::RootOnlyChannelAddress));
    }
    Ok(())
}
