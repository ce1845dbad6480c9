//! Test suites and builds as users have them (`measure`): test lines split like `sh` splits them
//! (checked against `/bin/sh` itself), the `/bin/sh` form, link flags, an annotated file away
//! from its local headers, the behaviour check on a planted crashing annotation, and a labels
//! file of another program.

use std::path::{Path, PathBuf};

use predicates::prelude::*;

mod common;
use common::covprune;

const FIXTURES: &str = "tests/fixtures/measure";

/// `echo.c` (prints its arguments, copies its input) copied into `dir` with an input file.
fn echo_in(dir: &Path) -> PathBuf {
    let file = dir.join("echo.c");
    std::fs::copy(Path::new(FIXTURES).join("echo/echo.c"), &file).unwrap();
    std::fs::write(dir.join("in.txt"), "input line\n").unwrap();
    file
}

/// `covprune measure FILE --tests TESTS`, to add arguments to.
fn measure(file: &Path, tests: &Path) -> assert_cmd::Command {
    let mut c = covprune();
    c.arg("measure").arg(file).arg("--tests").arg(tests);
    c
}

/// Lines that exercise quoting, escapes and redirections; each writes its output to its own
/// file so that the test can read what the program received.
const QUOTING: &[&str] = &[
    r#"'a b' "c\"d" e\ f > out1"#,
    r"'<' < in.txt > out2",
    r"'it'\''s' '\-' x$ > out3",
    r#"plain "two words" 2> err4 > out4"#,
    r"y > out5 2>&1",
    r#""$" '*' "?" >> out6"#,
];

#[test]
fn test_lines_are_split_as_sh_splits_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = echo_in(dir.path());
    std::fs::write(dir.path().join("echo.tests"), QUOTING.join("\n") + "\n").unwrap();
    measure(&file, &dir.path().join("echo.tests"))
        .assert()
        .success();
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    let ours: Vec<String> = (1..=6).map(|k| read(&format!("out{k}"))).collect();
    assert_eq!(ours[0], "[a b][c\"d][e f]\n");
    // A quoted `<` is an argument, an unquoted one a redirection.
    assert_eq!(ours[1], "[<]\ninput line\n");
    assert_eq!(ours[2], "[it's][\\-][x$]\n");
    assert_eq!(ours[3], "[plain][two words]\n");
    assert_eq!(read("err4"), "err\n");
    // Standard output to a file is flushed at exit, after the unbuffered "err".
    assert_eq!(ours[4], "err\n[y]\n");
    assert_eq!(ours[5], "[$][*][?]\n");
    // The same lines through /bin/sh give the same files.
    let exe = dir.path().join("echo_plain");
    let st = std::process::Command::new("cc")
        .arg("-o")
        .arg(&exe)
        .arg(&file)
        .status()
        .unwrap();
    assert!(st.success());
    for k in 1..=6 {
        std::fs::remove_file(dir.path().join(format!("out{k}"))).unwrap();
    }
    for line in QUOTING {
        let st = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(format!("exec ./echo_plain {line}"))
            .current_dir(dir.path())
            .stdin(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(st.success(), "{line}");
    }
    let by_sh: Vec<String> = (1..=6).map(|k| read(&format!("out{k}"))).collect();
    assert_eq!(ours, by_sh);
}

#[test]
fn shell_syntax_in_the_words_form_is_refused_with_a_pointer_to_tests_sh() {
    let dir = tempfile::tempdir().unwrap();
    let file = echo_in(dir.path());
    std::fs::write(dir.path().join("t.tests"), "a | b\n").unwrap();
    measure(&file, &dir.path().join("t.tests"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("t.tests:1:").and(predicate::str::contains("--tests-sh")));
}

#[test]
fn the_sh_form_runs_lines_with_prog_as_sir_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = echo_in(dir.path());
    // SIR's universe lines are the arguments alone; a line may also name $PROG itself.
    std::fs::write(
        dir.path().join("u.tests"),
        "'x' 'y' < in.txt > o1\necho piped | \"$PROG\" one > o2\n",
    )
    .unwrap();
    measure(&file, &dir.path().join("u.tests"))
        .arg("--tests-sh")
        .assert()
        .success();
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    assert_eq!(read("o1"), "[x][y]\ninput line\n");
    assert_eq!(read("o2"), "[one]\npiped\n");
    // Both tests reached their labels: 1 (argc > 2) by the first, 2 by the second.
    let labels = read("echo.labels");
    assert!(labels.contains("1, covered"), "{labels}");
    assert!(labels.contains("2, covered"), "{labels}");
}

