//! `covprune exclude` with the real tools: programs built with `gcc --coverage` and run, their
//! coverage read by gcovr (8.8, in a virtual environment made once under the target
//! directory) and lcov 1.16, or built by clang 19 with source-based coverage and exported by
//! llvm-cov 19 in lcov's form; written again with the branches covprune proved infeasible
//! excluded, and read back by `gcovr -a`, `lcov --summary` and `genhtml`. The fixtures hold a
//! proved-infeasible condition, a feasible branch no test takes, two decisions on one line and
//! a macro; a planted false verdict is a soundness alarm.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod common;
use common::{covprune, json_and_code, run_ok as run};

/// gcovr 8.8, installed once into a virtual environment in the target directory.
fn gcovr() -> PathBuf {
    static INSTALLED: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    INSTALLED.get_or_init(install_gcovr).clone()
}

fn install_gcovr() -> PathBuf {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gcovr-venv");
    let exe = venv.join("bin/gcovr");
    if !exe.is_file() {
        let _ = writeln!(
            std::io::stderr(),
            "installing gcovr 8.8 into {}",
            venv.display()
        );
        let made = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .is_ok_and(|s| s.success())
            && Command::new(venv.join("bin/pip"))
                .args(["install", "--quiet", "gcovr==8.8"])
                .status()
                .is_ok_and(|s| s.success());
        assert!(
            made,
            "could not install gcovr: needs python3 with venv (apt-get install python3-venv) and PyPI"
        );
    }
    exe
}

/// The fixtures copied into `dir`, annotated for CC and pruned, built with `--coverage` and
/// run on their tests.
fn covered_fixtures(dir: &Path) {
    for f in ["clean.c", "tricky.c", "clean.tests", "tricky.tests"] {
        std::fs::copy(Path::new("tests/fixtures/exclude").join(f), dir.join(f)).unwrap();
    }
    for stem in ["clean", "tricky"] {
        covprune()
            .args(["annotate", "--criteria", "CC", "-o"])
            .arg(dir.join("ann"))
            .arg(dir.join(format!("{stem}.c")))
            .assert()
            .success();
        covprune()
            .args(["prune", "--no-progress"])
            .arg(dir.join(format!("ann/{stem}_labels.c")))
            .assert()
            .success();
        run(Command::new("gcc")
            .args(["--coverage", "-O0", "-o", stem])
            .arg(format!("{stem}.c"))
            .current_dir(dir));
        // Each line of the tests file: the program's arguments.
        let tests = std::fs::read_to_string(dir.join(format!("{stem}.tests"))).unwrap();
        for args in tests.lines() {
            run(Command::new(dir.join(stem))
                .args(args.split_whitespace())
                .current_dir(dir));
        }
    }
}

fn annotated(dir: &Path) -> [PathBuf; 2] {
    [
        dir.join("ann/clean_labels.c"),
        dir.join("ann/tricky_labels.c"),
    ]
}

fn exclude(dir: &Path, format: &str, report: &str, out: &str) -> (Value, i32) {
    let o = covprune()
        .arg("exclude")
        .args(annotated(dir))
        .arg(format!("--{format}"))
        .arg(dir.join(report))
        .arg("-o")
        .arg(dir.join(out))
        .arg("--json")
        .output()
        .unwrap();
    json_and_code(&o)
}

/// covprune's own CC row of clean.c measured on its tests (`measure --json`).
fn clean_cc_measured(dir: &Path) -> Value {
    let measured = covprune()
        .args(["measure", "--json", "--tests"])
        .arg(dir.join("clean.tests"))
        .arg(dir.join("ann/clean_labels.c"))
        .output()
        .unwrap();
    let measured: Value = serde_json::from_slice(&measured.stdout).unwrap();
    measured["coverage"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["criterion"] == "CC")
        .unwrap()
        .clone()
}

