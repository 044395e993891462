//! `Config`: every startup setting, as a flag and an environment variable, with defaults so that
//! `tollgate` with no arguments serves. Runtime settings (the admin's options) are data in the
//! database, not configuration.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Parser, ValueEnum};
use ipnet::IpNet;
use tollgate_actors::log_writer::GATHER;
use tollgate_storage::Keyring;

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// Tollgate's startup configuration.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "tollgate",
    version,
    about = "AI model API gateway with a browser console"
)]
pub struct Config {
    /// Address to serve the console and the API on.
    #[arg(long, env = "TOLLGATE_LISTEN", default_value = "0.0.0.0:3000")]
    pub listen: SocketAddr,

    /// A second address serving only `GET /metrics` (Prometheus text) without authentication,
    /// e.g. `127.0.0.1:9090`: bind it where only the scraper reaches. Without it, `/metrics`
    /// is served on the main address to root's system access token (`Authorization: Bearer`).
    #[arg(long, env = "TOLLGATE_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,

    /// Directory holding the database file (tollgate.redb). Persist it when running in a container.
    #[arg(long, env = "TOLLGATE_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,

    /// Memory for the database's page cache, in MiB. The hot pages (balances, the newest log
    /// pages) fit in the default; give more to speed up log queries over millions of rows.
    #[arg(long, env = "TOLLGATE_DB_CACHE_MB", default_value_t = DEFAULT_DB_CACHE_MB)]
    pub db_cache_mb: u64,

