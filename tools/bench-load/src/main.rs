//! Load benchmark (issues P11, P17): one run puts three targets side by side — the mock
//! upstream itself ("direct"), a minimal pass-through proxy ("floor", see `floor.rs`) and a
//! Tollgate release binary ("tollgate": fresh data dir, one channel on the mock, one key, consume
//! logs on) — and drives each with `oha` at fixed open-loop rates and at maximum, non-stream and
//! stream, in alternating target order. It reports achieved RPS, latency percentiles, stream
//! time-to-first-byte, CPU per request and RSS per target, the ratios against the floor and
//! direct, a 1,000-concurrent-streams check, and verifies afterwards that Tollgate's logs and
//! balance account for every successful request (a mismatch fails the run).
//!
//! With `LOAD_AGAINST` naming an older Tollgate binary it is an A/B (`ab.rs`): runs of the old
//! and the new binary alternate (old-new, new-old, …), `LOAD_RUNS` each, every run with its own
//! mock and floor, and the report puts each figure of issue P17's table beside the same
//! binary's spread over its runs.
//!
//! Run it with `scripts/bench-load.sh` (builds or takes the binaries, installs oha). Settings
//! (environment): `LOAD_SECONDS` per phase (15), `LOAD_RATES` (`500,2000,10000,max`; A/B:
//! `2000,10000,max`), `LOAD_CONNECTIONS` (64), `LOAD_STREAMS` concurrent streams (1000; A/B: 0;
//! 0 skips), `LOAD_DIRECT` (1; A/B: 0), `LOAD_RUNS` (A/B: 3), `TOLLGATE_BIN`, `LOAD_AGAINST`,
//! `OHA_BIN`, `LOAD_OUT` (directory of the reports), `LOAD_P15` (1: issue P15's fairness and
//! ten-rule phases after the main ones, `p15.rs`; 0 skips them), `LOAD_FAIR_RATE` (1000).
#![expect(
    clippy::print_stdout,
    reason = "a benchmark binary: results go to stdout"
)]

mod ab;
mod floor;
mod mock;
mod oha;
mod p15;
mod procs;
mod report;
mod setup;
mod streams;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use oha::{Load, Measured};

/// A target under load.
pub struct Target {
    /// "direct", "floor" or "tollgate".
    pub name: &'static str,
    /// The chat completions URL.
    pub url: String,
    /// The process whose CPU and memory count.
    pub pid: u32,
}

/// One (phase, target) measurement.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    /// e.g. "non-stream @2000".
    pub phase: String,
    /// Whether the phase streams.
    pub stream: bool,
    /// Requested rate (None: maximum).
    pub rate: Option<u32>,
    /// Target name.
    pub target: &'static str,
    /// What oha saw.
    pub m: Measured,
    /// CPU microseconds (user + system) per completed request.
    pub cpu_us: f64,
    /// RSS after the phase (MB).
    pub rss_mb: f64,
    /// Context switches of the target's threads per completed request.
    pub switches: f64,
}

