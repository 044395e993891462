//! Unit tests of the routing table and of selection, with a seeded RNG.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use rand::SeedableRng;
use rand::rngs::StdRng;
use tollgate_storage::channels::{Channel, STATUS_ENABLED, STATUS_MANUALLY_DISABLED};
use tollgate_storage::secret::Secret;
use tollgate_storage::{ChannelId, Quota};

use super::*;

fn channel(id: i64, priority: i64, weight: i64) -> Arc<Channel> {
    Arc::new(Channel {
        id: ChannelId(id),
        name: format!("c{id}"),
        channel_type: 1,
        key: Secret::new("k1\nk2\n\nk3"),
        openai_organization: String::new(),
        max_input_tokens: 0,
        base_url: String::new(),
        other: String::new(),
        model_mapping: String::new(),
        status_code_mapping: String::new(),
        models: "m".into(),
        group: "default".into(),
        auto_ban: 1,
        test_model: String::new(),
        proxy: String::new(),
        priority,
        weight,
        tag: String::new(),
        setting: String::new(),
        param_override: String::new(),
        used_quota: Quota::ZERO,
        balance: 0.0,
        response_time: 0,
        status: STATUS_ENABLED,
        other_info: String::new(),
        created_time: 0,
        test_time: 0,
        balance_updated_time: 0,
    })
}

fn table(channels: &[Arc<Channel>]) -> RoutingTable {
    RoutingTable::build(channels, |_| Arc::new(AtomicUsize::new(0)))
}

fn counts(route: &Route, retry: usize, tried: &[ChannelId], n: usize) -> HashMap<i64, usize> {
    let mut rng = StdRng::seed_from_u64(7);
    let mut out = HashMap::new();
    for _ in 0..n {
        let pick = select(route, retry, tried, &mut rng).expect("a channel");
        *out.entry(pick.id().0).or_default() += 1;
    }
    out
}

#[test]
fn tiers_are_highest_priority_first_and_disabled_channels_are_left_out() {
    let mut off = (*channel(4, 100, 1)).clone();
    off.status = STATUS_MANUALLY_DISABLED;
    let t = table(&[
        channel(1, 0, 1),
        channel(2, 10, 1),
        channel(3, -5, 1),
        Arc::new(off),
    ]);
    let route = t.route("default", "m").expect("route");
    let priorities: Vec<i64> = route.tiers.iter().map(|t| t.priority).collect();
    assert_eq!(priorities, vec![10, 0, -5]);
    assert_eq!(t.len(), 3, "the disabled channel is not routed");
    assert!(t.route("vip", "m").is_none());
    assert_eq!(t.models().into_iter().collect::<Vec<_>>(), vec!["m"]);
}

#[test]
fn retry_walks_down_the_tiers_and_clamps_to_the_last() {
    let t = table(&[channel(1, 10, 1), channel(2, 5, 1), channel(3, 0, 1)]);
    let route = t.route("default", "m").expect("route");
    let mut rng = StdRng::seed_from_u64(1);
    let ids: Vec<i64> = (0..5)
        .map(|retry| select(route, retry, &[], &mut rng).expect("pick").id().0)
        .collect();
    assert_eq!(ids, vec![1, 2, 3, 3, 3]);
}

#[test]
fn tried_channels_are_skipped_and_an_exhausted_tier_falls_through() {
    let t = table(&[channel(1, 10, 1), channel(2, 10, 1), channel(3, 0, 1)]);
    let route = t.route("default", "m").expect("route");
    let mut rng = StdRng::seed_from_u64(3);
    for _ in 0..50 {
        let pick = select(route, 0, &[ChannelId(1)], &mut rng).expect("pick");
        assert_eq!(pick.id(), ChannelId(2), "the untried top-tier channel");
    }
    let pick = select(route, 0, &[ChannelId(1), ChannelId(2)], &mut rng).expect("pick");
    assert_eq!(pick.id(), ChannelId(3), "top tier exhausted → next tier");
    let pick = select(route, 1, &[ChannelId(3)], &mut rng).expect("pick");
    assert_ne!(
        pick.id(),
        ChannelId(3),
        "last tier exhausted → back to higher tiers"
    );
    assert!(
        select(
            route,
            0,
            &[ChannelId(1), ChannelId(2), ChannelId(3)],
            &mut rng
        )
        .is_none()
    );
}

