//! Log query benchmark: builds a 10-million-row log database (cached under
//! `target/bench-data/`, so reruns start at once) and reports, per filter combination the
//! console offers, the latency of a page (first and tenth page of 20 rows), whether `total` was
//! exact, and the stat call; then measures background deletion (rows per batch transaction,
//! longest batch) and free-space reuse on a smaller database.
//!
//! First, the insert phase: a fresh database takes `LOG_BENCH_INSERT_ROWS` rows (100,000) of the
//! same generator in transactions of `LOG_BENCH_INSERT_BATCH` rows (256, a loaded log writer's
//! batch), and the phase prints per row the B-tree inserts (rows, indexes, counters, aggregates,
//! as counted by `insert_batch_counted`), the bytes written (`wchar` of `/proc/self/io`: the
//! committed pages and redb's headers), the file's growth and the CPU time of the write
//! transactions (this thread's, commits included), then what each log table holds per row
//! (entries, stored bytes, pages). `LOG_BENCH_DURABLE_EVERY=5` makes only every fifth
//! transaction durable (fsync), as the log writer does under load (the default 1: every one).
//!
//! `cargo bench --bench log_queries` (set `LOG_BENCH_ROWS` for a smaller database,
//! `LOG_BENCH_DIR` to keep it elsewhere than `target/bench-data/`, `LOG_BENCH_CASES` to time only
//! the filters whose name contains one of its `|`-separated parts, `LOG_BENCH_INSERT_ROWS=0` and
//! `LOG_BENCH_RETENTION=0` to skip the insert phase and the retention phase, `LOG_BENCH_CACHE_MB`
//! for a page cache other than the storage crate's default, as `--db-cache-mb` gives the server).
#![expect(
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a benchmark binary: failures abort it and results go to stdout"
)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tollgate_storage::logs::query::{self, LogFilter};
use tollgate_storage::logs::{self, LOG_CONSUME, LOG_ERROR, LOG_MANAGE, LOG_TOPUP, LogEntry};
use tollgate_storage::{StorageError, Store, UserId};

/// Last second of the generated data (2026-01-01T00:00:00Z); queries use it as "now".
const END: i64 = 1_767_225_600;
/// The data covers this many seconds (30 days).
const SPAN: i64 = 30 * 86_400;
/// Rows per build transaction.
const BUILD_BATCH: usize = 50_000;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const MODELS: [&str; 12] = [
    "gpt-4o-mini",
    "gpt-4o",
    "claude-sonnet-4",
    "deepseek-chat",
    "gemini-2.5-flash",
    "gpt-4.1",
    "o3-mini",
    "qwen-max",
    "claude-haiku-3.5",
    "text-embedding-3-small",
    "dall-e-3",
    "whisper-1",
];

/// Row `i` of `n`: 10 heavy users make half the traffic, 990 others the rest; models, channels,
/// groups and types skewed like a real gateway's.
fn row(i: u64, n: u64, rng: &mut Rng) -> LogEntry {
    let user = if rng.below(2) == 0 {
        1 + rng.below(10)
    } else {
        11 + rng.below(990)
    };
    // Model: geometric-ish skew over 40 names (12 base names × suffixes).
    let mut m = 0;
    while m < 39 && rng.below(3) == 0 {
        m += 1;
    }
    let model = if m < 12 {
        MODELS[m as usize].to_owned()
    } else {
        format!("{}-{m}", MODELS[(m % 12) as usize])
    };
    let token = ["default", "key-1", "key-2"][rng.below(3) as usize];
    let group = match rng.below(100) {
        0..80 => "default",
        80..95 => "vip",
        _ => "svip",
    };
    let log_type = match rng.below(1000) {
        0..970 => LOG_CONSUME,
        970..990 => LOG_ERROR,
        990..995 => LOG_TOPUP,
        _ => LOG_MANAGE,
    };
    let prompt = 50 + rng.below(4000) as i64;
    let completion = rng.below(1500) as i64;
    let created_at = END - SPAN + (i as i64 * SPAN) / n as i64;
    LogEntry {
        id: 0,
        created_at,
        log_type,
        user_id: UserId(user as i64),
        username: format!("user{user}"),
        token_id: user as i64 * 3,
        token_name: token.to_owned(),
        model_name: model.clone(),
        channel_id: 1 + rng.below(20) as i64,
        group: group.to_owned(),
        is_stream: rng.below(2) == 0,
        use_time: rng.below(30) as i64,
        prompt_tokens: prompt,
        completion_tokens: completion,
        quota: prompt + completion * 4,
        content: String::new(),
        other: format!(
            r#"{{"model_ratio":1.25,"completion_ratio":4,"cache_ratio":0.5,"model_price":-1,"group_ratio":1,"cache_tokens":0,"frt":{},"is_model_mapped":false,"upstream_model_name":"{model}","usage_source":"upstream","cost":{},"admin_info":{{"use_channel":[3],"attempts":[{{"c":3,"s":200,"ms":812,"e":""}}]}}}}"#,
            rng.below(3000),
            prompt + completion * 4
        ),
        request_id: format!("{:016x}", rng.next()),
    }
}

