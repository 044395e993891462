//! MariaDB and PostgreSQL servers for the import tests: Debian's `mariadb-server` and
//! `postgresql` binaries, started on a loopback ephemeral port in a temporary data directory,
//! as `nobody` when the tests run as root (PostgreSQL refuses root; the test is no database
//! administrator), loaded with a fixture through the engine's own client, and stopped when the
//! handle is dropped — also when the test fails.
//!
//! When the binaries are absent the tests skip with a message, except under CI (`CI` set),
//! where scripts/test.sh installs them and a missing server is a failure.
#![expect(
    clippy::panic,
    reason = "a server that does not start fails the test that needs it, saying why"
)]

use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// The password of the fixture's database user: characters the Go DSN and URLs must carry.
pub const PASSWORD: &str = "p@ss:w/rd";
/// The database (and, on PostgreSQL, the user) the fixture is loaded into.
pub const DATABASE: &str = "newapi";

/// Which engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    MariaDb,
    Postgres,
}

/// A running server holding a loaded fixture.
pub struct SqlServer {
    child: Child,
    /// The server's loopback port.
    pub port: u16,
    /// The incumbent's setting for this server (`SQL_DSN` form for MariaDB, a URL for
    /// PostgreSQL); holds [`PASSWORD`].
    pub dsn: String,
    dir: TempDir,
}

impl Drop for SqlServer {
    fn drop(&mut self) {
        // SIGTERM for a clean stop (PostgreSQL's postmaster takes its backends down), then
        // SIGKILL if it lingers; the data directory goes with `dir`.
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = &self.dir;
    }
}

/// Whether the test command runs under CI (where skipping is not allowed).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// The engine's binaries, or why they are not there.
pub fn binaries(engine: Engine) -> Result<Binaries, String> {
    match engine {
        Engine::MariaDb => {
            let find = |names: &[&str]| {
                names
                    .iter()
                    .flat_map(|n| {
                        ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"]
                            .map(|d| Path::new(d).join(n))
                    })
                    .find(|p| p.is_file())
            };
            Ok(Binaries {
                server: find(&["mariadbd", "mysqld"]).ok_or("no mariadbd")?,
                init: find(&["mariadb-install-db", "mysql_install_db"])
                    .ok_or("no mariadb-install-db")?,
                client: find(&["mariadb", "mysql"]).ok_or("no mariadb client")?,
            })
        }
        Engine::Postgres => {
            // Debian keeps them in /usr/lib/postgresql/<major>/bin: the newest there.
            let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
                .map_err(|_| "no /usr/lib/postgresql".to_owned())?
                .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
                .filter(|d| d.join("postgres").is_file() && d.join("initdb").is_file())
                .collect();
            dirs.sort_by_key(|d| {
                d.parent()
                    .and_then(|v| v.file_name())
                    .and_then(|v| v.to_str())
                    .and_then(|v| v.parse::<u32>().ok())
                    .unwrap_or(0)
            });
            let bin = dirs.pop().ok_or("no postgres/initdb")?;
            Ok(Binaries {
                server: bin.join("postgres"),
                init: bin.join("initdb"),
                client: bin.join("psql"),
            })
        }
    }
}

/// Where an engine's programs are.
#[derive(Debug, Clone)]
pub struct Binaries {
    server: PathBuf,
    init: PathBuf,
    client: PathBuf,
}

/// Starts `engine` with `fixture` loaded, or `None` (with a message on stderr) when its
/// binaries are absent outside CI. Panics when anything else goes wrong.
#[expect(
    clippy::print_stderr,
    reason = "a skipped test says why on the test's output"
)]
pub fn start(engine: Engine, fixture: &Path) -> Option<SqlServer> {
    let bins = match binaries(engine) {
        Ok(b) => b,
        Err(why) if !in_ci() => {
            eprintln!(
                "SKIPPED: {engine:?} is not installed here ({why}); scripts/test.sh installs \
                 Debian's mariadb-server and postgresql under CI"
            );
            return None;
        }
        Err(why) => panic!("{engine:?} is not installed under CI ({why})"),
    };
    Some(match engine {
        Engine::MariaDb => start_mariadb(&bins, fixture),
        Engine::Postgres => start_postgres(&bins, fixture),
    })
}

/// The user the servers run as: `nobody` when we are root, else ourselves.
fn unprivileged() -> Option<(u32, u32)> {
    let me = std::fs::metadata("/proc/self").expect("/proc/self").uid();
    if me != 0 {
        return None;
    }
    let passwd = std::fs::read_to_string("/etc/passwd").expect("/etc/passwd");
    let line = passwd
        .lines()
        .find(|l| l.starts_with("nobody:"))
        .expect("a nobody user");
    let fields: Vec<&str> = line.split(':').collect();
    Some((
        fields[2].parse().expect("uid"),
        fields[3].parse().expect("gid"),
    ))
}

fn as_server_user(command: &mut Command, user: Option<(u32, u32)>) -> &mut Command {
    if let Some((uid, gid)) = user {
        command.uid(uid).gid(gid);
    }
    command
}

fn data_dir(user: Option<(u32, u32)>) -> TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    if let Some((uid, gid)) = user {
        std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).expect("chown");
    }
    dir
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

