//! Link settings of the `tollgate` binary (the libraries are untouched).
//!
//! Linux with glibc ≥ 2.36: the binary's relative relocations are packed (`-z
//! pack-relative-relocs`, DT_RELR). A position-independent executable carries one 24-byte entry
//! for every pointer in its read-only data (~54,000 here: 1.25 MiB of `.rela.dyn`), which the
//! dynamic loader reads whole at start, so it stayed resident as file pages for the process's
//! life; packed, the table is a few KiB. GNU ld then records a `GLIBC_ABI_DT_RELR` version need,
//! which an older glibc refuses at start, so the option is only given when the build host's
//! glibc (the one the binary is linked against) has DT_RELR, and never when cross-compiling. It
//! sets `cfg(packed_relocs)` when given (tests/lifecycle.rs checks the result).

use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(packed_relocs)");
    println!("cargo::rerun-if-changed=build.rs");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let native = var("TARGET") == var("HOST");
    if native
        && var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && host_glibc_runs_dt_relr()
    {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
        println!("cargo::rustc-cfg=packed_relocs");
    }
}

/// Whether the build host's glibc (`getconf GNU_LIBC_VERSION`: "glibc 2.36") is 2.36 or newer,
/// the first to load DT_RELR; `false` when it cannot tell.
fn host_glibc_runs_dt_relr() -> bool {
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else {
        return false;
    };
    let mut parts = version.split('.').map(|part| part.parse::<u32>().ok());
    matches!(
        (parts.next().flatten(), parts.next().flatten()),
        (Some(major), Some(minor)) if (major, minor) >= (2, 36)
    )
}