/// gcovr's JSON report of the fixtures' runs: `dir/cov.json`.
fn gcovr_json(dir: &Path) {
    run(Command::new(gcovr())
        .args(["--json-pretty", "-o", "cov.json", "--root", "."])
        .current_dir(dir));
}

/// gcovr's branch totals of each file of a JSON report, read back with `gcovr -a`.
fn gcovr_branches(dir: &Path, report: &str) -> Vec<(String, u64, u64)> {
    let summary = run(Command::new(gcovr())
        .args(["-a", report, "--json-summary"])
        .current_dir(dir));
    let v: Value = serde_json::from_str(&summary).unwrap();
    let mut out: Vec<(String, u64, u64)> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["filename"].as_str().unwrap().to_string(),
                f["branch_total"].as_u64().unwrap(),
                f["branch_covered"].as_u64().unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn gcovr_reports_leave_out_the_proved_branches_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    covered_fixtures(dir);
    gcovr_json(dir);
    let (m, code) = exclude(dir, "gcovr", "cov.json", "cov.clean.json");
    assert_eq!(code, 0, "{m:#}");
    // One edge: `w > 9` true on clean.c:6 (w = v % 8), proved infeasible and untaken.
    let excluded = m["excluded"].as_array().unwrap();
    assert_eq!(excluded.len(), 1, "{m:#}");
    assert!(excluded[0]["file"].as_str().unwrap().ends_with("clean.c"));
    assert_eq!(excluded[0]["line"], 6);
    assert_eq!(excluded[0]["predicates"][0], "w > 9");
    // tricky.c:7 holds two decisions, tricky.c:8 a macro's: their proofs are not mapped, and
    // say why.
    let left = m["left"].as_array().unwrap();
    assert_eq!(left.len(), 2, "{m:#}");
    assert_eq!(left[0]["line"], 7);
    assert!(left[0]["why"].as_str().unwrap().contains("2 decisions"));
    assert_eq!(left[1]["line"], 8);
    assert!(left[1]["why"].as_str().unwrap().contains("macro"));
    // gcovr reads the report back: one branch fewer in clean.c, tricky.c as it was; the
    // branch of `v == 5` that no test takes (clean.c:8) is still counted.
    let before = gcovr_branches(dir, "cov.json");
    let after = gcovr_branches(dir, "cov.clean.json");
    assert_eq!(
        before,
        [("clean.c".into(), 8, 5), ("tricky.c".into(), 6, 4)]
    );
    assert_eq!(after, [("clean.c".into(), 7, 5), ("tricky.c".into(), 6, 4)]);
    assert_eq!(m["raw"]["total"], 14);
    assert_eq!(m["cleaned"]["total"], 13);
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("cov.clean.json")).unwrap())
            .unwrap();
    let line8 = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"] == "clean.c")
        .unwrap()["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["line_number"] == 8)
        .unwrap()
        .clone();
    assert!(line8["branches"]
        .as_array()
        .unwrap()
        .iter()
        .all(|b| b.get("gcovr/excluded").is_none()));
    // Where both count the same objectives (clean.c: one decision a line, no macro), the
    // cleaned branch ratio is covprune's own: covered CC labels over those not infeasible.
    let cc = clean_cc_measured(dir);
    let bound = cc["upper_bound_percent"].as_f64().unwrap();
    assert!((bound - 100.0 * 5.0 / 7.0).abs() < 0.05, "{cc:#}");
    // What the written report leaves uncovered: its 13 branches less the 9 taken, the
    // untaken side of `v == 5` among them.
    let uncovered = m["uncovered"].as_array().unwrap();
    assert_eq!(uncovered.len(), 4, "{m:#}");
    assert!(uncovered
        .iter()
        .any(|u| u["file"] == "clean.c" && u["line"] == 8));
    // The pull-request summary: the branch row, the untaken branches linked to their lines,
    // the excluded one with its label and proof.
    let md = dir.join("summary.md");
    covprune()
        .arg("exclude")
        .args(annotated(dir))
        .arg("--gcovr")
        .arg(dir.join("cov.json"))
        .arg("-o")
        .arg(dir.join("cov.clean2.json"))
        .arg("--markdown")
        .arg(&md)
        .current_dir(dir)
        .assert()
        .success();
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(
        text.contains("| branches | 14 | 1 | 13 | 9 | 64.3% | 69.2% |"),
        "{text}"
    );
    assert!(text.contains("4 items no test covers"), "{text}");
    assert!(
        text.contains("- [clean.c:8](clean.c#L8) branch `branchno "),
        "{text}"
    );
    assert!(
        text.contains("1 item excluded, each with its proof")
            && text.contains("- [clean.c:6](clean.c#L6) branch `w > 9`: l"),
        "{text}"
    );
}

