//! Transparent huge pages for Tollgate's own memory, off unless `--huge-pages`.
//!
//! mimalloc asks the kernel for 2 MiB pages for its arenas (`madvise(MADV_HUGEPAGE)`, which the
//! common `madvise` THP setting honours), and a 2 MiB page is resident in full however little of
//! it is used: in the load benchmark they made up 37 of the 52 MB of heap. Without them peak RSS
//! fell from 61–67 to 47–48 MB, for 0–3 % more CPU per request (same binary, alternating runs).

/// Turns transparent huge pages off for the whole process, or on when `enabled` (Linux;
/// elsewhere nothing to do): [`crate::allocator::configure`] starts the process with them off,
/// before the allocator's first pages. Call it before the runtime starts: memory already
/// touched keeps its pages. A refusal is harmless (the caller logs it).
pub fn configure(enabled: bool) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    nix::sys::prctl::set_thp_disable(!enabled).map_err(std::io::Error::from)?;
    #[cfg(not(target_os = "linux"))]
    let _ = enabled;
    Ok(())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn by_default_the_process_gets_no_huge_pages_and_the_flag_turns_them_on() {
        super::configure(true).expect("allowed");
        assert_eq!(nix::sys::prctl::get_thp_disable(), Ok(false));
        super::configure(false).expect("allowed");
        assert_eq!(nix::sys::prctl::get_thp_disable(), Ok(true));
    }
}