#[test]
fn tests_run_in_the_directory_cwd_names() {
    let dir = tempfile::tempdir().unwrap();
    let file = echo_in(dir.path());
    let plans = dir.path().join("plans");
    std::fs::create_dir(&plans).unwrap();
    std::fs::write(plans.join("universe"), "'a' < in.txt > got\n").unwrap();
    measure(&file, &plans.join("universe"))
        .arg("--cwd")
        .arg(dir.path())
        .assert()
        .success();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("got")).unwrap(),
        "[a]\ninput line\n"
    );
}

#[test]
fn a_missing_input_file_skips_that_test_only() {
    let dir = tempfile::tempdir().unwrap();
    let file = echo_in(dir.path());
    std::fs::write(dir.path().join("t.tests"), "a < in.txt\nb < gone.txt\n").unwrap();
    measure(&file, &dir.path().join("t.tests"))
        .assert()
        .success()
        .stdout(
            predicate::str::contains("1 test ").and(predicate::str::contains(
                "test 2 not run: no such input file",
            )),
        );
}

#[test]
fn link_flags_reach_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("libm.c");
    std::fs::copy(Path::new(FIXTURES).join("libm.c"), &file).unwrap();
    std::fs::write(dir.path().join("m.tests"), "1.0\n0.1\n").unwrap();
    let run = || measure(&file, &dir.path().join("m.tests"));
    run()
        .assert()
        .code(2)
        .stderr(predicate::str::contains("undefined reference"));
    run().args(["-l", "m"]).assert().success();
    run().arg("--ldflags=-lm").assert().success();
}

#[test]
fn an_annotated_file_elsewhere_finds_its_local_headers() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    for f in ["prog.c", "prog.h"] {
        std::fs::copy(Path::new(FIXTURES).join("header").join(f), src.join(f)).unwrap();
    }
    let out = dir.path().join("elsewhere");
    covprune()
        .arg("annotate")
        .arg(src.join("prog.c"))
        .args(["--criteria", "CC", "-o"])
        .arg(&out)
        .assert()
        .success();
    let annotated = out.join("prog_labels.c");
    assert!(out.join("prog_labels.build.json").exists());
    std::fs::write(dir.path().join("p.tests"), "3\n42\n-42\n").unwrap();
    // From another directory, with no -I: prune, measure (with the behaviour check, since the
    // original is known) and audit work.
    let elsewhere = tempfile::tempdir().unwrap();
    covprune()
        .current_dir(elsewhere.path())
        .arg("prune")
        .arg(&annotated)
        .args(["--no-progress", "--jobs", "1"])
        .assert()
        .success();
    covprune()
        .current_dir(elsewhere.path())
        .arg("measure")
        .arg(&annotated)
        .arg("--tests")
        .arg(dir.path().join("p.tests"))
        .assert()
        .success()
        .stdout(
            predicate::str::contains("3 tests run on the original")
                .and(predicate::str::contains("0 differ")),
        );
    covprune()
        .current_dir(elsewhere.path())
        .arg("audit")
        .arg(&annotated)
        .assert()
        .success();
}

