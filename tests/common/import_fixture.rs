//! The new-api fixture of the import tests (tests/fixtures/newapi, made by its make.py) and the
//! import run in-process: a copy of the SQLite source, its values.json, the import's arguments.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tollgate::config::{Config, ImportArgs};
use tollgate::import::ImportError;

/// A file of tests/fixtures/newapi.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/newapi")
        .join(name)
}

/// The plain passwords, keys and secrets behind the fixture (values.json).
pub fn values() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture("values.json")).expect("values"))
        .expect("JSON")
}

/// A copy of the fixture database (the import must not need to write it, but a test must not
/// be able to change the checked-in file either).
pub fn source_copy() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("one-api.db");
    std::fs::copy(fixture("newapi.db"), &path).expect("copy");
    (dir, path)
}

/// The import's arguments for the SQLite file `from`, with the logs.
pub fn args(from: &Path) -> ImportArgs {
    ImportArgs {
        from: Some(format!("{}?_busy_timeout=30000", from.display())),
        from_file: None,
        dry_run: false,
        with_logs: true,
        resume: false,
    }
}

/// Runs the import into the data directory `dir`.
pub async fn import(dir: &Path, args: ImportArgs) -> Result<String, ImportError> {
    tollgate::import::run(args, &Config::for_data_dir(dir)).await
}
