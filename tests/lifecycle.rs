//! Process lifecycle: the data file lock, the listen backlog, graceful shutdown with requests in
//! flight, and the binary's process settings (the allocator's, huge pages, memory returned when
//! idle, packed relocations).

mod common;

use std::process::Command;

use std::time::Duration;

use common::{ROOT_PASS, ROOT_USER, TestServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tollgate::app::App;
use tollgate::config::Config;

#[tokio::test]
async fn a_second_process_on_the_same_data_dir_fails_clearly() {
    let server = TestServer::start().await;
    let output = Command::new(env!("CARGO_BIN_EXE_tollgate"))
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(server.data_dir())
        .output()
        .expect("spawn tollgate");
    assert!(
        !output.status.success(),
        "the second process must exit with an error"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("already in use by another Tollgate process"),
        "stderr: {stderr}"
    );
    let (status, _) = server.get("/api/status").await;
    assert!(status.is_success(), "the first server is unharmed");
}

#[tokio::test]
async fn shutdown_lets_in_flight_requests_finish_and_closes_the_database() {
    let mut server = TestServer::start().await;
    server.setup_root().await;
    let addr = server.base.trim_start_matches("http://").to_owned();
    let body = format!(r#"{{"username":"{ROOT_USER}","password":"{ROOT_PASS}"}}"#);

    // `Expect: 100-continue` makes the server say when the handler starts reading the body:
    // from then on the request is in flight, which is the signal to start the shutdown.
    let mut tcp = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    let head = format!(
        "POST /api/user/login HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nExpect: 100-continue\r\n\r\n",
        body.len()
    );
    tcp.write_all(head.as_bytes()).await.expect("head");
    let mut buf = vec![0u8; 256];
    let n = tcp.read(&mut buf).await.expect("100 continue");
    assert!(
        String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 100"),
        "expected 100 Continue"
    );

    let stopping = tokio::spawn(async move {
        server.shutdown().await;
        server
    });
    tcp.write_all(body.as_bytes()).await.expect("body");
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).await.expect("response");
    assert!(
        answer.starts_with("HTTP/1.1 200"),
        "the in-flight login completes: {answer}"
    );

    let server = stopping.await.expect("shutdown task");
    let reopened = tollgate_storage::Store::open_dir(server.data_dir());
    assert!(
        reopened.is_ok(),
        "the database was closed: {:?}",
        reopened.err()
    );
}

/// A burst of new connections larger than tokio's default backlog (128) completes its handshakes
/// even before the server accepts any: with a short backlog the kernel drops the extra SYNs and
/// those clients wait a second (or, with nobody accepting, forever) before retrying.
#[tokio::test]
async fn a_burst_of_five_hundred_connections_is_held_in_the_backlog() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = App::build(Config::for_data_dir(dir.path()))
        .await
        .expect("server builds");
    let addr = app.local_addr().expect("bound");
    // The kernel caps the backlog at net.core.somaxconn (4096 by default since Linux 5.4).
    let burst = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .map_or(500, |cap| cap.min(500));
    let connects: Vec<_> = (0..burst)
        .map(|_| tokio::spawn(tokio::net::TcpStream::connect(addr)))
        .collect();
    let all = async {
        let mut held = Vec::with_capacity(connects.len());
        for connect in connects {
            held.push(connect.await.expect("task").expect("connect"));
        }
        held
    };
    // Loopback handshakes take microseconds; a dropped SYN is retried only after one second.
    let held = tokio::time::timeout(Duration::from_secs(5), all)
        .await
        .expect("every handshake completes without a SYN retry");
    assert_eq!(held.len(), burst);
}

/// The environment of process `pid` (`/proc/<pid>/environ`), as `NAME=value` entries.
#[cfg(target_os = "linux")]
fn environ_of(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/environ"))
        .unwrap_or_default()
        .split(|b| *b == 0)
        .map(|entry| String::from_utf8_lossy(entry).into_owned())
        .collect()
}

/// Starts the binary with `env` on a fresh data dir and returns its allocator's variables once
/// it listens (it executes itself again with `MIMALLOC_PURGE_DELAY` before anything else).
#[cfg(target_os = "linux")]
async fn allocator_environment(env: &[(&str, &str)]) -> Vec<String> {
    let server = Process::start_with(&[], env).await;
    // Only the allocator's variables: the rest of the environment is the test runner's.
    environ_of(server.pid)
        .into_iter()
        .filter(|e| e.starts_with("MIMALLOC_"))
        .collect()
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_binary_runs_with_the_allocators_purge_delay_and_an_operators_value_wins() {
    let ours = allocator_environment(&[]).await;
    assert!(
        ours.iter().any(|e| e == "MIMALLOC_PURGE_DELAY=50"),
        "{ours:?}"
    );
    let operators = allocator_environment(&[("MIMALLOC_PURGE_DELAY", "250")]).await;
    assert!(
        operators.iter().any(|e| e == "MIMALLOC_PURGE_DELAY=250"),
        "{operators:?}"
    );
}

/// A server process started from the binary as an operator would (it executes itself again,
/// as it does unless `MIMALLOC_PURGE_DELAY` is set) on a fresh data dir; killed when dropped.
#[cfg(target_os = "linux")]
struct Process {
    child: tokio::process::Child,
    pid: u32,
    port: u16,
    _dir: tempfile::TempDir,
}

#[cfg(target_os = "linux")]
impl Process {
    /// Starts the binary with `args` and returns once it accepts connections.
    async fn start(args: &[&str]) -> Process {
        Process::start_with(args, &[]).await
    }

    /// [`Process::start`] with `env` added to the environment.
    #[expect(clippy::expect_used, reason = "a test helper fails the test loudly")]
    async fn start_with(args: &[&str], env: &[(&str, &str)]) -> Process {
        let dir = tempfile::tempdir().expect("temp dir");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_tollgate"))
            .args(["--listen", &format!("127.0.0.1:{port}"), "--data-dir"])
            .arg(dir.path())
            .args(args)
            .env_remove("MIMALLOC_PURGE_DELAY")
            .env_remove("TOLLGATE_HUGE_PAGES")
            .envs(env.iter().copied())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn tollgate");
        let pid = child.id().expect("running");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the server never listened"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Process {
            child,
            pid,
            port,
            _dir: dir,
        }
    }

    /// Field `name` of `/proc/<pid>/<file>`, its value trimmed ("" when absent).
    fn field(&self, file: &str, name: &str) -> String {
        std::fs::read_to_string(format!("/proc/{}/{file}", self.pid))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim_start_matches(':').trim().to_owned())
            .unwrap_or_default()
    }

    /// A field of `field`'s files given in kB, as a number.
    #[expect(clippy::expect_used, reason = "a test helper fails the test loudly")]
    fn kb(&self, file: &str, name: &str) -> u64 {
        self.field(file, name)
            .trim_end_matches("kB")
            .trim()
            .parse()
            .expect("a figure in kB")
    }

    /// `path` on this server.
    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

