//! The allocator's settings. mimalloc (the global allocator, see `main.rs`) reads its options
//! from the environment once, before `main` runs, and this workspace forbids `unsafe`, so its C
//! API (`mi_option_set`) is out of reach: [`configure`] puts Tollgate's settings into the
//! environment and executes the binary again, once, before anything else has started.
//!
//! The one setting: `MIMALLOC_PURGE_DELAY=0`, memory freed back to mimalloc is returned to the
//! kernel at once instead of after mimalloc's default delay (1 s, ten times that for arena
//! memory). Under the load benchmark the live heap peaked at ~15 MB (heaptrack, on a build with
//! the system allocator) while mimalloc held ~45 MB resident; with the setting, peak RSS fell
//! from 69–74 to 61–62 MB and idle RSS after set-up from 43–46 to 28–29 MB (three alternating
//! runs each of one binary, the README has the figures). An operator's own value wins.

use std::ffi::OsStr;

/// The variable Tollgate sets, and its value.
pub const PURGE_DELAY: (&str, &str) = ("MIMALLOC_PURGE_DELAY", "0");

/// Executes this binary again with [`PURGE_DELAY`] in its environment, unless the environment
/// names it already (the operator's value, or this function's second pass). Returns only when
/// there was nothing to do (`None`) or the execution failed (the error; the process then goes
/// on with mimalloc's defaults, which is harmless). Call it first in `main`: threads or files
/// opened before it would not survive the execution.
pub fn configure() -> Option<std::io::Error> {
    if std::env::var_os(PURGE_DELAY.0).is_some() {
        return None;
    }
    reexecute(PURGE_DELAY.0.as_ref(), PURGE_DELAY.1.as_ref())
}

#[cfg(unix)]
fn reexecute(name: &OsStr, value: &OsStr) -> Option<std::io::Error> {
    use std::os::unix::process::CommandExt;
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return Some(e),
    };
    let mut args = std::env::args_os();
    let mut command = std::process::Command::new(exe);
    if let Some(arg0) = args.next() {
        command.arg0(arg0);
    }
    Some(command.args(args).env(name, value).exec())
}

#[cfg(not(unix))]
fn reexecute(_: &OsStr, _: &OsStr) -> Option<std::io::Error> {
    None
}