/// A setting from the environment.
fn env_or<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> ExitCode {
    if let Ok(role) = std::env::var(procs::ROLE_VAR) {
        return serve_role(&role);
    }
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            println!("runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(start()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            println!("load benchmark failed: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One run, or the A/B when `LOAD_AGAINST` is set; Ok(false) when Tollgate's books do not match.
async fn start() -> Result<bool, String> {
    let against = std::env::var_os("LOAD_AGAINST").map(PathBuf::from);
    let ab = against.is_some();
    let cfg = Config {
        seconds: env_or("LOAD_SECONDS", 15),
        connections: env_or("LOAD_CONNECTIONS", 64),
        n_streams: env_or("LOAD_STREAMS", if ab { 0 } else { 1000 }),
        rates: env_or(
            "LOAD_RATES",
            if ab {
                "2000,10000,max"
            } else {
                "500,2000,10000,max"
            }
            .to_owned(),
        )
        .split(',')
        .map(|r| r.trim().parse().ok())
        .collect(),
        direct: env_or("LOAD_DIRECT", u8::from(!ab)) != 0,
        out_dir: PathBuf::from(env_or("LOAD_OUT", "target".to_owned())),
        oha_bin: PathBuf::from(env_or("OHA_BIN", "oha".to_owned())),
        p15: env_or("LOAD_P15", 1) != 0,
    };
    let tollgate_bin = PathBuf::from(env_or("TOLLGATE_BIN", "target/release/tollgate".to_owned()));
    match against {
        None => {
            let summary = run(&cfg, &tollgate_bin).await?;
            report::write(&summary, &cfg.out_dir, "bench-load")?;
            Ok(summary.balanced)
        }
        Some(old) => {
            let runs: usize = env_or("LOAD_RUNS", 3);
            ab::run(&cfg, &old, &tollgate_bin, runs.max(1)).await
        }
    }
}

/// The mock upstream or the floor proxy, in this child process.
fn serve_role(role: &str) -> ExitCode {
    let served = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .and_then(|rt| {
            rt.block_on(async {
                let listener = procs::listen()?;
                println!("{}", listener.local_addr()?);
                let upstream = std::env::var(procs::UPSTREAM_VAR).unwrap_or_default();
                match role {
                    "floor" => floor::serve(listener, upstream).await,
                    _ => mock::serve(listener).await,
                }
            })
        });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

/// The run's settings, from the environment.
pub struct Config {
    /// Seconds per phase.
    pub seconds: u64,
    /// Connections per phase.
    pub connections: u32,
    /// Concurrent streams in the streams check (0 skips it).
    pub n_streams: usize,
    /// Fixed rates (None: as fast as it goes).
    pub rates: Vec<Option<u32>>,
    /// Whether the mock is measured directly as a target too.
    pub direct: bool,
    /// Where reports go.
    pub out_dir: PathBuf,
    /// The oha executable.
    pub oha_bin: PathBuf,
    /// Whether issue P15's scenarios run after the main phases ([`p15`]).
    pub p15: bool,
}

/// How long after its set-up a target's "idle" memory is read.
const IDLE_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

/// One run against the Tollgate binary `tollgate_bin`: mock, floor and Tollgate started fresh,
/// every phase, the streams check and the books.
async fn run(cfg: &Config, tollgate_bin: &Path) -> Result<report::Summary, String> {
    let (seconds, connections, n_streams) = (cfg.seconds, cfg.connections, cfg.n_streams);
    let io = |e: std::io::Error| e.to_string();

    let mock = procs::spawn_role("mock", "").map_err(io)?;
    let floor = procs::spawn_role("floor", &mock.base).map_err(io)?;
    let data = tempfile::tempdir().map_err(io)?;
    let tollgate = procs::spawn_tollgate(tollgate_bin, data.path()).map_err(io)?;
    let (root, bench, key) = setup::prepare(&tollgate.base, &mock.base).await?;
    let limited_key = if cfg.p15 {
        Some(p15::limited_key(&bench).await?)
    } else {
        None
    };
    // Set-up hashes passwords with argon2 (9 MiB each); its peak is reported on its own and
    // the load phases' peak starts from here.
    let setup_peak_mb = procs::vm_kb(tollgate.pid(), "VmHWM") as f64 / 1024.0;
    // Idle is a while after the last request: an allocator may return what it freed after a
    // delay (Tollgate's: within its purge clock's period plus the delay, src/allocator.rs).
    tokio::time::sleep(IDLE_AFTER).await;
    let idle_rss_mb = procs::vm_kb(tollgate.pid(), "VmRSS") as f64 / 1024.0;
    let idle_anon_mb = procs::vm_kb(tollgate.pid(), "RssAnon") as f64 / 1024.0;
    let peak_reset = procs::reset_peak(tollgate.pid());
    let auth = format!("Bearer {key}");
    let path = "/v1/chat/completions";
    let mut targets = vec![
        Target {
            name: "direct",
            url: format!("{}{path}", mock.base),
            pid: mock.pid(),
        },
        Target {
            name: "floor",
            url: format!("{}{path}", floor.base),
            pid: floor.pid(),
        },
        Target {
            name: "tollgate",
            url: format!("{}{path}", tollgate.base),
            pid: tollgate.pid(),
        },
    ];
    if !cfg.direct {
        targets.remove(0);
    }
    let plain = r#"{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello to the benchmark."}]}"#;
    let stream = r#"{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Say hello to the benchmark."}]}"#;

    // Warm-up and sanity: every target answers both kinds once.
    let mut tollgate_ok = 0u64;
    let client = reqwest::Client::new();
    for t in &targets {
        for body in [plain, stream] {
            let resp = client
                .post(&t.url)
                .header("content-type", "application/json")
                .header("authorization", &auth)
                .body(body)
                .send()
                .await
                .map_err(|e| format!("{}: {e}", t.name))?;
            let status = resp.status();
            let text = resp.text().await.unwrap_or_default();
            if status != 200 {
                return Err(format!("{} answered {status}: {text}", t.name));
            }
            if t.name == "tollgate" {
                tollgate_ok += 1;
            }
        }
    }

    // RSS sampled every 50 ms through the load phases: VmHWM after its reset starts from
    // whatever set-up left resident (a freed argon2 buffer may linger for seconds).
    let sampled = procs::RssPeaks::start(
        targets.iter().map(|t| t.pid).collect(),
        Duration::from_millis(50),
    );
    let ticks = procs::clock_ticks() as f64;
    let mut rows = Vec::new();
    let mut phase_no = 0;
    for streaming in [false, true] {
        for rate in &cfg.rates {
            let phase = format!(
                "{} @{}",
                if streaming { "stream" } else { "non-stream" },
                rate.map_or("max".to_owned(), |r| r.to_string())
            );
            let load = Load {
                rate: *rate,
                seconds,
                connections,
                body: if streaming { stream } else { plain },
                auth: &auth,
            };
            for i in 0..targets.len() {
                let t = &targets[(i + phase_no) % targets.len()];
                let cpu_before = procs::cpu_ticks(t.pid);
                let switches_before = procs::ctx_switches(t.pid);
                let m = oha::run(&cfg.oha_bin, &t.url, &load)?;
                let cpu = (procs::cpu_ticks(t.pid) - cpu_before) as f64 / ticks;
                let switches = procs::ctx_switches(t.pid).saturating_sub(switches_before);
                let done = (m.ok + m.failed).max(1) as f64;
                if t.name == "tollgate" {
                    tollgate_ok += m.ok;
                }
                let row = Row {
                    phase: phase.clone(),
                    stream: streaming,
                    rate: *rate,
                    target: t.name,
                    cpu_us: cpu * 1e6 / done,
                    rss_mb: procs::vm_kb(t.pid, "VmRSS") as f64 / 1024.0,
                    switches: switches as f64 / done,
                    m,
                };
                println!("{}", report::line(&row));
                rows.push(row);
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            phase_no += 1;
        }
    }

    // VmHWM so far: the peak through the load phases (the streams check below has its own
    // RSS-growth line in the budget).
    let phase_peak: Vec<(&str, f64)> = targets
        .iter()
        .map(|t| (t.name, procs::vm_kb(t.pid, "VmHWM") as f64 / 1024.0))
        .collect();
    let sampled_peak: Vec<(&str, f64)> = targets
        .iter()
        .zip(sampled.kb())
        .map(|(t, kb)| (t.name, kb as f64 / 1024.0))
        .collect();
    let sampled_peak_anon: Vec<(&str, f64)> = targets
        .iter()
        .zip(sampled.anon_kb())
        .map(|(t, kb)| (t.name, kb as f64 / 1024.0))
        .collect();
    drop(sampled);

    // Issue P15's scenarios on Tollgate alone (their RSS counts in the whole run's peak).
    if let Some(limited) = &limited_key {
        let limited_auth = format!("Bearer {limited}");
        let url = format!("{}{path}", tollgate.base);
        let scenario = p15::Scenario {
            url: &url,
            pid: tollgate.pid(),
            auth: &auth,
            limited_auth: &limited_auth,
            body: plain,
            root: &root,
        };
        let (p15_rows, ok) = p15::run(cfg, &scenario).await?;
        tollgate_ok += ok;
        rows.extend(p15_rows);
    }

    // The concurrent-streams checks: a ramp (opened evenly over one second, on the 100 ms
    // model, so all are open together at its end), then a burst (every stream opened at once,
    // on the 10 ms model). The ramp goes first: RSS a run grew is kept for the next.
    let mut stream_runs = Vec::new();
    if n_streams > 0 {
        for (model, ramp) in [
            (mock::LONG_MODEL, Duration::from_secs(1)),
            (mock::SLOW_MODEL, Duration::ZERO),
        ] {
            let paced = stream.replace("gpt-4o-mini", model);
            let expected = client
                .post(format!("{}{path}", mock.base))
                .body(paced.clone())
                .send()
                .await
                .map_err(|e| e.to_string())?
                .bytes()
                .await
                .map_err(|e| e.to_string())?;
            for t in &targets {
                let r =
                    streams::run(&t.url, &auth, &paced, n_streams, ramp, &expected, t.pid).await;
                if t.name == "tollgate" {
                    tollgate_ok += r.ok;
                }
                println!("{n_streams} concurrent streams via {}: {r:?}", t.name);
                stream_runs.push((t.name, r));
            }
        }
    }

    let peak: Vec<(&str, f64)> = targets
        .iter()
        .map(|t| (t.name, procs::vm_kb(t.pid, "VmHWM") as f64 / 1024.0))
        .collect();
    let books = setup::books(&bench).await?;
    let balanced = books.requests == tollgate_ok as i64
        && books.log_rows == tollgate_ok as i64
        && books.used == books.log_quota
        && books.used + books.remaining == setup::BENCH_QUOTA;
    let p15_section = p15::markdown(&rows);
    Ok(report::Summary {
        binary: tollgate_bin.display().to_string(),
        seconds,
        connections,
        rows,
        setup_peak_rss_mb: setup_peak_mb,
        idle_rss_mb,
        idle_anon_mb,
        peak_reset,
        phase_peak_rss_mb: phase_peak,
        sampled_peak_rss_mb: sampled_peak,
        sampled_peak_anon_mb: sampled_peak_anon,
        peak_rss_mb: peak,
        streams: stream_runs,
        n_streams,
        tollgate_ok,
        books,
        balanced,
        p15: p15_section,
    })
}