/// The binary's `AnonHugePages` (kB, `/proc/<pid>/smaps_rollup`) and its `THP_enabled` flag
/// (`/proc/<pid>/status`) once it accepts connections, started with `args`.
#[expect(clippy::expect_used, reason = "a test helper fails the test loudly")]
#[cfg(target_os = "linux")]
async fn huge_pages_of_a_started_server(args: &[&str]) -> (u64, String) {
    let mut server = Process::start(args).await;
    let huge_kb = server.kb("smaps_rollup", "AnonHugePages");
    let thp = server.field("status", "THP_enabled");
    server.child.kill().await.expect("kill");
    (huge_kb, thp)
}

/// Transparent huge pages are off from the process's start: the binary turns them off before it
/// executes itself again, so not even the allocator's first pages (touched before `main`) are
/// huge (on a host whose THP mode is `madvise` or `always` those were two resident 2 MiB pages);
/// `--huge-pages` turns them on.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_server_holds_no_huge_pages_unless_asked_to() {
    let (huge_kb, thp) = huge_pages_of_a_started_server(&[]).await;
    assert_eq!(huge_kb, 0, "anonymous huge pages resident");
    assert_eq!(thp, "0", "THP_enabled");
    let (_, thp) = huge_pages_of_a_started_server(&["--huge-pages"]).await;
    assert_eq!(thp, "1", "THP_enabled with --huge-pages");
}

/// The allocator returns freed memory after a delay, and only when one of its pages empties
/// (`src/allocator.rs`); an idle server empties none, so without the binary's purge clock the
/// 9 MiB a password hash takes (set-up hashes one, sign-in verifies one) stayed resident until
/// the next request. Within a few seconds of its last request the idle server's anonymous
/// memory is back within 6 MiB of what it held, settled, before the first: well below a hash's
/// 9 MiB on top of it.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn an_idle_server_returns_what_its_password_hashes_freed() {
    let server = Process::start(&[]).await;
    let anon = || server.kb("status", "RssAnon");
    // What start-up freed goes back within a period of the clock: settled when two readings
    // more than a period apart agree.
    let period = tollgate::allocator::PURGE_PERIOD + Duration::from_millis(200);
    let mut before = anon();
    for _ in 0..10 {
        tokio::time::sleep(period).await;
        let now = anon();
        if now == before {
            break;
        }
        before = now;
    }
    let http = reqwest::Client::new();
    let credentials = serde_json::json!({
        "username": ROOT_USER, "password": ROOT_PASS, "confirmPassword": ROOT_PASS
    });
    for path in ["/api/setup", "/api/user/login"] {
        let status = http
            .post(server.url(path))
            .json(&credentials)
            .send()
            .await
            .expect(path)
            .status();
        assert!(status.is_success(), "{path}: {status}");
    }
    // A period and the delay, with room for a slow machine; without the clock the memory
    // stayed until some later free (5–10 s here, whatever the server did next).
    let idle = tokio::time::Instant::now();
    loop {
        let now = anon();
        if now <= before + 6 * 1024 {
            break;
        }
        assert!(
            idle.elapsed() < 3 * tollgate::allocator::PURGE_PERIOD,
            "anonymous memory {now} kB, {before} kB before the set-up, {:?} after it",
            idle.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The binary's relative relocations are packed (DT_RELR, see `build.rs`): the dynamic loader
/// reads the relocation table whole at start and its pages stay resident — 1.25 MiB unpacked in
/// a release build (54,000 entries of 24 bytes), a few KiB packed. Built only where `build.rs`
/// packs them (Linux, glibc ≥ 2.36 on the build host).
#[cfg(packed_relocs)]
#[test]
fn the_binary_packs_its_relative_relocations() {
    use object::{Object, ObjectSection};
    let elf = std::fs::read(env!("CARGO_BIN_EXE_tollgate")).expect("the binary");
    let file = object::File::parse(&*elf).expect("an ELF file");
    assert!(
        file.section_by_name(".relr.dyn").is_some(),
        "no packed relocations (.relr.dyn) in the binary"
    );
    let rela = file.section_by_name(".rela.dyn").map_or(0, |s| s.size());
    assert!(rela < 64 * 1024, "{rela} bytes of RELA relocations left");
}
