//! The ledger is bound to the file it describes, and the pool to its own executable: a stale
//! ledger, a ledger of another program and a bare array are refused (exit 2) by `measure` and
//! `audit`, never read as empty and never the source of an alarm; a renamed binary still
//! proves in worker processes; an absurd `--jobs` is capped and gives the ledger of `--jobs 2`.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

mod common;
use common::covprune;

const TESTS: &str = "benchmarks/programs/tritype.tests";

/// tritype.c annotated with `criteria` into `dir`, then pruned: the annotated file.
fn pruned_tritype(dir: &Path, criteria: &str) -> PathBuf {
    let file = common::annotate("benchmarks/programs/tritype.c", criteria, dir);
    prune_step1(&file);
    file
}

/// Step 1 on `file`, which must succeed (and write its ledger).
fn prune_step1(file: &Path) {
    covprune()
        .arg("prune")
        .arg(file)
        .args(["--no-progress", "--steps", "1"])
        .assert()
        .success();
}

fn ledger_of(file: &Path) -> PathBuf {
    file.with_extension("covprune.json")
}

/// `measure` and `audit` both refuse the ledger with exit code 2 and a message naming it.
fn both_refuse(file: &Path, message: &str) {
    covprune()
        .arg("measure")
        .arg(file)
        .args(["--tests", TESTS])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(message));
    covprune()
        .arg("audit")
        .arg(file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(message));
}

#[test]
fn a_stale_ledger_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = pruned_tritype(dir.path(), "CC,MCC,WM");
    // Annotated again into the same directory, with other criteria: the old ledger stays.
    common::annotate("benchmarks/programs/tritype.c", "CC", dir.path());
    assert!(ledger_of(&file).exists());
    both_refuse(&file, "another version of the file");
    // Pruned again, it is accepted.
    prune_step1(&file);
    covprune()
        .arg("measure")
        .arg(&file)
        .args(["--tests", TESTS])
        .assert()
        .success();
}

#[test]
fn a_ledger_of_another_program_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = pruned_tritype(dir.path(), "CC");
    let other = tempfile::tempdir().unwrap();
    let triangle = other.path().join("triangle.c");
    std::fs::copy("benchmarks/programs/triangle.c", &triangle).unwrap();
    prune_step1(&triangle);
    std::fs::copy(ledger_of(&triangle), ledger_of(&file)).unwrap();
    both_refuse(&file, "prune");
}

#[test]
fn a_bare_array_or_another_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = pruned_tritype(dir.path(), "CC");
    std::fs::write(ledger_of(&file), "[]\n").unwrap();
    both_refuse(&file, "is not a covprune ledger");
    std::fs::write(
        ledger_of(&file),
        r#"{"schema": "covprune-ledger/1", "file": "tritype_labels.c", "labels": []}"#,
    )
    .unwrap();
    both_refuse(&file, "schema `covprune-ledger/1`");
}

/// A label file whose ids are not the ledger's (labels added by hand, or another annotation).
#[test]
fn a_labels_file_with_other_labels_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = pruned_tritype(dir.path(), "CC");
    let labels = file.with_extension("labels");
    let text = std::fs::read_to_string(&labels).unwrap();
    let last = text.lines().last().unwrap().to_string();
    let extra = last.replacen(last.split(',').next().unwrap(), "9999", 1);
    std::fs::write(&labels, format!("{text}{extra}\n")).unwrap();
    both_refuse(&file, "other labels");
}

/// A pool worker is this executable whatever its name: a renamed binary still proves in
/// worker processes, so that a solver crash (injected) costs only its function.
#[test]
fn a_renamed_binary_still_uses_the_pool() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("my-prover");
    std::fs::copy(assert_cmd::cargo::cargo_bin("covprune"), &exe).unwrap();
    let file = dir.path().join("two.c");
    std::fs::write(
        &file,
        "#ifndef pc_label\n#define pc_label(...) do{}while(0)\n#endif\nint bad(int x) {\n  pc_label(x != x, 1, \"T\");\n  return x;\n}\nint good(int y) {\n  pc_label(y > 0 && y < 0, 2, \"T\");\n  return y;\n}\n",
    )
    .unwrap();
    Command::new(&exe)
        .arg("prune")
        .arg(&file)
        .args(["--no-progress", "--jobs", "1"])
        .env("COVPRUNE_TEST_ABORT_IN", "bad")
        .assert()
        .success()
        .stderr(predicate::str::contains("while proving bad"));
    let ledger = std::fs::read_to_string(ledger_of(&file)).unwrap();
    assert!(ledger.contains("died"), "{ledger}");
    assert!(ledger.contains("\"status\": \"infeasible\""), "{ledger}");
}

#[test]
fn an_absurd_jobs_count_is_capped_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = pruned_tritype(dir.path(), "CC,MCC");
    let labels = file.with_extension("labels");
    let fresh = std::fs::read_to_string(&labels).unwrap();
    // A run from the fresh labels file: its ledger and its stderr.
    let run = |extra: &[&str]| {
        std::fs::write(&labels, &fresh).unwrap();
        let out = covprune()
            .arg("prune")
            .arg(&file)
            .args(["--no-progress", "--timeout-s", "20"])
            .args(extra)
            .assert()
            .success()
            .get_output()
            .stderr
            .clone();
        (
            std::fs::read_to_string(ledger_of(&file)).unwrap(),
            String::from_utf8_lossy(&out).into_owned(),
        )
    };
    let (two, _) = run(&["--jobs", "2"]);
    for extra in [
        &["--jobs", "99999999999"][..],
        &["--jobs", "99999999999", "--in-process"][..],
    ] {
        let (ledger, stderr) = run(extra);
        assert!(stderr.contains("warning: --jobs 99999999999"), "{stderr}");
        assert_eq!(ledger, two);
    }
}