#[test]
fn zero_weight_beside_positive_weights_is_never_picked_but_is_a_standby() {
    let t = table(&[channel(1, 0, 5), channel(2, 0, 0), channel(3, 0, 1)]);
    let route = t.route("default", "m").expect("route");
    let seen = counts(route, 0, &[], 2_000);
    assert!(!seen.contains_key(&2), "weight 0 never drawn: {seen:?}");
    let seen = counts(route, 0, &[ChannelId(1), ChannelId(3)], 100);
    assert_eq!(
        seen.get(&2),
        Some(&100),
        "standby used once the others were tried"
    );
}

#[test]
fn all_zero_weights_are_uniform() {
    let t = table(&[channel(1, 0, 0), channel(2, 0, 0), channel(3, 0, 0)]);
    let route = t.route("default", "m").expect("route");
    let seen = counts(route, 0, &[], 30_000);
    for id in 1..=3 {
        let n = seen.get(&id).copied().unwrap_or(0);
        assert!(
            (9_000..11_000).contains(&n),
            "channel {id} drawn {n} of 30000"
        );
    }
}

#[test]
fn weighted_picks_follow_the_weights() {
    let t = table(&[channel(1, 0, 1), channel(2, 0, 3), channel(3, 0, 6)]);
    let route = t.route("default", "m").expect("route");
    let n = 50_000;
    for tried in [&[][..], &[ChannelId(99)][..]] {
        let seen = counts(route, 0, tried, n);
        for (id, share) in [(1, 0.1), (2, 0.3), (3, 0.6)] {
            let got = seen.get(&id).copied().unwrap_or(0) as f64 / n as f64;
            assert!(
                (got - share).abs() < 0.015,
                "channel {id}: {got} vs {share}"
            );
        }
    }
}

#[test]
fn keys_rotate_per_request_and_across_rebuilds() {
    let cursor = Arc::new(AtomicUsize::new(0));
    let ch = channel(1, 0, 0);
    let t = RoutingTable::build([&ch], |_| Arc::clone(&cursor));
    let routed = t.channel(ChannelId(1)).expect("routed");
    let keys: Vec<&str> = (0..4)
        .map(|_| routed.next_key().expect("key").1.expose())
        .collect();
    assert_eq!(
        keys,
        vec!["k1", "k2", "k3", "k1"],
        "blank lines are not keys"
    );
    let rebuilt = RoutingTable::build([&ch], |_| Arc::clone(&cursor));
    let next = rebuilt.channel(ChannelId(1)).expect("routed").next_key();
    assert_eq!(next.map(|(_, k)| k.expose()), Some("k2"));
}

/// A channel of type `channel_type` (the capability tests give types masks).
fn typed(id: i64, priority: i64, weight: i64, channel_type: i32) -> Arc<Channel> {
    let mut c = (*channel(id, priority, weight)).clone();
    c.channel_type = channel_type;
    Arc::new(c)
}

/// Type 1 serves bits 0b11, type 2 only 0b01.
fn masked(channels: &[Arc<Channel>]) -> RoutingTable {
    RoutingTable::build_with(
        channels,
        |_| Arc::new(AtomicUsize::new(0)),
        |t| if t == 1 { 0b11 } else { 0b01 },
    )
}

#[test]
fn select_for_skips_channels_that_cannot_serve_the_need() {
    // Tier 10: channel 1 (type 2, cannot serve 0b10) weighted far above channel 2 (type 1).
    let t = masked(&[typed(1, 10, 1000, 2), typed(2, 10, 1, 1), typed(3, 0, 1, 1)]);
    let route = t.route("default", "m").expect("route");
    assert!(route.can_serve(0b10) && route.can_serve(0b01));
    assert!(!route.can_serve(0b100));
    let mut rng = StdRng::seed_from_u64(7);
    for _ in 0..200 {
        let pick = select_for(route, 0b10, 0, &[], &mut rng).expect("a channel");
        assert_eq!(
            pick.id().0,
            2,
            "the channel lacking the capability is never drawn"
        );
    }
    // Failover: the retry moves down a tier; a tier without a capable channel is passed over.
    let pick = select_for(route, 0b10, 0, &[ChannelId(2)], &mut rng).expect("a channel");
    assert_eq!(pick.id().0, 3);
    assert!(select_for(route, 0b10, 1, &[ChannelId(2), ChannelId(3)], &mut rng).is_none());
    // Without the need the heavy channel wins as before.
    let pick = select_for(route, 0b01, 0, &[], &mut rng).expect("a channel");
    assert_eq!(pick.id().0, 1);
}

