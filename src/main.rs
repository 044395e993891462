//! The `tollgate` binary: parse the configuration, start logging, serve until a signal.

use std::process::ExitCode;

use clap::Parser;
use tollgate::{App, Config, StartupError, shutdown, telemetry};

#[tokio::main]
async fn main() -> ExitCode {
    let config = Config::parse();
    if let Err(e) = telemetry::init(&config) {
        #[expect(clippy::print_stderr, reason = "the logger itself failed to start")]
        {
            eprintln!("tollgate: invalid --log-level: {e}");
        }
        return ExitCode::FAILURE;
    }
    match run(config).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(config: Config) -> Result<(), StartupError> {
    App::build(config).await?.serve(shutdown::signal()).await
}
