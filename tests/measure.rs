//! `covprune measure`: coverage of a shipped example under its shipped tests (snapshot), the
//! soundness alarm on a ledger that a test contradicts, and tests that crash or hang.

use std::path::{Path, PathBuf};

use predicates::prelude::*;

mod common;
use common::covprune;

/// tritype.c annotated (CC, MCC, WM) and pruned in `dir`: the annotated file.
fn pruned_tritype(dir: &Path) -> PathBuf {
    common::pruned_cc_mcc_wm("benchmarks/programs/tritype.c", dir)
}

#[test]
fn coverage_per_criterion_on_the_shipped_example() {
    let dir = tempfile::tempdir().unwrap();
    let file = pruned_tritype(dir.path());
    let out = covprune()
        .arg("measure")
        .arg(&file)
        .args(["--tests", "benchmarks/programs/tritype.tests", "--json"])
        .arg("--elements")
        .arg(dir.path().join("elements.json"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["alarms"].as_array().unwrap().len(), 0);
    insta::assert_snapshot!("tritype_measure", serde_json::to_string_pretty(&v).unwrap());
    // The labels file now says which tests covered what.
    let labels = std::fs::read_to_string(dir.path().join("tritype_labels.labels")).unwrap();
    assert!(labels.lines().any(|l| l.contains(", covered, ")));
    // Elements report: every WM label is a mutant with a status.
    let e: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("elements.json")).unwrap())
            .unwrap();
    let mutants = e["files"]["tritype.c"]["mutants"].as_array().unwrap();
    assert_eq!(
        mutants.len() as u64,
        v["coverage"][2]["labels"].as_u64().unwrap()
    );
    assert!(mutants.iter().any(|m| m["status"] == "Killed"));
    assert!(mutants.iter().any(|m| m["status"] == "Ignored"));
    // The annotated file lives in another directory: its source is the original program,
    // found through the build record.
    assert_eq!(
        e["files"]["tritype.c"]["source"].as_str().unwrap(),
        std::fs::read_to_string("benchmarks/programs/tritype.c").unwrap()
    );
}

#[test]
fn a_ledger_contradicted_by_a_test_raises_the_alarm() {
    let dir = tempfile::tempdir().unwrap();
    let file = pruned_tritype(dir.path());
    let ledger_path = dir.path().join("tritype_labels.covprune.json");
    let mut ledger: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&ledger_path).unwrap()).unwrap();
    // Label 1 is CC `a <= 0`, covered by the test `0 1 1` (line 8 of the tests file).
    let l1 = ledger["labels"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|l| l["id"] == 1)
        .unwrap();
    l1["status"] = serde_json::json!("infeasible");
    std::fs::write(&ledger_path, serde_json::to_string(&ledger).unwrap()).unwrap();
    let before = std::fs::read_to_string(dir.path().join("tritype_labels.labels")).unwrap();
    covprune()
        .arg("measure")
        .arg(&file)
        .args(["--tests", "benchmarks/programs/tritype.tests"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains(
            "l1 claimed infeasible: test 8 covers l1",
        ));
    let after = std::fs::read_to_string(dir.path().join("tritype_labels.labels")).unwrap();
    assert_eq!(before, after, "nothing is written under an alarm");
}

#[test]
fn tests_that_crash_or_hang_are_reported_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let prog = dir.path().join("p.c");
    std::fs::write(
        &prog,
        "#include <string.h>\n#ifndef pc_label\n#define pc_label(...) do{}while(0)\n#endif\nint main(int argc, char **argv) {\n  pc_label(argc > 1, 1, \"T\");\n  if (argc > 1 && strcmp(argv[1], \"crash\") == 0) { volatile int *p = 0; *p = 1; }\n  if (argc > 1 && strcmp(argv[1], \"hang\") == 0) for (;;) {}\n  pc_label(argc > 2, 2, \"T\");\n  return 0;\n}\n",
    )
    .unwrap();
    let tests = dir.path().join("p.tests");
    std::fs::write(&tests, "crash\nhang\nfine 1\n").unwrap();
    let out = covprune()
        .arg("measure")
        .arg(&prog)
        .arg("--tests")
        .arg(&tests)
        .args(["--test-timeout-s", "1", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["crashed"], serde_json::json!(["1"]));
    assert_eq!(v["timed_out"], serde_json::json!(["2"]));
    assert_eq!(v["coverage"][0]["covered"], 2);
}

