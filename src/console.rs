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

/// `n` and the noun, singular for one: `1 label`, `3 labels`, `2 copies`.
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        return format!("1 {noun}");
    }
    let plural = match noun.strip_suffix('y') {
        Some(stem) if !stem.ends_with(['a', 'e', 'o', 'u']) => format!("{stem}ies"),
        _ => format!("{noun}s"),
    };
    format!("{n} {plural}")
}

/// How a label is named in every output meant for people: `l12`.
pub fn label_id(id: impl std::fmt::Display) -> String {
    format!("l{id}")
}

/// Labels named as [`label_id`] does, in a list: `l3, l7`.
pub fn label_ids(ids: &[u64]) -> String {
    ids.iter()
        .map(|&l| label_id(l))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A percentage to one decimal, `-` when there is none: `72.6%`.
pub fn percent(p: Option<f64>) -> String {
    p.map_or_else(|| "-".to_string(), |p| format!("{p:.1}%"))
}

/// A rate per second, with as many digits as it needs to be read: `3.2/s`, `41/s`.
pub fn rate(per_sec: f64) -> String {
    if per_sec >= 10.0 || per_sec == 0.0 {
        format!("{per_sec:.0}/s")
    } else {
        format!("{per_sec:.1}/s")
    }
}

/// A duration in milliseconds, as seconds: `10 s`, `0.7 s`.
pub fn seconds(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{} s", ms as f64 / 1000.0)
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
            "{{prefix}} [{{bar:30}}] {{pos}}/{{len}} {unit}, {{rate}}, eta {{eta}} {{msg}}"
        )) {
            let style = style.with_key(
                "rate",
                |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{}", rate(state.per_sec()));
                },
            );
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(what.to_string());
        Progress { bar: Some(bar) }
    }

    /// Text drawn after the bar while it is drawn.
    pub fn note(&self, text: &str) {
        if let Some(b) = &self.bar {
            b.set_message(text.to_string());
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_rates_and_ids_read_as_english() {
        assert_eq!(count(1u64, "label"), "1 label");
        assert_eq!(count(0u64, "label"), "0 labels");
        assert_eq!(count(2u64, "copy"), "2 copies");
        assert_eq!(count(3u64, "day"), "3 days");
        assert_eq!(rate(10.3086), "10/s");
        assert_eq!(rate(3.249), "3.2/s");
        assert_eq!(label_id(49), "l49");
        assert_eq!(seconds(10_000), "10 s");
        assert_eq!(seconds(700), "0.7 s");
    }
}
