//! `RoutingTable`: the immutable `(group, model) → priority tiers → weighted channels` map the
//! relay reads lock-free, and [`select`], the pure choice of a channel for one attempt.
//!
//! Built by the pool actor after every change, from enabled channels only: whole at start
//! ([`RoutingTable::build`]), then from the previous table ([`RoutingTable::rebuild`]), which
//! keeps the routed entry of every channel whose record did not change. Tiers are sorted highest priority first and each tier precomputes its
//! cumulative weights, so the request does one random draw and a binary search.
//!
//! Selection rules (see [`select`]):
//! - attempt `retry` starts at tier `min(retry, tiers - 1)`: retry 0 uses the top tier, each
//!   retry moves one tier down, and the last tier is reused once the tiers run out;
//! - inside a tier the draw is weighted; when every candidate has weight 0 it is uniform, and a
//!   weight-0 channel beside positive weights is never drawn (a "standby" channel);
//! - channels already tried in this request are skipped. If that empties the tier, the next
//!   lower tier is used, then the higher ones; once every channel was tried there is none.
//!   Standby channels of a tier become eligible when all its weighted channels were tried.
//! - [`select_for`] also skips channels whose type cannot serve the request: each channel
//!   carries a bit mask of the route kinds it serves (computed by the caller of
//!   [`RoutingTable::build_with`], which knows the channel types; this crate only ANDs bits).
//!   Each tier keeps the intersection of its channels' masks and each route the union, so a
//!   request whose every candidate qualifies draws exactly as [`select`] does, and "no channel
//!   of this model can serve this" is one AND.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use foldhash::{HashMap, HashMapExt};
use rand::Rng;
use tollgate_storage::ChannelId;
use tollgate_storage::channels::{Channel, other_info};
use tollgate_storage::secret::Secret;

use super::channel_json::ChannelJson;

/// Channels of one route grouped by priority, while building.
type TiersByPriority = BTreeMap<i64, Vec<Arc<RoutedChannel>>>;

/// A channel as the router hands it out.
#[derive(Debug)]
pub struct RoutedChannel {
    /// The channel record as of the last rebuild.
    pub channel: Arc<Channel>,
    /// The usable key lines with their 0-based line numbers: every non-empty line except the
    /// disabled ones (all lines when every one is disabled, e.g. after an admin re-enable
    /// that kept the records).
    keys: Vec<(usize, Secret)>,
    /// Round-robin position over `keys`; shared across rebuilds so rotation continues.
    cursor: Arc<AtomicUsize>,
    /// The channel's JSON fields, parsed.
    pub json: ChannelJson,
    /// The route kinds its type serves, as bits (all ones: everything).
    pub serves: u32,
}

impl RoutedChannel {
    /// Wraps `channel`, continuing the rotation held by `cursor`.
    pub fn new(channel: Arc<Channel>, cursor: Arc<AtomicUsize>) -> Self {
        let lines = channel.key_lines();
        let usable = other_info::usable_keys(&channel.other_info, &lines);
        let keys = lines
            .iter()
            .enumerate()
            .filter(|(i, _)| usable.is_empty() || usable.contains(i))
            .map(|(i, line)| (i, Secret::new(*line)))
            .collect();
        RoutedChannel {
            json: ChannelJson::parse(&channel),
            channel,
            keys,
            cursor,
            serves: u32::MAX,
        }
    }

    /// Whether the channel serves every route kind bit of `need`.
    pub fn serves(&self, need: u32) -> bool {
        self.serves & need == need
    }

    /// The channel id.
    pub fn id(&self) -> ChannelId {
        self.channel.id
    }

    /// The key to use for this request with its 0-based line number: the usable lines in
    /// turn, one per call.
    pub fn next_key(&self) -> Option<(usize, &Secret)> {
        if self.keys.is_empty() {
            return None;
        }
        let turn = self.cursor.fetch_add(1, Ordering::Relaxed);
        self.keys
            .get(turn % self.keys.len())
            .map(|(index, key)| (*index, key))
    }

    /// The usable key on 0-based line `line`, if it is one.
    pub fn key_on_line(&self, line: usize) -> Option<(usize, &Secret)> {
        self.keys
            .iter()
            .find(|(index, _)| *index == line)
            .map(|(index, key)| (*index, key))
    }

