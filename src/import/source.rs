//! Reading the incumbent's database: one connection (sqlx's `Any` driver, runtime queries only),
//! one read-only REPEATABLE READ snapshot for every table, so a running incumbent yields a
//! consistent copy; then each table's known columns, cast in SQL to the four shapes the mapping
//! needs (integer, flag, text, float) so that engine-specific column types (PostgreSQL `json`
//! and `timestamptz`, MySQL `datetime`, SQLite's loose typing) never reach the driver.
//!
//! Columns the mapping does not know are reported by name, never read.

use std::collections::{BTreeSet, HashMap};

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Connection, Row};

use super::ImportError;
use super::dsn::{Engine, Source};

/// The shape a column is read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A whole number (ids, quotas, unix times).
    Int,
    /// A boolean stored as a number or a boolean.
    Flag,
    /// Text (also JSON held in text columns, and timestamps, read only for null-ness).
    Text,
    /// A floating-point number.
    Float,
}

/// One value read.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// SQL NULL, or a column the table does not have.
    Null,
    /// An integer or flag.
    Int(i64),
    /// Text.
    Text(String),
    /// A float.
    Float(f64),
}

/// One source row: column → value.
#[derive(Debug, Clone, Default)]
pub struct SourceRow(HashMap<&'static str, Value>);

impl SourceRow {
    /// An empty row (tests build rows with [`SourceRow::with`]).
    pub fn new() -> Self {
        SourceRow::default()
    }

    /// The row with `column` set to `value`.
    pub fn with(mut self, column: &'static str, value: Value) -> Self {
        self.0.insert(column, value);
        self
    }

    fn get(&self, column: &str) -> &Value {
        self.0.get(column).unwrap_or(&Value::Null)
    }

    /// An integer column (0 when NULL or missing; text that parses counts).
    pub fn int(&self, column: &str) -> i64 {
        match self.get(column) {
            Value::Int(n) => *n,
            Value::Float(f) if f.is_finite() => *f as i64,
            Value::Text(t) => t.trim().parse().unwrap_or(0),
            _ => 0,
        }
    }

    /// An integer column, `default` when NULL or missing.
    pub fn int_or(&self, column: &str, default: i64) -> i64 {
        if self.is_null(column) {
            default
        } else {
            self.int(column)
        }
    }

    /// A flag column.
    pub fn flag(&self, column: &str) -> bool {
        match self.get(column) {
            Value::Text(t) => matches!(t.trim(), "1" | "t" | "true" | "TRUE"),
            _ => self.int(column) != 0,
        }
    }

    /// A text column ("" when NULL or missing).
    pub fn text(&self, column: &str) -> String {
        match self.get(column) {
            Value::Text(t) => t.clone(),
            Value::Int(n) => n.to_string(),
            Value::Float(f) => f.to_string(),
            Value::Null => String::new(),
        }
    }

    /// A float column (0 when NULL or missing).
    pub fn float(&self, column: &str) -> f64 {
        match self.get(column) {
            Value::Float(f) => *f,
            Value::Int(n) => *n as f64,
            Value::Text(t) => t.trim().parse().unwrap_or(0.0),
            Value::Null => 0.0,
        }
    }

    /// Whether the column is NULL (or missing).
    pub fn is_null(&self, column: &str) -> bool {
        matches!(self.get(column), Value::Null)
    }
}

/// What the mapping reads of one table.
#[derive(Debug)]
pub struct TableSpec {
    /// The table's name.
    pub name: &'static str,
    /// The columns read, with their shapes.
    pub columns: &'static [(&'static str, Kind)],
    /// Columns known and deliberately not carried (listed apart from unknown ones).
    pub not_carried: &'static [&'static str],
}

/// One table as read.
#[derive(Debug, Default)]
pub struct SourceTable {
    /// Whether the source has the table at all.
    pub present: bool,
    /// Its rows.
    pub rows: Vec<SourceRow>,
    /// Columns the mapping reads that the table lacks (defaults used).
    pub missing: Vec<&'static str>,
    /// Columns the table has that the mapping does not know.
    pub unknown: Vec<String>,
    /// Known columns present and not carried.
    pub not_carried: Vec<&'static str>,
}

/// An open connection holding the snapshot.
pub struct Reader {
    conn: AnyConnection,
    engine: Engine,
}

