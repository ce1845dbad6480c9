//! No lost or silent work: outputs checked before long work, limits of 0, files that hold
//! measured coverage, files that were never annotated, errors under `--json`, tests that time
//! out, and an interrupted `prune`'s way back.

use std::path::Path;

use predicates::prelude::*;

mod common;
use common::covprune;

const TESTS: &str = "benchmarks/programs/tritype.tests";

fn pruned(dir: &Path) -> std::path::PathBuf {
    common::pruned_cc_mcc_wm("benchmarks/programs/tritype.c", dir)
}

#[test]
fn measure_checks_its_outputs_before_running_the_suite() {
    let dir = tempfile::tempdir().unwrap();
    let file = pruned(dir.path());
    let labels = dir.path().join("tritype_labels.labels");
    let before = std::fs::read_to_string(&labels).unwrap();
    // An output in a directory that does not exist: refused before any test runs.
    covprune()
        .arg("measure")
        .arg(&file)
        .args(["--tests", TESTS, "--elements"])
        .arg(dir.path().join("no/such/dir/elements.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot write"))
        .stdout(predicate::str::is_empty());
    assert_eq!(std::fs::read_to_string(&labels).unwrap(), before);
}

#[test]
fn a_zero_time_limit_is_refused_and_the_ledger_kept() {
    let dir = tempfile::tempdir().unwrap();
    let file = pruned(dir.path());
    let ledger = dir.path().join("tritype_labels.covprune.json");
    let before = std::fs::read(&ledger).unwrap();
    for (cmd, flag) in [("prune", "--timeout-s"), ("measure", "--test-timeout-s")] {
        let mut c = covprune();
        c.arg(cmd).arg(&file).args([flag, "0"]);
        if cmd == "measure" {
            c.args(["--tests", TESTS]);
        }
        c.assert()
            .code(2)
            .stderr(predicate::str::contains(flag).and(predicate::str::contains("0")));
    }
    assert_eq!(
        std::fs::read(&ledger).unwrap(),
        before,
        "the ledger is kept"
    );
}

#[test]
fn annotate_keeps_measured_coverage_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let file = pruned(dir.path());
    covprune()
        .arg("measure")
        .arg(&file)
        .args(["--tests", TESTS])
        .assert()
        .success();
    let labels = dir.path().join("tritype_labels.labels");
    let measured = std::fs::read_to_string(&labels).unwrap();
    assert!(measured.contains(", covered, "));
    let annotate = || {
        let mut c = covprune();
        c.args([
            "annotate",
            "benchmarks/programs/tritype.c",
            "--criteria",
            "CC",
            "-o",
        ])
        .arg(dir.path());
        c
    };
    annotate()
        .assert()
        .code(2)
        .stderr(predicate::str::contains("records measured coverage"));
    assert_eq!(std::fs::read_to_string(&labels).unwrap(), measured);
    annotate().arg("--force").assert().success();
    assert!(!std::fs::read_to_string(&labels)
        .unwrap()
        .contains(", covered, "));
}

#[test]
fn measure_refuses_a_file_that_was_never_annotated() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("plain.c");
    std::fs::write(
        &src,
        "int main(int argc, char **argv) { return argc > 1; }\n",
    )
    .unwrap();
    let tests = dir.path().join("plain.tests");
    std::fs::write(&tests, "1\n").unwrap();
    covprune()
        .arg("measure")
        .arg(&src)
        .arg("--tests")
        .arg(&tests)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("has no labels"));
    assert!(
        !dir.path().join("plain.labels").exists(),
        "nothing is written beside the source"
    );
}

#[test]
fn errors_under_json_are_json() {
    for args in [
        &["prune", "no/such/file.c", "--json"][..],
        &["annotate", "no/such/file.c", "--criteria", "CC", "--json"][..],
        &[
            "annotate",
            "no/such/file.c",
            "--criteria",
            "CC,XYZ",
            "--json",
        ][..],
        &[
            "prune",
            "benchmarks/programs/tritype.c",
            "--timeout-s",
            "0",
            "--json",
        ][..],
    ] {
        let out = covprune()
            .args(args)
            .assert()
            .code(2)
            .get_output()
            .stdout
            .clone();
        let v: serde_json::Value = serde_json::from_slice(&out)
            .unwrap_or_else(|e| panic!("{args:?}: stdout is not JSON ({e})"));
        assert_eq!(v["exit"], 2, "{args:?}");
        assert!(
            v["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{args:?}"
        );
    }
}

#[test]
fn a_test_that_times_out_says_so_and_after_how_long() {
    let dir = tempfile::tempdir().unwrap();
    let prog = dir.path().join("p.c");
    std::fs::write(
        &prog,
        "#ifndef pc_label\n#define pc_label(...) do{}while(0)\n#endif\nint main(int argc, char **argv) {\n  pc_label(argc > 1, 1, \"T\");\n  if (argc > 1) for (;;) {}\n  return 0;\n}\n",
    )
    .unwrap();
    let tests = dir.path().join("p.tests");
    std::fs::write(&tests, "hang\n").unwrap();
    covprune()
        .arg("measure")
        .arg(&prog)
        .arg("--tests")
        .arg(&tests)
        .args(["--test-timeout-s", "0.7"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "test 1 timed out after 0.7 s (--test-timeout-s)",
        ));
}

/// A run that ends leaves nothing to resume, so it says nothing of its journal (the progress
/// bar names it while the run is drawn on a terminal); `--help` says how `--resume` continues.
#[test]
fn prune_names_its_journal_only_where_it_can_be_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::annotate("benchmarks/programs/tritype.c", "CC", dir.path());
    covprune()
        .arg("prune")
        .arg(&file)
        .args(["--jobs", "1"])
        .assert()
        .success()
        .stderr(predicate::str::contains("journal").not());
    covprune()
        .args(["prune", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("--resume").and(predicate::str::contains("journal")));
}

#[test]
fn skipped_functions_are_named_in_the_text_of_prune_and_audit() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("g.c");
    // A computed goto: annotated, but the prover does not lower the function.
    std::fs::write(
        &src,
        "int jump(int x) {\n  static void *t[] = { &&a, &&b };\n  if (x < 0 || x > 1) return 0;\n  goto *t[x];\na: return 1;\nb: return 2;\n}\nint plain(int y) { if (y > 3) return 1; return 0; }\n",
    )
    .unwrap();
    let file = common::annotate(src.to_str().unwrap(), "CC", dir.path());
    for cmd in ["prune", "audit"] {
        covprune()
            .arg(cmd)
            .arg(&file)
            .assert()
            .success()
            .stdout(predicate::str::contains("function jump not analysed"));
    }
}