fn run(command: &mut Command, what: &str) {
    let out = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn run_with_input(command: &mut Command, input: &Path, what: &str) {
    let file = std::fs::File::open(input).expect("fixture");
    let out = command
        .stdin(file)
        .output()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Waits until the port accepts connections (the server's log is shown if it never does).
fn wait_for_port(child: &mut Child, port: u16, log: &Path) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "the server exited ({status}): {}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!(
        "the server did not listen on {port} within 120 s: {}",
        std::fs::read_to_string(log).unwrap_or_default()
    );
}

fn log_file(dir: &Path, user: Option<(u32, u32)>) -> (PathBuf, std::fs::File) {
    let path = dir.join("server.log");
    let file = std::fs::File::create(&path).expect("log");
    if let Some((uid, gid)) = user {
        std::os::unix::fs::chown(&path, Some(uid), Some(gid)).expect("chown");
    }
    (path, file)
}

fn start_mariadb(bins: &Binaries, fixture: &Path) -> SqlServer {
    let user = unprivileged();
    let dir = data_dir(user);
    let data = dir.path().join("data");
    let socket = dir.path().join("sock");
    run(
        as_server_user(&mut Command::new(&bins.init), user)
            .arg("--no-defaults")
            .arg("--auth-root-authentication-method=normal")
            .arg("--skip-test-db")
            .arg(format!("--datadir={}", data.display())),
        "mariadb-install-db",
    );
    let port = free_port();
    let (log, file) = log_file(dir.path(), user);
    let mut child = as_server_user(&mut Command::new(&bins.server), user)
        .arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--socket={}", socket.display()))
        .arg(format!("--port={port}"))
        .arg("--bind-address=127.0.0.1")
        .arg(format!("--pid-file={}", dir.path().join("pid").display()))
        .arg("--innodb-flush-log-at-trx-commit=0")
        .arg("--skip-log-bin")
        .arg("--skip-name-resolve")
        .stdin(Stdio::null())
        .stdout(file.try_clone().expect("log"))
        .stderr(file)
        .spawn()
        .expect("mariadbd");
    wait_for_port(&mut child, port, &log);
    let server = SqlServer {
        child,
        port,
        dsn: format!(
            "{DATABASE}:{PASSWORD}@tcp(127.0.0.1:{port})/{DATABASE}?charset=utf8mb4&parseTime=True&loc=Local"
        ),
        dir,
    };
    let client = |database: Option<&str>| {
        let mut c = Command::new(&bins.client);
        as_server_user(&mut c, user)
            .arg("--no-defaults")
            .arg("-uroot")
            .arg(format!("--socket={}", socket.display()));
        if let Some(d) = database {
            c.arg(d);
        }
        c
    };
    run(
        client(None).arg("-e").arg(format!(
            "CREATE DATABASE {DATABASE} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci; \
             CREATE USER '{DATABASE}'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'; \
             GRANT ALL ON {DATABASE}.* TO '{DATABASE}'@'127.0.0.1';"
        )),
        "creating the database",
    );
    run_with_input(&mut client(Some(DATABASE)), fixture, "loading the fixture");
    server
}

fn start_postgres(bins: &Binaries, fixture: &Path) -> SqlServer {
    let user = unprivileged();
    let dir = data_dir(user);
    let data = dir.path().join("data");
    let pwfile = dir.path().join("pw");
    std::fs::write(&pwfile, PASSWORD).expect("pw");
    if let Some((uid, gid)) = user {
        std::os::unix::fs::chown(&pwfile, Some(uid), Some(gid)).expect("chown");
    }
    run(
        as_server_user(&mut Command::new(&bins.init), user)
            .arg("-D")
            .arg(&data)
            .arg(format!("--username={DATABASE}"))
            .arg(format!("--pwfile={}", pwfile.display()))
            .arg("--auth=scram-sha-256")
            .arg("--encoding=UTF8")
            .arg("--no-sync"),
        "initdb",
    );
    let port = free_port();
    let (log, file) = log_file(dir.path(), user);
    let mut child = as_server_user(&mut Command::new(&bins.server), user)
        .arg("-D")
        .arg(&data)
        .arg("-p")
        .arg(port.to_string())
        .arg("-k")
        .arg(dir.path())
        .arg("-c")
        .arg("listen_addresses=127.0.0.1")
        .arg("-c")
        .arg("fsync=off")
        .stdin(Stdio::null())
        .stdout(file.try_clone().expect("log"))
        .stderr(file)
        .spawn()
        .expect("postgres");
    wait_for_port(&mut child, port, &log);
    let encoded = PASSWORD
        .replace('%', "%25")
        .replace('@', "%40")
        .replace(':', "%3A")
        .replace('/', "%2F");
    let server = SqlServer {
        child,
        port,
        dsn: format!("postgres://{DATABASE}:{encoded}@127.0.0.1:{port}/{DATABASE}?sslmode=disable"),
        dir,
    };
    let psql = |database: &str| {
        let mut c = Command::new(&bins.client);
        c.env("PGPASSWORD", PASSWORD)
            .args(["-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1"])
            .arg("-p")
            .arg(port.to_string())
            .args(["-U", DATABASE, "-d", database]);
        c
    };
    // The postmaster listens before it accepts logins: retry the first statement briefly.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = psql("postgres")
            .arg("-c")
            .arg(format!("CREATE DATABASE {DATABASE}"))
            .stdin(Stdio::null())
            .output()
            .expect("psql");
        if out.status.success() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "creating the database: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    run_with_input(&mut psql(DATABASE), fixture, "loading the fixture");
    server
}
