//! Which channel an attempt goes to, and what the model is called there: the admin's pinned
//! channel, else the routing table's draw among the channels whose type serves the route, never
//! one already tried or too small for the prompt.

use tollgate_actors::channel_pool::routing_table::{RoutedChannel, RoutingTable, select_for};
use tollgate_actors::limiter::sticky::Stuck;

use crate::channel_types::serve::Need;
use crate::error::RelayError;
use crate::relay::pipeline::auth::Caller;

/// The channel for attempt `attempt` among those whose type serves every route-kind bit of
/// `need` (0: any): the admin's pinned one, else the routing table's choice.
pub(in crate::relay) fn pick(
    table: &RoutingTable,
    caller: &Caller,
    model: &str,
    need: u32,
    attempt: usize,
    tried: &[tollgate_storage::ChannelId],
) -> Option<std::sync::Arc<RoutedChannel>> {
    if let Some(id) = caller.pinned {
        return (attempt == 0)
            .then(|| table.channel(id).filter(|c| c.serves(need)).cloned())
            .flatten();
    }
    let route = table.route(&caller.group, model)?;
    select_for(route, need, attempt, tried, &mut rand::rng()).cloned()
}

/// [`pick`] for a conversation of sticky routing ([`crate::sticky`]): one stuck to a channel
/// goes to it while the channel serves the request and was not tried; one whose channel
/// failed it last avoids that channel when another can serve.
pub(in crate::relay) fn pick_stuck(
    table: &RoutingTable,
    caller: &Caller,
    model: &str,
    (need, attempt): (u32, usize),
    tried: &[tollgate_storage::ChannelId],
    stuck: Option<Stuck>,
) -> Option<std::sync::Arc<RoutedChannel>> {
    match stuck {
        Some(Stuck::To(id, _)) if !tried.contains(&id) => {
            let on_route = table.route(&caller.group, model).and_then(|route| {
                route
                    .tiers
                    .iter()
                    .flat_map(|tier| tier.channels.iter())
                    .find(|c| c.id() == id && c.serves(need))
            });
            if let Some(channel) = on_route {
                return Some(std::sync::Arc::clone(channel));
            }
        }
        Some(Stuck::Avoid(id)) if !tried.contains(&id) => {
            let mut avoid = tried.to_vec();
            avoid.push(id);
            if let Some(channel) = pick(table, caller, model, need, attempt, &avoid) {
                return Some(channel);
            }
        }
        _ => {}
    }
    pick(table, caller, model, need, attempt, tried)
}

/// Why no channel could be tried for `model`: a 400 naming the route, the model and its
/// channels' types when the model has channels (or the pinned channel exists) but none of their
/// types serves the route, else no channel at all.
pub(in crate::relay) fn no_channel(
    table: &RoutingTable,
    caller: &Caller,
    model: &str,
    need: Need,
) -> RelayError {
    let types: Vec<i32> = match caller.pinned {
        Some(id) => table
            .channel(id)
            .map(|c| vec![c.channel.channel_type])
            .unwrap_or_default(),
        None => table
            .route(&caller.group, model)
            .map(|route| {
                route
                    .tiers
                    .iter()
                    .flat_map(|tier| tier.channels.iter())
                    .map(|c| c.channel.channel_type)
                    .collect()
            })
            .unwrap_or_default(),
    };
    if !types.is_empty() {
        return RelayError::BadRequest(format!(
            "model {model} has no channel whose type can serve {} (its channels' types: {})",
            need.route,
            type_names(types)
        ));
    }
    RelayError::NoChannel {
        model: model.to_owned(),
        group: caller.group.clone(),
    }
}

/// The distinct names of `types` (channel type ids), in id order, as the type table names them.
fn type_names(mut types: Vec<i32>) -> String {
    types.sort_unstable();
    types.dedup();
    let names: Vec<String> = types
        .into_iter()
        .map(|id| match crate::channel_types::by_id(id) {
            Some(row) => format!("{} ({id})", row.name),
            None => format!("type {id}"),
        })
        .collect();
    names.join(", ")
}

/// The channels serving `model` to `caller` whose `max_input_tokens` (> 0) is below `prompt`
/// (empty for a pinned channel: admission checked that one).
pub(in crate::relay) fn too_small(
    table: &RoutingTable,
    caller: &Caller,
    model: &str,
    prompt: i64,
) -> Vec<tollgate_storage::ChannelId> {
    if caller.pinned.is_some() {
        return Vec::new();
    }
    let Some(route) = table.route(&caller.group, model) else {
        return Vec::new();
    };
    route
        .tiers
        .iter()
        .flat_map(|tier| tier.channels.iter())
        .filter(|channel| (1..prompt).contains(&channel.channel.max_input_tokens))
        .map(|channel| channel.id())
        .collect()
}

/// The model name after the channel's `model_mapping` (chains followed).
pub(in crate::relay) fn mapped_model(channel: &RoutedChannel, model: &str) -> String {
    channel.json.mapped_model(model).to_owned()
}
