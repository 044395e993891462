//! Logging: `tracing` with an env-style filter, as text or JSON lines on stderr.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

use crate::config::{Config, LogFormat};

/// Installs the global subscriber. Fails on a malformed filter.
pub fn init(config: &Config) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let filter = EnvFilter::try_new(&config.log_level)?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    match config.log_format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    }
}
