//! The incumbent's database address as its operators have it, turned into a connection URL:
//! `SQL_DSN` in the Go MySQL driver's form (`user:pass@tcp(host:3306)/db?charset=utf8mb4`),
//! a `postgres://` / `postgresql://` URL, or `SQLITE_PATH` (a file path, with or without
//! new-api's `?_busy_timeout=…` suffix). The Go form is `[user[:password]@][net[(addr)]]/dbname[?params]`
//! (github.com/go-sql-driver/mysql, README "DSN (Data Source Name)"): the last `/` ends the
//! address, the last `@` before it ends the credentials, the first `:` splits them.
//!
//! The URL holds the password: it is never printed or logged ([`Source`]'s `Debug` hides it).

use std::fmt;
use std::path::PathBuf;

/// Which database engine the incumbent ran on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// SQLite (`SQLITE_PATH`).
    Sqlite,
    /// MySQL or MariaDB.
    MySql,
    /// PostgreSQL.
    Postgres,
}

impl Engine {
    /// The name the report and the audit row give.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Sqlite => "sqlite",
            Engine::MySql => "mysql",
            Engine::Postgres => "postgres",
        }
    }
}

/// A parsed source: the engine and the sqlx connection URL (secret).
#[derive(Clone, PartialEq, Eq)]
pub struct Source {
    /// The engine.
    pub engine: Engine,
    /// The connection URL (holds the password).
    pub url: String,
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Source")
            .field("engine", &self.engine)
            .finish_non_exhaustive()
    }
}

/// Why a DSN cannot be used (never quoting it: it may hold a password).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DsnError {
    /// Nothing was given.
    #[error("the source is empty: set TOLLGATE_IMPORT_FROM or pass --from-file")]
    Empty,
    /// A MySQL DSN without a database name or with an unknown network.
    #[error("the MySQL DSN is not in the form user:password@tcp(host:3306)/database: {0}")]
    MySql(&'static str),
    /// A SQLite path that is not a file.
    #[error("no SQLite database file at {0}")]
    NoFile(PathBuf),
}

/// Percent-encodes `text` for a URL's user, password or path segment (RFC 3986 unreserved
/// characters stay as they are).
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Parses the incumbent's setting (`SQL_DSN` or `SQLITE_PATH`).
pub fn parse(value: &str) -> Result<Source, DsnError> {
    let value = value.trim();
    if value.is_empty() {
        return Err(DsnError::Empty);
    }
    let lower = value.to_ascii_lowercase();
    if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
        return Ok(Source {
            engine: Engine::Postgres,
            url: value.to_owned(),
        });
    }
    if lower.starts_with("mysql://") {
        return Ok(Source {
            engine: Engine::MySql,
            url: value.to_owned(),
        });
    }
    if lower.starts_with("local") {
        // new-api's SQL_DSN=local means "use SQLite at SQLITE_PATH".
        return Err(DsnError::NoFile(PathBuf::from(value)));
    }
    if looks_like_go_mysql(value) {
        return go_mysql(value);
    }
    sqlite(value)
}

/// A Go MySQL DSN names a network with parentheses (`tcp(…)`, `unix(…)`) or is `user@/db`;
/// anything with credentials and a network is taken for one (so a mistyped DSN is refused
/// as a DSN, never echoed as a file name).
fn looks_like_go_mysql(value: &str) -> bool {
    value.contains('@') && (value.contains('(') || value.contains("@/"))
}