    fn weight(&self) -> u64 {
        u64::try_from(self.channel.weight).unwrap_or(0)
    }
}

/// Channels of one priority.
#[derive(Debug)]
pub struct Tier {
    /// The tier's priority.
    pub priority: i64,
    /// Its channels, by ascending id.
    pub channels: Vec<Arc<RoutedChannel>>,
    /// `cumulative[i]` = sum of the weights of `channels[..=i]`.
    cumulative: Vec<u64>,
    /// The route kinds every channel of the tier serves.
    serves_all: u32,
}

impl Tier {
    fn new(priority: i64, channels: Vec<Arc<RoutedChannel>>) -> Tier {
        let mut sum = 0u64;
        let cumulative = channels
            .iter()
            .map(|c| {
                sum = sum.saturating_add(c.weight());
                sum
            })
            .collect();
        let serves_all = channels.iter().fold(u32::MAX, |m, c| m & c.serves);
        Tier {
            priority,
            channels,
            cumulative,
            serves_all,
        }
    }

    fn total(&self) -> u64 {
        self.cumulative.last().copied().unwrap_or(0)
    }

    /// Weighted draw over the whole tier (the common case: nothing tried yet).
    fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<&Arc<RoutedChannel>> {
        if self.channels.is_empty() {
            return None;
        }
        let total = self.total();
        if total == 0 {
            return self.channels.get(rng.random_range(0..self.channels.len()));
        }
        let r = rng.random_range(0..total);
        self.channels
            .get(self.cumulative.partition_point(|&c| c <= r))
    }

    /// Weighted draw over the channels not in `tried` that serve `need`.
    fn draw_excluding<R: Rng + ?Sized>(
        &self,
        need: u32,
        tried: &[ChannelId],
        rng: &mut R,
    ) -> Option<&Arc<RoutedChannel>> {
        let left: Vec<&Arc<RoutedChannel>> = self
            .channels
            .iter()
            .filter(|c| !tried.contains(&c.id()) && c.serves(need))
            .collect();
        if left.is_empty() {
            return None;
        }
        let total = left.iter().fold(0u64, |s, c| s.saturating_add(c.weight()));
        if total == 0 {
            return left.get(rng.random_range(0..left.len())).copied();
        }
        let mut r = rng.random_range(0..total);
        for c in &left {
            if r < c.weight() {
                return Some(c);
            }
            r -= c.weight();
        }
        None
    }
}

/// Every tier serving one (group, model), highest priority first.
#[derive(Debug, Default)]
pub struct Route {
    /// The tiers, highest priority first; never empty in a built table.
    pub tiers: Vec<Tier>,
    /// The route kinds some channel of the route serves.
    serves_any: u32,
}

impl Route {
    /// The route of `by_priority`'s channels: tiers highest priority first, each by id.
    fn new(by_priority: TiersByPriority) -> Route {
        let tiers: Vec<Tier> = by_priority
            .into_iter()
            .rev()
            .map(|(priority, mut chans)| {
                chans.sort_by_key(|c| c.id());
                Tier::new(priority, chans)
            })
            .collect();
        let serves_any = tiers
            .iter()
            .flat_map(|t| t.channels.iter())
            .fold(0, |m, c| m | c.serves);
        Route { tiers, serves_any }
    }

    /// Every channel of the route.
    fn members(&self) -> impl Iterator<Item = &Arc<RoutedChannel>> {
        self.tiers.iter().flat_map(|t| t.channels.iter())
    }

    /// Whether some channel of the route serves every route kind bit of `need`.
    pub fn can_serve(&self, need: u32) -> bool {
        self.serves_any & need == need
            && self
                .tiers
                .iter()
                .any(|t| t.channels.iter().any(|c| c.serves(need)))
    }
}

/// The published routing table.
#[derive(Debug, Default)]
pub struct RoutingTable {
    /// group → model → route (shared with the tables rebuilt from this one while unchanged);
    /// foldhash, not SipHash: looked up several times a request, by names the operator configured.
    routes: HashMap<String, HashMap<String, Arc<Route>>>,
    /// Every enabled channel by id.
    channels: BTreeMap<ChannelId, Arc<RoutedChannel>>,
}

