//! Link settings of the `tollgate` binary (the libraries are untouched).
//!
//! Linux with glibc: the binary's relative relocations are packed (`-z pack-relative-relocs`,
//! DT_RELR). A position-independent executable carries one 24-byte entry for every pointer in
//! its read-only data (~54,000 here: 1.25 MiB of `.rela.dyn`), which the dynamic loader reads
//! whole at start, so it stayed resident as file pages for the process's life; packed, the
//! table is a few KiB. The option needs GNU ld ≥ 2.38 (or lld ≥ 15) and, where the binary runs,
//! glibc ≥ 2.36: GNU ld records a `GLIBC_ABI_DT_RELR` version dependency (Debian 12 has both).

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
