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
//!
//! The execution also starts the new image with transparent huge pages off (Linux: the process
//! flag survives `execve`). mimalloc reserves its first arena and touches its first pages before
//! `main`, so turning them off in `main` ([`crate::huge_pages`]) came too late for those: two
//! 2 MiB pages stayed resident in every process from its start (idle RSS 29.7–29.9 → 24.8–25.2
//! MB; under load the heap fills them anyway, so the peak did not move).
//! [`crate::huge_pages::configure`] turns them back on for `--huge-pages`.

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
    // Kept across the execution, so the new image's allocator starts without huge pages; a
    // refusal only leaves them on until `huge_pages::configure`, as before.
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_thp_disable(true);
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
