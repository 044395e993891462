//! Criterion micro-benchmarks of the relay hot path's pure parts (issue P11): routing-table
//! build and pick at 10 and 10,000 channels, price computation, token-index lookup among
//! 1,000,000 keys, SSE parsing with usage extraction, prompt-token counting, a quota
//! reserve + settle round trip through the user's ledger, the log writer's group commit
//! (rows per second at batch sizes 1, 64 and 512), the crash journal's append (inline, and
//! through a journal thread with an acknowledgement), admission's prompt estimate and the
//! relay request's own task.
//!
//! `cargo bench --profile release --bench hot_path` (add a filter, e.g. `-- routing`).
#![expect(
    clippy::expect_used,
    reason = "a benchmark binary: a failed set-up aborts it"
)]

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use tollgate::relay::measure::estimate;
use tollgate::relay::measure::price::{self, Usage};
use tollgate::relay::measure::tokenize::{self, Counter};
use tollgate::relay::measure::usage::OpenAiUsage;
use tollgate::relay::pipeline::sse::SseReader;
use tollgate_actors::channel_pool::{RoutingTable, select};
use tollgate_actors::journal::Journal;
use tollgate_actors::log_writer::LogWriter;
use tollgate_actors::options::pricing::PriceTable;
use tollgate_actors::quota::QuotaBook;
use tollgate_actors::token_index::TokenIndex;
use tollgate_storage::channels::{Channel, STATUS_ENABLED};
use tollgate_storage::logs::{LOG_CONSUME, LogEntry};
use tollgate_storage::secret::Secret;
use tollgate_storage::tokens::Token;
use tollgate_storage::usage::BalanceChange;
use tollgate_storage::users::{self, NewUser};
use tollgate_storage::{ChannelId, Quota, Store, TokenId, UserId};