impl RoutingTable {
    /// Builds the table from `channels` (disabled ones are left out). `cursor` supplies the
    /// key-rotation counter of each channel so rotation survives rebuilds. Every channel serves
    /// every route kind (see [`RoutingTable::build_with`]).
    pub fn build<'a>(
        channels: impl IntoIterator<Item = &'a Arc<Channel>>,
        cursor: impl FnMut(ChannelId) -> Arc<AtomicUsize>,
    ) -> RoutingTable {
        RoutingTable::build_with(channels, cursor, |_| u32::MAX)
    }

    /// [`RoutingTable::build`], with `serves` giving the route-kind mask of a channel type.
    pub fn build_with<'a>(
        channels: impl IntoIterator<Item = &'a Arc<Channel>>,
        mut cursor: impl FnMut(ChannelId) -> Arc<AtomicUsize>,
        serves: impl Fn(i32) -> u32,
    ) -> RoutingTable {
        let enabled = channels
            .into_iter()
            .filter(|c| c.is_enabled())
            .map(|channel| {
                let mut routed = RoutedChannel::new(Arc::clone(channel), cursor(channel.id));
                routed.serves = serves(channel.channel_type);
                (channel.id, Arc::new(routed))
            })
            .collect();
        RoutingTable::assemble(enabled)
    }

    /// The table after a change, from this one: a channel whose record is the very `Arc` this
    /// table was built from keeps its routed entry (its parsed JSON fields, key lines and
    /// rotation), and only the routes of the channels that changed, appeared or went are
    /// recomputed; the others are shared. The result is the table [`RoutingTable::build_with`]
    /// builds from `channels` (the caller keeps an unchanged record's `Arc`). When most
    /// channels changed it is built whole.
    pub fn rebuild<'a>(
        &self,
        channels: impl IntoIterator<Item = &'a Arc<Channel>>,
        mut cursor: impl FnMut(ChannelId) -> Arc<AtomicUsize>,
        serves: impl Fn(i32) -> u32,
    ) -> RoutingTable {
        let mut enabled = BTreeMap::new();
        let mut fresh: Vec<Arc<RoutedChannel>> = Vec::new();
        for channel in channels.into_iter().filter(|c| c.is_enabled()) {
            let entry = match self.channels.get(&channel.id) {
                Some(routed) if Arc::ptr_eq(&routed.channel, channel) => Arc::clone(routed),
                _ => {
                    let mut routed = RoutedChannel::new(Arc::clone(channel), cursor(channel.id));
                    routed.serves = serves(channel.channel_type);
                    let routed = Arc::new(routed);
                    fresh.push(Arc::clone(&routed));
                    routed
                }
            };
            enabled.insert(channel.id, entry);
        }
        // Entries of this table that are not in the new one as they were.
        let gone: BTreeSet<ChannelId> = self
            .channels
            .iter()
            .filter(|(id, old)| enabled.get(*id).is_none_or(|new| !Arc::ptr_eq(new, old)))
            .map(|(id, _)| *id)
            .collect();
        if gone.len() + fresh.len() > enabled.len() / 4 + 16 {
            return RoutingTable::assemble(enabled);
        }
        let mut touched: BTreeSet<(&str, &str)> = BTreeSet::new();
        let gone_entries = gone.iter().filter_map(|id| self.channels.get(id));
        for entry in gone_entries.chain(fresh.iter()) {
            for group in entry.channel.group_list() {
                for model in entry.channel.model_list() {
                    touched.insert((group, model));
                }
            }
        }
        let mut routes = self.routes.clone();
        for (group, model) in touched {
            let mut by_priority = TiersByPriority::new();
            let kept = self
                .route(group, model)
                .into_iter()
                .flat_map(Route::members)
                .filter(|c| !gone.contains(&c.id()));
            let added = fresh.iter().filter(|c| {
                c.channel.group_list().contains(&group) && c.channel.model_list().contains(&model)
            });
            for entry in kept.chain(added) {
                by_priority
                    .entry(entry.channel.priority)
                    .or_default()
                    .push(Arc::clone(entry));
            }
            let models = routes.entry(group.to_owned()).or_default();
            if by_priority.is_empty() {
                models.remove(model);
                if models.is_empty() {
                    routes.remove(group);
                }
            } else {
                models.insert(model.to_owned(), Arc::new(Route::new(by_priority)));
            }
        }
        RoutingTable {
            routes,
            channels: enabled,
        }
    }

    /// The table of the routed `enabled` channels, grouped by (group, model) and priority.
    /// The grouping borrows the names from the records; only the routes' own keys are owned.
    fn assemble(enabled: BTreeMap<ChannelId, Arc<RoutedChannel>>) -> RoutingTable {
        let mut by_route: HashMap<(&str, &str), TiersByPriority> = HashMap::new();
        for entry in enabled.values() {
            let channel = &entry.channel;
            let mut groups = channel.group_list();
            groups.sort_unstable();
            groups.dedup();
            let mut models = channel.model_list();
            models.sort_unstable();
            models.dedup();
            for group in &groups {
                for model in &models {
                    by_route
                        .entry((*group, *model))
                        .or_default()
                        .entry(channel.priority)
                        .or_default()
                        .push(Arc::clone(entry));
                }
            }
        }
        let mut routes: HashMap<String, HashMap<String, Arc<Route>>> = HashMap::new();
        for ((group, model), by_priority) in by_route {
            let route = Arc::new(Route::new(by_priority));
            match routes.get_mut(group) {
                Some(models) => {
                    models.insert(model.to_owned(), route);
                }
                None => {
                    routes.insert(
                        group.to_owned(),
                        HashMap::from_iter([(model.to_owned(), route)]),
                    );
                }
            }
        }
        RoutingTable {
            routes,
            channels: enabled,
        }
    }

    /// The route of `(group, model)`, if any enabled channel serves it.
    pub fn route(&self, group: &str, model: &str) -> Option<&Route> {
        self.routes.get(group)?.get(model).map(|r| &**r)
    }

    /// An enabled channel by id (the admin's pinned-channel path).
    pub fn channel(&self, id: ChannelId) -> Option<&Arc<RoutedChannel>> {
        self.channels.get(&id)
    }

    /// Every enabled channel, by ascending id.
    pub fn channels(&self) -> impl Iterator<Item = &Arc<RoutedChannel>> {
        self.channels.values()
    }

    /// Number of enabled channels.
    pub fn len(&self) -> usize {
        self.channels.len()
    }

    /// True when no channel is enabled.
    pub fn is_empty(&self) -> bool {
        self.channels.is_empty()
    }

    /// Every model some enabled channel serves, sorted.
    pub fn models(&self) -> BTreeSet<&str> {
        self.routes
            .values()
            .flat_map(|models| models.keys().map(String::as_str))
            .collect()
    }

    /// Every model some enabled channel serves, with the groups it is served in (sorted).
    pub fn model_groups(&self) -> BTreeMap<&str, BTreeSet<&str>> {
        let mut out: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for (group, models) in &self.routes {
            for model in models.keys() {
                out.entry(model.as_str())
                    .or_default()
                    .insert(group.as_str());
            }
        }
        out
    }

    /// Models served in `group`, sorted.
    pub fn models_in(&self, group: &str) -> BTreeSet<&str> {
        self.routes
            .get(group)
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }
}