impl Reader {
    /// Connects and opens the read-only snapshot.
    pub async fn open(source: &Source) -> Result<Reader, ImportError> {
        sqlx::any::install_default_drivers();
        let mut conn = AnyConnection::connect(&source.url)
            .await
            .map_err(|e| ImportError::Source(safe_error(&e)))?;
        let begin: &[&str] = match source.engine {
            // A deferred transaction: its snapshot is taken by the first read and kept.
            Engine::Sqlite => &["BEGIN"],
            Engine::MySql => &[
                "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
                "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
            ],
            Engine::Postgres => &["BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"],
        };
        for statement in begin {
            sqlx::raw_sql(statement)
                .execute(&mut conn)
                .await
                .map_err(|e| ImportError::Source(safe_error(&e)))?;
        }
        Ok(Reader {
            conn,
            engine: source.engine,
        })
    }

    /// The engine read from.
    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// The columns of `table` (empty: no such table).
    pub async fn columns(&mut self, table: &str) -> Result<Vec<String>, ImportError> {
        let sql = match self.engine {
            Engine::Sqlite => format!("SELECT name FROM pragma_table_info('{table}')"),
            Engine::MySql => format!(
                "SELECT CAST(column_name AS CHAR) AS name FROM information_schema.columns \
                 WHERE table_schema = DATABASE() AND table_name = '{table}'"
            ),
            Engine::Postgres => format!(
                "SELECT CAST(column_name AS TEXT) AS name FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND table_name = '{table}'"
            ),
        };
        let rows = sqlx::query(&sql)
            .fetch_all(&mut self.conn)
            .await
            .map_err(|e| ImportError::Source(safe_error(&e)))?;
        Ok(rows
            .iter()
            .map(|r| text_at(r, 0).unwrap_or_default())
            .collect())
    }

    /// Reads every row of `spec` (ordered by `id` when it has one).
    pub async fn read(&mut self, spec: &TableSpec) -> Result<SourceTable, ImportError> {
        self.read_where(spec, "").await
    }

    /// How many rows of `spec` have an id above `after` (0 when the table is absent): the
    /// length of the logs' progress bar.
    pub async fn count_after(&mut self, spec: &TableSpec, after: i64) -> Result<u64, ImportError> {
        if self.columns(spec.name).await?.is_empty() {
            return Ok(0);
        }
        let sql = format!(
            "SELECT CAST(COUNT(*) AS {}) FROM {} WHERE id > {after}",
            match self.engine {
                Engine::MySql => "SIGNED",
                Engine::Sqlite | Engine::Postgres => "BIGINT",
            },
            self.quote(spec.name)
        );
        let row = sqlx::query(&sql)
            .fetch_one(&mut self.conn)
            .await
            .map_err(|e| ImportError::Source(format!("{}: {}", spec.name, safe_error(&e))))?;
        let count: i64 = row
            .try_get(0)
            .map_err(|e| ImportError::Source(format!("{}: {}", spec.name, safe_error(&e))))?;
        Ok(u64::try_from(count).unwrap_or(0))
    }

    /// Reads up to `limit` rows of `spec` whose id is above `after`, by id.
    pub async fn read_batch(
        &mut self,
        spec: &TableSpec,
        after: i64,
        limit: usize,
    ) -> Result<SourceTable, ImportError> {
        self.read_where(
            spec,
            &format!(" WHERE id > {after} ORDER BY id LIMIT {limit}"),
        )
        .await
    }

