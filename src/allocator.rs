//! The allocator's settings. mimalloc (the global allocator, see `main.rs`) reads its options
//! from the environment once, before `main` runs, and this workspace forbids `unsafe`, so its C
//! API (`mi_option_set`, `mi_collect`) is out of reach: [`configure`] puts Tollgate's settings
//! into the environment and executes the binary again, once, before anything else has started.
//!
//! The one setting: `MIMALLOC_PURGE_DELAY=50`, memory freed back to mimalloc is returned to the
//! kernel once it has stayed free for 50 ms (the default of mimalloc v3, which the crate builds: 1
//! s, arena memory included). The default kept ~45 MB resident under the load benchmark for a live
//! heap of ~15 MB (peak RSS 69–74 MB). 0 (the setting until 2026-11-29) returned every emptied 64
//! KiB page at once: at maximum rate 0.15 `madvise` a request, each a TLB shootdown across the
//! runtime's threads (IPIs, which a VM pays as exits), and 2.0 page faults to take the pages back;
//! 50 ms leaves 0.03 and 0.56. What the delay keeps resident is paid for by the database's smaller
//! page cache ([`tollgate_storage::store::DEFAULT_CACHE_BYTES`]). The README's "Memory" has the
//! figures. An operator's own value wins.
//!
//! mimalloc runs expired purges only when a page of its own empties, which an idle process never
//! does: [`spawn_purge_clock`] empties one every [`PURGE_PERIOD`], so what a burst freed (a
//! password hash's 9 MiB, a load peak's pages) goes back to the kernel within a period plus the
//! delay once the process is idle.
//!
//! The execution also starts the new image with transparent huge pages off (Linux: the process
//! flag survives `execve`). mimalloc reserves its first arena and touches its first pages before
//! `main`, so turning them off in `main` ([`crate::huge_pages`]) came too late for those: two
//! 2 MiB pages stayed resident in every process from its start (idle RSS 29.7–29.9 → 24.8–25.2
//! MB; under load the heap fills them anyway, so the peak did not move).
//! [`crate::huge_pages::configure`] turns them back on for `--huge-pages`.

use std::ffi::OsStr;
use std::time::Duration;

/// The variable Tollgate sets, and its value.
pub const PURGE_DELAY: (&str, &str) = ("MIMALLOC_PURGE_DELAY", "50");

/// How often [`spawn_purge_clock`] lets mimalloc purge.
pub const PURGE_PERIOD: Duration = Duration::from_secs(1);

/// Above mimalloc's largest size class (512 KiB on 64-bit targets): a block this size gets a
/// page of its own, which is freed, not kept for reuse, when the block is.
const OWN_PAGE_BYTES: usize = 1 << 20;

/// Starts the thread that lets mimalloc return memory to the kernel while nothing else frees
/// any: every [`PURGE_PERIOD`] it allocates and frees a block that has a page of its own, and
/// mimalloc runs its expired purges when that page is freed (a `madvise` of what expired, and
/// the one page fault of the block's header). The error is the thread's spawn; the server runs
/// without the clock then, holding what it freed until it frees a page again.
pub fn spawn_purge_clock() -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("allocator-purge".to_owned())
        .stack_size(64 * 1024)
        .spawn(|| {
            loop {
                std::thread::sleep(PURGE_PERIOD);
                let block = Vec::<u8>::with_capacity(OWN_PAGE_BYTES);
                // `black_box`: an allocation nothing reads may be removed with its free.
                drop(std::hint::black_box(block));
            }
        })
        .map(drop)
}

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
