//! Everything printed to the terminal goes through here (stdout for results, stderr for errors).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether anything was printed on stdout (a report printed before a failure holds its
/// details, so a JSON error document is not printed after it).
static PRINTED: AtomicBool = AtomicBool::new(false);

pub fn printed_out() -> bool {
    PRINTED.load(Ordering::Relaxed)
}

pub fn print_out(text: &str) {
    PRINTED.store(true, Ordering::Relaxed);
    let mut out = std::io::stdout().lock();
    // A closed pipe (`covprune ... | head`) is not an error worth reporting.
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

pub fn print_err(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = err.write_all(b"\n");
    }
}

/// A progress bar on stderr, drawn only when stderr is a terminal (indicatif hides it
/// otherwise) and when enabled.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
}

impl Progress {
    pub fn new(total: u64, what: &str, enabled: bool) -> Progress {
        Progress::counting(total, what, "labels", enabled)
    }

    /// A bar that counts `unit` (labels, tests).
    pub fn counting(total: u64, what: &str, unit: &str, enabled: bool) -> Progress {
        if !enabled || total == 0 {
            return Progress { bar: None };
        }
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(total),
            indicatif::ProgressDrawTarget::stderr(),
        );
        if let Ok(style) = indicatif::ProgressStyle::with_template(&format!(
            "{{prefix}} [{{bar:30}}] {{pos}}/{{len}} {unit}, {{per_sec}}, eta {{eta}}"
        )) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(what.to_string());
        Progress { bar: Some(bar) }
    }

    pub fn inc(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