/// The page cache the queries run with: `LOG_BENCH_CACHE_MB`, else the storage's default.
fn cache_bytes() -> usize {
    std::env::var("LOG_BENCH_CACHE_MB")
        .ok()
        .and_then(|mb| mb.parse::<usize>().ok())
        .map_or(tollgate_storage::store::DEFAULT_CACHE_BYTES, |mb| {
            mb.saturating_mul(1024 * 1024)
        })
}

/// Opens the cached database at `path` with `n` rows, building it first if needed.
fn database(path: &Path, n: u64) -> Store {
    println!("page cache: {} MiB", cache_bytes() / (1024 * 1024));
    if path.exists() {
        let store = Store::open_with_cache(path, cache_bytes()).expect("open cached database");
        let have = store.read_blocking(logs::count).expect("count");
        if have == n {
            println!("using the cached database {} ({n} rows)", path.display());
            return store;
        }
        drop(store);
        std::fs::remove_file(path).expect("remove stale database");
    }
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let store = Store::open_with_cache(path, cache_bytes()).expect("create database");
    println!("building {n} rows into {} …", path.display());
    let started = Instant::now();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut i = 0;
    while i < n {
        let upto = (i + BUILD_BATCH as u64).min(n);
        let rows: Vec<LogEntry> = (i..upto).map(|k| row(k, n, &mut rng)).collect();
        store
            .write_blocking(|wtx| logs::insert_batch(wtx, rows, true).map(|_| ()))
            .expect("insert batch");
        i = upto;
        if i % 1_000_000 == 0 {
            println!("  {i} rows, {:.0} s", started.elapsed().as_secs_f64());
        }
    }
    println!(
        "built in {:.0} s, file {} MB",
        started.elapsed().as_secs_f64(),
        file_mb(path)
    );
    store
}

/// CPU time this thread has used so far, in nanoseconds (`/proc/thread-self/schedstat`).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .unwrap_or_default()
        .split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Bytes this process has written through `write`/`pwrite` so far (`wchar` of `/proc/self/io`).