    /// Under load, the least time between two commits of settlements (log rows and the balance
    /// changes they record), in milliseconds: what a power loss can lose (a process crash loses
    /// nothing: the crash journal; a shutdown flushes), traded against the fixed CPU cost of
    /// each commit. A batch of fewer than 32 settlements gathers
    /// on, up to 2.5 intervals and at most 50 ms. 0 commits whatever is queued at once.
    #[arg(long, env = "TOLLGATE_COMMIT_INTERVAL_MS", default_value_t = DEFAULT_COMMIT_INTERVAL_MS,
          value_parser = clap::value_parser!(u64).range(0..=1000))]
    pub commit_interval_ms: u64,

    /// Time between two rounds of the task poller (Midjourney, Suno and video tasks), in
    /// milliseconds; a round runs only while unfinished tasks exist. 15 s as in new-api.
    #[arg(long, env = "TOLLGATE_TASK_POLL_INTERVAL_MS", default_value_t = 15_000,
          value_parser = clap::value_parser!(u64).range(10..=3_600_000))]
    pub task_poll_interval_ms: u64,

    /// How long an API key's entry and a user's quota ledger stay in memory unused, in
    /// milliseconds: a sweep every interval drops those unused for a whole interval; the next
    /// request reads them back from the database (one read). Unknown keys never cause a read.
    #[arg(long, env = "TOLLGATE_IDLE_EVICT_MS", default_value_t = 600_000,
          value_parser = clap::value_parser!(u64).range(10..=86_400_000))]
    pub idle_evict_ms: u64,

    /// Let the allocator use transparent huge pages: perhaps a few per cent less CPU per
    /// request, for 15–20 MB more resident memory (off by default; see `huge_pages`).
    #[arg(long, env = "TOLLGATE_HUGE_PAGES", default_value_t = false)]
    pub huge_pages: bool,

    /// Log filter, e.g. `info` or `tollgate=debug,tower_http=info`.
    #[arg(long, env = "TOLLGATE_LOG", default_value = "info")]
    pub log_level: String,

    /// Log line format.
    #[arg(long, env = "TOLLGATE_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// Secret that signs session cookies (at least 32 characters). When not given, a random one
    /// is generated on first start and kept in the database, so restarts keep sessions.
    #[arg(long, env = "TOLLGATE_SESSION_SECRET", hide_env_values = true)]
    pub session_secret: Option<String>,

    /// File holding the secret key that encrypts the secrets kept in the database: channel
    /// keys, API keys, secret options (SMTP password, OAuth client secrets, payment keys) and
    /// the session secret. At least 32 characters, e.g. `openssl rand -hex 32 > secret.key`.
    /// Without a key (this or TOLLGATE_SECRET_KEY) they are stored as plain text; a database
    /// encrypted with a key refuses to start without it. Change it with `tollgate rekey`.
    #[arg(long, env = "TOLLGATE_SECRET_KEY_FILE")]
    pub secret_key_file: Option<PathBuf>,

    /// The secret key itself (see --secret-key-file, which keeps it out of the process list).
    #[arg(
        long,
        env = "TOLLGATE_SECRET_KEY",
        hide_env_values = true,
        conflicts_with = "secret_key_file"
    )]
    pub secret_key: Option<String>,

    /// Mark session cookies `Secure` (set this when the console is served over HTTPS).
    #[arg(long, env = "TOLLGATE_SECURE_COOKIE", default_value_t = false)]
    pub secure_cookie: bool,

    /// Requests one IP may make to the sign-in, registration, verification-mail and
    /// password-reset routes per 20 minutes (a burst of this size, refilled evenly).
    #[arg(long, env = "TOLLGATE_CRITICAL_RATE_LIMIT", default_value_t = 20)]
    pub critical_rate_limit: u32,

    /// Password hashes (sign-in, registration, password change) that may wait for the one
    /// hashing thread; beyond them a request is refused at once with 429.
    #[arg(long, env = "TOLLGATE_PASSWORD_HASH_QUEUE", default_value_t = crate::console::service::password::DEFAULT_QUEUE)]
    pub password_hash_queue: usize,

    /// Reverse proxies in front of Tollgate, as comma-separated CIDRs or addresses (e.g.
    /// `127.0.0.1,10.0.0.0/8`). Only from these is `X-Forwarded-For` (or `X-Real-IP`) believed
    /// to name the client, for the per-IP limit, API keys' allowed IPs and logs. Empty (the
    /// default): the TCP peer is the client and those headers are ignored.
    #[arg(long, env = "TOLLGATE_TRUSTED_PROXIES", value_delimiter = ',',
          value_parser = parse_trusted)]
    pub trusted_proxies: Vec<IpNet>,

    /// Endpoint that verifies Turnstile tokens (change it only to test or to use a compatible
    /// service).
    #[arg(
        long,
        env = "TOLLGATE_TURNSTILE_VERIFY_URL",
        default_value = "https://challenges.cloudflare.com/turnstile/v0/siteverify"
    )]
    pub turnstile_verify_url: String,

    /// GitHub's web address (sign-in and token endpoints); change it only to test or for
    /// GitHub Enterprise.
    #[arg(long, env = "TOLLGATE_GITHUB_URL", default_value = DEFAULT_GITHUB_URL)]
    pub github_url: String,

    /// GitHub's API address (the signed-in user).
    #[arg(long, env = "TOLLGATE_GITHUB_API_URL", default_value = DEFAULT_GITHUB_API_URL)]
    pub github_api_url: String,

    /// LinuxDO Connect's address (authorize, token and user endpoints).
    #[arg(long, env = "TOLLGATE_LINUXDO_URL", default_value = DEFAULT_LINUXDO_URL)]
    pub linuxdo_url: String,

    /// Seconds the relay waits for an upstream's first answer, and between two chunks of a
    /// streamed answer, before giving up.
    #[arg(long, env = "TOLLGATE_RELAY_TIMEOUT", default_value_t = 300)]
    pub relay_timeout_secs: u64,

    /// Largest request body the relay routes accept, in MiB (larger bodies get 413). Large
    /// base64 images and audio uploads need room; axum's 2 MB default is too small for them.
    #[arg(long, env = "TOLLGATE_MAX_REQUEST_BODY_MB", default_value_t = 128)]
    pub max_request_body_mb: u64,

    /// Seconds a relay request's body may take to arrive in all (408 past it); it must also
    /// average at least 64 KiB/s after its first 10 s. Raise it for large uploads over slow
    /// links.
    #[arg(long, env = "TOLLGATE_BODY_READ_TIMEOUT", default_value_t = 60)]
    pub body_read_timeout_secs: u64,

    /// Tests only (not settable from the command line or the environment): the body read
    /// deadline in finer steps than seconds, replacing `body_read_timeout_secs`.
    #[arg(skip)]
    pub body_read_timeout_override: Option<Duration>,

    /// Seconds to let in-flight requests finish after SIGINT/SIGTERM before closing anyway.
    #[arg(long, env = "TOLLGATE_SHUTDOWN_TIMEOUT", default_value_t = 30)]
    pub shutdown_timeout_secs: u64,

    /// Also accept plain `http://` webhook URLs on loopback (127.0.0.1, [::1], localhost) in
    /// users' notification settings. For tests and receivers on the same host only; every
    /// other webhook URL must be https.
    #[arg(
        long,
        env = "TOLLGATE_WEBHOOK_ALLOW_LOOPBACK_HTTP",
        default_value_t = false
    )]
    pub webhook_allow_loopback_http: bool,

    /// Largest image or document the relay reads for a client that names it by URL (for
    /// upstreams that take media only as bytes: Gemini, Bedrock, Claude on Vertex or Bedrock),
    /// in MiB. Larger media are refused with a 400 naming the part.
    #[arg(long, env = "TOLLGATE_MEDIA_FETCH_MAX_MB", default_value_t = crate::outbound::media::DEFAULT_MAX_MB)]
    pub media_fetch_max_mb: u64,

    /// Seconds one read of a client's media URL may take in all (connecting, redirects, body).
    #[arg(long, env = "TOLLGATE_MEDIA_FETCH_TIMEOUT", default_value_t = crate::outbound::media::DEFAULT_TIMEOUT_SECS)]
    pub media_fetch_timeout_secs: u64,

    /// Tests only (not settable from the command line or the environment): fixed DNS answers,
    /// and names exempt from the address check, for the clients of user-controlled URLs.
    #[arg(skip)]
    pub outbound_overrides: std::sync::Arc<crate::outbound::Overrides>,

    /// Tests only (not settable from the command line or the environment): the clock of the
    /// waits and locks that last minutes or hours, which a test moves instead of sleeping.
    #[arg(skip)]
    pub clock: crate::clock::Clock,

    /// An operation to run instead of serving (see `tollgate help <command>`).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Operations run instead of the server ([`crate::ops`]).
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Command {
    /// Writes a consistent copy of the database to FILE (asking the running server for it
    /// when one holds the data file).
    Backup(BackupArgs),
    /// Puts the backup FILE in place as the database (the server must be stopped).
    Restore {
        /// The backup file.
        file: PathBuf,
    },
    /// Account administration on the data file (the server must be stopped).
    #[command(subcommand)]
    Admin(AdminCommand),
    /// Moves another gateway's installation into a new data directory (the server must be
    /// stopped; see the README's "Moving from new-api").
    #[command(subcommand)]
    Import(ImportCommand),
    /// Re-encrypts the database's secrets under a new secret key (the server must be stopped).
    /// The current key comes from --secret-key-file / TOLLGATE_SECRET_KEY as usual; start the
    /// server with the new key afterwards.
    Rekey {
        /// File holding the new secret key.
        #[arg(long, required_unless_present = "decrypt")]
        new_key_file: Option<PathBuf>,
        /// Store the secrets as plain text again instead.
        #[arg(long, conflicts_with = "new_key_file")]
        decrypt: bool,
    },
}

