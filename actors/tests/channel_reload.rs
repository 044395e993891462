//! `ChannelPool::reload_ids` against `ChannelPool::reload` over one database: after every edit
//! of a random series (creates, edits of each routed field, status changes, deletes), a pool
//! that re-read only the written channel publishes the same routing table as a pool that
//! re-read every record.

#![expect(clippy::expect_used, reason = "test setup: a failure fails the test")]

use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tollgate_actors::channel_pool::{ChannelPool, ProbeFuture, Prober, RoutingTable};
use tollgate_actors::options::Options;
use tollgate_storage::channels::{self, Channel, STATUS_ENABLED, STATUS_MANUALLY_DISABLED};
use tollgate_storage::secret::Secret;
use tollgate_storage::{ChannelId, Quota, Store};

/// Never called: no re-test runs.
struct NoProbe;

impl Prober for NoProbe {
    fn probe(&self, _channel: Arc<Channel>) -> ProbeFuture<'_> {
        Box::pin(std::future::pending())
    }
}

fn channel(i: i64) -> Channel {
    Channel {
        id: ChannelId(0),
        name: format!("channel-{i}"),
        channel_type: 1,
        key: Secret::new(format!("sk-up-{i}-a\nsk-up-{i}-b")),
        openai_organization: String::new(),
        max_input_tokens: 0,
        base_url: "https://api.example.com".into(),
        other: String::new(),
        model_mapping: String::new(),
        status_code_mapping: String::new(),
        models: ["m", "n", "m,n", "m,o,n"][(i % 4) as usize].into(),
        group: ["default", "vip", "default,vip"][(i % 3) as usize].into(),
        auto_ban: 1,
        test_model: String::new(),
        proxy: String::new(),
        priority: i % 3,
        weight: 1 + i % 5,
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
    }
}

/// Every route's tiers (priority, channel ids) and every routed channel's record.
type Shape = (
    Vec<(String, String, Vec<(i64, Vec<i64>)>)>,
    Vec<(i64, Channel)>,
);

fn shape(t: &RoutingTable) -> Shape {
    let mut routes = Vec::new();
    for (model, groups) in t.model_groups() {
        for group in groups {
            let route = t.route(group, model).expect("route");
            let tiers = route
                .tiers
                .iter()
                .map(|tier| {
                    let mut ids: Vec<i64> = tier.channels.iter().map(|c| c.id().0).collect();
                    ids.sort_unstable();
                    (tier.priority, ids)
                })
                .collect();
            routes.push((group.to_owned(), model.to_owned(), tiers));
        }
    }
    let mut records: Vec<(i64, Channel)> = t
        .channels()
        .map(|c| (c.id().0, (*c.channel).clone()))
        .collect();
    records.sort_by_key(|(id, _)| *id);
    (routes, records)
}

async fn spawn(store: &Store) -> ChannelPool {
    let options = Options::load(store.clone()).expect("options");
    ChannelPool::spawn(store.clone(), options, Arc::new(NoProbe), |_| u32::MAX)
        .await
        .expect("pool")
        .0
}

#[tokio::test]
async fn a_reload_by_ids_equals_a_whole_reload_after_any_series_of_edits() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_dir(dir.path()).expect("store");
    store
        .write_blocking(|wtx| {
            for i in 0..30 {
                channels::insert(wtx, channel(i))?;
            }
            Ok::<_, tollgate_storage::StorageError>(())
        })
        .expect("channels");
    let by_ids = spawn(&store).await;
    let whole = spawn(&store).await;
    let mut rng = StdRng::seed_from_u64(29);
    let mut next = 30;
    for step in 0..200 {
        let ids: Vec<ChannelId> = store
            .read_blocking(channels::list_all)
            .expect("list")
            .iter()
            .map(|c| c.id)
            .collect();
        let kind = rng.random_range(0..8);
        let target = ids[rng.random_range(0..ids.len())];
        next += 1;
        let fresh = channel(next);
        let written = store
            .write_blocking(move |wtx| {
                if kind == 0 || ids.len() < 5 {
                    return Ok(channels::insert(wtx, fresh)?.id);
                }
                if kind == 1 {
                    channels::delete(wtx, target)?;
                    return Ok(target);
                }
                let mut c = channels::get_rw(wtx, target)?.expect("channel");
                match kind {
                    2 => {
                        c.status = if c.is_enabled() {
                            STATUS_MANUALLY_DISABLED
                        } else {
                            STATUS_ENABLED
                        }
                    }
                    3 => c.group = ["default", "vip", "default,vip", "svip"][step % 4].into(),
                    4 => c.models = ["m", "n", "m,n", "o"][step % 4].into(),
                    5 => c.priority = (step % 5) as i64 - 2,
                    6 => c.weight = (step % 7) as i64,
                    _ => c.key = Secret::new(format!("sk-new-{step}")),
                }
                channels::update(wtx, &c)?;
                Ok::<_, tollgate_storage::StorageError>(c.id)
            })
            .expect("edit");
        by_ids.reload_ids(&[written]).await.expect("reload by ids");
        whole.reload().await.expect("whole reload");
        assert_eq!(
            shape(&by_ids.table().load()),
            shape(&whole.table().load()),
            "after step {step} (edit {kind} of channel {written})"
        );
    }
    // An id that names no channel (already deleted, or never made) changes nothing.
    by_ids
        .reload_ids(&[ChannelId(999_999)])
        .await
        .expect("reload of a missing id");
    assert_eq!(shape(&by_ids.table().load()), shape(&whole.table().load()));
}