fn written_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("wchar:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// The insert phase: `rows` rows into a fresh database in transactions of `batch`, every
/// `durable_every`-th of them durable.
fn insert_phase(dir: &Path, n: u64, rows: u64, batch: usize, durable_every: u64) {
    std::fs::create_dir_all(dir).expect("mkdir");
    let path = dir.join("insert-phase.redb");
    let _ = std::fs::remove_file(&path);
    let store = Store::open(&path).expect("open");
    let size_before = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut inserts, mut i) = (0u64, 0u64);
    let written_before = written_bytes();
    let (mut cpu, mut transactions) = (0u64, 0u64);
    let started = Instant::now();
    while i < rows {
        let upto = (i + batch as u64).min(rows);
        let chunk: Vec<LogEntry> = (i..upto).map(|k| row(k, n, &mut rng)).collect();
        let cpu_before = thread_cpu_ns();
        let insert = |wtx: &tollgate_storage::WriteTransaction| {
            logs::write::insert_batch_counted(wtx, chunk, true)
        };
        transactions += 1;
        let durable = upto == rows || transactions % durable_every.max(1) == 0;
        inserts += if durable {
            store.write_blocking(insert)
        } else {
            store.write_blocking_lazy(insert)
        }
        .expect("insert batch")
        .1;
        cpu += thread_cpu_ns().saturating_sub(cpu_before);
        i = upto;
    }
    let elapsed = started.elapsed();
    let written = written_bytes() - written_before;
    let growth = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) - size_before;
    let per = |v: u64| v as f64 / rows as f64;
    println!(
        "insert phase: {rows} rows in transactions of {batch} (every {durable_every} durable): {:.2} B-tree inserts per row, {:.0} bytes written per row (committed pages), {:.0} bytes of file growth per row, {:.1} µs per row, {:.2} µs of CPU per row",
        per(inserts),
        per(written),
        per(growth),
        elapsed.as_secs_f64() * 1e6 / rows as f64,
        cpu as f64 / 1e3 / rows as f64
    );
    println!();
    println!("| table | entries per row | stored bytes per row | page bytes per row |");
    println!("|---|---|---|---|");
    for t in store.read_blocking(logs::footprint).expect("footprint") {
        println!(
            "| {} | {:.2} | {:.0} | {:.0} |",
            t.name,
            per(t.entries),
            per(t.stored_bytes),
            per(t.page_bytes)
        );
    }
    drop(store);
    let _ = std::fs::remove_file(&path);
}

fn file_mb(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) / 1_000_000
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Runs `f` `runs` times and returns the median and the worst.
fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, Duration, T) {
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        last = Some(f());
        times.push(t.elapsed());
    }
    let worst = times.iter().copied().max().unwrap_or_default();
    (median(times), worst, last.expect("ran"))
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