/// Channel `id` serving 20 of 200 models in one of 3 groups, at one of 3 priorities.
fn channel(id: i64) -> Arc<Channel> {
    let models: Vec<String> = (0..20)
        .map(|m| format!("model-{}", (id * 7 + m) % 200))
        .collect();
    Arc::new(Channel {
        id: ChannelId(id),
        name: format!("c{id}"),
        channel_type: 1,
        key: Secret::new("k1\nk2\nk3"),
        openai_organization: String::new(),
        max_input_tokens: 0,
        base_url: String::new(),
        other: String::new(),
        model_mapping: String::new(),
        status_code_mapping: String::new(),
        models: models.join(","),
        group: ["default", "vip", "svip"][(id % 3) as usize].into(),
        auto_ban: 1,
        test_model: String::new(),
        proxy: String::new(),
        priority: id % 3,
        weight: 1 + id % 5,
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

/// Routing: building the table (on every channel change) and one request's pick.
fn routing(c: &mut Criterion) {
    let mut group = c.benchmark_group("routing");
    for n in [10_i64, 10_000] {
        let channels: Vec<Arc<Channel>> = (1..=n).map(channel).collect();
        let cursor = |_| Arc::new(AtomicUsize::new(0));
        group.bench_with_input(BenchmarkId::new("build", n), &channels, |b, chans| {
            b.iter(|| RoutingTable::build(chans.iter(), cursor));
        });
        let table = RoutingTable::build(channels.iter(), cursor);
        let model = "model-21"; // served by channel 3, in group "default"
        let mut rng = rand::rng();
        group.bench_with_input(BenchmarkId::new("pick", n), &table, |b, t| {
            b.iter(|| {
                let route = t.route("default", black_box(model)).expect("route");
                let ch = select(route, 0, &[], &mut rng).expect("channel");
                ch.next_key().map(|(i, _)| i)
            });
        });
    }
    group.finish();
}

/// Pricing: the model's price looked up, a reservation and a charge.
fn pricing(c: &mut Criterion) {
    let table = PriceTable::new("{}", "{}", "{}", "{}", r#"{"default": 1, "vip": 0.8}"#);
    let usage = Usage {
        prompt_tokens: 1200,
        completion_tokens: 350,
        cached_tokens: 200,
        ..Usage::default()
    };
    c.bench_function("price/lookup+reserve+charge", |b| {
        b.iter(|| {
            let p = table.model(black_box("gpt-4o-mini")).expect("priced");
            let g = table.group("vip");
            let r = price::reservation(
                p,
                g,
                500_000,
                1200,
                price::OutputBound::new(Some(1024), None, 4096, 1),
                0,
            )
            .expect("reservation");
            let c = price::charge(p, g, 500_000, black_box(usage)).expect("charge");
            (r, c)
        });
    });
}

/// The 48-character key of token `i`.
fn key(i: u64) -> String {
    format!("{:048x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Token index: one lookup (hit and miss) among 1,000,000 keys.
fn token_index(c: &mut Criterion) {
    let index = TokenIndex::default();
    for i in 0..1_000_000 {
        index.upsert(&Token {
            id: TokenId(i as i64),
            user_id: UserId(1 + (i as i64) % 1000),
            name: "k".into(),
            key: key(i),
            status: 1,
            created_time: 0,
            accessed_time: 0,
            expired_time: -1,
            remain_quota: Quota(1000),
            unlimited_quota: false,
            used_quota: Quota::ZERO,
            model_limits_enabled: false,
            model_limits: String::new(),
            allow_ips: String::new(),
            group: String::new(),
        });
    }
    let hit = key(123_457);
    c.bench_function("token_index/1M/hit", |b| {
        b.iter(|| index.get(black_box(&hit)).is_some())
    });
    let miss = key(2_000_000);
    c.bench_function("token_index/1M/miss", |b| {
        b.iter(|| index.get(black_box(&miss)).is_some())
    });
}

/// The benchmark mock's stream: 20 content chunks, a usage chunk and `[DONE]`.
fn sse_body() -> Vec<u8> {
    let head = r#"{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","#;
    let mut body = String::new();
    for i in 0..20 {
        body.push_str(&format!("data: {head}\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"tok{i} \"}},\"finish_reason\":null}}]}}\n\n"));
    }
    body.push_str(&format!("data: {head}\"choices\":[],\"usage\":{{\"prompt_tokens\":12,\"completion_tokens\":20,\"total_tokens\":32}}}}\n\n"));
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
}

/// Usage from an event's data, as the relay reads it.
fn usage_of(data: &str) -> Option<Usage> {
    #[derive(serde::Deserialize)]
    struct WithUsage {
        usage: Option<OpenAiUsage>,
    }
    let chunk: WithUsage = serde_json::from_str(data).ok()?;
    chunk.usage.as_ref().map(Usage::from)
}

/// SSE: a whole 22-event stream, in two reads split mid-event, read by the relay's
/// `SseReader` (sseer's line parser) and each event's usage looked for, as the relay does.
fn sse(c: &mut Criterion) {
    let body = sse_body();
    let mut group = c.benchmark_group("sse");
    group.throughput(Throughput::Elements(22));
    group.bench_function("SseReader+usage/22 events", |b| {
        b.iter(|| {
            let mut reader = SseReader::default();
            let (a, z) = body.split_at(body.len() / 2);
            let mut usage = None;
            let mut ends = 0;
            for part in [a, z] {
                reader
                    .feed(part, |event, end| {
                        if event.data != "[DONE]" {
                            usage = usage_of(event.data).or(usage);
                        }
                        ends += end;
                    })
                    .expect("within the limit");
            }
            (usage, ends)
        });
    });
    group.finish();
}

/// Prompt-token counting of a ~1 KB English prompt: exact (o200k) and the estimator.
fn tokens(c: &mut Criterion) {
    let prompt = "You are a helpful assistant. Summarise the following text in three sentences, \
        keeping every number exact and naming each person once. "
        .repeat(8);
    let counter = Counter::for_model("gpt-4o-mini");
    counter.count("warm up");
    let mut group = c.benchmark_group("prompt_tokens");
    group.throughput(Throughput::Bytes(prompt.len() as u64));
    group.bench_function("o200k/1KB", |b| {
        b.iter(|| counter.count(black_box(&prompt)))
    });
    group.bench_function("estimate/1KB", |b| {
        b.iter(|| tokenize::estimate(black_box(&prompt)))
    });
    // What admission runs on every request (P13): every part of a chat request, text by
    // per-script weights.
    let request = serde_json::json!({"model": "gpt-4o-mini", "messages": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": prompt}]});
    let rule = estimate::ImageRule::for_model("gpt-4o-mini");
    group.bench_function("request_estimate/1KB chat", |b| {
        b.iter(|| estimate::request(black_box(&request), rule))
    });
    group.finish();
}

/// A relay request's own task (P13's detach): a tracked spawn, awaited, with the oneshot whose
/// closing tells the task that the client left.
fn detach(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let tracker = tokio_util::task::TaskTracker::new();
    // Measured on a runtime worker, as a handler spawns it (a `block_on` per request would add
    // a wake-up across threads that requests never pay).
    c.bench_function("detach/spawn+await", |b| {
        b.iter_custom(|iters| {
            let tracker = tracker.clone();
            rt.block_on(rt.spawn(async move {
                let start = std::time::Instant::now();
                for _ in 0..iters {
                    let (tx, present) = tokio::sync::oneshot::channel::<()>();
                    let task = tracker.spawn(async move { black_box(tx.is_closed()) });
                    black_box(task.await.expect("task"));
                    drop(present);
                }
                start.elapsed()
            }))
            .expect("bench task")
        })
    });
}

/// A store in a fresh temporary directory with user 1 (plenty of quota).
fn store_with_user() -> (tempfile::TempDir, Store, UserId) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_dir(dir.path()).expect("store");
    let user = store
        .write_blocking(|wtx| {
            users::insert(
                wtx,
                NewUser {
                    username: "bench".into(),
                    display_name: String::new(),
                    password_hash: String::new(),
                    email: String::new(),
                    role: 1,
                    group: "default".into(),
                    quota: Quota(i64::MAX / 4),
                    aff_code: String::new(),
                    inviter_id: 0,
                    created_at: 0,
                },
            )
        })
        .expect("user");
    (dir, store, user.id)
}

/// Quota: reserve then settle (the settlement is queued to the log writer, not awaited).
fn quota(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (_dir, store, user) = store_with_user();
    let (writer, _thread) = LogWriter::spawn(store.clone()).expect("writer");
    let book = QuotaBook::new(store, writer);
    c.bench_function("quota/reserve+settle", |b| {
        b.iter(|| {
            rt.block_on(async {
                let hold = book.reserve(user, None, 2_000).await.expect("reserve");
                hold.settle(black_box(1_234), |_| None, 0).charged
            })
        });
    });
    rt.block_on(book.flush()).expect("flush");
}

/// A typical consume row.
fn consume_row(user: UserId) -> LogEntry {
    LogEntry {
        created_at: 1_767_225_600,
        log_type: LOG_CONSUME,
        user_id: user,
        username: "bench".into(),
        token_name: "k".into(),
        model_name: "gpt-4o-mini".into(),
        quota: 1_234,
        prompt_tokens: 12,
        completion_tokens: 20,
        use_time: 1,
        is_stream: true,
        channel_id: 1,
        group: "default".into(),
        other: r#"{"model_ratio":0.075,"completion_ratio":4,"group_ratio":1}"#.into(),
        ..LogEntry::default()
    }
}

/// The log writer: `batch` settlements (balance change + consume row) queued, then one flush.
fn log_writer(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (_dir, store, user) = store_with_user();
    let (writer, _thread) = LogWriter::spawn(store).expect("writer");
    let row = consume_row(user);
    let mut group = c.benchmark_group("log_writer");
    group.sample_size(20);
    for batch in [1_u64, 64, 512] {
        group.throughput(Throughput::Elements(batch));
        group.bench_with_input(BenchmarkId::new("commit", batch), &batch, |b, &batch| {
            b.iter(|| {
                for _ in 0..batch {
                    let change = BalanceChange {
                        user_id: user,
                        token_id: None,
                        charged: 1_234,
                        is_request: true,
                        at: 0,
                    };
                    writer.record(Some(change), Some(row.clone()));
                }
                rt.block_on(writer.flush()).expect("flush");
            });
        });
    }
    group.finish();
}

/// The crash journal's cost per settlement (balance change + consume row), the two designs of
/// P13 item 10: appended inline on the request's thread (one `write(2)` to the page cache), or
/// handed to a journal thread whose acknowledgement the request awaits. The file is trimmed
/// every 1,024 records, as the writer's commits trim it.
fn journal(c: &mut Criterion) {
    let user = UserId(1);
    let change = BalanceChange {
        user_id: user,
        token_id: Some(TokenId(2)),
        charged: 1_234,
        is_request: true,
        at: 0,
    };
    let row = consume_row(user);
    let mut group = c.benchmark_group("journal");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut inline = Journal::create(dir.path(), 1).expect("journal");
    let mut seq = 0_u64;
    group.bench_function("inline", |b| {
        b.iter_batched(
            || Box::new(row.clone()),
            |row| {
                seq += 1;
                inline
                    .settled(seq, Some(seq), Some(change), Some(&row))
                    .expect("append");
                if seq.is_multiple_of(1_024) {
                    inline.committed(seq).expect("trim");
                }
                row
            },
            BatchSize::SmallInput,
        );
    });
    type Job = (
        u64,
        Box<LogEntry>,
        tokio::sync::oneshot::Sender<Box<LogEntry>>,
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Job>();
    let thread_dir = tempfile::tempdir().expect("tempdir");
    let mut threaded = Journal::create(thread_dir.path(), 1).expect("journal");
    let thread = std::thread::spawn(move || {
        while let Some((seq, row, ack)) = rx.blocking_recv() {
            threaded
                .settled(seq, Some(seq), Some(change), Some(&row))
                .expect("append");
            if seq.is_multiple_of(1_024) {
                threaded.committed(seq).expect("trim");
            }
            let _ = ack.send(row);
        }
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    group.bench_function("thread_ack", |b| {
        b.iter_batched(
            || Box::new(row.clone()),
            |row| {
                seq += 1;
                rt.block_on(async {
                    let (ack, done) = tokio::sync::oneshot::channel();
                    tx.send((seq, row, ack)).expect("journal thread");
                    done.await.expect("ack")
                })
            },
            BatchSize::SmallInput,
        );
    });
    group.finish();
    drop(tx);
    thread.join().expect("journal thread");
}

criterion_group!(
    benches,
    routing,
    pricing,
    token_index,
    sse,
    tokens,
    quota,
    log_writer,
    journal,
    detach
);
criterion_main!(benches);
