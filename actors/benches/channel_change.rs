//! What one channel change costs at 10,000 channels (P17 item 3): the channel pool re-reads
//! the channels and republishes the routing table after every admin write. Measured: the pool's
//! whole reload (`ChannelPool::reload`: the storage read, the record comparison and the table
//! rebuild) after one channel's weight changed, its reload of the edited id only
//! (`ChannelPool::reload_ids`, what the console's single-channel writers call: one record read,
//! the table rebuilt from the previous one), the reload of 100 ids after a bulk edit (what the
//! bulk writers — a tag's edit or status, a batch delete, the balance sweep — call), and the
//! routing table build alone, whole and from the previous table. Run: `cargo bench -p tollgate-actors --bench channel_change`.

#![expect(
    clippy::expect_used,
    reason = "bench setup: a failure aborts the bench"
)]

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use criterion::{Criterion, criterion_group, criterion_main};
use tollgate_actors::channel_pool::routing_table::RoutingTable;
use tollgate_actors::channel_pool::{ChannelPool, ProbeFuture, Prober};
use tollgate_actors::options::Options;
use tollgate_storage::channels::{self, Channel, STATUS_ENABLED};
use tollgate_storage::secret::Secret;
use tollgate_storage::{ChannelId, Quota, Store};

/// Channels in the installation.
const CHANNELS: i64 = 10_000;

/// Never called: the bench runs no re-test.
struct NoProbe;

impl Prober for NoProbe {
    fn probe(&self, _channel: Arc<Channel>) -> ProbeFuture<'_> {
        Box::pin(std::future::pending())
    }
}

/// Channel `i`: 8 of 200 models, one or two of three groups, two key lines.
fn channel(i: i64) -> Channel {
    let models: Vec<String> = (0..8)
        .map(|m| format!("model-{}", (i * 7 + m * 13) % 200))
        .collect();
    let group = match i % 3 {
        0 => "default",
        1 => "default,vip",
        _ => "svip",
    };
    Channel {
        id: ChannelId(0),
        name: format!("channel-{i}"),
        channel_type: 1,
        key: Secret::new(format!("sk-upstream-{i}-a\nsk-upstream-{i}-b")),
        openai_organization: String::new(),
        max_input_tokens: 0,
        base_url: "https://api.example.com".into(),
        other: String::new(),
        model_mapping: r#"{"model-1":"model-2"}"#.into(),
        status_code_mapping: String::new(),
        models: models.join(","),
        group: group.into(),
        auto_ban: 1,
        test_model: String::new(),
        proxy: String::new(),
        priority: i % 4,
        weight: 1 + i % 10,
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

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_dir(dir.path()).expect("store");
    store
        .write_blocking(|wtx| {
            for i in 0..CHANNELS {
                channels::insert(wtx, channel(i))?;
            }
            Ok::<_, tollgate_storage::StorageError>(())
        })
        .expect("channels");
    let options = Options::load(store.clone()).expect("options");
    let (pool, _join) = runtime
        .block_on(ChannelPool::spawn(
            store.clone(),
            options,
            Arc::new(NoProbe),
            |_| u32::MAX,
        ))
        .expect("pool");

    let mut group = c.benchmark_group("channel_change_10k");
    group.sample_size(10);
    let mut weight = 1;
    group.bench_function("pool reload after one edit", |b| {
        b.iter(|| {
            weight = weight % 50 + 1;
            store
                .write_blocking(|wtx| {
                    let mut one = channels::get_rw(wtx, ChannelId(5_000))?.expect("channel");
                    one.weight = weight;
                    channels::update(wtx, &one)
                })
                .expect("edit");
            runtime.block_on(pool.reload()).expect("reload");
        });
    });

    group.bench_function("pool reload of the edited id after one edit", |b| {
        b.iter(|| {
            weight = weight % 50 + 1;
            store
                .write_blocking(|wtx| {
                    let mut one = channels::get_rw(wtx, ChannelId(5_000))?.expect("channel");
                    one.weight = weight;
                    channels::update(wtx, &one)
                })
                .expect("edit");
            runtime
                .block_on(pool.reload_ids(&[ChannelId(5_000)]))
                .expect("reload by ids");
        });
    });

    // A bulk writer (a tag's edit or status, a batch delete, the balance sweep's disables):
    // 100 channels changed in one write, then only their ids reloaded.
    let tagged: Vec<ChannelId> = (1..=CHANNELS).step_by(100).map(ChannelId).collect();
    group.bench_function("pool reload of 100 edited ids after a bulk edit", |b| {
        b.iter(|| {
            weight = weight % 50 + 1;
            let ids = tagged.clone();
            store
                .write_blocking(move |wtx| {
                    for id in ids {
                        let mut one = channels::get_rw(wtx, id)?.expect("channel");
                        one.weight = weight;
                        channels::update(wtx, &one)?;
                    }
                    Ok::<_, tollgate_storage::StorageError>(())
                })
                .expect("bulk edit");
            runtime
                .block_on(pool.reload_ids(&tagged))
                .expect("reload by ids");
        });
    });

    let all: Vec<Arc<Channel>> = store
        .read_blocking(channels::list_all)
        .expect("list")
        .into_iter()
        .map(Arc::new)
        .collect();
    group.bench_function("routing table, whole build", |b| {
        b.iter(|| RoutingTable::build(&all, |_| Arc::new(AtomicUsize::new(0))));
    });
    let before = RoutingTable::build(&all, |_| Arc::new(AtomicUsize::new(0)));
    let mut edited = all.clone();
    if let Some(one) = edited.get_mut(5_000) {
        let mut changed = (**one).clone();
        changed.weight += 1;
        *one = Arc::new(changed);
    }
    group.bench_function("routing table, rebuild after one edit", |b| {
        b.iter(|| before.rebuild(&edited, |_| Arc::new(AtomicUsize::new(0)), |_| u32::MAX));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