/// `tollgate import ...`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ImportCommand {
    /// Imports a new-api (or one-api) installation into this empty data directory: users with
    /// their passwords and second factor, API keys byte for byte, channels, options,
    /// redemption codes, top-ups (and the logs with --with-logs). The source is only read.
    NewApi(ImportArgs),
}

/// `tollgate import new-api` arguments ([`crate::import`]).
#[derive(Debug, Clone, clap::Args)]
pub struct ImportArgs {
    /// The incumbent's SQLite path (a DSN with a password goes in TOLLGATE_IMPORT_FROM or
    /// --from-file, never on the command line). Default: TOLLGATE_IMPORT_FROM.
    #[arg(long)]
    pub from: Option<String>,
    /// A file holding the incumbent's SQL_DSN (or SQLITE_PATH) on its first line.
    #[arg(long, conflicts_with = "from")]
    pub from_file: Option<PathBuf>,
    /// Read and validate everything and print the report without writing.
    #[arg(long)]
    pub dry_run: bool,
    /// Also copy the usage logs (a batch per transaction).
    #[arg(long)]
    pub with_logs: bool,
    /// Continue copying the logs after the last one an earlier `--with-logs` run imported.
    #[arg(long, requires = "with_logs")]
    pub resume: bool,
}

/// `tollgate backup`.
#[derive(Debug, Clone, clap::Args)]
pub struct BackupArgs {
    /// Where to write the copy.
    pub file: PathBuf,
    /// The running server's address, asked when it holds the data file.
    #[arg(long, env = "TOLLGATE_SERVER", default_value = "http://127.0.0.1:3000")]
    pub server: Option<String>,
    /// A backup token (`tgb-…`; console: personal settings → backup tokens, made by root with
    /// a two-factor code). A root's system access token works only within 5 minutes of a
    /// POST /api/verify through it.
    #[arg(long, env = "TOLLGATE_ADMIN_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// The root user's id (sent with a system access token; a backup token names its root).
    #[arg(long, default_value_t = 1)]
    pub user_id: i64,
}