fn go_mysql(value: &str) -> Result<Source, DsnError> {
    let slash = value.rfind('/').ok_or(DsnError::MySql("no /database"))?;
    let (left, right) = (&value[..slash], &value[slash + 1..]);
    let (database, params) = right.split_once('?').unwrap_or((right, ""));
    if database.is_empty() {
        return Err(DsnError::MySql("no database name"));
    }
    let (credentials, address) = match left.rfind('@') {
        Some(at) => (&left[..at], &left[at + 1..]),
        None => ("", left),
    };
    let (user, password) = credentials.split_once(':').unwrap_or((credentials, ""));
    let mut query = Vec::new();
    let host = if address.is_empty() {
        "127.0.0.1:3306".to_owned()
    } else if let Some(addr) = address
        .strip_prefix("tcp(")
        .and_then(|a| a.strip_suffix(')'))
    {
        if addr.contains(':') || addr.starts_with('[') {
            addr.to_owned()
        } else {
            format!("{addr}:3306")
        }
    } else if address == "tcp" {
        "127.0.0.1:3306".to_owned()
    } else if let Some(path) = address
        .strip_prefix("unix(")
        .and_then(|a| a.strip_suffix(')'))
    {
        query.push(format!("socket={}", encode(path)));
        "localhost".to_owned()
    } else {
        return Err(DsnError::MySql("the network is neither tcp(…) nor unix(…)"));
    };
    for pair in params.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if k == "tls" {
            let mode = match v {
                "true" | "custom" => "VERIFY_IDENTITY",
                "skip-verify" | "preferred" => "PREFERRED",
                _ => "DISABLED",
            };
            query.push(format!("ssl-mode={mode}"));
        }
    }
    let userinfo = match (user.is_empty(), password.is_empty()) {
        (true, _) => String::new(),
        (false, true) => format!("{}@", encode(user)),
        (false, false) => format!("{}:{}@", encode(user), encode(password)),
    };
    let query = if query.is_empty() {
        String::new()
    } else {
        format!("?{}", query.join("&"))
    };
    Ok(Source {
        engine: Engine::MySql,
        url: format!("mysql://{userinfo}{host}/{}{query}", encode(database)),
    })
}

fn sqlite(value: &str) -> Result<Source, DsnError> {
    // new-api's default SQLITE_PATH is `one-api.db?_busy_timeout=30000`.
    let path = value.split_once('?').map_or(value, |(p, _)| p);
    let path = PathBuf::from(path.strip_prefix("sqlite://").unwrap_or(path));
    if !path.is_file() {
        return Err(DsnError::NoFile(path));
    }
    let absolute = std::path::absolute(&path).unwrap_or(path);
    let text = absolute.to_string_lossy();
    let encoded: String = text.split('/').map(encode).collect::<Vec<_>>().join("/");
    // Read-only: the incumbent's file is never written.
    Ok(Source {
        engine: Engine::Sqlite,
        url: format!("sqlite://{encoded}?mode=ro"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(dsn: &str) -> String {
        match parse(dsn) {
            Ok(s) => s.url,
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn go_mysql_forms() {
        assert_eq!(
            url("root:123456@tcp(localhost:3306)/oneapi?charset=utf8mb4&parseTime=True"),
            "mysql://root:123456@localhost:3306/oneapi"
        );
        assert_eq!(
            url("u:p@ss/w:rd@tcp(db)/new-api"),
            "mysql://u:p%40ss%2Fw%3Ard@db:3306/new-api"
        );
        assert_eq!(url("u@/db"), "mysql://u@127.0.0.1:3306/db");
        assert_eq!(
            url("u:p@tcp(10.0.0.2:3307)/db?tls=true"),
            "mysql://u:p@10.0.0.2:3307/db?ssl-mode=VERIFY_IDENTITY"
        );
        assert_eq!(
            url("u:p@unix(/run/mysqld/mysqld.sock)/db"),
            "mysql://u:p@localhost/db?socket=%2Frun%2Fmysqld%2Fmysqld.sock"
        );
        assert!(url("u:p@tcp(h:1)/").starts_with("error"));
        assert!(url("u:p@udp(h:1)/db").starts_with("error"));
    }

    #[test]
    fn urls_pass_through_and_the_password_is_never_shown() {
        let src = parse("postgres://u:secret@h:5432/db?sslmode=disable").expect("parses");
        assert_eq!(src.engine, Engine::Postgres);
        assert!(!format!("{src:?}").contains("secret"));
        let err = parse("u:secret@udp(h)/db").expect_err("refused");
        assert!(!err.to_string().contains("secret"));
        assert_eq!(parse("  "), Err(DsnError::Empty));
    }

    #[test]
    fn sqlite_paths_drop_the_busy_timeout_and_open_read_only() {
        let dir = tempfile::tempdir().expect("dir");
        let file = dir.path().join("one api.db");
        std::fs::write(&file, b"").expect("file");
        let src = parse(&format!("{}?_busy_timeout=30000", file.display())).expect("parses");
        assert_eq!(src.engine, Engine::Sqlite);
        assert!(src.url.ends_with("/one%20api.db?mode=ro"), "{}", src.url);
        assert!(matches!(
            parse("/nonexistent/one-api.db"),
            Err(DsnError::NoFile(_))
        ));
    }
}
