//! The words and the output of `/bin/sh` commands.

use std::path::Path;

/// `s` as one word of `/bin/sh`.
pub fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The last `n` lines of a file (what a failed build or test said last).
pub fn tail(path: &Path, n: usize) -> String {
    let text = String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
