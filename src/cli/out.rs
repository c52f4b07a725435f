//! How the CLI speaks: human tables (colored and aligned when stdout is a terminal), or one
//! JSON document with `--json`; progress bars on stderr, only for a terminal.

use console::{measure_text_width, pad_str, style, Alignment};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub(crate) struct Out {
    json: bool,
}

impl Out {
    pub(crate) fn new(json: bool) -> Out {
        Out { json }
    }

    /// A line of human output (nothing with `--json`).
    pub(crate) fn say(&self, line: impl AsRef<str>) {
        if !self.json {
            println!("{}", line.as_ref());
        }
    }

    /// A note for the user that is not the command's result (stderr, also with `--json`).
    pub(crate) fn note(&self, line: impl AsRef<str>) {
        eprintln!("{}", style(line.as_ref()).dim());
    }

    /// An error that ends the command: on stderr, and with `--json` also as the command's
    /// JSON document (`{"error": ...}`), so a script never reads an empty stdout.
    pub(crate) fn error(&self, line: impl AsRef<str>) {
        eprintln!("{} {}", style("error:").red().bold(), line.as_ref());
        self.json(serde_json::json!({ "error": line.as_ref() }));
    }

    /// The command's JSON document (only with `--json`).
    pub(crate) fn json(&self, v: serde_json::Value) {
        if self.json {
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        }
    }

    /// A progress bar over `len` steps, drawn on stderr when it is a terminal and not `--json`.
    pub(crate) fn progress(&self, len: u64, what: &str) -> ProgressBar {
        let bar = if self.json {
            ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden())
        } else {
            ProgressBar::new(len)
        };
        bar.set_style(
            ProgressStyle::with_template("{prefix:>8} [{bar:30}] {pos}/{len} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_prefix(what.to_string());
        bar
    }

    /// Print a line above the progress bar (human output only).
    pub(crate) fn say_above(&self, bar: &ProgressBar, line: impl AsRef<str>) {
        if !self.json {
            bar.suspend(|| println!("{}", line.as_ref()));
        }
    }

    /// An aligned table: a bold header, a rule, the rows (cells may be colored).
    pub(crate) fn table(&self, header: &[&str], rows: &[Vec<String>]) {
        if self.json {
            return;
        }
        let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
        for r in rows {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(measure_text_width(c));
            }
        }
        let line = |cells: Vec<String>| {
            cells
                .iter()
                .zip(&widths)
                .map(|(c, &w)| pad_str(c, w, Alignment::Left, None).into_owned())
                .collect::<Vec<_>>()
                .join(" | ")
                .trim_end()
                .to_string()
        };
        println!("{}", style(line(header.iter().map(|h| h.to_string()).collect())).bold());
        println!("{}", "-".repeat(widths.iter().sum::<usize>() + 3 * widths.len().saturating_sub(1)));
        for r in rows {
            println!("{}", line(r.clone()));
        }
    }
}

/// `PASS`/`FAIL`, green or red.
pub(crate) fn verdict(passed: bool) -> String {
    if passed {
        style("PASS").green().bold().to_string()
    } else {
        style("FAIL").red().bold().to_string()
    }
}

/// `SKIP`: not run on this device (its kernels need another architecture).
pub(crate) fn skipped() -> String {
    style("SKIP").yellow().bold().to_string()
}

/// `pass`/`FAIL` for tables.
pub(crate) fn cell(passed: bool) -> String {
    if passed {
        style("pass").green().to_string()
    } else {
        style("FAIL").red().bold().to_string()
    }
}

pub(crate) fn ms(d: Option<std::time::Duration>) -> String {
    d.map(|d| format!("{:.3} ms", d.as_secs_f64() * 1e3)).unwrap_or_else(|| "-".into())
}