#[test]
fn a_route_whose_channels_all_lack_the_need_has_no_candidate() {
    let t = masked(&[typed(1, 0, 1, 2), typed(2, 5, 1, 2)]);
    let route = t.route("default", "m").expect("route");
    assert!(!route.can_serve(0b10));
    let mut rng = StdRng::seed_from_u64(7);
    assert!(select_for(route, 0b10, 0, &[], &mut rng).is_none());
    assert!(
        select_for(route, 0, 0, &[], &mut rng).is_some(),
        "need 0 is anything"
    );
    assert!(t.channel(ChannelId(1)).is_some_and(|c| !c.serves(0b10)));
}

#[test]
fn a_rebuild_keeps_unchanged_channels_and_routes_like_a_whole_build() {
    let mut channels = vec![channel(1, 0, 1), channel(2, 0, 3), channel(3, 5, 1)];
    let first = table(&channels);
    // Channel 2 moves to another group and model; 1 and 3 keep their records.
    let mut moved = (*channels[1]).clone();
    moved.group = "vip".into();
    moved.models = "m,n".into();
    channels[1] = Arc::new(moved);
    let rebuilt = first.rebuild(&channels, |_| Arc::new(AtomicUsize::new(0)), |_| u32::MAX);
    let whole = table(&channels);

    for id in [1, 3] {
        let id = ChannelId(id);
        assert!(
            Arc::ptr_eq(
                rebuilt.channel(id).expect("kept"),
                first.channel(id).expect("before")
            ),
            "an unchanged channel keeps its routed entry (parsed once)"
        );
    }
    assert!(!Arc::ptr_eq(
        rebuilt.channel(ChannelId(2)).expect("changed"),
        first.channel(ChannelId(2)).expect("before")
    ));
    assert_eq!(shape(&rebuilt), shape(&whole));
    assert_eq!(
        shape(&rebuilt),
        vec![
            (
                "default".into(),
                "m".into(),
                vec![(5, vec![(3, 1)]), (0, vec![(1, 1)])]
            ),
            ("vip".into(), "m".into(), vec![(0, vec![(2, 3)])]),
            ("vip".into(), "n".into(), vec![(0, vec![(2, 3)])]),
        ]
    );
}

/// Every route of `t` as (group, model, [(priority, [(channel id, weight)])]), sorted.
type Shape = Vec<(String, String, Vec<(i64, Vec<(i64, i64)>)>)>;

fn shape(t: &RoutingTable) -> Shape {
    let mut out = Vec::new();
    for (model, groups) in t.model_groups() {
        for group in groups {
            let route = t.route(group, model).expect("route");
            let tiers = route
                .tiers
                .iter()
                .map(|tier| {
                    let ids = tier
                        .channels
                        .iter()
                        .map(|c| (c.id().0, c.channel.weight))
                        .collect();
                    (tier.priority, ids)
                })
                .collect();
            out.push((group.to_owned(), model.to_owned(), tiers));
        }
    }
    out
}

#[test]
fn rebuilds_after_any_sequence_of_edits_equal_whole_builds() {
    let mut rng = StdRng::seed_from_u64(11);
    let mut channels: Vec<Arc<Channel>> = (1..=40).map(|id| channel(id, id % 3, 1)).collect();
    let mut current = table(&channels);
    for step in 0..300 {
        let at = rng.random_range(0..channels.len());
        let mut edited = (*channels[at]).clone();
        match rng.random_range(0..7) {
            0 => {
                edited.status = if edited.is_enabled() {
                    STATUS_MANUALLY_DISABLED
                } else {
                    STATUS_ENABLED
                };
                channels[at] = Arc::new(edited);
            }
            1 => {
                edited.group = ["default", "vip", "default,vip", "svip"][step % 4].into();
                channels[at] = Arc::new(edited);
            }
            2 => {
                edited.models = ["m", "n", "m,n", "m,o,n"][rng.random_range(0..4)].into();
                channels[at] = Arc::new(edited);
            }
            3 => {
                edited.priority = rng.random_range(-2..3);
                channels[at] = Arc::new(edited);
            }
            4 => {
                edited.weight = rng.random_range(0..5);
                channels[at] = Arc::new(edited);
            }
            5 => {
                channels.remove(at);
            }
            _ => {
                let id = 100 + i64::try_from(step).expect("step");
                channels.push(channel(id, id % 3, 2));
            }
        }
        current = current.rebuild(&channels, |_| Arc::new(AtomicUsize::new(0)), |_| u32::MAX);
        assert_eq!(shape(&current), shape(&table(&channels)), "step {step}");
        assert_eq!(current.len(), table(&channels).len());
    }
}