#[test]
fn lcov_tracefiles_lose_the_proved_records_and_genhtml_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    covered_fixtures(dir);
    run(common::tool("lcov")
        .args([
            "--capture",
            "--directory",
            ".",
            "--rc",
            "lcov_branch_coverage=1",
            "-o",
            "cov.info",
        ])
        .current_dir(dir));
    let (m, code) = exclude(dir, "lcov", "cov.info", "cov.clean.info");
    assert_eq!(code, 0, "{m:#}");
    assert_eq!(m["excluded"].as_array().unwrap().len(), 1);
    let summary = |f: &str| {
        let out = common::tool("lcov")
            .args(["--summary", f, "--rc", "lcov_branch_coverage=1"])
            .current_dir(dir)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        text.lines()
            .find(|l| l.contains("branches"))
            .unwrap()
            .trim()
            .to_string()
    };
    assert!(summary("cov.info").contains("(9 of 14 branches)"));
    assert!(summary("cov.clean.info").contains("(9 of 13 branches)"));
    run(common::tool("genhtml")
        .args(["--branch-coverage", "cov.clean.info", "-o", "html"])
        .current_dir(dir));
    assert!(dir.join("html/index.html").is_file());
}

/// The fixtures built by clang 19 with source-based coverage (and MC/DC) and run on their
/// tests: `dir/all.profdata`, and the objects to export with it.
fn clang_profile(dir: &Path) -> Vec<String> {
    for stem in ["clean", "tricky"] {
        run(common::tool("clang-19")
            .args([
                "-fprofile-instr-generate",
                "-fcoverage-mapping",
                "-fcoverage-mcdc",
                "-O0",
                "-o",
            ])
            .arg(format!("{stem}_ll"))
            .arg(format!("{stem}.c"))
            .current_dir(dir));
        let tests = std::fs::read_to_string(dir.join(format!("{stem}.tests"))).unwrap();
        for args in tests.lines() {
            run(Command::new(dir.join(format!("{stem}_ll")))
                .args(args.split_whitespace())
                .env("LLVM_PROFILE_FILE", dir.join(format!("{stem}-%p.profraw")))
                .current_dir(dir));
        }
    }
    let raws: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "profraw"))
        .collect();
    run(common::tool("llvm-profdata-19")
        .args(["merge", "-o", "all.profdata"])
        .args(&raws)
        .current_dir(dir));
    [
        "./clean_ll",
        "-object",
        "./tricky_ll",
        "-instr-profile=all.profdata",
    ]
    .map(String::from)
    .to_vec()
}

/// clang's source-based coverage, exported by llvm-cov in lcov's form: the same branches.
#[test]
fn llvm_cov_exports_in_lcov_form_lose_the_proved_branches_too() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    covered_fixtures(dir);
    let objects = clang_profile(dir);
    let lcov = run(common::tool("llvm-cov-19")
        .args(["export", "-format=lcov"])
        .args(&objects)
        .current_dir(dir));
    std::fs::write(dir.join("ll.info"), lcov).unwrap();
    let (m, code) = exclude(dir, "lcov", "ll.info", "ll.clean.info");
    assert_eq!(code, 0, "{m:#}");
    let excluded = m["excluded"].as_array().unwrap();
    assert_eq!(excluded.len(), 1, "{m:#}");
    assert_eq!(excluded[0]["line"], 6);
    assert_eq!(
        m["raw"]["total"].as_u64().unwrap(),
        m["cleaned"]["total"].as_u64().unwrap() + 1
    );
    run(common::tool("genhtml")
        .args(["--branch-coverage", "ll.clean.info", "-o", "html"])
        .current_dir(dir));
}