#[test]
fn an_annotation_that_crashes_the_program_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["crash.c", "crash_labels.c", "crash.tests"] {
        std::fs::copy(Path::new(FIXTURES).join(f), dir.path().join(f)).unwrap();
    }
    let file = dir.path().join("crash_labels.c");
    let run = || measure(&file, &dir.path().join("crash.tests"));
    // Without the original, nothing says the crash is ours.
    run()
        .assert()
        .success()
        .stdout(predicate::str::contains("behaviour not checked"));
    std::fs::remove_file(dir.path().join("crash_labels.labels")).unwrap();
    // With it: exit code 4, the test, the label it crashed in and that label's line.
    run()
        .arg("--original")
        .arg(dir.path().join("crash.c"))
        .assert()
        .code(4)
        .stderr(
            predicate::str::contains("test 3:")
                .and(predicate::str::contains("crashed"))
                .and(predicate::str::contains("inside l2"))
                .and(predicate::str::contains("crash_labels.c:12")),
        );
    // The labels file is not updated from runs of a broken program.
    assert!(!dir.path().join("crash_labels.labels").exists());
    // --check-behaviour without a known original is an error, not a silent pass.
    run().arg("--check-behaviour").assert().code(2);
}

#[test]
fn a_labels_file_of_another_program_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = echo_in(dir.path());
    std::fs::write(dir.path().join("t.tests"), "a\n").unwrap();
    std::fs::write(
        dir.path().join("echo.labels"),
        "# id, status, tag, origin_loc, current_loc, emitter, drivers, exec_time\n7, unknown, CC, other.c:3, , LAnnot, , 0.\n",
    )
    .unwrap();
    measure(&file, &dir.path().join("t.tests"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("does not match"));
    // Left as it was.
    assert!(std::fs::read_to_string(dir.path().join("echo.labels"))
        .unwrap()
        .contains("other.c:3"));
}

#[test]
fn an_output_that_changes_from_run_to_run_is_not_blamed_on_the_annotation() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pid.c");
    std::fs::copy(Path::new(FIXTURES).join("pid.c"), &file).unwrap();
    std::fs::write(dir.path().join("p.tests"), "a\nb\n").unwrap();
    measure(&file, &dir.path().join("p.tests"))
        .arg("--original")
        .arg(&file)
        .arg("--json")
        .assert()
        .success()
        .stdout(
            predicate::str::contains("\"undefined\": 2")
                .and(predicate::str::contains("\"differences\": []")),
        );
}

#[test]
fn a_compilation_database_gives_measure_its_flags_and_link_flags() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("proj");
    std::fs::create_dir_all(src.join("inc")).unwrap();
    std::fs::write(src.join("inc/scale.h"), "#define SCALE FACTOR\n").unwrap();
    std::fs::write(
        src.join("prog.c"),
        "#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include \"scale.h\"\nint main(int argc, char **argv)\n{\n    double x = argc > 1 ? atof(argv[1]) : 0.0;\n    if (sin(x) * SCALE > 1.0)\n        printf(\"big\\n\");\n    return 0;\n}\n",
    )
    .unwrap();
    let db = serde_json::json!([{
        "directory": src.display().to_string(),
        "file": "prog.c",
        "arguments": ["cc", "-Iinc", "-DFACTOR=3", "-c", "prog.c", "-o", "prog.o", "-lm"],
    }]);
    std::fs::write(src.join("compile_commands.json"), db.to_string()).unwrap();
    let out = dir.path().join("out");
    covprune()
        .arg("annotate")
        .arg(src.join("prog.c"))
        .args(["--criteria", "CC", "-o"])
        .arg(&out)
        .arg("-p")
        .arg(&src)
        .assert()
        .success();
    std::fs::write(dir.path().join("t.tests"), "1.0\n0.1\n").unwrap();
    // No flag given: the build record names the database, whose entry gives -I, -D and -lm.
    measure(&out.join("prog_labels.c"), &dir.path().join("t.tests"))
        .assert()
        .success()
        .stdout(
            predicate::str::contains("2 tests run on the original")
                .and(predicate::str::contains("0 differ")),
        );
}