fn cases() -> Vec<(&'static str, LogFilter)> {
    let day = Some(END - 86_400);
    let ahead = Some(END + 3600);
    let s = |v: &str| Some(v.to_owned());
    let heavy = Some(UserId(3));
    let light = Some(UserId(500));
    vec![
        ("admin: no filter", LogFilter::default()),
        (
            "admin: default window (last day)",
            LogFilter {
                start: day,
                end: ahead,
                ..LogFilter::default()
            },
        ),
        (
            "admin: type consume",
            LogFilter {
                log_type: Some(LOG_CONSUME),
                ..LogFilter::default()
            },
        ),
        (
            "admin: type top-up (rare)",
            LogFilter {
                log_type: Some(LOG_TOPUP),
                ..LogFilter::default()
            },
        ),
        (
            "admin: username (heavy user)",
            LogFilter {
                user: heavy,
                ..LogFilter::default()
            },
        ),
        (
            "admin: username (light user)",
            LogFilter {
                user: light,
                ..LogFilter::default()
            },
        ),
        (
            "admin: token name",
            LogFilter {
                token_name: s("key-1"),
                ..LogFilter::default()
            },
        ),
        (
            "admin: model (popular)",
            LogFilter {
                model_name: s("gpt-4o-mini"),
                ..LogFilter::default()
            },
        ),
        (
            "admin: model (rare)",
            LogFilter {
                model_name: s("o3-mini-30"),
                ..LogFilter::default()
            },
        ),
        (
            "admin: channel",
            LogFilter {
                channel: Some(7),
                ..LogFilter::default()
            },
        ),
        (
            "admin: group",
            LogFilter {
                group: s("svip"),
                ..LogFilter::default()
            },
        ),
        (
            "admin: username + model",
            LogFilter {
                user: light,
                model_name: s("gpt-4o"),
                ..LogFilter::default()
            },
        ),
        (
            "admin: model + channel",
            LogFilter {
                model_name: s("gpt-4o"),
                channel: Some(7),
                ..LogFilter::default()
            },
        ),
        (
            "admin: channel + group + type error",
            LogFilter {
                channel: Some(7),
                group: s("svip"),
                log_type: Some(LOG_ERROR),
                ..LogFilter::default()
            },
        ),
        (
            "admin: model (rare) + group (rare), last day",
            LogFilter {
                model_name: s("deepseek-chat"),
                group: s("svip"),
                start: day,
                end: ahead,
                ..LogFilter::default()
            },
        ),
        (
            "admin: every filter, last day",
            LogFilter {
                user: heavy,
                token_name: s("key-2"),
                model_name: s("gpt-4o"),
                channel: Some(5),
                group: s("default"),
                log_type: Some(LOG_CONSUME),
                start: day,
                end: ahead,
            },
        ),
        (
            "admin: type error + channel",
            LogFilter {
                channel: Some(7),
                log_type: Some(LOG_ERROR),
                ..LogFilter::default()
            },
        ),
        (
            "admin: type consume + model",
            LogFilter {
                model_name: s("gpt-4o"),
                log_type: Some(LOG_CONSUME),
                ..LogFilter::default()
            },
        ),
        (
            "admin: channel + group (no composite key)",
            LogFilter {
                channel: Some(7),
                group: s("vip"),
                ..LogFilter::default()
            },
        ),
        (
            "admin: token name + model (no composite key)",
            LogFilter {
                token_name: s("key-1"),
                model_name: s("claude-sonnet-4"),
                ..LogFilter::default()
            },
        ),
        (
            "self (heavy user): no filter",
            LogFilter {
                user: heavy,
                ..LogFilter::default()
            },
        ),
        (
            "self (heavy user): default window",
            LogFilter {
                user: heavy,
                start: day,
                end: ahead,
                ..LogFilter::default()
            },
        ),
        (
            "self (heavy user): model",
            LogFilter {
                user: heavy,
                model_name: s("claude-sonnet-4"),
                ..LogFilter::default()
            },
        ),
        (
            "self (heavy user): token name",
            LogFilter {
                user: heavy,
                token_name: s("key-1"),
                ..LogFilter::default()
            },
        ),
        (
            "self (heavy user): model + token name",
            LogFilter {
                user: heavy,
                model_name: s("claude-sonnet-4"),
                token_name: s("key-1"),
                ..LogFilter::default()
            },
        ),
        (
            "self (heavy user): group",
            LogFilter {
                user: heavy,
                group: s("vip"),
                ..LogFilter::default()
            },
        ),
        (
            "self (heavy user): type error",
            LogFilter {
                user: heavy,
                log_type: Some(LOG_ERROR),
                ..LogFilter::default()
            },
        ),
        (
            "self (heavy user): group + type error",
            LogFilter {
                user: heavy,
                group: s("vip"),
                log_type: Some(LOG_ERROR),
                ..LogFilter::default()
            },
        ),
        (
            "self (heavy user): model + token name + group",
            LogFilter {
                user: heavy,
                model_name: s("claude-sonnet-4"),
                token_name: s("key-1"),
                group: s("default"),
                ..LogFilter::default()
            },
        ),
        (
            "self (light user): model, last day",
            LogFilter {
                user: light,
                model_name: s("gpt-4o-mini"),
                start: day,
                end: ahead,
                ..LogFilter::default()
            },
        ),
    ]
}

