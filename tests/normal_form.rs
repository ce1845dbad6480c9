//! Decisions as Frama-C normalises them (calls and side effects in conditions, `?:`, `&&`/`||`
//! in expressions, old-style functions, short-circuits): label counts against LAnnotate's on
//! each fixture, and annotated programs that behave exactly like the original when every label
//! evaluates its predicate (a label that dereferenced NULL, divided by zero or called a function
//! again would show).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

const FIXTURES: &str = "tests/fixtures/normal_form";

/// LAnnotate 0.2's label counts (CC, MCC, GACC) on each fixture, measured with it on Frama-C
/// 25 (`frama-c -load-module LAnnotate.cmxs -lannot=CC -machdep gcc_x86_64 FILE`).
const LANNOTATE: &[(&str, [usize; 3])] = &[
    ("short_circuit.c", [30, 32, 30]),
    ("calls.c", [36, 36, 36]),
    ("expressions.c", [18, 18, 18]),
    ("kr_math.c", [12, 12, 12]),
];

/// Fixtures LAnnotate cannot read (Frama-C rejects computed gotos), checked for behaviour only.
const BEHAVIOUR_ONLY: &[&str] = &["computed_goto.c"];

/// Every criterion, so that all label shapes are evaluated by the behaviour check.
const ALL: &str = "CC,MCC,DC,DCC,FC,STMT,GACC,GICC,NCC,LIMIT,WM,WM-S,PCT,FCC,CACC,RACC";

/// Argument lists each fixture's `main` is run with.
const RUNS: &[&[&str]] = &[
    &[],
    &["go"],
    &["x", "0"],
    &["x", "1", "0"],
    &["go", "4", "2"],
    &["1", "5", "3"],
    &["3", "7"],
    &["2", "9", "-4"],
    &["7", "3", "1"],
    &["x", "4", "50"],
];

fn annotate(src: &Path, criteria: &str, dir: &Path) -> (PathBuf, usize) {
    let out = common::covprune()
        .arg("annotate")
        .arg(src)
        .args(["--criteria", criteria, "--json", "-o"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "annotate {} failed: {}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let stem = src.file_stem().unwrap().to_string_lossy();
    (
        dir.join(format!("{stem}_labels.c")),
        v["labels"].as_u64().unwrap() as usize,
    )
}

fn compile(src: &Path, exe: &Path, include: Option<&Path>) {
    let mut cmd = Command::new("cc");
    cmd.args(["-std=gnu89", "-w", "-O0"]);
    if let Some(h) = include {
        cmd.arg("-include").arg(h);
    }
    let st = cmd.arg("-o").arg(exe).arg(src).arg("-lm").status().unwrap();
    assert!(st.success(), "{} does not compile", src.display());
}

#[test]
fn decision_counts_equal_lannotates() {
    let dir = tempfile::tempdir().unwrap();
    for (file, expected) in LANNOTATE {
        let src = Path::new(FIXTURES).join(file);
        for (k, c) in ["CC", "MCC", "GACC"].iter().enumerate() {
            let (_, n) = annotate(&src, c, &dir.path().join(format!("{file}-{c}")));
            assert_eq!(n, expected[k], "{file}: {c} labels");
        }
    }
}

#[test]
fn annotated_fixtures_behave_like_the_original_with_labels_evaluated() {
    let dir = tempfile::tempdir().unwrap();
    let evaluating = dir.path().join("evaluating.h");
    std::fs::write(
        &evaluating,
        "#define pc_label(c, ...) do { volatile int pc_v_ = !!(c); (void)pc_v_; } while (0)\n\
         #define pc_label_bindings(c, ...) do { volatile int pc_v_ = !!(c); (void)pc_v_; } while (0)\n",
    )
    .unwrap();
    for file in LANNOTATE.iter().map(|(f, _)| f).chain(BEHAVIOUR_ONLY) {
        let src = Path::new(FIXTURES).join(file);
        let out = dir.path().join(file.trim_end_matches(".c"));
        let (annotated, n) = annotate(&src, ALL, &out);
        assert!(n > 0, "{file}: labels written");
        let orig = out.join("orig");
        let ann = out.join("annotated");
        compile(&src, &orig, None);
        compile(&annotated, &ann, Some(&evaluating));
        for args in RUNS {
            let run = |exe: &Path| Command::new(exe).args(*args).output().unwrap();
            let (o, a) = (run(&orig), run(&ann));
            assert_eq!(
                (o.status.code(), &o.stdout),
                (a.status.code(), &a.stdout),
                "{file} {args:?}: the annotated program differs (status {:?} vs {:?})",
                o.status,
                a.status
            );
        }
    }
}

#[test]
fn computed_gotos_cost_only_their_function_and_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(FIXTURES).join("computed_goto.c");
    let parsed = common::covprune()
        .args(["parse", "--json"])
        .arg(&src)
        .output()
        .unwrap();
    assert!(parsed.status.success());
    let v: serde_json::Value = serde_json::from_slice(&parsed.stdout).unwrap();
    let skipped: Vec<&str> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(skipped, ["run"], "only the interpreter is skipped");
    assert_eq!(
        v["lowered"].as_u64().unwrap() + 1,
        v["functions"].as_u64().unwrap(),
        "every other function is lowered"
    );
    // The annotator labels every function, `run` included.
    let (annotated, _) = annotate(&src, "CC", dir.path());
    let text = std::fs::read_to_string(&annotated).unwrap();
    let run_body = &text[text.find("int run(").unwrap()..text.find("int after(").unwrap()];
    assert_eq!(run_body.matches("pc_label(").count(), 4, "{run_body}");
    let out = common::covprune()
        .args(["prune", "--json"])
        .arg(&annotated)
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("function run not analysed"),
        "stderr names the function: {stderr}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = v["skipped_functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "run")
        .expect("run is listed");
    assert_eq!(run["labels"].as_u64(), Some(4));
    // The other functions' labels were decided by the prover.
    let ledger: serde_json::Value = serde_json::from_slice(
        &std::fs::read(annotated.with_extension("covprune.json")).unwrap(),
    )
    .unwrap();
    let reasons: Vec<String> = ledger["labels"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["reason"].as_str().map(String::from))
        .collect();
    assert_eq!(
        reasons
            .iter()
            .filter(|r| r.starts_with("function not analysed: run"))
            .count(),
        4
    );
    assert!(reasons.iter().any(|r| r == "satisfiable"));
}
