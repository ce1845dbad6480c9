//! Annotation tests: label counts against LAnnotate's on the LTest sample, snapshots of the
//! annotated output, and annotated files that still compile and run.

use std::path::Path;
use std::process::Command;

use assert_cmd::Command as Cmd;
use predicates::prelude::*;

use covprune::annotate::annotate;
use covprune_encoders::{Criterion, Limits};

const LTEST: &str = "../shared/reference/ltest-samples";

fn rows(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .count()
}

#[test]
fn label_counts_equal_lannotates_on_the_ltest_sample() {
    let source = std::fs::read(Path::new(LTEST).join("sample.c")).unwrap();
    for c in [Criterion::Cc, Criterion::Mcc, Criterion::Dc, Criterion::Fc] {
        let ours = annotate(&source, &[c], &Limits::default());
        let theirs = rows(&Path::new(LTEST).join(format!("sample_{}.labels", c.name())));
        assert_eq!(ours.labels.len(), theirs, "{} label count", c.name());
    }
}

#[test]
fn several_criteria_share_one_id_space() {
    let source = std::fs::read(Path::new(LTEST).join("sample.c")).unwrap();
    let a = annotate(&source, &[Criterion::Cc, Criterion::Dc], &Limits::default());
    let ids: Vec<u64> = a.labels.iter().map(|l| l.id).collect();
    let expected: Vec<u64> = (1..=ids.len() as u64).collect();
    assert_eq!(ids, expected);
    assert_eq!(a.counts()["CC"], 24);
    assert_eq!(a.counts()["DC"], 18);
}

#[test]
fn annotated_output_snapshot() {
    let src = b"int f(int a, int b)\n{\n    int n = 0;\n    if (a > 0 && !(b < 2))\n        n++;\n    else if (a == b)\n        n--;\n    while (n < 10 || a)\n        n += 2;\n    for (int i = 0; i < b; i++)\n        if (i == a) break;\n    if (g(a)) n = 0;\n    do n--; while (n > 0);\n    return n;\n}\n";
    let a = annotate(
        src,
        &[Criterion::Fc, Criterion::Cc, Criterion::Dc],
        &Limits::default(),
    );
    insta::assert_snapshot!(String::from_utf8(a.text).unwrap());
    assert_eq!(
        a.skipped.len(),
        2,
        "the call and the do-while are left alone: {:?}",
        a.skipped
    );
}

/// The annotated file compiles with `cc -std=gnu89`, and with a recording `pc_label` it runs
/// and covers labels, with the same observable behaviour as the original.
#[test]
fn annotated_programs_compile_and_behave_like_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let prog = "#include <stdio.h>\n#include <stdlib.h>\n\
        int classify(int a, int b) {\n  int r = 0;\n  if (a > b && b > 0) r = 1;\n  else if (a == b) r = 2;\n  while (r < 5 && a > 0) { r++; a--; if (r == 3) continue; }\n  for (; b < 3; b++) r += b;\n  return r;\n}\n\
        int main(int argc, char **argv) {\n  int a = argc > 1 ? atoi(argv[1]) : 0;\n  int b = argc > 2 ? atoi(argv[2]) : 0;\n  printf(\"%d\\n\", classify(a, b));\n  return 0;\n}\n";
    let orig = dir.path().join("prog.c");
    std::fs::write(&orig, prog).unwrap();
    Cmd::cargo_bin("covprune")
        .unwrap()
        .arg("annotate")
        .arg(&orig)
        .args(["--criteria", "CC,MCC,DC,DCC,FC"])
        .arg("-o")
        .arg(dir.path())
        .assert()
        .success();
    let annotated = dir.path().join("prog_labels.c");
    let rec = dir.path().join("rec.h");
    std::fs::write(
        &rec,
        "#include <stdio.h>\n#define pc_label(c, id, tag) do { if (c) fprintf(stderr, \"%d\\n\", id); } while (0)\n",
    )
    .unwrap();
    let build = |src: &Path, exe: &Path, extra: &[&str]| {
        let st = Command::new("cc")
            .args(["-std=gnu89", "-w"])
            .args(extra)
            .arg("-o")
            .arg(exe)
            .arg(src)
            .status()
            .unwrap();
        assert!(st.success(), "{} does not compile", src.display());
    };
    build(&orig, &dir.path().join("orig"), &[]);
    build(&annotated, &dir.path().join("plain"), &[]);
    let rec_arg = format!("-include{}", rec.display());
    build(&annotated, &dir.path().join("recording"), &[&rec_arg]);
    for args in [["0", "0"], ["5", "1"], ["2", "2"], ["9", "4"]] {
        let run = |exe: &str| {
            Command::new(dir.path().join(exe))
                .args(args)
                .output()
                .unwrap()
        };
        let o = run("orig");
        assert_eq!(o.stdout, run("plain").stdout);
        let r = run("recording");
        assert_eq!(o.stdout, r.stdout, "labels must not change behaviour");
        assert!(!r.stderr.is_empty(), "some label is covered");
    }
}

#[test]
fn unknown_criterion_lists_the_valid_ones() {
    Cmd::cargo_bin("covprune")
        .unwrap()
        .args([
            "annotate",
            "benchmarks/programs/triangle.c",
            "--criteria",
            "CC,XYZ",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown criterion `XYZ`"))
        .stderr(predicate::str::contains("FC, DC, CC, DCC, MCC"));
}

#[test]
fn annotating_a_file_that_does_not_parse_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("prose.c");
    std::fs::write(&path, "this is not C at all, just words!\n").unwrap();
    Cmd::cargo_bin("covprune")
        .unwrap()
        .arg("annotate")
        .arg(&path)
        .args(["--criteria", "CC"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("does not look like C"));
}

#[test]
fn criteria_are_listed() {
    Cmd::cargo_bin("covprune")
        .unwrap()
        .arg("criteria")
        .assert()
        .success()
        .stdout(predicate::str::contains("MCC"))
        .stdout(predicate::str::contains("condition coverage"));
}
