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

/// Copies a fixture tree, keeping nothing but the files.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Writes `dir/compile_commands.json`: each file compiled in `dir` by `command(file)`.
pub fn write_database(dir: &Path, files: &[&str], command: &dyn Fn(&str) -> String) {
    let entries: Vec<serde_json::Value> = files
        .iter()
        .map(|f| {
            serde_json::json!({
                "directory": dir.display().to_string(),
                "file": f,
                "command": command(f),
            })
        })
        .collect();
    std::fs::write(
        dir.join("compile_commands.json"),
        serde_json::to_string_pretty(&entries).unwrap(),
    )
    .unwrap();
}

/// Runs a tool that must succeed; its standard output.
pub fn run_ok(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A command's `--json` report and its exit code.
pub fn json_and_code(out: &std::process::Output) -> (serde_json::Value, i32) {
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (report, out.status.code().unwrap())
}

/// The Debian package each external tool the tests run comes from.
const PACKAGES: &[(&str, &str)] = &[
    ("cmake", "cmake"),
    ("meson", "meson"),
    ("ninja", "ninja-build"),
    ("lcov", "lcov"),
    ("genhtml", "lcov"),
    ("clang-19", "clang-19"),
    ("llvm-cov-19", "llvm-19"),
    ("llvm-profdata-19", "llvm-19"),
    ("z3", "z3"),
    ("sbatch", "slurm-wlm"),
    ("munge", "munge"),
    ("chromium", "chromium"),
];

/// A command running `name` from PATH; a test whose tool is missing fails at once with one
/// line naming the package, rather than with a bare "not found".
pub fn tool(name: &str) -> std::process::Command {
    require(name);
    std::process::Command::new(name)
}

/// Fails the test, in one line naming its package, when `name` is not on PATH.
pub fn require(name: &str) {
    let found = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path)
            .any(|d| std::fs::metadata(d.join(name)).is_ok_and(|m| m.is_file()))
    });
    if !found {
        let package = PACKAGES
            .iter()
            .find(|(t, _)| *t == name)
            .map_or(name, |(_, p)| p);
        panic!(
            "this test runs `{name}`, which is not installed: apt-get install {package} (`bash .ci/setup` installs everything the tests use)"
        );
    }
}