/// A summary of an llvm-cov export: (branch count, covered, MC/DC count, covered) per file.
fn llvm_summaries(doc: &Value) -> Vec<(String, [u64; 4])> {
    let mut out: Vec<(String, [u64; 4])> = doc["data"][0]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = &f["summary"];
            let name = Path::new(f["filename"].as_str().unwrap());
            (
                name.file_name().unwrap().to_string_lossy().into_owned(),
                [
                    s["branches"]["count"].as_u64().unwrap(),
                    s["branches"]["covered"].as_u64().unwrap(),
                    s["mcdc"]["count"].as_u64().unwrap(),
                    s["mcdc"]["covered"].as_u64().unwrap(),
                ],
            )
        })
        .collect();
    out.sort();
    out
}

/// llvm-cov's JSON export: branches matched by line and column, so two decisions on one line
/// are told apart; an MC/DC condition whose atom never takes a value is left out.
#[test]
fn llvm_cov_json_exports_lose_proved_branch_sides_and_mcdc_conditions_by_column() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    covered_fixtures(dir);
    let objects = clang_profile(dir);
    let json = run(common::tool("llvm-cov-19")
        .arg("export")
        .args(&objects)
        .current_dir(dir));
    std::fs::write(dir.join("ll.json"), &json).unwrap();
    let (m, code) = exclude(dir, "llvm-cov", "ll.json", "ll.clean.json");
    assert_eq!(code, 0, "{m:#}");
    let rows: Vec<(String, u64, String, String)> = m["excluded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let file = Path::new(e["file"].as_str().unwrap());
            (
                file.file_name().unwrap().to_string_lossy().into_owned(),
                e["line"].as_u64().unwrap(),
                e["item"].as_str().unwrap().to_string(),
                e["predicates"][0].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // clean.c:6 `w > 9 || v == 7`: the true side of `w > 9`, and its MC/DC condition;
    // tricky.c:7, two decisions on one line: the true side of `v % 8 > 9`, found by its
    // column (one condition: no MC/DC record).
    assert_eq!(
        rows,
        [
            ("clean.c".into(), 6, "branch".into(), "w > 9".into()),
            ("clean.c".into(), 6, "mcdc_condition".into(), "w > 9".into()),
            ("tricky.c".into(), 7, "branch".into(), "v % 8 > 9".into()),
        ]
    );
    assert_eq!(
        m["excluded"][2]["span"],
        serde_json::json!([[7, 9], [7, 18]])
    );
    // The macro's decision (tricky.c:8) is left, and said so.
    let left = m["left"].as_array().unwrap();
    assert_eq!(left.len(), 1, "{m:#}");
    assert_eq!(left[0]["line"], 8);
    assert!(left[0]["why"].as_str().unwrap().contains("macro"));
    let before = llvm_summaries(&serde_json::from_str(&json).unwrap());
    let after = llvm_summaries(
        &serde_json::from_str(&std::fs::read_to_string(dir.join("ll.clean.json")).unwrap())
            .unwrap(),
    );
    let [b, c, d, e] = before[0].1;
    assert_eq!(after[0].1, [b - 1, c, d - 1, e]);
    let [b, c, d, e] = before[1].1;
    assert_eq!(after[1].1, [b - 1, c, d, e]);
    assert_eq!(
        m["raw"]["total"].as_u64().unwrap(),
        before[0].1[0] + before[1].1[0]
    );
    assert_eq!(
        m["mcdc_cleaned"]["total"].as_u64().unwrap(),
        after[0].1[2] + after[1].1[2]
    );
    // clean.c's branches are its CC labels (one condition each side, no macro): the cleaned
    // ratio is covprune's own on the same tests, covered CC labels over those not infeasible.
    let cc = clean_cc_measured(dir);
    let [count, covered, _, _] = after[0].1;
    let ratio = 100.0 * covered as f64 / count as f64;
    assert!(
        (cc["upper_bound_percent"].as_f64().unwrap() - ratio).abs() < 0.05,
        "{cc:#} against {covered}/{count}"
    );
}

#[test]
fn a_false_verdict_on_a_branch_the_report_shows_taken_is_an_alarm_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    covered_fixtures(dir);
    gcovr_json(dir);
    let objects = clang_profile(dir);
    let json = run(common::tool("llvm-cov-19")
        .arg("export")
        .args(&objects)
        .current_dir(dir));
    std::fs::write(dir.join("ll.json"), &json).unwrap();
    // Planted: `v == 7` (taken by the test `./clean 7`) said infeasible.
    let ledger = dir.join("ann/clean_labels.covprune.json");
    let mut l: Value = serde_json::from_str(&std::fs::read_to_string(&ledger).unwrap()).unwrap();
    for label in l["labels"].as_array_mut().unwrap() {
        if label["predicate"] == "v == 7" {
            label["status"] = "infeasible".into();
            label.as_object_mut().unwrap().remove("reason");
            label["step"] = 1.into();
        }
    }
    std::fs::write(&ledger, serde_json::to_string_pretty(&l).unwrap()).unwrap();
    for (format, report, out, alarms) in [
        ("gcovr", "cov.json", "cov.clean.json", 1),
        // The branch's true side, and its MC/DC condition (`./clean 7` and `./clean 20` show
        // it independent).
        ("llvm-cov", "ll.json", "ll.clean.json", 2),
    ] {
        let (m, code) = exclude(dir, format, report, out);
        assert_eq!(code, 3, "{m:#}");
        assert_eq!(m["alarms"].as_array().unwrap().len(), alarms, "{m:#}");
        assert_eq!(m["alarms"][0]["line"], 6);
        assert!(!dir.join(out).exists());
    }
}

