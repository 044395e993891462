//! Channel records joined with the quota used through each ([`crate::channel_usage`]), as the
//! console's channel list and detail show them. Here, not in `channel_usage`, so that the
//! counter knows nothing of channel records (channels → channel_usage, one way).

use redb::ReadTransaction;

use super::query::{self, ChannelQuery, Paged};
use super::{self as channels, Channel};
use crate::channel_usage::{used, used_of};
use crate::{ChannelId, Quota, Result};

/// One page of channels ([`query::page`]) with the quota used through each, in the same order.
pub fn page_with_used(
    rtx: &ReadTransaction,
    query: &ChannelQuery,
) -> Result<(Paged<Channel>, Vec<Quota>)> {
    let found = query::page(rtx, query)?;
    let ids: Vec<ChannelId> = found.items.iter().map(|c| c.id).collect();
    let used = used_of(rtx, &ids)?;
    Ok((found, used))
}

/// One channel with the quota used through it.
pub fn get_with_used(rtx: &ReadTransaction, id: ChannelId) -> Result<Option<(Channel, Quota)>> {
    let Some(channel) = channels::get(rtx, id)? else {
        return Ok(None);
    };
    Ok(Some((channel, used(rtx, id)?)))
}
