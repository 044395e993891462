//! Child processes and their counters: the bench re-runs its own executable as the mock
//! upstream or the floor proxy (so each target's CPU and memory are its own), starts Tollgate,
//! and reads `/proc/<pid>/stat` (user+system CPU) and `/proc/<pid>/status` (VmRSS, RssAnon, VmHWM).

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Environment variable naming the role of a re-run bench executable.
pub const ROLE_VAR: &str = "LOAD_ROLE";
/// Environment variable with the upstream base URL of the floor proxy.
pub const UPSTREAM_VAR: &str = "LOAD_UPSTREAM";

/// A child process killed when dropped.
pub struct Proc {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
}

impl Proc {
    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Binds an ephemeral loopback port for the mock or the floor with the accept backlog
/// Tollgate's listener asks for (4,096, capped by `net.core.somaxconn`): the default 128 would
/// drop a burst's handshakes and cost the floor a one-second retry Tollgate does not pay.
pub fn listen() -> std::io::Result<tokio::net::TcpListener> {
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(([127, 0, 0, 1], 0).into())?;
    socket.listen(4096)
}

/// Re-runs this executable as `role` ("mock" or "floor"); it prints its address when ready.
pub fn spawn_role(role: &str, upstream: &str) -> std::io::Result<Proc> {
    let mut child = Command::new(std::env::current_exe()?)
        .env(ROLE_VAR, role)
        .env(UPSTREAM_VAR, upstream)
        .stdout(Stdio::piped())
        .spawn()?;
    let mut line = String::new();
    if let Some(out) = child.stdout.take() {
        BufReader::new(out).read_line(&mut line)?;
    }
    let addr = line.trim().to_owned();
    if addr.is_empty() {
        return Err(std::io::Error::other(format!("{role} did not start")));
    }
    Ok(Proc {
        child,
        base: format!("http://{addr}"),
    })
}

/// Starts Tollgate (`bin`) on a free port with `data_dir`; the caller waits for it to answer.
pub fn spawn_tollgate(bin: &Path, data_dir: &Path) -> std::io::Result<Proc> {
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let child = Command::new(bin)
        .env("TOLLGATE_LISTEN", format!("127.0.0.1:{port}"))
        .env("TOLLGATE_DATA_DIR", data_dir)
        .env("TOLLGATE_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()?;
    Ok(Proc {
        child,
        base: format!("http://127.0.0.1:{port}"),
    })
}

/// Clock ticks per second of `/proc/<pid>/stat` (`getconf CLK_TCK`, 100 if unknown).
pub fn clock_ticks() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100)
}

/// User + system CPU ticks consumed so far by `pid` (all threads).
pub fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces) start at `state` (field 3).
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| {
        fields
            .get(n - 3)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(14) + field(15)
}

/// Context switches (voluntary + involuntary) of every thread of `pid` so far: a thread that
/// parks to wait and is woken again costs one, and on a small VM each costs microseconds.
pub fn ctx_switches(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(Result::ok)
        .map(|task| {
            let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
            status
                .lines()
                .filter(|l| l.contains("ctxt_switches:"))
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum::<u64>()
        })
        .sum()
}

/// The highest RSS of some processes, sampled in the background until dropped: VmRSS and, on
/// its own, RssAnon (heap and stacks; VmRSS adds the binary's file pages, which depend on how
/// much of the binary the page cache holds, so two copies of one binary differ there).
pub struct RssPeaks {
    peaks: Arc<Vec<AtomicU64>>,
    anon: Arc<Vec<AtomicU64>>,
    sampler: tokio::task::JoinHandle<()>,
}

impl RssPeaks {
    /// Starts sampling `pids`' VmRSS and RssAnon every `every`.
    pub fn start(pids: Vec<u32>, every: Duration) -> RssPeaks {
        let zeros = || -> Arc<Vec<AtomicU64>> {
            Arc::new(pids.iter().map(|_| AtomicU64::new(0)).collect())
        };
        let (peaks, anon) = (zeros(), zeros());
        let sampler = {
            let (peaks, anon) = (Arc::clone(&peaks), Arc::clone(&anon));
            tokio::spawn(async move {
                loop {
                    for ((peak, anon), pid) in peaks.iter().zip(anon.iter()).zip(&pids) {
                        peak.fetch_max(vm_kb(*pid, "VmRSS"), Ordering::Relaxed);
                        anon.fetch_max(vm_kb(*pid, "RssAnon"), Ordering::Relaxed);
                    }
                    tokio::time::sleep(every).await;
                }
            })
        };
        RssPeaks {
            peaks,
            anon,
            sampler,
        }
    }

    /// The VmRSS peaks so far, in kB, in the order of the pids.
    pub fn kb(&self) -> Vec<u64> {
        self.peaks
            .iter()
            .map(|p| p.load(Ordering::Relaxed))
            .collect()
    }

    /// The RssAnon peaks so far, in kB, in the order of the pids.
    pub fn anon_kb(&self) -> Vec<u64> {
        self.anon
            .iter()
            .map(|p| p.load(Ordering::Relaxed))
            .collect()
    }
}

impl Drop for RssPeaks {
    fn drop(&mut self) {
        self.sampler.abort();
    }
}

/// A `Vm…:` or `Rss…:` line of `/proc/<pid>/status`, in kB.
pub fn vm_kb(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| {
            v.trim_start_matches(':')
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// Resets `pid`'s peak RSS (VmHWM) to its current RSS (`5` into `/proc/<pid>/clear_refs`), so a
/// later VmHWM reading covers only what ran since. Returns whether the kernel took it.
pub fn reset_peak(pid: u32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok()
}
