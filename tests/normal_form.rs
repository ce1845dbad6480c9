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
    ("call_values.c", [10, 10, 10]),
];

/// Fixtures LAnnotate cannot read (Frama-C rejects computed gotos), checked for behaviour only.
const BEHAVIOUR_ONLY: &[&str] = &["computed_goto.c", "wm_pieces.c"];

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

/// Runs `covprune COMMAND --json FILE`, which must succeed: its JSON output and its stderr.
fn run_json(command: &str, file: &Path) -> (serde_json::Value, String) {
    let out = common::covprune()
        .args([command, "--json"])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "covprune {command} {}",
        file.display()
    );
    (
        serde_json::from_slice(&out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The reasons of the labels, in the ledger `prune` wrote beside `annotated`.
fn ledger_reasons(annotated: &Path) -> Vec<String> {
    let ledger: serde_json::Value =
        serde_json::from_slice(&std::fs::read(annotated.with_extension("covprune.json")).unwrap())
            .unwrap();
    ledger["labels"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["reason"].as_str().map(String::from))
        .collect()
}

/// A header, written in `dir`, that makes every label evaluate its predicate (a label that
/// dereferenced NULL or divided by zero would crash the program).
fn evaluating_labels(dir: &Path) -> PathBuf {
    let h = dir.join("evaluating.h");
    std::fs::write(
        &h,
        "#define pc_label(c, ...) do { volatile int pc_v_ = !!(c); (void)pc_v_; } while (0)\n\
         #define pc_label_bindings(c, ...) do { volatile int pc_v_ = !!(c); (void)pc_v_; } while (0)\n",
    )
    .unwrap();
    h
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
    let evaluating = evaluating_labels(dir.path());
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

/// WM over call values: a call is evaluated first into a temporary (as Frama-C's normal form
/// has it) only where nothing else in the statement can see the order; `?:` branches are
/// mutated under the condition that selects them. The fixture's behaviour, every call made
/// once and in order, is checked by the test above.
#[test]
fn call_values_are_hoisted_only_where_the_order_cannot_matter() {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(FIXTURES).join("call_values.c");
    let (annotated, n) = annotate(&src, "WM", dir.path());
    // LAnnotate writes 74 on this file; the 17 left out are the statement whose call writes
    // what it reads (`bump() + counter`) and the `?:` conditions beside calls in initialisers.
    assert_eq!(n, 57);
    let text = std::fs::read_to_string(&annotated).unwrap();
    for hoisted in ["twice(a)", "traced(a)", "sq(a)", "sq(b)"] {
        assert!(
            text.contains(&format!("= {hoisted}; ")) && text.contains("__auto_type __cp_v"),
            "{hoisted} is evaluated first"
        );
    }
    // The temporaries' declarations parse: every function of the annotated file is analysed.
    let loaded = covprune::frontend::load(&annotated, &Default::default()).unwrap();
    assert!(
        loaded.program.skipped.is_empty(),
        "{:?}",
        loaded.program.skipped
    );
    // `bump()` writes `counter`, which the same statement reads: left in place, no mutant.
    assert!(!text.contains("= bump(); "));
    assert!(text.contains("y = bump() + counter;"));
    // Mutants read the temporaries, never the call again.
    assert!(text.contains("pc_label((__cp_v1 <= limit) != (__cp_v1 > limit)"));
    assert_eq!(
        text.matches("traced(a)").count(),
        1,
        "the one call, in its temporary's declaration"
    );
    // A `?:` branch that dereferences is mutated only where the program takes it.
    assert!(text.contains("pc_label(((q)) && (*q < 0)"));
    // LAnnotate's ABS applies to pointers too: `q < 0`, false for every pointer, written
    // as the constant (no `-Wextra` warning).
    assert!(!text.contains("pc_label(q < 0"));
    assert!(text.contains("pc_label(0, "));
}

/// How many ledger reasons say the label's function `name` was not analysed.
fn not_analysed_in(reasons: &[String], name: &str) -> usize {
    let prefix = format!("function not analysed: {name}");
    reasons.iter().filter(|r| r.starts_with(&prefix)).count()
}

#[test]
fn computed_gotos_cost_only_their_function_and_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(FIXTURES).join("computed_goto.c");
    let (v, _) = run_json("parse", &src);
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
    let (v, stderr) = run_json("prune", &annotated);
    assert!(
        stderr.contains("function run not analysed"),
        "stderr names the function: {stderr}"
    );
    let run = v["skipped_functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "run")
        .expect("run is listed");
    assert_eq!(run["labels"].as_u64(), Some(4));
    // The other functions' labels were decided by the prover.
    let reasons = ledger_reasons(&annotated);
    assert_eq!(not_analysed_in(&reasons, "run"), 4);
    assert!(reasons.iter().any(|r| r == "satisfiable"));
}

/// Without a labels file, the labels are those written in the file: the labels of a function
/// the front end skips still get their row (unknown, not analysed), and stderr names the
/// function, instead of vanishing from the ledger and the counts.
#[test]
fn labels_of_a_skipped_function_stay_in_the_ledger_without_a_labels_file() {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(FIXTURES).join("computed_goto.c");
    let (annotated, _) = annotate(&src, "CC", dir.path());
    std::fs::remove_file(annotated.with_extension("labels")).unwrap();
    let text = std::fs::read_to_string(&annotated).unwrap();
    let (v, stderr) = run_json("prune", &annotated);
    assert!(
        stderr.contains("function run not analysed"),
        "stderr names the function: {stderr}"
    );
    let written: usize = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .map(|l| l.matches("pc_label(").count())
        .sum();
    assert_eq!(
        v["labels"].as_u64(),
        Some(written as u64),
        "every label written is counted"
    );
    let reasons = ledger_reasons(&annotated);
    assert_eq!(not_analysed_in(&reasons, "run"), 4);
    // The labels file prune writes has their rows, with their criterion.
    let labels = std::fs::read_to_string(annotated.with_extension("labels")).unwrap();
    assert_eq!(
        labels.lines().filter(|l| l.contains(", CC, ")).count() as u64,
        v["labels"].as_u64().unwrap(),
        "{labels}"
    );
}

#[test]
fn preprocessed_input_with_line_markers_inside_branches_behaves_like_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(FIXTURES).join("markers.c");
    let pre = dir.path().join("markers.i");
    common::run_ok(Command::new("cc").arg("-E").arg(&src).arg("-o").arg(&pre));
    let pre_text = std::fs::read_to_string(&pre).unwrap();
    assert!(
        pre_text.contains("if (f == \n# "),
        "the fixture's NULL expands with line markers inside the statement"
    );
    // The same decisions from `.c` and from `.i` input.
    let (_, from_c) = annotate(&src, "CC,MCC,GACC", &dir.path().join("c"));
    let (annotated, from_i) = annotate(&pre, "CC,MCC,GACC,WM", &dir.path().join("i"));
    let (_, from_i_cc) = annotate(&pre, "CC,MCC,GACC", &dir.path().join("i3"));
    assert_eq!(from_i_cc, from_c, "labels from .i equal labels from .c");
    assert!(from_i > from_i_cc);
    let evaluating = evaluating_labels(dir.path());
    let orig = dir.path().join("orig");
    let ann = dir.path().join("annotated");
    compile(&src, &orig, None);
    compile(&annotated, &ann, Some(&evaluating));
    let missing = dir.path().join("missing.txt");
    for args in [
        vec![],
        vec![src.display().to_string()],
        vec![missing.display().to_string()],
    ] {
        let run = |exe: &Path| Command::new(exe).args(&args).output().unwrap();
        let (o, a) = (run(&orig), run(&ann));
        assert_eq!(
            (o.status.code(), o.stdout),
            (a.status.code(), a.stdout),
            "{args:?}"
        );
    }
}

/// Deeply nested C (3,000 nested `if`s, 20,000 nested parentheses, a 3,000-link `else if`
/// chain) is annotated and parsed without a stack overflow, and the annotated copies compile.
#[test]
fn deep_nesting_is_annotated_and_parsed() {
    let dir = tempfile::tempdir().unwrap();
    let n = 3000;
    let mut nested = String::from("int f(int x)\n{\n    int r = 0;\n");
    for i in 0..n {
        nested.push_str(&format!("if (x > {i}) {{\n"));
    }
    nested.push_str("r = 1;\n");
    nested.push_str(&"}\n".repeat(n));
    nested.push_str("return r;\n}\n");
    let parens = format!(
        "int f(int x)\n{{\n    return {}x{} > 0;\n}}\n",
        "(".repeat(20_000),
        ")".repeat(20_000)
    );
    let mut chain = String::from("int f(int x)\n{\n    int r = 0;\n    if (x == 0) r = 0;\n");
    for i in 1..n {
        chain.push_str(&format!("    else if (x == {i}) r = {i};\n"));
    }
    chain.push_str("    return r;\n}\n");
    for (name, text) in [("nested", nested), ("parens", parens), ("chain", chain)] {
        let src = dir.path().join(format!("{name}.c"));
        std::fs::write(&src, text).unwrap();
        common::covprune().arg("parse").arg(&src).assert().success();
        let (annotated, labels) = annotate(&src, "CC,MCC,WM", &dir.path().join(name));
        assert!(labels > 0, "{name}: labels written");
        let st = Command::new("cc")
            .args(["-c", "-w", "-o"])
            .arg(dir.path().join(format!("{name}.o")))
            .arg(&annotated)
            .status()
            .unwrap();
        assert!(st.success(), "{name}: the annotated copy compiles");
        common::covprune()
            .arg("parse")
            .arg(&annotated)
            .assert()
            .success();
    }
}

/// `<math.h>` declares functions of `_Float128`: the rewriting of old C must not read
/// `(_Float128 __value)` as a K&R identifier list, which lost every function after it.
#[test]
fn implicit_int_after_math_h_is_lowered_and_pruned() {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(FIXTURES).join("kr_math.c");
    let (v, _) = run_json("parse", &src);
    assert_eq!(v["skipped"].as_array().map(Vec::len), Some(0), "{v}");
    assert_eq!(v["lowered"], v["functions"]);
    let (annotated, _) = annotate(&src, "CC,WM", dir.path());
    run_json("prune", &annotated);
    let reasons = ledger_reasons(&annotated);
    assert!(
        !reasons
            .iter()
            .any(|r| r.starts_with("not in the compiled program")),
        "every label is in a lowered function: {reasons:?}"
    );
}

/// WM where Frama-C moves effects out of expressions (`wm_pieces.c`; LAnnotate 0.2 writes 206
/// labels there, covprune 183, the difference being mostly the conditions of `?:` in
/// initialisers and call arguments, which WM does not mutate yet): a call in a condition is
/// made once into a temporary that the labels read, an assignment inside a condition is read
/// after it, side effects inside statements are mutated over the values they leave, negative
/// constants and comma updates are mutated, and a pure macro reads as its expansion.
#[test]
fn weak_mutation_sees_effects_as_frama_c_sequences_them() {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(FIXTURES).join("wm_pieces.c");
    let (annotated, n) = annotate(&src, "WM", dir.path());
    let text = std::fs::read_to_string(&annotated).unwrap();
    assert!(n >= 175, "{n} WM labels");
    let has = |s: &str| assert!(text.contains(s), "no `{s}` in\n{text}");
    // The call's own bytes (two blanks in the format), evaluated once, mutated by value.
    has("__auto_type __cp_v1 = sscanf(s, \"%d  %d\", &r, &c);");
    has("pc_label((__cp_v1 == 2) != (__cp_v1 != 2)");
    has("pc_label(__cp_v1 < 0");
    assert_eq!(text.matches("sscanf(").count(), 1, "sscanf called twice");
    // `(x = next(&left)) > 0`: the comparison over `x` after the assignment.
    has("pc_label(((x) <= 0) != ((x) > 0)");
    // `ser += cof[j] / ++x;` (a static local array): `x` read as `(x + 1)`.
    has("((cof[j] * (x + 1)) != (cof[j] / (x + 1)))");
    has("((ser * (cof[j] / (x + 1))) != (ser + (cof[j] / (x + 1))))");
    // `x = y = a - b;`: the inner assignment's value is `a - b`; the mutant's product wraps
    // (the program computes no product there).
    has("pc_label(((__typeof__(0 + (a) * (b)))((unsigned long long)(a) * (unsigned long long)(b))) != (a - b)");
    // A negative macro and a comma update.
    has("pc_label((3) != (-3)");
    has("pc_label((j * 1) != (j - 1)");
    // `Abs(del)`: the macro's `?:` condition is mutated.
    has("pc_label((((del)) <= 0) != (((del)) < 0)");
}