fn queries(store: &Store) {
    println!();
    println!(
        "| filter | plan | page 1 (ms, median / worst) | page 10 (ms) | total | exact | stat (ms, median / worst) | stat quota |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut slowest = Duration::ZERO;
    let mut slowest_stat = Duration::ZERO;
    let only = std::env::var("LOG_BENCH_CASES").unwrap_or_default();
    for (name, f) in cases() {
        if !only.is_empty() && !only.split('|').any(|part| name.contains(part)) {
            continue;
        }
        let plan = store
            .read_blocking(|rtx| query::plan(rtx, &f))
            .expect("plan");
        let (p1, w1, page) = time(15, || {
            store
                .read_blocking(|rtx| query::page(rtx, &f, 0, 20))
                .expect("page")
        });
        let (p10, _, _) = time(7, || {
            store
                .read_blocking(|rtx| query::page(rtx, &f, 180, 20))
                .expect("page 10")
        });
        let (st, stw, stat) = time(5, || {
            store
                .read_blocking(|rtx| query::stat(rtx, &f, END))
                .expect("stat")
        });
        slowest = slowest.max(p1).max(p10);
        slowest_stat = slowest_stat.max(st);
        println!(
            "| {name} | {} | {} / {} | {} | {} | {} | {} / {} | {} |",
            plan.key.as_deref().unwrap_or("time"),
            ms(p1),
            ms(w1),
            ms(p10),
            page.total,
            if page.total_exact { "yes" } else { "estimate" },
            ms(st),
            ms(stw),
            if stat.exact { "exact" } else { "estimate" },
        );
    }
    println!();
    println!("slowest page (median): {} ms", ms(slowest));
    println!("slowest stat (median): {} ms", ms(slowest_stat));
}

/// Deletion in batches while measuring each batch transaction, then free-space reuse.
fn retention(dir: &Path, n: u64) {
    let path = dir.join("retention.redb");
    let _ = std::fs::remove_file(&path);
    let store = Store::open(&path).expect("open");
    let fill = |store: &Store, rng: &mut Rng| {
        let mut i = 0;
        while i < n {
            let upto = (i + BUILD_BATCH as u64).min(n);
            let rows: Vec<LogEntry> = (i..upto).map(|k| row(k, n, rng)).collect();
            store
                .write_blocking(|wtx| logs::insert_batch(wtx, rows, true).map(|_| ()))
                .expect("insert");
            i = upto;
        }
    };
    let mut rng = Rng(7);
    fill(&store, &mut rng);
    let before = file_mb(&path);
    let mut batches = Vec::new();
    let started = Instant::now();
    loop {
        let t = Instant::now();
        let deleted = store
            .write_blocking_lazy(|wtx| {
                logs::delete_before(wtx, END + 1, tollgate_actors::log_janitor::RETENTION_BATCH)
            })
            .expect("delete");
        if deleted == 0 {
            break;
        }
        batches.push(t.elapsed());
    }
    let total = started.elapsed();
    store
        .write_blocking(|_| Ok::<_, StorageError>(()))
        .expect("durable commit");
    let left = store.read_blocking(logs::count).expect("count");
    let after_delete = file_mb(&path);
    fill(&store, &mut rng);
    let refilled = file_mb(&path);
    let worst = batches.iter().copied().max().unwrap_or_default();
    let (fsync, _, ()) = time(5, || {
        store
            .write_blocking(|_| Ok::<_, StorageError>(()))
            .expect("commit")
    });
    println!();
    println!(
        "an empty durable commit (fsync) takes {} ms here",
        ms(fsync)
    );
    println!(
        "retention on {n} rows: {} batches of {} rows in {:.1} s; batch transaction median {} ms, worst {} ms; {left} rows left",
        batches.len(),
        tollgate_actors::log_janitor::RETENTION_BATCH,
        total.as_secs_f64(),
        ms(median(batches.clone())),
        ms(worst),
    );
    println!(
        "file size: {before} MB with {n} rows, {after_delete} MB after deleting them all, {refilled} MB after inserting {n} rows again (free pages reused)"
    );
    drop(store);
    let _ = std::fs::remove_file(&path);
}

fn main() -> Result<(), StorageError> {
    let n: u64 = std::env::var("LOG_BENCH_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let target = std::env::var("CARGO_TARGET_DIR").map_or_else(
        |_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"),
        PathBuf::from,
    );
    let dir =
        std::env::var("LOG_BENCH_DIR").map_or_else(|_| target.join("bench-data"), PathBuf::from);
    let env = |key: &str, default: u64| {
        std::env::var(key)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let insert_rows = env("LOG_BENCH_INSERT_ROWS", 100_000);
    if insert_rows > 0 {
        insert_phase(
            &dir,
            n,
            insert_rows,
            usize::try_from(env("LOG_BENCH_INSERT_BATCH", 256)).unwrap_or(256),
            env("LOG_BENCH_DURABLE_EVERY", 1),
        );
    }
    let store = database(&dir.join(format!("logs-{n}.redb")), n);
    queries(&store);
    drop(store);
    if env("LOG_BENCH_RETENTION", 1) > 0 {
        retention(&dir, (n / 50).max(10_000));
    }
    Ok(())
}
