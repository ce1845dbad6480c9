//! Helpers shared by the CLI-level test files.

// Each test file compiles this module on its own and uses some of the helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

pub fn covprune() -> Command {
    Command::cargo_bin("covprune").unwrap()
}

/// Annotates `example` with `criteria` into `dir`; returns the annotated file.
pub fn annotate(example: &str, criteria: &str, dir: &Path) -> PathBuf {
    covprune()
        .args(["annotate", example, "--criteria", criteria, "-o"])
        .arg(dir)
        .assert()
        .success();
    let stem = Path::new(example).file_stem().unwrap().to_string_lossy();
    dir.join(format!("{stem}_labels.c"))
}

/// Annotates `example` with CC, MCC and WM into `dir`; returns the annotated file.
pub fn annotate_cc_mcc_wm(example: &str, dir: &Path) -> PathBuf {
    annotate(example, "CC,MCC,WM", dir)
}

/// Annotates `example` with CC, MCC and WM into `dir` and prunes it (one worker); returns the
/// annotated file.
pub fn pruned_cc_mcc_wm(example: &str, dir: &Path) -> PathBuf {
    let file = annotate_cc_mcc_wm(example, dir);
    covprune()
        .arg("prune")
        .arg(&file)
        .args(["--no-progress", "--jobs", "1"])
        .assert()
        .success();
    file
}
