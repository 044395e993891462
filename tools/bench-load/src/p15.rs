//! The two admission-control scenarios of issue P15, run on Tollgate alone after the main
//! phases (`LOAD_P15`, default on; 0 skips them), four phases of `LOAD_SECONDS` each:
//!
//! - **Fairness**: the bench key at `LOAD_FAIR_RATE` (1,000 RPS) alone, then the same load while
//!   a second key of the same user, limited to [`LIMITED_RPM`] requests a minute, is offered the
//!   same rate on 16 connections of its own (almost all of it refused with 429). One key at its
//!   limit must not raise the other key's p99 beyond the spread of the "alone" figure.
//! - **The cost of ten active rules**: `RateLimitRules` set to ten rules, three of which cover
//!   every bench request (its group, its model, and both; each with all four limits, far above
//!   the load, so nothing is refused but every counter counts) and seven on other groups and
//!   models; then the bench key at maximum and at `LOAD_FAIR_RATE`, compared with the run's own
//!   `non-stream @max` phase and the "alone" phase (no rules).

use std::fmt::Write as _;

use serde_json::json;

use crate::oha::{self, Load, Measured};
use crate::report;
use crate::setup::Console;
use crate::{Config, Row};

/// Requests a minute the limited key may send.
pub const LIMITED_RPM: u32 = 60;

/// Phase: the bench key alone (no rules).
pub const ALONE: &str = "p15 fairness: other key alone";
/// Phase: the bench key while the limited key hammers its limit.
pub const CONTENDED: &str = "p15 fairness: other key, one key at its limit";
/// Phase: ten rules, as fast as it goes.
pub const RULES_MAX: &str = "p15 ten rules @max";
/// Phase: ten rules at the fairness rate.
pub const RULES_RATE: &str = "p15 ten rules @rate";
/// The target name of the limited key's rows.
pub const LIMITED: &str = "limited key";

/// The ten rules: three covering the bench's requests (group `default`, model `gpt-4o-mini`,
/// both), seven covering others.
fn ten_rules() -> String {
    let big = json!({"concurrency_limit": 100_000, "rpm_limit": 100_000_000,
                     "tpm_limit": 4_000_000_000_u32, "rpd_limit": 4_000_000_000_u32});
    let mut rules = Vec::new();
    for (group, model) in [
        (Some("default"), None),
        (None, Some("gpt-4o-mini")),
        (Some("default"), Some("gpt-4o-mini")),
    ] {
        let mut rule = big.clone();
        if let Some(g) = group {
            rule["group"] = json!(g);
        }
        if let Some(m) = model {
            rule["model"] = json!(m);
        }
        rules.push(rule);
    }
    for i in 0..7 {
        rules.push(if i % 2 == 0 {
            json!({"model": format!("bench-other-{i}"), "rpm_limit": 60})
        } else {
            json!({"group": format!("bench-other-{i}"), "concurrency_limit": 2})
        });
    }
    serde_json::Value::Array(rules).to_string()
}

/// The fairness rate (`LOAD_FAIR_RATE`).
pub fn rate() -> u32 {
    crate::env_or("LOAD_FAIR_RATE", 1000)
}

/// A second key of the bench user limited to [`LIMITED_RPM`]; its full key.
pub async fn limited_key(bench: &Console) -> Result<String, String> {
    use reqwest::Method as M;
    let token = bench
        .call(
            M::POST,
            "/api/token/",
            Some(json!({"name": "bench-limited", "unlimited_quota": true})),
        )
        .await?;
    let id = token["data"]["id"].as_i64().ok_or("token id")?;
    bench
        .call(
            M::PUT,
            &format!("/api/token/{id}/limits"),
            Some(json!({"rpm_limit": LIMITED_RPM})),
        )
        .await?;
    let key = bench
        .call(M::POST, &format!("/api/token/{id}/key"), Some(json!({})))
        .await?;
    Ok(key["data"]["key"].as_str().ok_or("key")?.to_owned())
}