/// `tollgate admin ...`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum AdminCommand {
    /// Sets USERNAME's password (a random one, printed, when none is given).
    ResetPassword {
        /// The user.
        username: String,
        /// The new password (8 to 20 characters).
        #[arg(long, env = "TOLLGATE_NEW_PASSWORD", hide_env_values = true)]
        password: Option<String>,
    },
}

/// GitHub's web address.
pub const DEFAULT_GITHUB_URL: &str = "https://github.com";
/// GitHub's API address.
pub const DEFAULT_GITHUB_API_URL: &str = "https://api.github.com";
/// LinuxDO Connect's address.
pub const DEFAULT_LINUXDO_URL: &str = "https://connect.linux.do";

/// The log writer's default gather interval, in milliseconds (its [`GATHER`]).
pub const DEFAULT_COMMIT_INTERVAL_MS: u64 = GATHER.as_millis() as u64;

/// The database's default page cache, in MiB (the storage crate's
/// [`tollgate_storage::store::DEFAULT_CACHE_BYTES`]).
pub const DEFAULT_DB_CACHE_MB: u64 =
    (tollgate_storage::store::DEFAULT_CACHE_BYTES / (1024 * 1024)) as u64;

/// Shortest session secret accepted from the operator, in bytes.
pub const MIN_SESSION_SECRET_LEN: usize = 32;

/// The keyring of a key file or a key given in the environment (neither: plain text).
/// Blocking when a file is given.
pub fn read_keyring(file: Option<&Path>, key: Option<&str>) -> Result<Keyring, String> {
    let text = match (file, key) {
        (Some(file), _) => std::fs::read_to_string(file)
            .map_err(|e| format!("cannot read the secret key file {}: {e}", file.display()))?,
        (None, Some(key)) => key.to_owned(),
        (None, None) => return Ok(Keyring::plaintext()),
    };
    Keyring::from_secret(&text).map_err(|e| e.to_string())
}

/// A `--trusted-proxies` entry: a CIDR (`10.0.0.0/8`, `fd00::/8`) or one address.
pub fn parse_trusted(value: &str) -> Result<IpNet, String> {
    let value = value.trim();
    value
        .parse::<IpNet>()
        .or_else(|_| value.parse::<IpAddr>().map(IpNet::from))
        .map_err(|_| format!("{value:?} is not an IP address or CIDR network"))
}