/// Every condition the annotator records has the span of one of clang's branch regions, and
/// the other way round: parentheses, `!`, loops, `?:` and conditions with calls.
#[test]
fn the_annotators_conditions_are_clangs_branch_regions() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(
        dir.join("forms.c"),
        "int k(int);\n\
         int g(int a, int b, int *p) {\n\
         \x20 if (!(a > 0) && (b < 3)) return 1;\n\
         \x20 if (((a == b)) || !b) return 2;\n\
         \x20 while (p && *p > 0) p++;\n\
         \x20 for (int i = 0; i < a && !(i == b); i++) b--;\n\
         \x20 if ((a)) { if (k(a) > 1 || a < -5) return 4; }\n\
         \x20 return a > b ? 1 : 0;\n\
         }\n\
         int k(int x) { return x * 2; }\n\
         int main(void) { int z[2] = {1, 0}; g(1, 2, z); g(-3, 4, 0); return 0; }\n",
    )
    .unwrap();
    covprune()
        .args(["annotate", "--criteria", "CC", "-o"])
        .arg(dir.join("ann"))
        .arg(dir.join("forms.c"))
        .assert()
        .success();
    run(common::tool("clang-19")
        .args([
            "-fprofile-instr-generate",
            "-fcoverage-mapping",
            "-o",
            "forms",
            "forms.c",
        ])
        .current_dir(dir));
    run(Command::new("./forms")
        .env("LLVM_PROFILE_FILE", "forms.profraw")
        .current_dir(dir));
    run(common::tool("llvm-profdata-19")
        .args(["merge", "-o", "forms.profdata", "forms.profraw"])
        .current_dir(dir));
    let export: Value = serde_json::from_str(&run(common::tool("llvm-cov-19")
        .args(["export", "./forms", "-instr-profile=forms.profdata"])
        .current_dir(dir)))
    .unwrap();
    let mut clang: Vec<[u64; 4]> = export["data"][0]["files"][0]["branches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| [0, 1, 2, 3].map(|i| b[i].as_u64().unwrap()))
        .collect();
    clang.sort();
    let sites: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("ann/forms_labels.sites.json")).unwrap(),
    )
    .unwrap();
    let mut ours: Vec<[u64; 4]> = sites["labels"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["decision"]["conditions"].as_array())
        .flatten()
        .map(|c| {
            [
                c["start"][0].as_u64().unwrap(),
                c["start"][1].as_u64().unwrap(),
                c["end"][0].as_u64().unwrap(),
                c["end"][1].as_u64().unwrap() + 1,
            ]
        })
        .collect();
    ours.sort();
    ours.dedup();
    assert_eq!(ours, clang);
}

