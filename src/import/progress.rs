//! What `tollgate import` shows while it works. On a terminal (indicatif): a spinner while a
//! table is read, left as a `✓` line with its row count, and a bar for the logs — the only
//! table read in batches — with rows, rate and time left. Without a terminal (a pipe, a log
//! file): one line per table, and for the logs one line per 100,000 rows and a last one.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Rows of the logs between two lines when stderr is not a terminal.
const LINE_EVERY: u64 = 100_000;

/// Where progress goes.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// stderr is a terminal: draw spinners and bars.
    tty: bool,
}

impl Progress {
    /// Progress on stderr, drawn when it is a terminal.
    pub fn stderr() -> Progress {
        Progress {
            tty: std::io::stderr().is_terminal(),
        }
    }

    /// Starts reading `table`.
    pub fn table(self, table: &'static str) -> TableProgress {
        let bar = self.tty.then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("  {spinner} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_message(format!("{table:<22} reading…"));
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        TableProgress { table, bar }
    }

    /// Starts copying the logs, `total` rows of them.
    pub fn logs(self, total: u64) -> LogProgress {
        let bar = self.tty.then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "  {prefix:<22} [{bar:30}] {pos:>9}/{len} rows  {per_sec}  {eta} left",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar.set_prefix("logs");
            bar
        });
        LogProgress {
            bar,
            done: 0,
            last_line: 0,
        }
    }
}

/// One table being read.
pub struct TableProgress {
    table: &'static str,
    bar: Option<ProgressBar>,
}

impl TableProgress {
    /// The table was read: `rows` rows.
    #[expect(
        clippy::print_stderr,
        reason = "progress goes to the operator's terminal"
    )]
    pub fn done(self, rows: usize) {
        let line = finished_line(self.table, rows as u64);
        match self.bar {
            Some(bar) => bar.finish_with_message(line),
            None => eprintln!("{}", plain_line(self.table, rows as u64)),
        }
    }
}

/// The logs being copied.
pub struct LogProgress {
    bar: Option<ProgressBar>,
    /// Rows copied so far.
    done: u64,
    /// `done` at the last plain line.
    last_line: u64,
}

impl LogProgress {
    /// `rows` more rows were copied.
    #[expect(
        clippy::print_stderr,
        reason = "progress goes to the operator's terminal"
    )]
    pub fn advance(&mut self, rows: u64) {
        self.done = self.done.saturating_add(rows);
        match &self.bar {
            Some(bar) => bar.set_position(self.done),
            None if self.done - self.last_line >= LINE_EVERY => {
                self.last_line = self.done;
                eprintln!("{}", plain_line("logs", self.done));
            }
            None => {}
        }
    }

    /// The copy ended.
    #[expect(
        clippy::print_stderr,
        reason = "progress goes to the operator's terminal"
    )]
    pub fn finish(self) {
        match self.bar {
            Some(bar) => {
                bar.set_style(
                    ProgressStyle::with_template("  {msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
                bar.finish_with_message(finished_line("logs", self.done));
            }
            None if self.done != self.last_line || self.done == 0 => {
                eprintln!("{}", plain_line("logs", self.done));
            }
            None => {}
        }
    }
}

/// A table's last line on a terminal.
fn finished_line(table: &str, rows: u64) -> String {
    format!("{table:<22} {rows:>9} rows read ✓")
}

/// A table's line without a terminal.
fn plain_line(table: &str, rows: u64) -> String {
    format!("{table}: {rows} rows read")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_name_the_table_and_its_rows() {
        assert_eq!(plain_line("users", 3), "users: 3 rows read");
        assert_eq!(
            finished_line("logs", 1_200),
            format!("{:<22} {:>9} rows read ✓", "logs", 1_200)
        );
    }

    #[test]
    fn the_logs_bar_counts_every_batch_without_a_terminal() {
        let mut logs = Progress { tty: false }.logs(2_500);
        logs.advance(1_000);
        logs.advance(1_000);
        logs.advance(500);
        assert_eq!((logs.done, logs.last_line), (2_500, 0));
        logs.finish();
    }
}
