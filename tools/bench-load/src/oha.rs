//! Drives a target with `oha` (HTTP/1.1, 64 connections, open loop at a fixed rate with latency
//! correction, or as fast as it goes) and reads its JSON summary.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// One load phase's settings.
pub struct Load<'a> {
    /// Requests per second (None: as fast as possible).
    pub rate: Option<u32>,
    /// Seconds of load.
    pub seconds: u64,
    /// Concurrent connections.
    pub connections: u32,
    /// The JSON request body.
    pub body: &'a str,
    /// `Authorization` header value.
    pub auth: &'a str,
}

/// What oha measured (latencies in milliseconds).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Measured {
    /// Completed requests per second.
    pub rps: f64,
    /// 200 answers.
    pub ok: u64,
    /// Other statuses and transport errors.
    pub failed: u64,
    /// Latency percentiles.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Time to the first body byte, median.
    pub ttfb_p50: f64,
    /// Time to the first body byte, 99th percentile.
    pub ttfb_p99: f64,
}

/// Runs oha against `url` and parses its summary.
pub fn run(oha: &Path, url: &str, load: &Load<'_>) -> Result<Measured, String> {
    let mut cmd = Command::new(oha);
    cmd.arg(url)
        .args(["-z", &format!("{}s", load.seconds)])
        .args(["-c", &load.connections.to_string()])
        .args(["-w", "--no-tui", "--output-format", "json", "-m", "POST"])
        .args(["-H", "content-type: application/json"])
        .args(["-H", &format!("authorization: {}", load.auth)])
        .args(["-d", load.body]);
    if let Some(rate) = load.rate {
        cmd.args(["-q", &rate.to_string(), "--latency-correction"]);
    }
    let out = cmd.output().map_err(|e| format!("oha: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "oha failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let v: Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("oha JSON: {e}"))?;
    let ms = |section: &str, key: &str| v[section][key].as_f64().unwrap_or(f64::NAN) * 1000.0;
    let count = |section: &str| -> u64 {
        v[section]
            .as_object()
            .map(|m| m.values().filter_map(Value::as_u64).sum())
            .unwrap_or(0)
    };
    let ok = v["statusCodeDistribution"]["200"].as_u64().unwrap_or(0);
    Ok(Measured {
        rps: v["summary"]["requestsPerSec"].as_f64().unwrap_or(0.0),
        ok,
        failed: count("statusCodeDistribution") - ok + count("errorDistribution"),
        p50: ms("latencyPercentiles", "p50"),
        p90: ms("latencyPercentiles", "p90"),
        p99: ms("latencyPercentiles", "p99"),
        ttfb_p50: ms("firstBytePercentiles", "p50"),
        ttfb_p99: ms("firstBytePercentiles", "p99"),
    })
}
