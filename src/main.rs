//! The `tollgate` binary: parse the configuration, start logging, serve until a signal.

use std::process::ExitCode;

use clap::Parser;
use tollgate::{App, Config, StartupError, shutdown, telemetry};

/// mimalloc instead of glibc's malloc: under load glibc gives every runtime thread its own
/// arena and keeps freed memory in them (peak RSS about 1.4× higher in the load benchmark),
/// and its malloc/free were the largest single cost in the relay's profile.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let config = Config::parse();
    // Before the runtime's threads and heaps exist, so none of their memory gets huge pages.
    let huge_pages = tollgate::huge_pages::configure(config.huge_pages);
    if let Err(e) = telemetry::init(&config) {
        #[expect(clippy::print_stderr, reason = "the logger itself failed to start")]
        {
            eprintln!("tollgate: invalid --log-level: {e}");
        }
        return ExitCode::FAILURE;
    }
    if let Err(e) = huge_pages {
        tracing::debug!(error = %e, "could not turn transparent huge pages off");
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            tracing::error!(error = %e, "could not start the async runtime");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(config)) {
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