/// One mutant as Mull names and places it: the operator token at (line, column), replaced.
struct Mutant {
    line: usize,
    column: usize,
    token: &'static str,
    by: &'static str,
    name: &'static str,
}

const MUTANTS: [Mutant; 7] = [
    Mutant {
        line: 8,
        column: 11,
        token: "*",
        by: "/",
        name: "cxx_mul_to_div",
    },
    Mutant {
        line: 9,
        column: 11,
        token: "<",
        by: "<=",
        name: "cxx_lt_to_le",
    },
    Mutant {
        line: 9,
        column: 11,
        token: "<",
        by: ">=",
        name: "cxx_lt_to_ge",
    },
    Mutant {
        line: 9,
        column: 15,
        token: "&&",
        by: "||",
        name: "cxx_logical_and_to_or",
    },
    Mutant {
        line: 9,
        column: 20,
        token: ">",
        by: ">=",
        name: "cxx_gt_to_ge",
    },
    Mutant {
        line: 11,
        column: 11,
        token: ">",
        by: ">=",
        name: "cxx_gt_to_ge",
    },
    Mutant {
        line: 11,
        column: 11,
        token: ">",
        by: "<=",
        name: "cxx_gt_to_le",
    },
];

/// A mutation run made here, as Mull makes one: each mutant compiled and run on the tests,
/// killed when an output differs from the program's; written as a Mutation Testing Elements
/// report (`dir/mutants.mte.json`).
fn mutation_report(dir: &Path) {
    std::fs::copy("tests/fixtures/exclude/mutants.c", dir.join("mutants.c")).unwrap();
    let source = std::fs::read_to_string(dir.join("mutants.c")).unwrap();
    let tests = ["3", "60", "200", "-5"];
    let outputs = |src: &str, exe: &str| -> Vec<String> {
        std::fs::write(dir.join(format!("{exe}.c")), src).unwrap();
        run(Command::new("gcc")
            .args(["-O0", "-o", exe])
            .arg(format!("{exe}.c"))
            .current_dir(dir));
        tests
            .iter()
            .map(|t| run(Command::new(dir.join(exe)).arg(t).current_dir(dir)))
            .collect()
    };
    let expected = outputs(&source, "original");
    let mut mutants = Vec::new();
    for (i, m) in MUTANTS.iter().enumerate() {
        let mut lines: Vec<String> = source.lines().map(String::from).collect();
        let line = &mut lines[m.line - 1];
        let at = m.column - 1;
        assert_eq!(&line[at..at + m.token.len()], m.token, "{}", m.name);
        line.replace_range(at..at + m.token.len(), m.by);
        let killed = outputs(&(lines.join("\n") + "\n"), &format!("mutant{i}")) != expected;
        mutants.push(serde_json::json!({
            "id": i.to_string(),
            "mutatorName": m.name,
            "location": {
                "start": {"line": m.line, "column": m.column},
                "end": {"line": m.line, "column": m.column + m.token.len()},
            },
            "status": if killed { "Killed" } else { "Survived" },
        }));
    }
    let report = serde_json::json!({
        "schemaVersion": "1",
        "thresholds": {"high": 80, "low": 60},
        "files": {"mutants.c": {"language": "c", "source": source, "mutants": mutants}},
    });
    std::fs::write(
        dir.join("mutants.mte.json"),
        serde_json::to_string_pretty(&report).unwrap(),
    )
    .unwrap();
    covprune()
        .args(["annotate", "--criteria", "WM", "-o"])
        .arg(dir.join("ann"))
        .arg(dir.join("mutants.c"))
        .assert()
        .success();
    covprune()
        .args(["prune", "--no-progress"])
        .arg(dir.join("ann/mutants_labels.c"))
        .assert()
        .success();
}