impl Config {
    /// A configuration for tests and embedding: loopback on an ephemeral port, the given data
    /// directory, a generous per-IP limit (every test client is 127.0.0.1), everything else at
    /// its default.
    pub fn for_data_dir(data_dir: impl Into<PathBuf>) -> Config {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            metrics_listen: None,
            data_dir: data_dir.into(),
            log_level: "info".into(),
            log_format: LogFormat::Text,
            session_secret: None,
            secret_key_file: None,
            secret_key: None,
            secure_cookie: false,
            critical_rate_limit: 1_000,
            password_hash_queue: crate::console::service::password::DEFAULT_QUEUE,
            trusted_proxies: Vec::new(),
            turnstile_verify_url: "https://challenges.cloudflare.com/turnstile/v0/siteverify"
                .into(),
            relay_timeout_secs: 300,
            github_url: DEFAULT_GITHUB_URL.into(),
            github_api_url: DEFAULT_GITHUB_API_URL.into(),
            linuxdo_url: DEFAULT_LINUXDO_URL.into(),
            db_cache_mb: DEFAULT_DB_CACHE_MB,
            commit_interval_ms: DEFAULT_COMMIT_INTERVAL_MS,
            task_poll_interval_ms: 15_000,
            idle_evict_ms: 600_000,
            huge_pages: false,
            max_request_body_mb: 128,
            body_read_timeout_secs: 60,
            body_read_timeout_override: None,
            command: None,
            shutdown_timeout_secs: 30,
            webhook_allow_loopback_http: false,
            media_fetch_max_mb: crate::outbound::media::DEFAULT_MAX_MB,
            media_fetch_timeout_secs: crate::outbound::media::DEFAULT_TIMEOUT_SECS,
            outbound_overrides: std::sync::Arc::default(),
            clock: crate::clock::Clock::default(),
        }
    }

    /// The keyring that seals the database's secrets: from `--secret-key-file` (read here:
    /// blocking) or `TOLLGATE_SECRET_KEY`; plain text when neither is given.
    pub fn keyring(&self) -> Result<Keyring, String> {
        read_keyring(self.secret_key_file.as_deref(), self.secret_key.as_deref())
    }

    /// The database page cache in bytes.
    pub fn db_cache(&self) -> usize {
        usize::try_from(self.db_cache_mb.saturating_mul(1024 * 1024)).unwrap_or(usize::MAX)
    }

    /// The log writer's least time between two commits under load.
    pub fn commit_interval(&self) -> Duration {
        Duration::from_millis(self.commit_interval_ms)
    }

    /// Time between two rounds of the task poller.
    pub fn task_poll_interval(&self) -> Duration {
        Duration::from_millis(self.task_poll_interval_ms)
    }

    /// The sweep period of idle key entries and ledgers.
    pub fn idle_evict(&self) -> Duration {
        Duration::from_millis(self.idle_evict_ms)
    }

    /// The relay's request body limit in bytes.
    pub fn max_request_body(&self) -> usize {
        usize::try_from(self.max_request_body_mb.saturating_mul(1024 * 1024)).unwrap_or(usize::MAX)
    }

    /// How long a relay request's body may take to arrive.
    pub fn body_read_limits(&self) -> crate::relay::pipeline::body_read::ReadLimits {
        crate::relay::pipeline::body_read::ReadLimits::with_total(
            self.body_read_timeout_override
                .unwrap_or(Duration::from_secs(self.body_read_timeout_secs)),
        )
    }

    /// How long the relay waits for an upstream (first answer, and between stream chunks).
    pub fn relay_timeout(&self) -> Duration {
        Duration::from_secs(self.relay_timeout_secs)
    }

    /// How long shutdown waits for in-flight requests.
    pub fn shutdown_timeout(&self) -> Duration {
        Duration::from_secs(self.shutdown_timeout_secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_arguments_gives_the_documented_defaults() {
        let config = Config::try_parse_from(["tollgate"]).expect("defaults parse");
        assert_eq!(config.listen, "0.0.0.0:3000".parse().expect("addr"));
        assert_eq!(config.data_dir, PathBuf::from("./data"));
        assert_eq!(config.log_format, LogFormat::Text);
        assert!(config.session_secret.is_none());
        assert_eq!(config.commit_interval(), Duration::from_millis(20));
        assert_eq!(
            config.commit_interval_ms,
            Config::for_data_dir(PathBuf::new()).commit_interval_ms
        );
        assert!(!config.huge_pages);
        let on = Config::try_parse_from(["tollgate", "--huge-pages"]).expect("flag parses");
        assert!(on.huge_pages);
    }

    #[test]
    fn trusted_proxies_are_a_list_of_networks() {
        let config = Config::try_parse_from([
            "tollgate",
            "--trusted-proxies",
            "127.0.0.1, 10.0.0.0/8,fd00::/8",
        ])
        .expect("parse");
        assert_eq!(config.trusted_proxies.len(), 3);
        assert!(
            Config::try_parse_from(["tollgate"])
                .expect("defaults")
                .trusted_proxies
                .is_empty()
        );
        assert!(Config::try_parse_from(["tollgate", "--trusted-proxies", "10.0.0.0/33"]).is_err());
    }

    #[test]
    fn the_commit_interval_is_bounded() {
        let parse = |ms: &str| Config::try_parse_from(["tollgate", "--commit-interval-ms", ms]);
        assert_eq!(parse("0").expect("zero").commit_interval(), Duration::ZERO);
        assert_eq!(parse("1000").expect("max").commit_interval_ms, 1000);
        assert!(parse("1001").is_err());
        assert!(parse("-1").is_err());
    }

    #[test]
    fn flags_override_defaults() {
        let config = Config::try_parse_from([
            "tollgate",
            "--listen",
            "127.0.0.1:8080",
            "--data-dir",
            "/tmp/x",
            "--log-format",
            "json",
        ])
        .expect("parse");
        assert_eq!(config.listen.port(), 8080);
        assert_eq!(config.log_format, LogFormat::Json);
        assert!(Config::try_parse_from(["tollgate", "--listen", "nope"]).is_err());
    }
}
