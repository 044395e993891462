//! Listing channels: filter, order, tag grouping and offset/limit paging with a total.
//!
//! Channels are an admin-sized set (hundreds, not millions), so a listing reads every record and
//! orders it in memory; the functions below are pure and unit-tested, [`page`] wires them to a
//! read transaction.

use redb::ReadTransaction;

use super::{Channel, list_all, split_list};

/// Order of a listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Order {
    /// Highest priority first, then newest (new-api's default).
    #[default]
    Priority,
    /// Newest id first (`id_sort=true`).
    IdDesc,
}

/// What to list.
#[derive(Debug, Clone, Default)]
pub struct ChannelQuery {
    /// Matches the id exactly, or the name, base URL or tag as a case-insensitive substring.
    pub keyword: String,
    /// Keeps channels serving this group (exact item of their group list).
    pub group: String,
    /// Keeps channels whose model list has an item containing this text.
    pub model: String,
    /// Ordering.
    pub order: Order,
    /// Page by tag: each tag counts as one unit of the page (all its channels are returned
    /// together), each untagged channel as one unit.
    pub tag_mode: bool,
    /// Units to skip.
    pub offset: usize,
    /// Units to return.
    pub limit: usize,
}

/// One page of a listing.
#[derive(Debug, Clone, PartialEq)]
pub struct Paged<T> {
    /// The page's items.
    pub items: Vec<T>,
    /// Units matching the query before paging (channels, or tags+untagged in tag mode).
    pub total: usize,
}

impl ChannelQuery {
    /// True when `channel` passes the keyword, group and model filters.
    pub fn matches(&self, channel: &Channel) -> bool {
        let keyword = self.keyword.trim().to_lowercase();
        let keyword_ok = keyword.is_empty()
            || keyword.parse::<i64>().ok() == Some(channel.id.0)
            || channel.name.to_lowercase().contains(&keyword)
            || channel.base_url.to_lowercase().contains(&keyword)
            || channel.tag.to_lowercase().contains(&keyword);
        let group = self.group.trim();
        let group_ok = group.is_empty() || split_list(&channel.group).contains(&group);
        let model = self.model.trim();
        let model_ok = model.is_empty()
            || split_list(&channel.models)
                .iter()
                .any(|m| m.contains(model));
        keyword_ok && group_ok && model_ok
    }

    /// Filters, orders and pages `channels`.
    pub fn apply(&self, channels: Vec<Channel>) -> Paged<Channel> {
        let mut kept: Vec<Channel> = channels.into_iter().filter(|c| self.matches(c)).collect();
        sort(&mut kept, self.order);
        if !self.tag_mode {
            let total = kept.len();
            let items = kept
                .into_iter()
                .skip(self.offset)
                .take(self.limit)
                .collect();
            return Paged { items, total };
        }
        let mut units: Vec<Vec<Channel>> = Vec::new();
        for channel in kept {
            let slot = (!channel.tag.is_empty())
                .then(|| {
                    units
                        .iter()
                        .position(|u| u.first().is_some_and(|f| f.tag == channel.tag))
                })
                .flatten();
            match slot {
                Some(i) => units
                    .get_mut(i)
                    .into_iter()
                    .for_each(|u| u.push(channel.clone())),
                None => units.push(vec![channel]),
            }
        }
        let total = units.len();
        let items = units
            .into_iter()
            .skip(self.offset)
            .take(self.limit)
            .flatten()
            .collect();
        Paged { items, total }
    }
}

/// Sorts in place by `order` (ties broken by newest id first).
pub fn sort(channels: &mut [Channel], order: Order) {
    match order {
        Order::Priority => {
            channels.sort_by(|a, b| b.priority.cmp(&a.priority).then(b.id.cmp(&a.id)))
        }
        Order::IdDesc => channels.sort_by_key(|c| std::cmp::Reverse(c.id)),
    }
}

/// Runs `query` against the stored channels.
pub fn page(rtx: &ReadTransaction, query: &ChannelQuery) -> crate::Result<Paged<Channel>> {
    Ok(query.apply(list_all(rtx)?))
}