/// What one phase measured on Tollgate (CPU and switches per request).
fn measure(
    cfg: &Config,
    url: &str,
    pid: u32,
    load: &Load<'_>,
) -> Result<(Measured, f64, f64), String> {
    let ticks = crate::procs::clock_ticks() as f64;
    let cpu_before = crate::procs::cpu_ticks(pid);
    let switches_before = crate::procs::ctx_switches(pid);
    let m = oha::run(&cfg.oha_bin, url, load)?;
    let cpu = (crate::procs::cpu_ticks(pid) - cpu_before) as f64 / ticks;
    let switches = crate::procs::ctx_switches(pid).saturating_sub(switches_before);
    let done = (m.ok + m.failed).max(1) as f64;
    Ok((m, cpu * 1e6 / done, switches as f64 / done))
}

/// Tollgate's endpoints and keys for the scenarios.
pub struct Scenario<'a> {
    /// The chat completions URL.
    pub url: &'a str,
    /// Tollgate's process.
    pub pid: u32,
    /// The bench key's `Authorization`.
    pub auth: &'a str,
    /// The limited key's `Authorization`.
    pub limited_auth: &'a str,
    /// The non-stream body.
    pub body: &'a str,
    /// The root session (sets `RateLimitRules`).
    pub root: &'a Console,
}

/// Runs the four phases; returns their rows (the limited key's as target [`LIMITED`]) and the
/// 200 answers Tollgate gave.
pub async fn run(cfg: &Config, s: &Scenario<'_>) -> Result<(Vec<Row>, u64), String> {
    let rate = rate();
    let load = |rate: Option<u32>, connections: u32, auth| Load {
        rate,
        seconds: cfg.seconds,
        connections,
        body: s.body,
        auth,
    };
    let row = |phase: &str,
               target: &'static str,
               rate,
               (m, cpu_us, switches): (Measured, f64, f64)| Row {
        phase: phase.to_owned(),
        stream: false,
        rate,
        target,
        m,
        cpu_us,
        rss_mb: crate::procs::vm_kb(s.pid, "VmRSS") as f64 / 1024.0,
        switches,
    };
    let pause = || tokio::time::sleep(std::time::Duration::from_millis(500));
    let mut rows = Vec::new();

    let alone = measure(
        cfg,
        s.url,
        s.pid,
        &load(Some(rate), cfg.connections, s.auth),
    )?;
    rows.push(row(ALONE, "tollgate", Some(rate), alone));
    pause().await;

    // The limited key on a thread of its own, over the same seconds as the other key's load.
    let hammer = {
        let (oha_bin, url, body, auth) = (
            cfg.oha_bin.clone(),
            s.url.to_owned(),
            s.body.to_owned(),
            s.limited_auth.to_owned(),
        );
        let seconds = cfg.seconds;
        std::thread::spawn(move || {
            let load = Load {
                rate: Some(rate),
                seconds,
                connections: 16,
                body: &body,
                auth: &auth,
            };
            oha::run(&oha_bin, &url, &load)
        })
    };
    let contended = measure(
        cfg,
        s.url,
        s.pid,
        &load(Some(rate), cfg.connections, s.auth),
    )?;
    let limited = hammer
        .join()
        .map_err(|_| "the limited key's load panicked".to_owned())??;
    rows.push(row(CONTENDED, "tollgate", Some(rate), contended));
    rows.push(row(
        CONTENDED,
        LIMITED,
        Some(rate),
        (limited, f64::NAN, f64::NAN),
    ));
    pause().await;

    s.root
        .call(
            reqwest::Method::PUT,
            "/api/option/",
            Some(json!({"key": "RateLimitRules", "value": ten_rules()})),
        )
        .await?;
    let max = measure(cfg, s.url, s.pid, &load(None, cfg.connections, s.auth))?;
    rows.push(row(RULES_MAX, "tollgate", None, max));
    pause().await;
    let fixed = measure(
        cfg,
        s.url,
        s.pid,
        &load(Some(rate), cfg.connections, s.auth),
    )?;
    rows.push(row(RULES_RATE, "tollgate", Some(rate), fixed));
    s.root
        .call(
            reqwest::Method::PUT,
            "/api/option/",
            Some(json!({"key": "RateLimitRules", "value": "[]"})),
        )
        .await?;

    for r in &rows {
        println!("{}", report::line(r));
    }
    let ok = rows.iter().map(|r| r.m.ok).sum();
    Ok((rows, ok))
}

