//! The `tollgate` binary: parse the configuration, start logging, serve until a signal (or run
//! one operation of the kit: `backup`, `restore`, `admin reset-password`).

use std::process::ExitCode;

use clap::Parser;
use tollgate::config::Command;
use tollgate::{App, Config, StartupError, shutdown, telemetry};

/// mimalloc instead of glibc's malloc: under load glibc gives every runtime thread its own
/// arena and keeps freed memory in them (peak RSS about 1.4× higher in the load benchmark),
/// and its malloc/free were the largest single cost in the relay's profile.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // First: it may execute the binary again with the allocator's settings.
    let allocator = tollgate::allocator::configure();
    let mut config = Config::parse();
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
    if let Some(e) = allocator {
        tracing::debug!(error = %e, "could not restart with the allocator's settings");
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
    if let Some(command) = config.command.take() {
        return operate(&runtime, command, &config);
    }
    if let Err(e) = tollgate::allocator::spawn_purge_clock() {
        tracing::debug!(error = %e, "could not start the allocator's purge clock");
    }
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

/// Runs an operation of the kit ([`tollgate::ops`]) and tells the operator on the terminal
/// (not the log: a generated password is among what it says).
#[expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a command's answer goes to its terminal"
)]
fn operate(runtime: &tokio::runtime::Runtime, command: Command, config: &Config) -> ExitCode {
    match runtime.block_on(tollgate::ops::run(command, config)) {
        Ok(done) => {
            println!("{done}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("tollgate: {e}");
            ExitCode::FAILURE
        }
    }
}