fn exclude_mutants(dir: &Path) -> (Value, i32) {
    let o = covprune()
        .arg("exclude")
        .arg(dir.join("ann/mutants_labels.c"))
        .arg("--mutation")
        .arg(dir.join("mutants.mte.json"))
        .arg("-o")
        .arg(dir.join("mutants.clean.json"))
        .arg("--json")
        .output()
        .unwrap();
    json_and_code(&o)
}

/// Mutants proved equivalent are ignored in a mutation report, matched by line, column and
/// Mull's operator name; a survivor covprune did not prove equivalent stays a survivor.
#[test]
fn mutation_reports_ignore_the_mutants_proved_equivalent() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    mutation_report(dir);
    let (m, code) = exclude_mutants(dir);
    assert_eq!(code, 0, "{m:#}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("mutants.clean.json")).unwrap())
            .unwrap();
    let before: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("mutants.mte.json")).unwrap())
            .unwrap();
    let statuses = |r: &Value| -> Vec<String> {
        r["files"]["mutants.c"]["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["status"].as_str().unwrap().to_string())
            .collect()
    };
    // The runs: `y = v * 1` → `v / 1` and `w < 8` → `w <= 8` (w = v % 8) survive; so do
    // `y > 100` → `y >= 100` and `v > 50` → `v >= 50`, which no test tells apart.
    assert_eq!(
        statuses(&before),
        ["Survived", "Survived", "Killed", "Killed", "Survived", "Survived", "Killed"]
    );
    assert_eq!(
        statuses(&report),
        ["Ignored", "Ignored", "Killed", "Killed", "Survived", "Survived", "Killed"]
    );
    let reason = report["files"]["mutants.c"]["mutants"][0]["statusReason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("equivalent"), "{reason}");
    assert_eq!(
        m["mutants_raw"],
        serde_json::json!({"total": 7, "covered": 3})
    );
    assert_eq!(
        m["mutants_cleaned"],
        serde_json::json!({"total": 5, "covered": 3})
    );
}

#[test]
fn a_killed_mutant_proved_equivalent_is_an_alarm() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    mutation_report(dir);
    // Planted: `w < 8` → `w >= 8`, killed by every test, said equivalent.
    let ledger = dir.join("ann/mutants_labels.covprune.json");
    let mut l: Value = serde_json::from_str(&std::fs::read_to_string(&ledger).unwrap()).unwrap();
    for label in l["labels"].as_array_mut().unwrap() {
        if label["predicate"] == "(w >= 8) != (w < 8)" {
            label["status"] = "infeasible".into();
            label.as_object_mut().unwrap().remove("reason");
            label["step"] = 1.into();
        }
    }
    std::fs::write(&ledger, serde_json::to_string_pretty(&l).unwrap()).unwrap();
    let (m, code) = exclude_mutants(dir);
    assert_eq!(code, 3, "{m:#}");
    assert_eq!(m["alarms"].as_array().unwrap().len(), 1, "{m:#}");
    assert_eq!(m["alarms"][0]["line"], 9);
    assert!(!dir.join("mutants.clean.json").exists());
}