/// A program that prints its own name (`argv[0]`, in its usage message and its output): the
/// annotated build and the original run under one name and one environment, so no test
/// differs (both streams, a test through `sh` and `$PROG` among them). A test that does differ
/// (the name of the file the program was compiled from) is named with the first differing
/// line of each build.
#[test]
fn programs_that_print_their_own_name_behave_the_same_in_both_builds() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("argv0.c");
    std::fs::copy(Path::new(FIXTURES).join("argv0/argv0.c"), &file).unwrap();
    covprune()
        .arg("annotate")
        .arg(&file)
        .args(["--criteria", "CC"])
        .assert()
        .success();
    let annotated = dir.path().join("argv0_labels.c");
    let tests = dir.path().join("argv0.tests");
    let reannotate = || {
        std::fs::remove_file(dir.path().join("argv0_labels.labels")).unwrap();
        covprune()
            .arg("annotate")
            .arg(&file)
            .args(["--criteria", "CC"])
            .assert()
            .success();
    };
    std::fs::write(&tests, "1\n5\n\n").unwrap();
    measure(&annotated, &tests)
        .arg("--check-behaviour")
        .assert()
        .success()
        .stdout(
            predicate::str::contains("2 tests run on the original")
                .and(predicate::str::contains("0 differ")),
        );
    reannotate();
    std::fs::write(&tests, "$PROG 7 2>&1\n$PROG\n").unwrap();
    measure(&annotated, &tests)
        .args(["--check-behaviour", "--tests-sh"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("2 tests run on the original")
                .and(predicate::str::contains("0 differ")),
        );
    reannotate();
    std::fs::write(&tests, "9\n").unwrap();
    measure(&annotated, &tests)
        .arg("--check-behaviour")
        .assert()
        .code(4)
        .stderr(
            predicate::str::contains(
                "standard output differs from line 1: annotated \"compiled from ",
            )
            .and(predicate::str::contains(
                "argv0_labels.c\", original \"compiled from",
            ))
            .and(predicate::str::contains("argv0.c\"")),
        );
}

/// An objective left uncovered is shown as the source writes its conditions: a condition the
/// annotation evaluates into a temporary (a call's) reads as that condition, not `__cp_t1`;
/// `--json` keeps the annotated file's form beside it. Measured before `prune`, the report
/// says nothing is pruned.
#[test]
fn uncovered_objectives_read_as_the_source_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("calls.c");
    std::fs::write(
        &file,
        "#include <stdlib.h>\n#include <string.h>\nint f(const char *s, int n) {\n  if (strlen(s) > 3 && n > 0)\n    return 1;\n  return 0;\n}\nint main(int argc, char **argv) { return argc > 2 ? f(argv[1], atoi(argv[2])) : 0; }\n",
    )
    .unwrap();
    covprune()
        .args(["annotate", "--criteria", "CC"])
        .arg(&file)
        .assert()
        .success();
    let annotated = dir.path().join("calls_labels.c");
    let tests = dir.path().join("calls.tests");
    std::fs::write(&tests, "abcd 1\n").unwrap();
    let text = measure(&annotated, &tests)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("): (strlen(s) > 3) && (!((n > 0)))\n"),
        "{text}"
    );
    assert!(!text.contains("__cp_t"), "{text}");
    // It was not pruned: the report says cleaned is raw, and why.
    assert!(text.contains("no ledger: nothing is pruned"), "{text}");
    std::fs::remove_file(dir.path().join("calls_labels.labels")).unwrap();
    covprune()
        .args(["annotate", "--criteria", "CC"])
        .arg(&file)
        .assert()
        .success();
    let json = measure(&annotated, &tests)
        .arg("--json")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let u = v["uncovered"].as_array().unwrap();
    assert!(
        u.iter()
            .any(|u| u["predicate"].as_str().unwrap().contains("__cp_t")
                && u["source"].as_str().unwrap().contains("strlen(s) > 3")),
        "{v:#}"
    );
}