#[test]
fn a_tests_file_whose_tests_all_miss_their_input_is_refused() {
    // One missing input skips its test (tests/suites.rs); none left to run is an error.
    let dir = tempfile::tempdir().unwrap();
    let tests = dir.path().join("t.tests");
    std::fs::write(&tests, "# comment\n4 < nowhere.txt\n").unwrap();
    covprune()
        .args(["measure", "benchmarks/programs/tritype.c", "--tests"])
        .arg(&tests)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no test can run (no such input file",
        ));
}

/// A subsumed label whose only subsumer no test covers (infeasible, but not provably so: it
/// depends on a function of another file) is listed as pending and stays in the cleaned ratio.
#[test]
fn a_subsumed_label_whose_subsumer_stays_uncovered_is_pending() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = Path::new("tests/fixtures/measure");
    for f in ["pending.c", "checksum.c", "pending.tests"] {
        std::fs::copy(fixtures.join(f), dir.path().join(f)).unwrap();
    }
    let file = dir.path().join("pending.c");
    covprune()
        .arg("prune")
        .arg(&file)
        .args(["--no-progress", "--jobs", "1"])
        .assert()
        .success();
    let run = |json: bool| {
        let mut cmd = covprune();
        cmd.arg("measure")
            .arg(&file)
            .arg("--tests")
            .arg(dir.path().join("pending.tests"))
            .arg("--sources")
            .arg(dir.path().join("checksum.c"));
        if json {
            cmd.arg("--json");
        }
        cmd.assert().success().get_output().stdout.clone()
    };
    let v: serde_json::Value = serde_json::from_slice(&run(true)).unwrap();
    assert_eq!(
        v["pending"],
        serde_json::json!([{"label": 2, "subsumed_by": [1]}])
    );
    let all = &v["coverage"][0];
    assert_eq!(all["labels"], 3);
    assert_eq!(all["covered"], 1, "label 3 only");
    assert_eq!(all["pending"], 1);
    assert_eq!(all["kept"], 3, "label 2 stays an objective");
    let text = String::from_utf8(run(false)).unwrap();
    assert!(
        text.contains("l2 (subsumed by l1)"),
        "the text report lists it:\n{text}"
    );
}

/// `--markdown` writes the summary a pull request shows: the table, the objectives no test
/// covers linked to their lines; `--markdown-since` compares with an earlier summary. A file
/// that is no summary is refused before anything runs.
#[test]
fn markdown_summaries_say_what_the_tests_left_and_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let file = pruned_tritype(dir.path());
    let few = dir.path().join("few.tests");
    let all = std::fs::read_to_string("benchmarks/programs/tritype.tests").unwrap();
    std::fs::write(
        &few,
        all.lines().take(2).collect::<Vec<_>>().join("\n") + "\n",
    )
    .unwrap();
    let tests = std::fs::canonicalize("benchmarks/programs/tritype.tests").unwrap();
    let old = dir.path().join("old.md");
    covprune()
        .arg("measure")
        .arg(&file)
        .arg("--tests")
        .arg(&few)
        .arg("--markdown")
        .arg(&old)
        .assert()
        .success();
    let first = std::fs::read_to_string(&old).unwrap();
    assert!(
        first.starts_with("### covprune measure tritype_labels.c ("),
        "{first}"
    );
    assert!(first.contains("| **all** |"), "{first}");
    assert!(first.contains("](tritype.c#L"), "{first}");
    assert!(!first.contains("since last"), "{first}");
    let new = dir.path().join("new.md");
    covprune()
        .arg("measure")
        .arg(&file)
        .arg("--tests")
        .arg(&tests)
        .arg("--markdown")
        .arg(&new)
        .arg("--markdown-since")
        .arg(&old)
        .assert()
        .success();
    let second = std::fs::read_to_string(&new).unwrap();
    assert!(second.contains("cleaned since last"), "{second}");
    assert!(second.contains("- covered now: [tritype.c:"), "{second}");
    assert!(second.contains(" pts |"), "{second}");
    // Not a summary: refused, exit 2, nothing written.
    let bad = dir.path().join("bad.md");
    covprune()
        .arg("measure")
        .arg(&file)
        .arg("--tests")
        .arg(&tests)
        .arg("--markdown")
        .arg(&bad)
        .arg("--markdown-since")
        .arg(dir.path().join("few.tests"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not a summary covprune wrote"));
    assert!(!bad.exists());
}
