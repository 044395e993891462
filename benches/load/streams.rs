//! The concurrent-streams check: N streams (the mock paces them, 10 ms per chunk, so all are
//! open at once) through a target; every body must equal the upstream's bytes, and the target's
//! RSS is sampled while they run.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures_util::StreamExt;

use crate::procs;

/// What one concurrent-streams run measured.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct StreamsRun {
    /// Streams that answered 200.
    pub ok: u64,
    /// Bodies byte-identical to the expected one.
    pub exact: u64,
    /// Time to the first body byte, median and 99th percentile (ms).
    pub ttfb_p50: f64,
    /// 99th percentile.
    pub ttfb_p99: f64,
    /// RSS growth of the target while the streams ran (MB).
    pub rss_growth_mb: f64,
}

/// Opens `n` streams to `url` at once and checks each body against `expected`.
pub async fn run(
    url: &str,
    auth: &str,
    body: &str,
    n: usize,
    expected: &[u8],
    pid: u32,
) -> StreamsRun {
    let client = match reqwest::Client::builder().pool_max_idle_per_host(0).build() {
        Ok(c) => c,
        Err(_) => return StreamsRun::default(),
    };
    let rss_before = procs::vm_kb(pid, "VmRSS");
    let peak = Arc::new(AtomicU64::new(rss_before));
    let sampler = {
        let peak = Arc::clone(&peak);
        tokio::spawn(async move {
            loop {
                peak.fetch_max(procs::vm_kb(pid, "VmRSS"), Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            let req = client
                .post(url)
                .header("content-type", "application/json")
                .header("authorization", auth)
                .body(body.to_owned());
            tokio::spawn(async move {
                let start = Instant::now();
                let resp = req.send().await.ok()?;
                if resp.status() != 200 {
                    return None;
                }
                let mut stream = resp.bytes_stream();
                let mut got = Vec::new();
                let mut ttfb = None;
                while let Some(chunk) = stream.next().await {
                    ttfb.get_or_insert_with(|| start.elapsed());
                    got.extend_from_slice(&chunk.ok()?);
                }
                Some((ttfb.unwrap_or_default(), got))
            })
        })
        .collect();
    let mut run = StreamsRun::default();
    let mut ttfbs = Vec::with_capacity(n);
    for task in tasks {
        if let Ok(Some((ttfb, got))) = task.await {
            run.ok += 1;
            run.exact += u64::from(got == expected);
            ttfbs.push(ttfb.as_secs_f64() * 1000.0);
        }
    }
    sampler.abort();
    ttfbs.sort_by(f64::total_cmp);
    let pick = |q: f64| {
        ttfbs
            .get(((ttfbs.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or(f64::NAN)
    };
    run.ttfb_p50 = pick(0.5);
    run.ttfb_p99 = pick(0.99);
    run.rss_growth_mb = peak.load(Ordering::Relaxed).saturating_sub(rss_before) as f64 / 1024.0;
    run
}
