//! The `tollgate` binary: parse the configuration, start logging, serve until a signal.

use std::process::ExitCode;

use clap::Parser;
use tollgate::{App, Config, StartupError, shutdown, telemetry};

/// mimalloc instead of glibc's malloc: under load glibc gives every runtime thread its own
/// arena and keeps freed memory in them (peak RSS about 1.4× higher in the load benchmark),
/// and its malloc/free were the largest single cost in the relay's profile.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    tollgate::huge_pages::configure(config.huge_pages);
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