/// Picks the channel for attempt `retry` (0 = first try) of one request, skipping `tried`.
/// Pure: the randomness comes from `rng`. See the module docs for the rules.
pub fn select<'a, R: Rng + ?Sized>(
    route: &'a Route,
    retry: usize,
    tried: &[ChannelId],
    rng: &mut R,
) -> Option<&'a Arc<RoutedChannel>> {
    select_for(route, 0, retry, tried, rng)
}

/// [`select`] among the channels that serve every route kind bit of `need` (0: any channel).
pub fn select_for<'a, R: Rng + ?Sized>(
    route: &'a Route,
    need: u32,
    retry: usize,
    tried: &[ChannelId],
    rng: &mut R,
) -> Option<&'a Arc<RoutedChannel>> {
    if route.serves_any & need != need {
        return None;
    }
    let last = route.tiers.len().checked_sub(1)?;
    let start = retry.min(last);
    let order = (start..=last).chain(0..start);
    for index in order {
        let Some(tier) = route.tiers.get(index) else {
            continue;
        };
        let pick = if tried.is_empty() && tier.serves_all & need == need {
            tier.draw(rng)
        } else {
            tier.draw_excluding(need, tried, rng)
        };
        if pick.is_some() {
            return pick;
        }
    }
    None
}

#[cfg(test)]
mod tests;
