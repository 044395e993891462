//! The concurrent-streams check: N paced streams through a target, either all opened in the
//! same instant (a burst: N connections, handshakes and requests at once) or opened evenly
//! over a ramp while every earlier one is still open (the mock paces the long model so that
//! all N are open together). Every body must equal the upstream's bytes; the target's RSS is
//! sampled while they run, and the most streams open at once is counted.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures_util::StreamExt;

use crate::procs;

/// What one concurrent-streams run measured.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct StreamsRun {
    /// The window the streams were opened over (ms; 0: all at once).
    pub ramp_ms: u64,
    /// The most streams open at the same time.
    pub max_open: u64,
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

/// Opens `n` streams to `url`, evenly over `ramp` (at once when zero), and checks each body
/// against `expected`.
pub async fn run(
    url: &str,
    auth: &str,
    body: &str,
    n: usize,
    ramp: Duration,
    expected: &[u8],
    pid: u32,
) -> StreamsRun {
    let client = match reqwest::Client::builder().pool_max_idle_per_host(0).build() {
        Ok(c) => c,
        Err(_) => return StreamsRun::default(),
    };
    let rss_before = procs::vm_kb(pid, "VmRSS");
    let peak = procs::RssPeaks::start(vec![pid], Duration::from_millis(20));
    let open = Arc::new(AtomicU64::new(0));
    let max_open = Arc::new(AtomicU64::new(0));
    let began = Instant::now();
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let (open, max_open) = (Arc::clone(&open), Arc::clone(&max_open));
            let at = began + ramp.mul_f64(i as f64 / n.max(1) as f64);
            let req = client
                .post(url)
                .header("content-type", "application/json")
                .header("authorization", auth)
                .body(body.to_owned());
            tokio::spawn(async move {
                tokio::time::sleep_until(at.into()).await;
                let start = Instant::now();
                max_open.fetch_max(open.fetch_add(1, Ordering::Relaxed) + 1, Ordering::Relaxed);
                let _open = Guard(&open);
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
    let mut run = StreamsRun {
        ramp_ms: ramp.as_millis() as u64,
        ..StreamsRun::default()
    };
    let mut ttfbs = Vec::with_capacity(n);
    for task in tasks {
        if let Ok(Some((ttfb, got))) = task.await {
            run.ok += 1;
            run.exact += u64::from(got == expected);
            ttfbs.push(ttfb.as_secs_f64() * 1000.0);
        }
    }
    run.max_open = max_open.load(Ordering::Relaxed);
    ttfbs.sort_by(f64::total_cmp);
    let pick = |q: f64| {
        ttfbs
            .get(((ttfbs.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or(f64::NAN)
    };
    run.ttfb_p50 = pick(0.5);
    run.ttfb_p99 = pick(0.99);
    let peak_kb = peak.kb().first().copied().unwrap_or(0).max(rss_before);
    drop(peak);
    run.rss_growth_mb = peak_kb.saturating_sub(rss_before) as f64 / 1024.0;
    run
}

/// Counts a stream as closed when its task ends, however it ends.
struct Guard<'a>(&'a AtomicU64);

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}
