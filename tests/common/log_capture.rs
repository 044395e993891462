//! Captures every log line of this test binary (up to debug) so tests can assert that no
//! secret is ever logged. Installed once per process; all tests of the binary share it.
#![allow(
    dead_code,
    reason = "each test binary uses a different subset of the harness"
)]
#![expect(
    clippy::expect_used,
    reason = "a broken capture must fail the test loudly"
)]

use std::io::Write;
use std::sync::{Mutex, OnceLock};

static BUFFER: Mutex<Vec<u8>> = Mutex::new(Vec::new());
static INSTALLED: OnceLock<()> = OnceLock::new();

struct Capture;

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        BUFFER.lock().expect("log buffer").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Installs the capturing subscriber (idempotent).
pub fn install() {
    INSTALLED.get_or_init(|| {
        let _ = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_ansi(false)
            .with_writer(|| Capture)
            .try_init();
    });
}

/// Everything logged so far.
pub fn logs() -> String {
    String::from_utf8_lossy(&BUFFER.lock().expect("log buffer")).into_owned()
}