/// Every input of `exclude` is bound to what it was proved on: an original edited after it
/// was annotated (`w > 9` to `w > 5`, which makes the branch feasible), a ledger of another
/// program renamed into place, and a report of another program are each refused with exit 2,
/// naming what differs, and nothing is written; `--allow-unmatched` writes a foreign report
/// again as it is.
#[test]
fn stale_or_foreign_inputs_are_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    covered_fixtures(dir);
    gcovr_json(dir);
    let refused = |m: &Value, code: i32, says: &str| {
        assert_eq!(code, 2, "{m:#}");
        let error = m["error"].as_str().unwrap();
        assert!(error.contains(says), "{error}");
        assert!(!dir.join("cov.clean.json").exists());
    };
    // The original changed after annotation.
    let clean = dir.join("clean.c");
    let text = std::fs::read_to_string(&clean).unwrap();
    std::fs::write(&clean, text.replace("w > 9", "w > 5")).unwrap();
    let (m, code) = exclude(dir, "gcovr", "cov.json", "cov.clean.json");
    refused(&m, code, "clean.c changed since");
    std::fs::write(&clean, &text).unwrap();
    // tricky.c's ledger in place of clean.c's.
    let ledger = dir.join("ann/clean_labels.covprune.json");
    let kept = std::fs::read(&ledger).unwrap();
    std::fs::copy(dir.join("ann/tricky_labels.covprune.json"), &ledger).unwrap();
    let (m, code) = exclude(dir, "gcovr", "cov.json", "cov.clean.json");
    refused(&m, code, "clean_labels.covprune.json");
    std::fs::write(&ledger, kept).unwrap();
    // A report of another program: its files are not the annotated files' originals.
    let report = std::fs::read_to_string(dir.join("cov.json")).unwrap();
    let other = report
        .replace("\"clean.c\"", "\"other.c\"")
        .replace("\"tricky.c\"", "\"third.c\"");
    std::fs::write(dir.join("other.json"), other).unwrap();
    let (m, code) = exclude(dir, "gcovr", "other.json", "cov.clean.json");
    refused(&m, code, "(other.c, third.c)");
    let o = covprune()
        .arg("exclude")
        .args(annotated(dir))
        .arg("--gcovr")
        .arg(dir.join("other.json"))
        .arg("--allow-unmatched")
        .arg("-o")
        .arg(dir.join("cov.clean.json"))
        .arg("--json")
        .output()
        .unwrap();
    let (m, code) = json_and_code(&o);
    assert_eq!(code, 0, "{m:#}");
    assert_eq!(
        m["unmatched_files"],
        serde_json::json!(["other.c", "third.c"])
    );
    assert_eq!(m["excluded"].as_array().map(Vec::len), Some(0));
    // The inputs as proved: accepted.
    let (m, code) = exclude(dir, "gcovr", "cov.json", "cov.clean2.json");
    assert_eq!(code, 0, "{m:#}");
    assert_eq!(m["excluded"].as_array().map(Vec::len), Some(1));
    assert_eq!(m["warnings"], serde_json::json!([]));
    // An MCC-only annotation: no label of it describes a branch, and that is said.
    covprune()
        .args(["annotate", "--criteria", "MCC", "-o"])
        .arg(dir.join("mcc"))
        .arg(&clean)
        .assert()
        .success();
    let mcc = dir.join("mcc/clean_labels.c");
    covprune()
        .args(["prune", "--no-progress"])
        .arg(&mcc)
        .assert()
        .success();
    let o = covprune()
        .arg("exclude")
        .arg(&mcc)
        .arg("--gcovr")
        .arg(dir.join("cov.json"))
        .arg("-o")
        .arg(dir.join("cov.mcc.json"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("warning: the annotated files have no CC labels"),
        "{text}"
    );
}
