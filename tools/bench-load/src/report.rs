//! The run's report: a markdown table per phase and target, the Tollgate-versus-floor and
//! Tollgate-minus-direct comparisons, the budget of issue P11 line by line, and the accounting
//! check; written to `bench-load.md` and `bench-load.json` (A/B runs: one pair per run) and printed.

use std::fmt::Write as _;
use std::path::Path;

use crate::Row;
use crate::setup::Books;
use crate::streams::StreamsRun;

/// Everything one run measured.
#[derive(Debug, serde::Serialize)]
pub struct Summary {
    /// The Tollgate binary measured.
    pub binary: String,
    /// Seconds per phase.
    pub seconds: u64,
    /// Connections per phase.
    pub connections: u32,
    /// Every (phase, target) row.
    pub rows: Vec<Row>,
    /// Tollgate's peak RSS (VmHWM) through set-up: first-run setup, logins (MB).
    pub setup_peak_rss_mb: f64,
    /// Tollgate's RSS once set up, before any load (MB).
    pub idle_rss_mb: f64,
    /// Its anonymous part (RssAnon: heap and stacks, without the binary's file pages) (MB).
    pub idle_anon_mb: f64,
    /// Whether VmHWM was reset after set-up (otherwise the phase peaks include set-up).
    pub peak_reset: bool,
    /// Peak RSS (VmHWM) per target through the load phases (MB).
    pub phase_peak_rss_mb: Vec<(&'static str, f64)>,
    /// Peak RSS per target through the load phases, sampled every 50 ms (MB).
    pub sampled_peak_rss_mb: Vec<(&'static str, f64)>,
    /// Peak RssAnon per target through the load phases, sampled with it (MB).
    pub sampled_peak_anon_mb: Vec<(&'static str, f64)>,
    /// Peak RSS (VmHWM) per target over the whole run, the streams check included (MB).
    pub peak_rss_mb: Vec<(&'static str, f64)>,
    /// Concurrent-streams runs per target.
    pub streams: Vec<(&'static str, StreamsRun)>,
    /// Concurrent streams per run.
    pub n_streams: usize,
    /// Requests Tollgate answered with 200.
    pub tollgate_ok: u64,
    /// Tollgate's books afterwards.
    pub books: Books,
    /// Whether the books account for every successful request.
    pub balanced: bool,
    /// Issue P15's section of the report (empty when its phases did not run).
    pub p15: String,
}

/// One progress line.
pub fn line(r: &Row) -> String {
    format!(
        "{:<18} {:<9} rps {:>9.0} ok {:>7} failed {:>5} p50 {:>7.3} p90 {:>7.3} p99 {:>7.3} ms ttfb p50 {:>7.3} cpu {:>6.1} µs/req cs {:>5.2}/req rss {:>6.1} MB",
        r.phase,
        r.target,
        r.m.rps,
        r.m.ok,
        r.m.failed,
        r.m.p50,
        r.m.p90,
        r.m.p99,
        r.m.ttfb_p50,
        r.cpu_us,
        r.switches,
        r.rss_mb
    )
}

impl Summary {
    /// The row of `target` in `phase`.
    pub fn row(&self, phase: &str, target: &str) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.phase == phase && r.target == target)
    }

    /// The markdown report.
    pub fn markdown(&self) -> String {
        let mut md = String::new();
        let _ = writeln!(
            md,
            "Tollgate: `{}`. {} s per phase, {} connections, HTTP/1.1, oha open loop with latency correction at fixed rates.\n",
            self.binary, self.seconds, self.connections
        );
        md.push_str("| phase | target | RPS | ok | failed | p50 ms | p90 ms | p99 ms | TTFB p50 ms | TTFB p99 ms | CPU µs/req | switches/req | RSS MB |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for r in &self.rows {
            let m = &r.m;
            let ttfb = if r.stream {
                format!("{:.3} | {:.3}", m.ttfb_p50, m.ttfb_p99)
            } else {
                "– | –".into()
            };
            let _ = writeln!(
                md,
                "| {} | {} | {:.0} | {} | {} | {:.3} | {:.3} | {:.3} | {ttfb} | {:.1} | {:.2} | {:.1} |",
                r.phase,
                r.target,
                m.rps,
                m.ok,
                m.failed,
                m.p50,
                m.p90,
                m.p99,
                r.cpu_us,
                r.switches,
                r.rss_mb
            );
        }
        md.push_str("\n| phase | Tollgate/floor RPS | Tollgate/floor CPU | Tollgate−direct p50 ms | Tollgate−direct p99 ms |\n|---|---|---|---|---|\n");
        let mut phases: Vec<&str> = self.rows.iter().map(|r| r.phase.as_str()).collect();
        phases.dedup();
        for p in &phases {
            if let (Some(t), Some(f)) = (self.row(p, "tollgate"), self.row(p, "floor")) {
                let over_direct = self.row(p, "direct").map_or_else(
                    || "– | –".to_owned(),
                    |d| format!("{:+.3} | {:+.3}", t.m.p50 - d.m.p50, t.m.p99 - d.m.p99),
                );
                let _ = writeln!(
                    md,
                    "| {p} | {:.2} | {:.2} | {over_direct} |",
                    t.m.rps / f.m.rps,
                    t.cpu_us / f.cpu_us,
                );
            }
        }
        let peaks = |p: &[(&str, f64)]| {
            p.iter()
                .map(|(n, mb)| format!("{n} {mb:.1} MB"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            md,
            "\nIdle RSS 2 s after set-up: Tollgate {:.1} MB (anonymous {:.1} MB). Peak RSS through the load phases, sampled every 50 ms: {} (anonymous, RssAnon: {}); VmHWM through them{}: {} (the reset after set-up keeps what set-up left resident); over the whole run, the concurrent streams included: {}. Tollgate's peak through set-up (argon2 password hashing): {:.1} MB.",
            self.idle_rss_mb,
            self.idle_anon_mb,
            peaks(&self.sampled_peak_rss_mb),
            peaks(&self.sampled_peak_anon_mb),
            if self.peak_reset {
                ""
            } else {
                " (set-up included: VmHWM could not be reset)"
            },
            peaks(&self.phase_peak_rss_mb),
            peaks(&self.peak_rss_mb),
            self.setup_peak_rss_mb
        );
        if !self.streams.is_empty() {
            let _ = writeln!(
                md,
                "\n{} concurrent paced streams: a ramp (opened evenly over 1 s, 20 chunks 100 ms apart, so all are open together), then a burst (all opened at once; 20 chunks 10 ms apart; its RSS growth is on top of what the ramp left):\n\n| opened | target | ok | byte-exact | most open at once | TTFB p50 ms | TTFB p99 ms | RSS growth MB |\n|---|---|---|---|---|---|---|---|",
                self.n_streams
            );
            for (n, s) in &self.streams {
                let _ = writeln!(
                    md,
                    "| {} | {n} | {} | {} | {} | {:.2} | {:.2} | {:.1} |",
                    opened(s),
                    s.ok,
                    s.exact,
                    s.max_open,
                    s.ttfb_p50,
                    s.ttfb_p99,
                    s.rss_growth_mb
                );
            }
        }
        md.push_str(&self.p15);
        md.push_str("\nBudget (issue P11):\n\n");
        for (holds, text) in self.budget() {
            let _ = writeln!(md, "- {} {text}", if holds { "holds:" } else { "MISSES:" });
        }
        let b = &self.books;
        let _ = writeln!(
            md,
            "\nAccounting: Tollgate answered {} requests with 200; the user's request count is {}, consume log rows {}, used quota {} (log quota sum {}, remaining {}): {}",
            self.tollgate_ok,
            b.requests,
            b.log_rows,
            b.used,
            b.log_quota,
            b.remaining,
            if self.balanced {
                "every request is billed and logged."
            } else {
                "MISMATCH — the run fails."
            }
        );
        md
    }

    /// The budget lines: (holds, description with the figures).
    fn budget(&self) -> Vec<(bool, String)> {
        let mut out = Vec::new();
        let nan = f64::NAN;
        let get = |p: &str, t: &str| self.row(p, t);
        if let (Some(t), Some(f)) = (
            get("non-stream @max", "tollgate"),
            get("non-stream @max", "floor"),
        ) {
            let ratio = t.m.rps / f.m.rps;
            out.push((
                ratio >= 0.6,
                format!(
                    "max non-stream throughput ≥ 60 % of the floor's: {:.0} vs {:.0} RPS = {:.0} %",
                    t.m.rps,
                    f.m.rps,
                    ratio * 100.0
                ),
            ));
            let cpu = t.cpu_us / f.cpu_us;
            out.push((cpu <= 2.0, format!("CPU per request ≤ 2× the floor's (max non-stream): {:.1} vs {:.1} µs = {cpu:.2}×", t.cpu_us, f.cpu_us)));
        }
        if let (Some(t), Some(d)) = (
            get("non-stream @2000", "tollgate"),
            get("non-stream @2000", "direct"),
        ) {
            let (a50, a99) = (t.m.p50 - d.m.p50, t.m.p99 - d.m.p99);
            out.push((
                a50 <= 0.15 && a99 <= 1.0,
                format!(
                    "at 2,000 RPS added p50 ≤ 0.15 ms and p99 ≤ 1 ms: {a50:+.3} / {a99:+.3} ms"
                ),
            ));
        }
        if let Some(t) = get("non-stream @10000", "tollgate") {
            out.push((t.m.p99 <= 2.0 && t.m.failed == 0 && t.m.rps >= 9_500.0, format!("at 10,000 RPS p99 ≤ 2 ms and 0 errors: achieved {:.0} RPS, p99 {:.3} ms, {} failed", t.m.rps, t.m.p99, t.m.failed)));
        }
        let peak = self
            .sampled_peak_rss_mb
            .iter()
            .find(|(n, _)| *n == "tollgate")
            .map_or(nan, |p| p.1);
        out.push((
            peak <= 64.0,
            format!("peak RSS ≤ 64 MB through all phases (sampled every 50 ms): {peak:.1} MB"),
        ));
        for ramped in [true, false] {
            let s = |n: &str| {
                self.streams
                    .iter()
                    .find(|(t, s)| *t == n && (s.ramp_ms > 0) == ramped)
                    .map(|(_, s)| s)
            };
            if let (Some(t), Some(d)) = (s("tollgate"), s("direct")) {
                let over = t.ttfb_p99 - d.ttfb_p99;
                let all = self.n_streams as u64;
                let ok = t.exact == all && t.rss_growth_mb < 64.0 && over < 5.0;
                out.push((ok, format!("{all} concurrent streams ({}) byte-exact, RSS growth < 64 MB, p99 TTFB overhead < 5 ms: {} exact, {} open at once, +{:.1} MB, {over:+.2} ms", opened(t), t.exact, t.max_open, t.rss_growth_mb)));
            }
        }
        out
    }
}

/// How a concurrent-streams run opened its streams.
fn opened(s: &StreamsRun) -> String {
    if s.ramp_ms == 0 {
        "at once".to_owned()
    } else {
        format!("over {} ms", s.ramp_ms)
    }
}

/// Prints the report and writes `<stem>.md` and `<stem>.json` under `dir`.
pub fn write(summary: &Summary, dir: &Path, stem: &str) -> Result<(), String> {
    let md = summary.markdown();
    println!("\n{md}");
    save(dir, stem, &md, summary)
}

/// Writes `<stem>.md` (`md`) and `<stem>.json` (`value`) under `dir`.
pub fn save(dir: &Path, stem: &str, md: &str, value: &impl serde::Serialize) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    std::fs::write(dir.join(format!("{stem}.md")), md).map_err(|e| e.to_string())?;
    let json = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    std::fs::write(dir.join(format!("{stem}.json")), json).map_err(|e| e.to_string())?;
    println!("written: {}/{stem}.md and {stem}.json", dir.display());
    Ok(())
}