/// Tollgate's row of `phase` among `rows`.
fn tollgate<'a>(rows: &'a [Row], phase: &str) -> Option<&'a Row> {
    rows.iter()
        .find(|r| r.phase == phase && r.target == "tollgate")
}

/// A figure of one run's P15 phases, from its rows.
pub fn figure(rows: &[Row], name: Figure) -> Option<f64> {
    let t = |phase: &str| tollgate(rows, phase);
    match name {
        Figure::AloneP99 => t(ALONE).map(|r| r.m.p99),
        Figure::ContendedP99 => t(CONTENDED).map(|r| r.m.p99),
        Figure::ContendedVsAlone => Some(t(CONTENDED)?.m.p99 / t(ALONE)?.m.p99),
        Figure::LimitedRefused => rows
            .iter()
            .find(|r| r.phase == CONTENDED && r.target == LIMITED)
            .map(|r| r.m.failed as f64),
        Figure::RulesMaxVsNone => Some(t(RULES_MAX)?.m.rps / t("non-stream @max")?.m.rps),
        Figure::RulesCpuVsNone => Some(t(RULES_MAX)?.cpu_us / t("non-stream @max")?.cpu_us),
        Figure::RulesP99VsNone => Some(t(RULES_RATE)?.m.p99 / t(ALONE)?.m.p99),
    }
}

/// The P15 figures the reports print.
#[derive(Clone, Copy, Debug)]
pub enum Figure {
    /// The bench key's p99 alone.
    AloneP99,
    /// Its p99 while the limited key is at its limit.
    ContendedP99,
    /// The second over the first.
    ContendedVsAlone,
    /// The limited key's refused requests.
    LimitedRefused,
    /// Max throughput with ten rules over the run's `non-stream @max`.
    RulesMaxVsNone,
    /// CPU per request at max with ten rules over the run's `non-stream @max`.
    RulesCpuVsNone,
    /// p99 at the fairness rate with ten rules over the "alone" phase's.
    RulesP99VsNone,
}

/// The single run's P15 section of its report (empty when the scenarios did not run).
pub fn markdown(rows: &[Row]) -> String {
    let mut md = String::new();
    let (Some(alone), Some(contended)) = (
        figure(rows, Figure::AloneP99),
        figure(rows, Figure::ContendedP99),
    ) else {
        return md;
    };
    let f = |name| figure(rows, name).unwrap_or(f64::NAN);
    let _ = writeln!(
        &mut md,
        "\nAdmission control (issue P15; one run has no spread: the A/B puts each figure beside the same binary's):\n\n\
         - fairness: the other key's p99 {alone:.3} ms alone, {contended:.3} ms while one key at its limit ({LIMITED_RPM} RPM) is offered the same rate ({} of its requests refused) = {:.2}×;\n\
         - ten active rules: max throughput {:.2}× and CPU per request {:.2}× the run's non-stream @max without rules; p99 at the fairness rate {:.2}× the no-rule phase's.",
        f(Figure::LimitedRefused),
        f(Figure::ContendedVsAlone),
        f(Figure::RulesMaxVsNone),
        f(Figure::RulesCpuVsNone),
        f(Figure::RulesP99VsNone),
    );
    md
}