    async fn read_where(
        &mut self,
        spec: &TableSpec,
        tail: &str,
    ) -> Result<SourceTable, ImportError> {
        let existing: BTreeSet<String> = self.columns(spec.name).await?.into_iter().collect();
        if existing.is_empty() {
            return Ok(SourceTable::default());
        }
        let known: BTreeSet<&str> = spec
            .columns
            .iter()
            .map(|(c, _)| *c)
            .chain(spec.not_carried.iter().copied())
            .collect();
        let mut table = SourceTable {
            present: true,
            unknown: existing
                .iter()
                .filter(|c| !known.contains(c.as_str()))
                .cloned()
                .collect(),
            not_carried: spec
                .not_carried
                .iter()
                .copied()
                .filter(|c| existing.contains(*c))
                .collect(),
            ..SourceTable::default()
        };
        let read: Vec<(&'static str, Kind)> = spec
            .columns
            .iter()
            .copied()
            .filter(|(c, _)| {
                let has = existing.contains(*c);
                if !has {
                    table.missing.push(c);
                }
                has
            })
            .collect();
        if read.is_empty() {
            return Ok(table);
        }
        let select: Vec<String> = read.iter().map(|(c, kind)| self.cast(c, *kind)).collect();
        let order = if tail.is_empty() && existing.contains("id") {
            " ORDER BY id"
        } else {
            tail
        };
        let sql = format!(
            "SELECT {} FROM {}{order}",
            select.join(", "),
            self.quote(spec.name)
        );
        let rows = sqlx::query(&sql)
            .fetch_all(&mut self.conn)
            .await
            .map_err(|e| ImportError::Source(format!("{}: {}", spec.name, safe_error(&e))))?;
        for row in &rows {
            let mut out = SourceRow::new();
            for (i, (column, kind)) in read.iter().enumerate() {
                out = out.with(column, value_at(row, i, *kind));
            }
            table.rows.push(out);
        }
        Ok(table)
    }

    /// Ends the snapshot (nothing was written; this only releases it).
    pub async fn close(mut self) {
        if let Err(e) = sqlx::raw_sql("ROLLBACK").execute(&mut self.conn).await {
            tracing::debug!(error = %safe_error(&e), "ending the source snapshot");
        }
        let _ = self.conn.close().await;
    }

    fn quote(&self, name: &str) -> String {
        match self.engine {
            Engine::MySql => format!("`{name}`"),
            Engine::Sqlite | Engine::Postgres => format!("\"{name}\""),
        }
    }

    /// `column` cast to `kind` in this engine's SQL.
    fn cast(&self, column: &str, kind: Kind) -> String {
        let c = self.quote(column);
        let ty = match (self.engine, kind) {
            (Engine::MySql, Kind::Int | Kind::Flag) => "SIGNED",
            (Engine::MySql, Kind::Text) => "CHAR",
            (Engine::MySql, Kind::Float) => "DOUBLE",
            (Engine::Postgres, Kind::Int) => "BIGINT",
            (Engine::Postgres, Kind::Flag) => "INTEGER",
            (Engine::Postgres, Kind::Text) => "TEXT",
            (Engine::Postgres, Kind::Float) => "DOUBLE PRECISION",
            (Engine::Sqlite, Kind::Int | Kind::Flag) => "INTEGER",
            (Engine::Sqlite, Kind::Text) => "TEXT",
            (Engine::Sqlite, Kind::Float) => "REAL",
        };
        format!("CAST({c} AS {ty})")
    }
}

/// A driver error without anything of the connection URL in it.
fn safe_error(e: &sqlx::Error) -> String {
    match e {
        sqlx::Error::Configuration(_) => "the connection settings are not valid".to_owned(),
        other => other.to_string(),
    }
}

fn text_at(row: &AnyRow, i: usize) -> Option<String> {
    if let Ok(v) = row.try_get::<Option<String>, _>(i) {
        return v;
    }
    row.try_get::<Option<Vec<u8>>, _>(i)
        .ok()
        .flatten()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The value at `i`, read as `kind` (with fallbacks for the types each driver reports).
fn value_at(row: &AnyRow, i: usize, kind: Kind) -> Value {
    let int = || -> Option<Option<i64>> {
        row.try_get::<Option<i64>, _>(i)
            .ok()
            .or_else(|| {
                row.try_get::<Option<i32>, _>(i)
                    .ok()
                    .map(|v| v.map(i64::from))
            })
            .or_else(|| {
                row.try_get::<Option<i16>, _>(i)
                    .ok()
                    .map(|v| v.map(i64::from))
            })
            .or_else(|| {
                row.try_get::<Option<bool>, _>(i)
                    .ok()
                    .map(|v| v.map(i64::from))
            })
    };
    let float = || -> Option<Option<f64>> {
        row.try_get::<Option<f64>, _>(i).ok().or_else(|| {
            row.try_get::<Option<f32>, _>(i)
                .ok()
                .map(|v| v.map(f64::from))
        })
    };
    match kind {
        Kind::Int | Kind::Flag => match int() {
            Some(Some(n)) => Value::Int(n),
            Some(None) => Value::Null,
            None => match float() {
                Some(Some(f)) => Value::Float(f),
                Some(None) => Value::Null,
                None => text_at(row, i).map_or(Value::Null, Value::Text),
            },
        },
        Kind::Float => match float() {
            Some(Some(f)) => Value::Float(f),
            Some(None) => Value::Null,
            None => match int() {
                Some(Some(n)) => Value::Int(n),
                Some(None) => Value::Null,
                None => text_at(row, i).map_or(Value::Null, Value::Text),
            },
        },
        Kind::Text => text_at(row, i).map_or(Value::Null, Value::Text),
    }
}
