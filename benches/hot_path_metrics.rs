//! Criterion micro-benchmarks of what `/metrics` adds to a relay request (issue #22 item 9):
//! finding the request's `(channel, model)` counters in the index built from the published
//! routing table (10 and 10,000 channels; a configured model and one nobody configured), the
//! records a request makes (attempts, settlement, an active stream), and a scrape's encoding.
//!
//! `cargo bench --profile release --bench hot_path_metrics` (add a filter, e.g. `-- record`).
#![expect(
    clippy::expect_used,
    reason = "a benchmark binary: a failed set-up aborts it"
)]

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use tollgate::metrics::Metrics;
use tollgate::metrics::relay::ActiveStream;
use tollgate_actors::channel_pool::RoutingTable;
use tollgate_actors::snapshot::Published;
use tollgate_actors::stats::WriterStats;
use tollgate_storage::channels::{Channel, STATUS_ENABLED};
use tollgate_storage::secret::Secret;
use tollgate_storage::{ChannelId, Quota};

/// Channel `id` serving 20 of 200 models (as in `hot_path`).
fn channel(id: i64) -> Arc<Channel> {
    let models: Vec<String> = (0..20)
        .map(|m| format!("model-{}", (id * 7 + m) % 200))
        .collect();
    Arc::new(Channel {
        id: ChannelId(id),
        name: format!("c{id}"),
        channel_type: 1,
        key: Secret::new("k1"),
        openai_organization: String::new(),
        max_input_tokens: 0,
        base_url: String::new(),
        other: String::new(),
        model_mapping: String::new(),
        status_code_mapping: String::new(),
        models: models.join(","),
        group: "default".into(),
        auto_ban: 1,
        test_model: String::new(),
        proxy: String::new(),
        priority: 0,
        weight: 1,
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

fn published(n: i64) -> Published<RoutingTable> {
    let channels: Vec<Arc<Channel>> = (1..=n).map(channel).collect();
    Published::new(RoutingTable::build(channels.iter(), |_| {
        Arc::new(AtomicUsize::new(0))
    }))
}

/// The per-request path: the cell lookup, then what a request records.
fn record(c: &mut Criterion) {
    let mut group = c.benchmark_group("metrics");
    for n in [10_i64, 10_000] {
        let table = published(n);
        let metrics = Metrics::new(table.clone(), Arc::new(WriterStats::default()));
        let relay = metrics.relay();
        // Channel 3 serves model-21; the first lookup builds the index.
        let _ = relay.cell(&table, Some(ChannelId(3)), "model-21");
        group.bench_function(BenchmarkId::new("cell/configured", n), |b| {
            b.iter(|| relay.cell(&table, black_box(Some(ChannelId(3))), black_box("model-21")));
        });
        group.bench_function(BenchmarkId::new("cell/other", n), |b| {
            b.iter(|| relay.cell(&table, black_box(Some(ChannelId(3))), black_box("nobody's")));
        });
        // Everything one streamed request records: its cell, its attempts, the active-stream
        // guard, the settlement (quota, duration, first token).
        group.bench_function(BenchmarkId::new("request", n), |b| {
            b.iter(|| {
                let cell = relay.cell(&table, black_box(Some(ChannelId(3))), "model-21");
                relay.retried(&cell, 1);
                let active = ActiveStream::new(Arc::clone(&cell));
                cell.settled(
                    black_box(1_234),
                    Duration::from_millis(900),
                    Some(Duration::from_millis(120)),
                );
                drop(active);
            });
        });
    }
    let table = published(10);
    let metrics = Metrics::new(table.clone(), Arc::new(WriterStats::default()));
    let cell = metrics.relay().cell(&table, Some(ChannelId(3)), "model-21");
    group.bench_function("settled", |b| {
        b.iter(|| {
            cell.settled(
                black_box(1_234),
                Duration::from_millis(900),
                Some(Duration::from_millis(120)),
            );
        });
    });
    group.finish();
}

/// A scrape: 1,000 channels with every one of their 20 models used.
fn scrape(c: &mut Criterion) {
    let table = published(1_000);
    let metrics = Metrics::new(table.clone(), Arc::new(WriterStats::default()));
    for id in 1..=1_000_i64 {
        for m in 0..20 {
            let model = format!("model-{}", (id * 7 + m) % 200);
            metrics
                .relay()
                .cell(&table, Some(ChannelId(id)), &model)
                .settled(10, Duration::from_millis(500), None);
        }
    }
    c.bench_function("metrics/encode/20k series", |b| {
        b.iter(|| metrics.encode().expect("encoded").len());
    });
}

criterion_group!(benches, record, scrape);
criterion_main!(benches);
